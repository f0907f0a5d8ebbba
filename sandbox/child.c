/* Child processes under limits: fork, confine (process group, rlimits, no network, seccomp deny-list),
 * run a program or a function, capture its output through a pipe (bounded), and wait with a wall-clock
 * limit that kills the whole process group. Waiting is poll() on a pidfd and the pipe: no busy loop, no
 * SIGALRM, no SIGCHLD handler. */
#include "child.h"
#include "jail.h"
#include "core/cancel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the child itself has exited, output still in the pipe is read for at most this long (a
 * grandchild that escaped the process group could hold the pipe open forever). */
#define DRAIN_GRACE_MS 500
/* Poll period when the kernel has no pidfd_open (Linux < 5.3); elsewhere the wait is event driven. */
#define FALLBACK_TICK_MS 20
#define DEFAULT_NOFILE 256
/* Poll period when the cancellation token has no pipe (core/cancel.h): a request that lands just before
 * poll() (so poll does not see EINTR) is still noticed within this long. */
#define CANCEL_TICK_MS 200

/* ---- in the child ------------------------------------------------------------------------- */

static void child_die(const char *what, int e)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "kforge sandbox: %s: %s\n", what, strerror(e));
	if (n > 0) {
		ssize_t w = write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		(void)w;
	}
	_exit(KF_CHILD_EXIT_SETUP);
}

static void set_limit(int resource, rlim_t soft, rlim_t hard, const char *what)
{
	struct rlimit rl = {soft, hard}, cur;
	/* Never ask for more than the current hard limit: lowering is all we want. */
	if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
		if (rl.rlim_max > cur.rlim_max)
			rl.rlim_max = cur.rlim_max;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
	}
	if (setrlimit(resource, &rl) != 0)
		child_die(what, errno);
}

/* Syscalls refused with EPERM. Names rather than SCMP_SYS() so that a name this libseccomp or this
 * architecture does not know is skipped instead of breaking the build. */
/* clang-format off */
static const char *const denied_syscalls[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsmount", "fsconfig", "fspick", "mount_setattr",
	"reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"swapon", "swapoff", "setns", "unshare", "acct", "quotactl", "syslog", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
	"iopl", "ioperm", "lookup_dcookie", "open_by_handle_at", "name_to_handle_at", "fanotify_init",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	/* Escaping the process group would escape the timeout kill; raising limits back (root may) would
	 * undo the rlimits. */
	"setsid", "setpgid", "setrlimit",
};
/* clang-format on */

/* Clone flags that would create namespaces (a way around the deny-list's intent). */
static const unsigned long denied_clone_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
};

/* Builds the deny-list filter. Allocates (libseccomp), so it must not run in a child forked from a
 * multi-threaded parent whose allocator another thread may hold: the parent builds it once
 * (kf_child_prepare) and the child only installs the compiled program. */
static scmp_filter_ctx build_filter(bool no_exec, int *err_out, const char **what)
{
	scmp_filter_ctx ctx;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		*err_out = ENOMEM;
		*what = "seccomp_init";
		return NULL;
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(denied_syscalls); i++) {
		int nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		/* -EDOM etc.: a pseudo-syscall this arch lacks; anything else is a real failure. */
		if (rc < 0 && rc != -EDOM && rc != -EINVAL) {
			*what = "seccomp_rule_add";
			goto fail;
		}
	}
	/* A child that compiles in-process (NVRTC) has nothing to run. */
	if (no_exec) {
		*what = "seccomp exec rule";
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execve), 0);
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), 0);
		if (rc < 0)
			goto fail;
	}
	/* Only local (AF_UNIX) sockets: no TCP/UDP, raw, netlink or packet sockets. */
	*what = "seccomp socket rule";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	if (rc < 0)
		goto fail;
	/* prlimit64 may read limits (glibc's getrlimit uses it) but not set them (new_limit == NULL). */
	*what = "seccomp prlimit64 rule";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_NE, 0));
	if (rc < 0)
		goto fail;
	*what = "seccomp clone rule";
	for (size_t i = 0; i < KF_ARRAY_SIZE(denied_clone_flags); i++) {
		unsigned long f = denied_clone_flags[i];
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			goto fail;
	}
	/* clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes libc fall back to
	 * clone, whose flags are checked above. */
	*what = "seccomp clone3 rule";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc < 0 && rc != -EDOM)
		goto fail;
	return ctx;
fail:
	*err_out = -rc;
	seccomp_release(ctx);
	return NULL;
}

/* The compiled filters (with exec, without), made once in the parent. */
static struct sock_filter *prepared_prog[2];
static unsigned short prepared_len[2];
static pthread_once_t prepared_once = PTHREAD_ONCE_INIT;

static void prepare_one(bool no_exec)
{
	const char *what;
	int e = 0, fd;
	scmp_filter_ctx ctx = build_filter(no_exec, &e, &what);
	struct stat sb;

	if (!ctx)
		return;
	fd = memfd_create("kf-seccomp", MFD_CLOEXEC);
	if (fd >= 0 && seccomp_export_bpf(ctx, fd) == 0 && fstat(fd, &sb) == 0 && sb.st_size > 0 &&
	    sb.st_size % (off_t)sizeof(struct sock_filter) == 0 &&
	    sb.st_size / (off_t)sizeof(struct sock_filter) <= 0xffff) {
		struct sock_filter *prog = malloc((size_t)sb.st_size);
		if (prog && pread(fd, prog, (size_t)sb.st_size, 0) == sb.st_size) {
			prepared_prog[no_exec] = prog;
			prepared_len[no_exec] =
			    (unsigned short)(sb.st_size / (off_t)sizeof(struct sock_filter));
		} else {
			free(prog);
		}
	}
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
}

static void prepare_filters(void)
{
	prepare_one(false);
	prepare_one(true);
}

void kf_child_prepare(void)
{
	kf_sandbox_protect_parent(); /* before any child exists */
	pthread_once(&prepared_once, prepare_filters);
}

static void install_seccomp(bool no_exec)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		child_die("PR_SET_NO_NEW_PRIVS", errno);
	if (prepared_prog[no_exec]) {
		/* no allocation here: safe after a fork from a multi-threaded parent */
		struct sock_fprog fp = {prepared_len[no_exec], prepared_prog[no_exec]};
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0)
			child_die("PR_SET_SECCOMP", errno);
		return;
	}
	/* Not prepared (or preparing failed): build it here, in the child. */
	{
		const char *what = "seccomp";
		int e = 0, rc;
		scmp_filter_ctx ctx = build_filter(no_exec, &e, &what);
		if (!ctx)
			child_die(what, e);
		rc = seccomp_load(ctx);
		if (rc < 0)
			child_die("seccomp_load", -rc);
		seccomp_release(ctx);
	}
}

/* A forked child inherits the parent's handlers (kforge's SIGINT handler only sets a flag) and its
 * ignored signals (SIGPIPE), which exec keeps: back to the defaults, nothing blocked. Sanitizer
 * handlers for faults are left alone. */
static void reset_signals(void)
{
	static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,
				   SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD};
	sigset_t none;
	for (size_t i = 0; i < KF_ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void kf_child_apply_limits(const struct kf_child_limits *lim)
{
	/* Our own group, so one kill(-pid) reaches everything it starts. May fail with EPERM when the
	 * parent already did it for us; either way we lead our group afterwards. */
	if (getpgid(0) != getpid() && setpgid(0, 0) != 0)
		child_die("setpgid", errno);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		child_die("PR_SET_PDEATHSIG", errno);
	reset_signals();
	set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
	if (lim->cpu_s > 0)
		set_limit(RLIMIT_CPU, (rlim_t)lim->cpu_s, (rlim_t)lim->cpu_s + 1, "RLIMIT_CPU");
	if (lim->fsize_bytes)
		set_limit(RLIMIT_FSIZE, (rlim_t)lim->fsize_bytes, (rlim_t)lim->fsize_bytes, "RLIMIT_FSIZE");
	{
		rlim_t n = lim->nofile > 0 ? (rlim_t)lim->nofile : DEFAULT_NOFILE;
		set_limit(RLIMIT_NOFILE, n, n, "RLIMIT_NOFILE");
	}
	if (lim->as_bytes)
		set_limit(RLIMIT_AS, (rlim_t)lim->as_bytes, (rlim_t)lim->as_bytes, "RLIMIT_AS");
	if (lim->no_network && !(lim->jail && (lim->jail->layers & KF_LAYER_NETNS)) &&
	    unshare(CLONE_NEWNET) != 0) {
		/* EPERM (no CAP_SYS_ADMIN) or EINVAL/ENOSYS (no netns support): tolerated by contract. */
		if (errno != EPERM && errno != EINVAL && errno != ENOSYS)
			child_die("unshare(CLONE_NEWNET)", errno);
	}
	/* Namespaces, the uid, Landlock: the deny-list below would refuse the unshare calls. */
	if (lim->jail)
		kf_jail_enter(lim->jail, lim->nproc);
	if (lim->seccomp && (!lim->jail || (lim->jail->layers & KF_LAYER_SECCOMP)))
		install_seccomp(lim->jail && lim->jail->kind == KF_JAIL_INPROCESS);
}

/* ---- in the parent ------------------------------------------------------------------------ */

/* Where a child's pipe output goes: text (truncated with a marker) or a binary payload (overflow is
 * an error, since a cut record cannot be parsed). */
struct sink {
	struct kf_buf *buf;
	bool binary;
	size_t dropped; /* bytes that did not fit */
};

static enum kf_status sink_add(struct sink *s, const char *data, size_t n)
{
	size_t room;
	if (!s || !s->buf)
		return KF_OK;
	room = s->buf->len < s->buf->max ? s->buf->max - s->buf->len : 0;
	if (s->dropped || n > room) {
		size_t keep = s->dropped ? 0 : room;
		enum kf_status st = keep ? kf_buf_add(s->buf, data, keep) : KF_OK;
		s->dropped += n - keep;
		return st;
	}
	return kf_buf_add(s->buf, data, n);
}

/* For text: cut the tail so that "\n[... truncated N bytes]" fits at max (kf_buf_add_truncated's
 * format; the marker itself may pass max by a few bytes so the cut is always visible). */
static enum kf_status sink_finish(struct sink *s)
{
	char note[64];
	struct kf_buf *b = s->buf;
	size_t saved;
	enum kf_status st;

	if (!b || !s->dropped || s->binary)
		return KF_OK;
	snprintf(note, sizeof(note), "\n[... truncated %zu bytes]", s->dropped);
	if (b->len > strlen(note) + 16) {
		size_t cut = strlen(note);
		b->len -= cut;
		b->data[b->len] = '\0';
		s->dropped += cut;
		snprintf(note, sizeof(note), "\n[... truncated %zu bytes]", s->dropped);
	}
	saved = b->max;
	b->max = SIZE_MAX;
	st = kf_buf_adds(b, note);
	b->max = saved;
	return st;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static void kill_group(pid_t pid)
{
	/* The group first (grandchildren), then the child itself in case it had not yet made its group. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

static bool child_has_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: look without reaping, so the pid (and the group id) cannot be reused before the group
	 * kill below. */
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno == ECHILD;
	return si.si_pid == pid;
}

/* Waits for pid (and reads fd until EOF when fd >= 0), enforcing timeout_ms; reaps and fills res. */
static enum kf_status supervise(pid_t pid, int fd, struct sink *sink, int timeout_ms,
				struct kf_child_result *res, struct kf_err *err)
{
	double t0 = kf_now_ms(), deadline = timeout_ms > 0 ? t0 + timeout_ms : 0, drain_until = 0;
	int pidfd = open_pidfd(pid), status = 0;
	bool exited = false, eof = fd < 0, interrupted = false;
	enum kf_status st = KF_OK, sink_st = KF_OK;
	char chunk[16384];
	pid_t w;

	memset(res, 0, sizeof(*res));
	while (!exited || !eof) {
		struct pollfd pfd[3];
		int nfd = 0, wait_ms = -1, r, fd_i = -1, pid_i = -1;
		double now = kf_now_ms();

		if (!exited && kf_cancelled()) {
			interrupted = true;
			break;
		}
		if (!exited && deadline > 0) {
			if (now >= deadline) {
				res->timed_out = true;
				break;
			}
			wait_ms = (int)(deadline - now) + 1;
		}
		if (exited) {
			if (now >= drain_until)
				break;
			wait_ms = (int)(drain_until - now) + 1;
		}
		if (!eof) {
			fd_i = nfd;
			pfd[nfd++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
		if (!exited) {
			if (pidfd >= 0) {
				pid_i = nfd;
				pfd[nfd++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
			} else if (wait_ms < 0 || wait_ms > FALLBACK_TICK_MS) {
				wait_ms = FALLBACK_TICK_MS;
			}
			if (kf_cancel_fd() >= 0)
				pfd[nfd++] = (struct pollfd){.fd = kf_cancel_fd(), .events = POLLIN};
			else if (wait_ms < 0 || wait_ms > CANCEL_TICK_MS)
				wait_ms = CANCEL_TICK_MS;
		}
		r = poll(pfd, (nfds_t)nfd, wait_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			st = kf_err_set(err, KF_ERR_IO, "cannot wait for child %d: %s", (int)pid,
					strerror(errno));
			break;
		}
		if (fd_i >= 0 && pfd[fd_i].revents) {
			ssize_t n = read(fd, chunk, sizeof(chunk));
			if (n > 0) {
				enum kf_status s2 = sink_add(sink, chunk, (size_t)n);
				if (s2 && !sink_st)
					sink_st = s2;
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				eof = true;
			}
		}
		if (!exited && ((pid_i >= 0 && pfd[pid_i].revents) || (pidfd < 0 && child_has_exited(pid)))) {
			exited = true;
			/* Whatever it left running in its group goes with it. */
			kill(-pid, SIGKILL);
			drain_until = kf_now_ms() + DRAIN_GRACE_MS;
		}
	}
	if (!exited)
		kill_group(pid);
	do {
		w = wait4(pid, &status, 0, &res->ru);
	} while (w < 0 && errno == EINTR);
	if (pidfd >= 0)
		close(pidfd);
	res->wall_ms = kf_now_ms() - t0;
	if (w < 0 && !st)
		st = kf_err_set(err, KF_ERR_IO, "cannot reap child %d: %s", (int)pid, strerror(errno));
	if (w == pid) {
		if (WIFEXITED(status)) {
			res->exit_code = WEXITSTATUS(status);
		} else if (WIFSIGNALED(status)) {
			res->term_signal = WTERMSIG(status);
			res->exit_code = 128 + res->term_signal;
		}
	}
	if (st)
		return st;
	if (interrupted)
		return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted: child %d and its group killed",
				  (int)pid);
	if (sink) {
		enum kf_status s2 = sink_finish(sink);
		if (s2 && !sink_st)
			sink_st = s2;
	}
	if (res->timed_out)
		return kf_err_set(err, KF_ERR_TIMEOUT, "killed after %d ms (wall-clock limit)", timeout_ms);
	if (res->term_signal == SIGXCPU) {
		res->timed_out = true;
		return kf_err_set(err, KF_ERR_TIMEOUT, "killed at its CPU-time limit (SIGXCPU)");
	}
	if (sink_st == KF_ERR_NOMEM)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory reading child output");
	if (sink && sink->binary && sink->dropped)
		return kf_err_set(err, KF_ERR_LIMIT, "child sent more than %zu bytes", sink->buf->max);
	return KF_OK;
}

enum kf_status kf_child_wait(pid_t pid, int timeout_ms, struct kf_child_result *res, struct kf_err *err)
{
	return supervise(pid, -1, NULL, timeout_ms, res, err);
}

/* The hard RLIMIT_CPU (soft + 1 s) ends a child with SIGKILL; count that as its CPU limit too. */
static enum kf_status check_cpu_kill(enum kf_status st, const struct kf_child_limits *lim,
				     struct kf_child_result *res, struct kf_err *err)
{
	double cpu_s;
	if (st || !lim->cpu_s || res->term_signal != SIGKILL)
		return st;
	cpu_s = (double)res->ru.ru_utime.tv_sec + res->ru.ru_utime.tv_usec / 1e6 +
		(double)res->ru.ru_stime.tv_sec + res->ru.ru_stime.tv_usec / 1e6;
	if (cpu_s + 0.05 < lim->cpu_s)
		return st;
	res->timed_out = true;
	return kf_err_set(err, KF_ERR_TIMEOUT, "killed at its CPU-time limit (%d s)", lim->cpu_s);
}

/* Current virtual size of this process in bytes (0 when unknown). */
static uint64_t self_vm_bytes(void)
{
	unsigned long long pages = 0;
	char line[128];
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	/* strtoull, not fscanf: an out-of-range number is undefined for fscanf (cert-err34-c) */
	if (fgets(line, sizeof(line), f))
		pages = strtoull(line, NULL, 10);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void child_write_err(const char *what, const char *name, int e)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "kforge sandbox: %s '%s': %s\n", what, name, strerror(e));
	if (n > 0) {
		ssize_t w = write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		(void)w;
	}
}

enum kf_status kf_child_run_argv(const char *const *argv, const char *cwd, const struct kf_child_limits *lim,
				 struct kf_buf *out, struct kf_child_result *res, struct kf_err *err)
{
	static const struct kf_child_limits none;
	struct sink sink = {out, false, 0};
	int p[2];
	pid_t pid, parent = getpid();
	enum kf_status st;

	if (!lim)
		lim = &none;
	if (!argv || !argv[0])
		return kf_err_set(err, KF_ERR_INVALID, "no program to run");
	if (pipe2(p, O_CLOEXEC) != 0)
		return kf_err_set(err, KF_ERR_IO, "cannot create a pipe: %s", strerror(errno));
	kf_child_prepare(); /* the seccomp filter, compiled before the fork */
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return kf_err_set(err, KF_ERR_IO, "cannot fork: %s", strerror(e));
	}
	if (pid == 0) {
		int devnull;
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(KF_CHILD_EXIT_SETUP);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			child_die("redirect", errno);
		/* Nothing of the parent's (databases, sockets, other pipes) leaks into the child. */
		if (close_range(3, ~0U, 0) != 0)
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
		if (cwd && chdir(cwd) != 0) {
			child_write_err("cannot enter", cwd, errno);
			_exit(KF_CHILD_EXIT_SETUP);
		}
		kf_child_apply_limits(lim);
		execvp(argv[0], (char *const *)argv);
		child_write_err("cannot run", argv[0], errno);
		_exit(KF_CHILD_EXIT_EXEC);
	}
	close(p[1]);
	setpgid(pid, pid); /* also here, so a kill(-pid) right after fork already reaches it; may fail */
	st = supervise(pid, p[0], &sink, lim->timeout_ms, res, err);
	close(p[0]);
	return check_cpu_kill(st, lim, res, err);
}

enum kf_status kf_child_run_fn(int (*fn)(void *arg, int fd), void *arg, const struct kf_child_limits *lim,
			       struct kf_buf *payload, struct kf_child_result *res, struct kf_err *err)
{
	static const struct kf_child_limits none;
	struct kf_child_limits l;
	struct sink sink = {payload, true, 0};
	int p[2];
	pid_t pid, parent = getpid();
	enum kf_status st;

	l = lim ? *lim : none;
	/* The forked child starts with all of this process's mappings (under ASan, terabytes of reserved
	 * shadow), so an absolute RLIMIT_AS would forbid any new mapping: the limit bounds what the child
	 * may map on top of what it inherited. */
	if (l.as_bytes) {
		uint64_t vm = self_vm_bytes();
		l.as_bytes = vm > UINT64_MAX - l.as_bytes ? UINT64_MAX : vm + l.as_bytes;
	}
	if (pipe2(p, O_CLOEXEC) != 0)
		return kf_err_set(err, KF_ERR_IO, "cannot create a pipe: %s", strerror(errno));
	kf_child_prepare(); /* the seccomp filter, compiled before the fork */
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return kf_err_set(err, KF_ERR_IO, "cannot fork: %s", strerror(e));
	}
	if (pid == 0) {
		int devnull, rc;
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(KF_CHILD_EXIT_SETUP);
		close(p[0]);
		if (p[1] != 3 && dup2(p[1], 3) < 0)
			child_die("dup2", errno);
		devnull = open("/dev/null", O_RDWR);
		/* stdout to /dev/null (a library's chatter must not corrupt the parent's stdout); stderr
		 * stays, for our own diagnostics and sanitizer reports. */
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0)
			child_die("redirect", errno);
		if (close_range(4, ~0U, 0) != 0)
			for (int fd = 4; fd < 1024; fd++)
				close(fd);
		kf_child_apply_limits(&l);
		rc = fn(arg, 3);
		/* _exit: no atexit handlers, no stdio flush of buffers copied from the parent, no leak check
		 * of the parent's heap. */
		_exit(rc & 0xff);
	}
	close(p[1]);
	setpgid(pid, pid);
	st = supervise(pid, p[0], &sink, l.timeout_ms, res, err);
	close(p[0]);
	return check_cpu_kill(st, &l, res, err);
}
