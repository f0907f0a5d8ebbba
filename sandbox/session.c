/* Worker sessions, the trusted side: spawn one kforge-worker under limits, hand it the module and the
 * plan, drive it step by step over a SOCK_SEQPACKET socket (sandbox/common/proto.h) and share an arena
 * (a sealed memfd) for inputs and outputs. Every wait has a deadline and every reply is hostile: a
 * worker that hangs, dies or lies becomes a TIMEOUT/CRASH/RUNTIME result, never a crash of kforge. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "cancel.h"
#include "child.h"
#include "common/proto.h"
#include "jail.h"
#include "redact.h"
#include "sandbox.h"

#define DEFAULT_START_TIMEOUT_MS 30000
#define DEFAULT_STEP_TIMEOUT_MS 60000
#define DEFAULT_HOST_MEM_BYTES (8ull << 30)
#define WORKER_CPU_S 900                  /* RLIMIT_CPU backstop; wall-clock deadlines do the real work */
#define WORKER_FSIZE_BYTES (256ull << 20) /* the worker writes no files; a driver cache at most */
#define LOG_MAX (64 * 1024)               /* bytes of the worker's stderr kept */
#define QUIT_GRACE_MS 2000                /* after QUIT, then the group is killed */
#define DEATH_GRACE_MS 1000               /* after the connection closes, for the exit status to show */
#define CANCEL_TICK_MS 200                /* poll period when the cancellation token has no pipe */
#define CGROUP_SLACK_BYTES (1ull << 30)   /* a cpu worker's cgroup: its address-space limit plus this */

struct kf_session {
	pid_t pid;         /* the worker, leader of its own process group; 0 once reaped */
	int sock;          /* our end of the seqpacket pair */
	int log_fd;        /* read end of the worker's stdout+stderr pipe, -1 at EOF */
	struct kf_buf log; /* what the worker wrote there (bounded) */
	bool dead;         /* no more steps: exited, killed, or broke the protocol */
	bool killed;       /* we sent the SIGKILL */
	int wstatus;       /* from wait4 once reaped */
	struct rusage ru;
	enum kf_backend_kind backend;
	bool sanitize;
	uint8_t *arena;
	size_t arena_bytes;
	struct kf_device_info info;
	struct kf_proto_setup *setup; /* what the worker was given (step checks) */
	void *buf;                    /* KF_PROTO_MSG_MAX bytes, malloc-aligned */
	struct kf_jail jail;          /* the worker's layers, uid and cgroup */
	struct kf_buf *log_copy;      /* opts->log_copy */
	double deadline;              /* end of the whole evaluation (kf_now_ms), 0: none */
	size_t log_checked;           /* log bytes already searched for refusals */
	bool secret_seen;             /* the worker wrote something that had to be redacted */
};

static const char *backend_str(enum kf_backend_kind b)
{
	return b == KF_BACKEND_CUDA ? "cuda" : "cpu";
}

/* ---- worker path and environment ---------------------------------------------------------- */

static char exe_dir_worker[PATH_MAX];
static pthread_once_t exe_dir_once = PTHREAD_ONCE_INIT;

static void find_exe_dir_worker(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (snprintf(exe_dir_worker, sizeof(exe_dir_worker), "%s/kforge-worker", self) >=
	    (int)sizeof(exe_dir_worker))
		exe_dir_worker[0] = '\0';
}

const char *kf_worker_default_path(void)
{
	const char *env = getenv("KFORGE_WORKER");
	if (env && *env)
		return env;
	pthread_once(&exe_dir_once, find_exe_dir_worker);
	return exe_dir_worker[0] ? exe_dir_worker : NULL;
}

/* The worker runs candidate code: it gets the variables a toolchain, a driver or a sanitizer reads,
 * and nothing that looks like a credential (API keys stay in the parent). */
static bool env_passes(const char *kv)
{
	static const char *const exact[] = {
	    "PATH",       "HOME",         "TMPDIR",        "LANG",         "LC_ALL",   "LD_LIBRARY_PATH",
	    "LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "CUDA_HOME"};
	static const char *const prefix[] = {"CUDA_", "NVIDIA_", "__NV", "KFORGE_"};
	static const char *const secret[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH"};
	const char *eq = strchr(kv, '=');
	size_t n = eq ? (size_t)(eq - kv) : 0;
	bool ok = false;

	if (!n)
		return false;
	for (size_t i = 0; i < KF_ARRAY_SIZE(exact) && !ok; i++)
		ok = strlen(exact[i]) == n && !strncmp(kv, exact[i], n);
	for (size_t i = 0; i < KF_ARRAY_SIZE(prefix) && !ok; i++)
		ok = !strncmp(kv, prefix[i], strlen(prefix[i]));
	for (size_t i = 0; i < KF_ARRAY_SIZE(secret) && ok; i++)
		if (memmem(kv, n, secret[i], strlen(secret[i])))
			ok = false;
	return ok;
}

extern char **environ;

/* AddressSanitizer (in a sanitized worker or module) lowers RLIMIT_CORE itself at start-up, a setrlimit
 * the seccomp filter refuses (the limit is 0 already), and its leak check needs ptrace, which the filter
 * refuses too (it would only print a fatal error at exit). */
#define ASAN_WORKER_OPTIONS "disable_coredump=0:detect_leaks=0"

/* The AddressSanitizer runtime a sanitized cpu module needs preloaded into the worker (a module built
 * with -fsanitize=address cannot be dlopen'ed into a process without it): $KFORGE_ASAN_RUNTIME, else
 * the one the host compiler ($KFORGE_CXX, else g++, as sandbox/cpu uses) links. Found once per
 * process; empty when there is none (the worker then says the backend is unavailable, and why). */
static char asan_rt[PATH_MAX];
static pthread_once_t asan_rt_once = PTHREAD_ONCE_INIT;

static void find_asan_rt(void)
{
	const char *env = getenv("KFORGE_ASAN_RUNTIME"), *cxx = getenv("KFORGE_CXX");
	const char *argv[] = {cxx && *cxx ? cxx : "g++", "-print-file-name=libasan.so", NULL};
	struct kf_child_limits lim = {.timeout_ms = 20000};
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(PATH_MAX);

	if (env && *env) {
		snprintf(asan_rt, sizeof(asan_rt), "%s", env);
		return;
	}
	if (kf_child_run_argv(argv, NULL, &lim, &out, &res, NULL) == KF_OK && !res.term_signal &&
	    !res.exit_code) {
		while (out.len && (out.data[out.len - 1] == '\n' || out.data[out.len - 1] == ' '))
			out.data[--out.len] = '\0';
		/* A bare "libasan.so" means the compiler has none. */
		if (out.data[0] == '/' && !realpath(out.data, asan_rt))
			asan_rt[0] = '\0';
	}
	kf_buf_release(&out);
}

/* The worker's environment: the filtered parent environment plus our ASAN_OPTIONS and, for a
 * sanitized module, LD_PRELOAD of the ASan runtime. */
struct wenv {
	char **env;
	char *owned[2];
};

static void worker_env_free(struct wenv *w)
{
	free(w->owned[0]);
	free(w->owned[1]);
	free(w->env);
}

/* With the env layer the worker's whole environment is an allow-list: the sanitizers' options, the
 * AddressSanitizer runtime a sanitized module needs, and for the cuda backend what selects a device and
 * finds the driver. No keys, no paths of kforge's, no HOME. */
static void worker_env_jailed(struct kf_jail *j, enum kf_backend_kind b, bool sanitize)
{
	static const char *const cuda_vars[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
						"LD_LIBRARY_PATH"};
	const char *asan = getenv("ASAN_OPTIONS"), *ubsan = getenv("UBSAN_OPTIONS");
	char opts[KF_JAIL_PATH];

	snprintf(opts, sizeof(opts), "%s%s" ASAN_WORKER_OPTIONS, asan ? asan : "", asan && *asan ? ":" : "");
	kf_jail_setenv(j, "ASAN_OPTIONS", opts);
	if (ubsan && *ubsan)
		kf_jail_setenv(j, "UBSAN_OPTIONS", ubsan);
	if (sanitize) {
		pthread_once(&asan_rt_once, find_asan_rt);
		if (asan_rt[0])
			kf_jail_setenv(j, "LD_PRELOAD", asan_rt);
	}
	if (b == KF_BACKEND_CUDA) {
		for (size_t i = 0; i < KF_ARRAY_SIZE(cuda_vars); i++)
			if (getenv(cuda_vars[i]))
				kf_jail_setenv(j, cuda_vars[i], getenv(cuda_vars[i]));
		/* CUBINs for the exact arch need no JIT cache (which would live under a HOME). */
		kf_jail_setenv(j, "CUDA_CACHE_DISABLE", "1");
	}
}

static enum kf_status worker_env(struct wenv *w, bool sanitize)
{
	const char *asan = getenv("ASAN_OPTIONS"), *pre = getenv("LD_PRELOAD");
	size_t n = 0, k = 0;

	memset(w, 0, sizeof(*w));
	while (environ && environ[n])
		n++;
	w->env = calloc(n + 3, sizeof(*w->env));
	if (!w->env)
		return KF_ERR_NOMEM;
	if (asprintf(&w->owned[0], "ASAN_OPTIONS=%s%s" ASAN_WORKER_OPTIONS, asan ? asan : "",
		     asan && *asan ? ":" : "") < 0) {
		w->owned[0] = NULL;
		worker_env_free(w);
		return KF_ERR_NOMEM;
	}
	w->env[k++] = w->owned[0];
	if (sanitize) {
		pthread_once(&asan_rt_once, find_asan_rt);
		if (asan_rt[0]) {
			if (asprintf(&w->owned[1], "LD_PRELOAD=%s%s%s", asan_rt, pre && *pre ? ":" : "",
				     pre ? pre : "") < 0) {
				w->owned[1] = NULL;
				worker_env_free(w);
				return KF_ERR_NOMEM;
			}
			w->env[k++] = w->owned[1];
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!env_passes(environ[i]) || !strncmp(environ[i], "ASAN_OPTIONS=", 13) ||
		    (w->owned[1] && !strncmp(environ[i], "LD_PRELOAD=", 11)))
			continue;
		w->env[k++] = environ[i];
	}
	return KF_OK;
}

/* ---- process control ---------------------------------------------------------------------- */

static double now_ms(void)
{
	return kf_now_ms();
}

/* Reads whatever the worker wrote to its stdout/stderr without blocking. */
static void drain_log(struct kf_session *s)
{
	char chunk[4096];

	while (s->log_fd >= 0) {
		ssize_t n = read(s->log_fd, chunk, sizeof(chunk));
		if (n > 0) {
			size_t room = s->log.len < s->log.max ? s->log.max - s->log.len : 0, at = s->log.len;
			kf_buf_add(&s->log, chunk, (size_t)n < room ? (size_t)n : room);
			/* Redacted as it arrives: nothing the worker wrote reaches a message unredacted. */
			if (kf_redact_buf(&s->log, at))
				s->secret_seen = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		close(s->log_fd); /* EOF or an error: nothing more will come */
		s->log_fd = -1;
	}
}

static void kill_group(struct kf_session *s)
{
	if (s->pid <= 0)
		return;
	kill(-s->pid, SIGKILL);
	kill(s->pid, SIGKILL); /* in case it never became its group's leader */
	s->killed = true;
}

/* Has the worker ended? Looks without reaping, so its pid (= its group id) cannot be reused while we
 * still may kill the group. */
static bool exited(struct kf_session *s)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno == ECHILD;
	return si.si_pid == s->pid;
}

/* Waits up to grace_ms for the worker to end by itself (draining its log), then kills what is left of
 * its group and reaps it. Safe to call more than once. */
static void reap(struct kf_session *s, int grace_ms)
{
	double end = now_ms() + grace_ms;
	pid_t r;

	s->dead = true;
	if (s->pid <= 0)
		return;
	while (!exited(s) && now_ms() < end) {
		struct pollfd p = {s->log_fd, POLLIN, 0};
		int wait = (int)(end - now_ms());
		if (wait > 10)
			wait = 10;
		if (s->log_fd >= 0 && poll(&p, 1, wait < 1 ? 1 : wait) > 0)
			drain_log(s);
		else if (s->log_fd < 0)
			usleep(2000);
	}
	/* Whatever remains of the group (or the worker itself, past its grace) goes now. */
	kill(-s->pid, SIGKILL);
	if (!exited(s))
		kill_group(s);
	do
		r = wait4(s->pid, &s->wstatus, 0, &s->ru);
	while (r < 0 && errno == EINTR);
	s->pid = 0;
	drain_log(s);
}

/* The most telling line of the worker's log for a message: a sanitizer's summary or error line,
 * else the last non-empty line. */
static void log_excerpt(const struct kf_session *s, char *out, size_t cap)
{
	static const char *const marks[] = {"SUMMARY: ", "ERROR: ", "runtime error", "kforge-worker:"};
	const char *t = s->log.data, *line = NULL;
	size_t len = 0;

	out[0] = '\0';
	for (size_t m = 0; m < KF_ARRAY_SIZE(marks) && !line; m++) {
		const char *hit = strstr(t, marks[m]);
		if (hit) {
			line = hit;
			while (line > t && line[-1] != '\n')
				line--;
		}
	}
	if (!line) {
		const char *end = t + s->log.len;
		while (end > t && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		line = end;
		while (line > t && line[-1] != '\n')
			line--;
		len = (size_t)(end - line);
	} else {
		const char *nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
	}
	if (len >= cap)
		len = cap - 1;
	for (size_t i = 0; i < len; i++)
		out[i] = (line[i] >= 0x20 && line[i] < 0x7f) ? line[i] : '?';
	out[len] = '\0';
}

static const char *sig_name(int sig, char *tmp, size_t cap)
{
	const char *abbr = sigabbrev_np(sig);
	if (abbr)
		snprintf(tmp, cap, "SIG%s", abbr);
	else
		snprintf(tmp, cap, "signal %d", sig);
	return tmp;
}

/* Describes how the (reaped) worker ended; returns the status a step result should carry. `running`:
 * it died while the kernels ran (a fault there is the kernel's). */
static enum kf_status describe_death(const struct kf_session *s, bool running, char *msg, size_t cap)
{
	char ex[200], sn[32];
	enum kf_status st = KF_ERR_CRASH;
	const char *when = running ? " while the kernels ran" : "";
	int n;

	log_excerpt(s, ex, sizeof(ex));
	if (WIFSIGNALED(s->wstatus)) {
		int sig = WTERMSIG(s->wstatus);
		if (s->killed && sig == SIGKILL)
			n = snprintf(msg, cap, "worker closed the connection%s and was killed", when);
		else if (sig == SIGSYS)
			/* The filter's SIGSYS with the signal blocked (as posix_spawn and system() do) ends
			 * the process: a refused syscall all the same. */
			n = snprintf(msg, cap,
				     "%s a system call (SIGSYS)%s: the candidate tried something "
				     "the sandbox forbids",
				     KF_SANDBOX_REFUSED_MARK, when);
		else
			n = snprintf(msg, cap, "worker died of %s%s", sig_name(sig, sn, sizeof(sn)), when);
		/* A fault in kernel code: on the cpu backend the kernel runs inside the worker (an assert or
		 * __trap() there aborts it); a GPU kernel's faults come back as results instead. */
		if (running && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
				sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS))
			st = KF_ERR_RUNTIME;
		else if (sig == SIGXCPU)
			st = KF_ERR_TIMEOUT;
	} else {
		n = snprintf(msg, cap, "worker exited with status %d%s", WEXITSTATUS(s->wstatus), when);
		/* AddressSanitizer (in a sanitized module, or in a sanitized worker catching the kernel's
		 * SEGV) reports and exits while the kernels ran: that is the kernel's fault. */
		if (running && strstr(s->log.data, "AddressSanitizer"))
			st = KF_ERR_RUNTIME;
	}
	if (ex[0] && n >= 0 && (size_t)n < cap)
		snprintf(msg + n, cap - (size_t)n, ": %s", ex);
	return st;
}

/* A wait's end, cut at the end of the whole evaluation. */
static double clamp_deadline(const struct kf_session *s, double d)
{
	return s->deadline > 0 && s->deadline < d ? s->deadline : d;
}

/* After the worker answered: did what it wrote since the last look hold a syscall the sandbox refused,
 * or something that had to be redacted as a secret? Either rejects the candidate (why says how). */
static bool log_rejects(struct kf_session *s, char *why, size_t cap)
{
	size_t mark = strlen(KF_SANDBOX_REFUSED_MARK);
	size_t from = s->log_checked > mark ? s->log_checked - mark : 0;
	const char *hit;

	drain_log(s);
	hit = s->log.len > from ? strstr(s->log.data + from, KF_SANDBOX_REFUSED_MARK) : NULL;
	s->log_checked = s->log.len;
	if (hit) {
		size_t len = strcspn(hit, "\n");
		snprintf(why, cap, "%.*s", (int)(len > 300 ? 300 : len), hit);
		return true;
	}
	if (s->secret_seen) {
		snprintf(why, cap,
			 "the worker wrote text that looks like a secret (redacted): the candidate "
			 "is rejected");
		return true;
	}
	return false;
}

/* Redacts a message that came from the worker; a hit rejects the candidate. */
static bool msg_redacted(struct kf_session *s, char *msg, size_t cap)
{
	if (!kf_redact(msg, cap))
		return false;
	s->secret_seen = true;
	return true;
}

/* Waits for one message until deadline (ms, kf_now_ms clock), keeping the log drained. KF_OK with the
 * datagram in s->buf; KF_ERR_TIMEOUT; KF_ERR_CRASH when the connection closed; KF_ERR_PARSE for a
 * malformed datagram; KF_ERR_IO when polling failed. */
static enum kf_status wait_msg(struct kf_session *s, double deadline, size_t *n, enum kf_msg_type *type,
			       struct kf_err *err)
{
	for (;;) {
		/* the log last: without one, the cancellation pipe takes its place */
		struct pollfd p[3] = {
		    {s->sock, POLLIN, 0}, {kf_cancel_fd(), POLLIN, 0}, {s->log_fd, POLLIN, 0}};
		double left = deadline - now_ms();
		int r, wait;

		if (kf_cancelled())
			return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
		if (left <= 0)
			return kf_err_set(err, KF_ERR_TIMEOUT, "no answer in time");
		wait = left > INT_MAX ? INT_MAX : (int)left + 1;
		if (kf_cancel_fd() < 0 && wait > CANCEL_TICK_MS)
			wait = CANCEL_TICK_MS;
		r = poll(p, s->log_fd >= 0 ? 3 : 2, wait);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return kf_err_set(err, KF_ERR_IO, "poll: %s", strerror(errno));
		}
		if (r > 0 && s->log_fd >= 0 && p[2].revents)
			drain_log(s);
		if (r > 0 && p[0].revents) {
			size_t n_fds = 0;
			int fds[1];
			enum kf_status st =
			    kf_proto_recv(s->sock, s->buf, KF_PROTO_MSG_MAX, n, fds, 1, &n_fds, err);
			if (n_fds) {
				close(fds[0]); /* a worker has no business sending us descriptors */
				return kf_err_set(err, KF_ERR_PARSE, "worker sent a descriptor");
			}
			if (st == KF_ERR_TIMEOUT)
				continue; /* spurious wake-up */
			if (st)
				return st;
			return kf_proto_type(s->buf, *n, type, err);
		}
	}
}

/* Forks and execs the worker with its limits; on success s->pid, s->sock, s->log_fd are set. */
static enum kf_status spawn(struct kf_session *s, const struct kf_worker_opts *opts, struct kf_err *err)
{
	const char *path = opts->worker_path ? opts->worker_path : kf_worker_default_path();
	char seed[32], mem[32], jail_arg[128];
	const char *argv[24];
	bool cpu = opts->backend == KF_BACKEND_CPU;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int argc = 0, sv[2], lp[2], ep[2], e = 0;
	struct kf_child_limits lim = {0};
	struct wenv env;
	pid_t pid;
	ssize_t r;

	if (!path || !*path)
		return kf_err_set(err, KF_ERR_NOTFOUND, "cannot find kforge-worker (set KFORGE_WORKER)");
	if (access(path, X_OK) != 0)
		return kf_err_set(err, errno == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO,
				  "cannot run worker '%s': %s", path, strerror(errno));
	argv[argc++] = path;
	argv[argc++] = "--backend";
	argv[argc++] = backend_str(opts->backend);
	argv[argc++] = "--fd";
	argv[argc++] = "3";
	if (opts->shuffle_seed) {
		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)opts->shuffle_seed);
		argv[argc++] = "--shuffle-seed";
		argv[argc++] = seed;
	}
	if (opts->sanitize)
		argv[argc++] = "--sanitize";
	snprintf(mem, sizeof(mem), "%llu",
		 (unsigned long long)(opts->host_mem_bytes ? opts->host_mem_bytes : DEFAULT_HOST_MEM_BYTES));
	argv[argc++] = "--host-mem";
	argv[argc++] = mem;
	if (opts->test_entry) {
		argv[argc++] = "--test-module";
		argv[argc++] = opts->test_entry;
	}
	/* The worker confines itself after exec (it may not be able to exec under a stranger's uid). */
	kf_jail_init(&s->jail, cpu ? KF_JAIL_CPU_WORKER : KF_JAIL_GPU_WORKER);
	{
		/* Block threads, sanitizer threads and the pid-namespace relay: 4 per CPU and then some. */
		int nproc = (int)(ncpu > 0 ? ncpu : 1) * 4 + 64;
		uint64_t host = opts->host_mem_bytes ? opts->host_mem_bytes : DEFAULT_HOST_MEM_BYTES;
		char spec[96];
		kf_jail_worker_arg(&s->jail, spec, sizeof(spec));
		snprintf(jail_arg, sizeof(jail_arg), "%s,nproc=%d", spec, nproc);
		/* The GPU worker gets a process bound only: the driver's memory use is not ours to bound. */
		kf_jail_cgroup(&s->jail, cpu ? host + CGROUP_SLACK_BYTES : 0, nproc);
		argv[argc++] = "--jail";
		argv[argc++] = jail_arg;
	}
	argv[argc] = NULL;

	lim.cpu_s = WORKER_CPU_S;
	lim.fsize_bytes = WORKER_FSIZE_BYTES;
	/* The worker installs its own syscall filter (and namespaces) after exec: a filter installed here
	 * would refuse its unshare and setresuid calls. */
	lim.no_network = false;
	lim.seccomp = false;
	/* RLIMIT_AS only for the cpu backend (the CUDA driver reserves huge address ranges), and not when
	 * AddressSanitizer is in the worker (its shadow memory reserves terabytes of address space). */
#if !defined(__SANITIZE_ADDRESS__)
	if (opts->backend == KF_BACKEND_CPU && !opts->sanitize)
		lim.as_bytes = opts->host_mem_bytes ? opts->host_mem_bytes : DEFAULT_HOST_MEM_BYTES;
#endif

	if (s->jail.layers & KF_LAYER_ENV) {
		memset(&env, 0, sizeof(env));
		worker_env_jailed(&s->jail, opts->backend, opts->sanitize);
		env.env = NULL;
	} else if (worker_env(&env, opts->sanitize)) {
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		worker_env_free(&env);
		return kf_err_set(err, KF_ERR_IO, "socketpair: %s", strerror(errno));
	}
	if (pipe2(lp, O_CLOEXEC) != 0) {
		e = errno;
		close(sv[0]);
		close(sv[1]);
		worker_env_free(&env);
		return kf_err_set(err, KF_ERR_IO, "pipe: %s", strerror(e));
	}
	if (pipe2(ep, O_CLOEXEC) != 0) {
		e = errno;
		close(sv[0]);
		close(sv[1]);
		close(lp[0]);
		close(lp[1]);
		worker_env_free(&env);
		return kf_err_set(err, KF_ERR_IO, "pipe: %s", strerror(e));
	}
	kf_child_prepare(); /* the seccomp filter, compiled before the fork */
	pid = fork();
	if (pid == 0) {
		/* Child: fds 0 /dev/null, 1+2 the log pipe, 3 the socket, 4 the exec-error pipe
		 * (close-on-exec), nothing else. Move everything high first so the dup2s cannot clobber each
		 * other. */
		int so = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), lo = fcntl(lp[1], F_DUPFD_CLOEXEC, 10);
		int eo = fcntl(ep[1], F_DUPFD_CLOEXEC, 10), nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (so < 0 || lo < 0 || eo < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(lo, 1) < 0 ||
		    dup2(lo, 2) < 0 || dup2(so, 3) < 0 || dup2(eo, 4) < 0 ||
		    fcntl(4, F_SETFD, FD_CLOEXEC) < 0)
			_exit(KF_CHILD_EXIT_SETUP);
		if (close_range(5, ~0U, 0) != 0)
			for (int fd = 5; fd < 4096; fd++)
				close(fd);
		kf_child_apply_limits(&lim);
		kf_jail_join_cgroup(&s->jail);
		execve(path, (char *const *)argv, env.env ? env.env : (char *const *)s->jail.envp);
		e = errno;
		if (write(4, &e, sizeof(e)) < 0)
			_exit(KF_CHILD_EXIT_EXEC);
		_exit(KF_CHILD_EXIT_EXEC);
	}
	e = errno;
	worker_env_free(&env);
	close(sv[1]);
	close(lp[1]);
	close(ep[1]);
	if (pid < 0) {
		close(sv[0]);
		close(lp[0]);
		close(ep[0]);
		return kf_err_set(err, KF_ERR_IO, "cannot fork: %s", strerror(e));
	}
	setpgid(pid, pid); /* also here, so a kill(-pid) right away reaches it; may fail once it exec'ed */
	s->pid = pid;
	s->sock = sv[0];
	s->log_fd = lp[0];
	fcntl(s->log_fd, F_SETFL, O_NONBLOCK);

	/* The exec-error pipe closes on a successful exec; an errno arrives when it failed. */
	do
		r = read(ep[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(ep[0]);
	if (r == (ssize_t)sizeof(e)) {
		reap(s, DEATH_GRACE_MS);
		return kf_err_set(err, e == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO,
				  "cannot run worker '%s': %s", path, strerror(e));
	}
	return KF_OK;
}

/* Reads HELLO; fills s->info. */
static enum kf_status read_hello(struct kf_session *s, double deadline, struct kf_err *err)
{
	struct kf_proto_hello h;
	struct kf_err e = KF_ERR_INIT;
	enum kf_msg_type type;
	size_t n;
	char why[KF_PROTO_TEXT + 256];
	enum kf_status st = wait_msg(s, deadline, &n, &type, &e);

	if (st == KF_ERR_INTERRUPTED) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted while the worker started; killed");
	}
	if (st == KF_ERR_TIMEOUT) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_TIMEOUT,
				  "worker sent no hello within the start timeout; killed");
	}
	if (st == KF_ERR_CRASH) {
		reap(s, DEATH_GRACE_MS);
		describe_death(s, false, why, sizeof(why));
		return kf_err_set(err, KF_ERR_CRASH, "before its hello: %s", why);
	}
	if (!st)
		st = kf_proto_hello_decode(s->buf, n, &h, &e);
	if (st) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_CRASH, "worker broke the protocol in its hello: %s", e.msg);
	}
	kf_redact(h.msg, sizeof(h.msg));
	kf_redact(h.info.name, sizeof(h.info.name));
	if (h.status != KF_OK)
		return kf_err_set(err, KF_ERR_UNAVAILABLE, "%s backend unavailable: %s",
				  backend_str(s->backend), h.msg[0] ? h.msg : kf_status_name(h.status));
	if (strcmp(h.info.backend, backend_str(s->backend)) != 0) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_CRASH, "worker answered as backend '%s', asked for '%s'",
				  h.info.backend, backend_str(s->backend));
	}
	s->info = h.info;
	return KF_OK;
}

static enum kf_status session_new(const struct kf_worker_opts *opts, struct kf_session **out,
				  struct kf_err *err)
{
	struct kf_session *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	s->sock = -1;
	s->log_fd = -1;
	s->backend = opts->backend;
	s->sanitize = opts->sanitize;
	kf_buf_init(&s->log, LOG_MAX);
	s->buf = malloc(KF_PROTO_MSG_MAX);
	s->setup = calloc(1, sizeof(*s->setup));
	if (!s->buf || !s->setup) {
		free(s->buf);
		free(s->setup);
		free(s);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	*out = s;
	return KF_OK;
}

void kf_session_end(struct kf_session *s, struct rusage *ru)
{
	if (!s)
		return;
	if (s->pid > 0) {
		size_t n = kf_proto_empty_encode(s->buf, KF_PROTO_MSG_MAX, KF_MSG_QUIT);
		if (s->sock >= 0)
			kf_proto_send(s->sock, s->buf, n, NULL, 0, NULL);
		reap(s, QUIT_GRACE_MS);
	}
	kf_jail_release(&s->jail);
	if (s->log_copy) {
		drain_log(s);
		kf_buf_add_truncated(s->log_copy, s->log.data, s->log.len);
	}
	if (ru)
		*ru = s->ru;
	if (s->sock >= 0)
		close(s->sock);
	if (s->log_fd >= 0)
		close(s->log_fd);
	if (s->arena)
		munmap(s->arena, s->arena_bytes);
	kf_buf_release(&s->log);
	free(s->buf);
	free(s->setup);
	free(s);
}

/* A sealed memfd: its size can never change (a worker that shrank the arena would make the parent's
 * next read a SIGBUS); the module image cannot be written either. */
static int sealed_memfd(const char *name, const void *data, size_t len, bool writable, struct kf_err *err)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL | (writable ? 0 : F_SEAL_WRITE);

	if (fd < 0) {
		kf_err_set(err, KF_ERR_IO, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)len) != 0) {
		kf_err_set(err, errno == ENOSPC || errno == EFBIG ? KF_ERR_NOMEM : KF_ERR_IO,
			   "cannot size the %s to %zu bytes: %s", name, len, strerror(errno));
		close(fd);
		return -1;
	}
	for (size_t off = 0; data && off < len;) {
		ssize_t w = pwrite(fd, (const uint8_t *)data + off, len - off, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			kf_err_set(err, KF_ERR_IO, "cannot write the %s: %s", name, strerror(errno));
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, seals) != 0) {
		kf_err_set(err, KF_ERR_IO, "cannot seal the %s: %s", name, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static enum kf_status setup_worker(struct kf_session *s, const struct kf_compiled *mod, double deadline,
				   struct kf_err *err)
{
	struct kf_proto_status reply;
	struct kf_err e = KF_ERR_INIT;
	enum kf_msg_type type;
	size_t n;
	int fds[2];
	enum kf_status st;

	fds[0] = sealed_memfd("kforge-module", mod->image, mod->image_len, false, err);
	if (fds[0] < 0)
		return err ? err->code : KF_ERR_IO;
	fds[1] = sealed_memfd("kforge-arena", NULL, s->arena_bytes, true, err);
	if (fds[1] < 0) {
		close(fds[0]);
		return err ? err->code : KF_ERR_IO;
	}
	if (s->arena_bytes) {
		void *p = mmap(NULL, s->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
		if (p == MAP_FAILED) {
			st = kf_err_set(err, KF_ERR_NOMEM, "cannot map the %zu-byte arena: %s",
					s->arena_bytes, strerror(errno));
			close(fds[0]);
			close(fds[1]);
			return st;
		}
		s->arena = p;
	}
	n = kf_proto_setup_encode(s->buf, KF_PROTO_MSG_MAX, s->setup);
	st = n ? kf_proto_send(s->sock, s->buf, n, fds, 2, &e)
	       : kf_err_set(&e, KF_ERR_INTERNAL, "cannot encode the setup message");
	close(fds[0]);
	close(fds[1]);
	if (st && st != KF_ERR_CRASH)
		return kf_err_set(err, st, "%s", e.msg);
	if (!st)
		st = wait_msg(s, deadline, &n, &type, &e);
	if (st == KF_ERR_INTERRUPTED) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted during the worker's setup; killed");
	}
	if (st == KF_ERR_TIMEOUT) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_TIMEOUT,
				  "worker did not finish its setup within the start timeout; killed");
	}
	if (st == KF_ERR_CRASH) {
		char why[KF_PROTO_TEXT + 256];
		reap(s, DEATH_GRACE_MS);
		describe_death(s, false, why, sizeof(why));
		return kf_err_set(err, KF_ERR_CRASH, "during setup: %s", why);
	}
	if (!st)
		st = kf_proto_status_decode(s->buf, n, &reply, &e);
	if (st) {
		kill_group(s);
		reap(s, 0);
		return kf_err_set(err, KF_ERR_CRASH, "worker broke the protocol in its setup reply: %s",
				  e.msg);
	}
	{
		/* The module's constructors ran in there: from now on the worker may be the candidate. */
		char why[KF_PROTO_TEXT + 64];
		msg_redacted(s, reply.msg, sizeof(reply.msg));
		if (log_rejects(s, why, sizeof(why))) {
			kill_group(s);
			reap(s, 0);
			return kf_err_set(err, KF_ERR_RUNTIME, "while the module loaded: %s", why);
		}
	}
	if (reply.status == KF_OK)
		return KF_OK;
	switch (reply.status) {
	case KF_ERR_INVALID:
	case KF_ERR_UNSUPPORTED:
	case KF_ERR_RUNTIME:
		st = reply.status;
		break;
	default:
		/* A setup that fails for any other reason (out of memory, no device after a HELLO that said
		 * there was one) could be a module's constructor talking: a verdict, never an aborted run. */
		st = KF_ERR_RUNTIME;
	}
	return kf_err_set(err, st, "worker setup failed: %s", reply.msg);
}

enum kf_status kf_session_start(const struct kf_worker_opts *opts, const struct kf_compiled *mod,
				const struct kf_plan *plan, size_t arena_bytes, struct kf_session **out,
				struct kf_err *err)
{
	struct kf_session *s;
	double deadline;
	enum kf_status st;

	*out = NULL;
	if (!opts || !mod || !plan)
		return kf_err_set(err, KF_ERR_INVALID, "session needs options, a module and a plan");
	if (mod->backend != opts->backend)
		return kf_err_set(err, KF_ERR_INVALID, "module compiled for '%s', session asks for '%s'",
				  backend_str(mod->backend), backend_str(opts->backend));
	if (!mod->image || !mod->image_len)
		return kf_err_set(err, KF_ERR_INVALID, "module has no image");
	/* Library calls need the cuda backend. Said here, not left to the worker: after the module is
	 * loaded, a setup reply may be the candidate's, so the parent trusts none that says UNAVAILABLE. */
	for (size_t l = 0; opts->backend == KF_BACKEND_CPU && l < plan->n_launches; l++)
		if (plan->launches[l].kernel[0] == KF_LIBCALL_PREFIX)
			return kf_err_set(
			    err, KF_ERR_UNAVAILABLE,
			    "worker setup failed: '%s' is a library call: the cpu backend runs none "
			    "(cuBLAS and cuDNN need the cuda backend)",
			    plan->launches[l].kernel + 1);
	/* Native candidate code only inside its minimum sandbox (or with the loud opt-out). */
	if (opts->backend == KF_BACKEND_CPU && (st = kf_sandbox_cpu_check(err)) != KF_OK)
		return st;
	if (opts->deadline_ms > 0 && now_ms() >= opts->deadline_ms)
		return kf_err_set(err, KF_ERR_TIMEOUT, "the evaluation's deadline has passed");
	st = session_new(opts, &s, err);
	if (st)
		return st;
	s->deadline = opts->deadline_ms;
	s->log_copy = opts->log_copy;
	s->arena_bytes = arena_bytes;
	st = kf_proto_setup_from_plan(s->setup, plan, mod->image_len, arena_bytes, err);
	/* The worker loads kernels by the module's own names: a template instantiation by its lowered
	 * name (NVRTC's mangled name, the cpu module's trampoline). */
	for (uint32_t l = 0; !st && l < s->setup->n_launches; l++) {
		char sym[128];
		st = kf_compiled_symbol(mod, s->setup->launches[l].kernel, sym, err);
		if (st)
			kf_err_prefix(err, "line %d", s->setup->launches[l].line);
		else
			snprintf(s->setup->launches[l].kernel, sizeof(s->setup->launches[l].kernel), "%s",
				 sym);
	}
	if (st) {
		kf_session_end(s, NULL);
		return st;
	}
	deadline = clamp_deadline(
	    s, now_ms() + (opts->start_timeout_ms > 0 ? opts->start_timeout_ms : DEFAULT_START_TIMEOUT_MS));
	st = spawn(s, opts, err);
	if (!st)
		st = read_hello(s, deadline, err);
	if (!st)
		st = setup_worker(s, mod, deadline, err);
	if (st) {
		kf_session_end(s, NULL);
		return st;
	}
	*out = s;
	return KF_OK;
}

uint8_t *kf_session_arena(struct kf_session *s)
{
	return s->arena;
}

size_t kf_session_arena_size(const struct kf_session *s)
{
	return s->arena_bytes;
}

const struct kf_device_info *kf_session_device(const struct kf_session *s)
{
	return &s->info;
}

const char *kf_session_log(const struct kf_session *s)
{
	return s->log.data; /* redacted as it arrived (drain_log) */
}

/* The worker is gone or hostile: fill res for a dead session. */
static void dead_result(struct kf_step_result *res, enum kf_status st, const char *msg)
{
	memset(res, 0, sizeof(*res));
	res->status = st;
	res->worker_dead = true;
	snprintf(res->msg, sizeof(res->msg), "%s", msg);
}

enum kf_status kf_session_step(struct kf_session *s, const struct kf_step *step, struct kf_step_result *res,
			       struct kf_err *err)
{
	struct kf_step wire;
	struct kf_err e = KF_ERR_INIT;
	bool running = false;
	int timeout_ms = step->timeout_ms > 0 ? step->timeout_ms : DEFAULT_STEP_TIMEOUT_MS;
	double deadline;
	bool cut;
	char why[KF_PROTO_TEXT + 256] = "";
	size_t n;
	enum kf_status st;

	if (s->dead) {
		dead_result(res, KF_ERR_CRASH, "the worker of this session is no longer running");
		return kf_err_set(err, KF_ERR_INVALID, "step on a session whose worker is gone");
	}
	st = kf_proto_step_check(step, s->setup, &e);
	if (st) {
		memset(res, 0, sizeof(*res));
		res->status = KF_ERR_INVALID;
		snprintf(res->msg, sizeof(res->msg), "%s", e.msg);
		return kf_err_set(err, st, "%s", e.msg);
	}
	wire = *step;
	/* Offsets of buffers the plan does not have travel as -1, whatever the caller left there. */
	for (uint32_t i = s->setup->n_buffers; i < KF_MAX_BUFFERS; i++)
		wire.in_off[i] = wire.out_off[i] = -1;
	n = kf_proto_step_encode(s->buf, KF_PROTO_MSG_MAX, &wire);
	{
		double full = now_ms() + timeout_ms;
		deadline = clamp_deadline(s, full);
		cut = deadline < full;
	}
	st = kf_proto_send(s->sock, s->buf, n, NULL, 0, &e);
	if (st && st != KF_ERR_CRASH)
		goto local_failure;
	while (!st) {
		enum kf_msg_type type;
		st = wait_msg(s, deadline, &n, &type, &e);
		if (st)
			break;
		if (type == KF_MSG_RUNNING && !running) {
			st = kf_proto_empty_decode(s->buf, n, KF_MSG_RUNNING, &e);
			running = true;
			continue;
		}
		st = kf_proto_result_decode(s->buf, n, step->reps, res, &e);
		if (!st)
			st = kf_proto_result_check_cost(res, step->flags, s->setup, &e);
		if (!st && res->status == KF_OK && (step->flags & KF_STEP_TIME) && res->n_times != step->reps)
			st = kf_err_set(&e, KF_ERR_PARSE, "step result has %u times for %u timed reps",
					res->n_times, step->reps);
		if (!st) {
			/* Whatever the worker says, a refused syscall or a secret in its words rejects it. */
			bool secret = msg_redacted(s, res->msg, sizeof(res->msg));
			if (log_rejects(s, why, sizeof(why)) || secret) {
				if (secret && !why[0])
					snprintf(why, sizeof(why),
						 "the worker's reply held text that looks like "
						 "a secret (redacted): the candidate is rejected");
				kill_group(s);
				reap(s, 0);
				dead_result(res, KF_ERR_RUNTIME, why);
				return KF_OK;
			}
			if (res->worker_dead)
				reap(s, DEATH_GRACE_MS); /* it said it would exit: its context is broken */
			return KF_OK;
		}
	}
	if (st == KF_ERR_INTERRUPTED) {
		kill_group(s);
		reap(s, 0);
		dead_result(res, KF_ERR_INTERRUPTED, "interrupted during this step; worker killed");
		return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted during a step; worker killed");
	}
	if (st == KF_ERR_TIMEOUT) {
		kill_group(s);
		reap(s, 0);
		if (cut)
			snprintf(why, sizeof(why),
				 "the evaluation's deadline passed during this step%s; worker "
				 "killed",
				 running ? " (while the kernels ran)" : "");
		else
			snprintf(why, sizeof(why), "step ran past its %d ms limit%s; worker killed",
				 timeout_ms, running ? " while the kernels ran" : "");
		dead_result(res, KF_ERR_TIMEOUT, why);
		return KF_OK;
	}
	if (st == KF_ERR_CRASH) {
		enum kf_status how;
		reap(s, DEATH_GRACE_MS);
		how = describe_death(s, running, why, sizeof(why));
		dead_result(res, how, why);
		return KF_OK;
	}
	if (st == KF_ERR_PARSE) {
		/* A worker that lies is the candidate's doing (it ran in there): a verdict, not an error. */
		kill_group(s);
		reap(s, 0);
		snprintf(why, sizeof(why), "worker broke the protocol: %s", e.msg);
		dead_result(res, KF_ERR_CRASH, why);
		return KF_OK;
	}
local_failure:
	/* A local failure (send, poll): the session cannot be trusted any more either. */
	kill_group(s);
	reap(s, 0);
	dead_result(res, KF_ERR_CRASH, e.msg);
	return kf_err_set(err, st, "%s", e.msg);
}

/* The CPU time (schedstat) and thread count of one process's threads, added to *cpu_ns and *threads. */
static void usage_of(int pid, uint64_t *cpu_ns, int *threads)
{
	char path[64];
	DIR *d;
	const struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return; /* gone meanwhile */
	while ((e = readdir(d))) {
		char f[96], line[128];
		FILE *fp;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(f, sizeof(f), "%s/%.20s/schedstat", path, e->d_name);
		if (!(fp = fopen(f, "re")))
			continue; /* a thread that just ended */
		/* "RUN_NS WAIT_NS SLICES": the first field is the time on a CPU */
		if (fgets(line, sizeof(line), fp)) {
			char *end = NULL;
			unsigned long long run = strtoull(line, &end, 10);
			if (end != line)
				*cpu_ns += run;
		}
		fclose(fp);
		(*threads)++;
	}
	closedir(d);
}

/* The parent of a process, from /proc/PID/stat ("PID (COMM) STATE PPID ..."; COMM may hold spaces and
 * parentheses: the last ')' ends it); -1 when unreadable. */
static int ppid_of(const char *pid)
{
	char f[64], line[512];
	FILE *fp;
	const char *rp;
	int ppid = -1;
	snprintf(f, sizeof(f), "/proc/%.20s/stat", pid);
	if (!(fp = fopen(f, "re")))
		return -1;
	if (fgets(line, sizeof(line), fp) && (rp = strrchr(line, ')')) && rp[1] == ' ' && rp[2] &&
	    rp[3] == ' ')
		ppid = (int)strtol(rp + 4, NULL, 10);
	fclose(fp);
	return ppid;
}

enum kf_status kf_session_usage(const struct kf_session *s, uint64_t *cpu_ns, int *threads,
				struct kf_err *err)
{
	/* the worker and every process below it (its jail forks: the kernels run in a grandchild) */
	enum { MAX_PROCS = 4096, MAX_TREE = 64 };
	int tree[MAX_TREE], n_tree = 0, (*all)[2] = NULL;
	size_t n_all = 0;
	DIR *d;
	const struct dirent *e;

	*cpu_ns = 0;
	*threads = 0;
	if (!s || s->dead || s->pid <= 0)
		return kf_err_set(err, KF_ERR_IO, "the worker is not running");
	if (!(d = opendir("/proc")))
		return kf_err_set(err, KF_ERR_IO, "cannot read /proc: %s", strerror(errno));
	all = malloc(sizeof(*all) * MAX_PROCS);
	if (!all) {
		closedir(d);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	while ((e = readdir(d)) && n_all < MAX_PROCS) {
		int pp;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if ((pp = ppid_of(e->d_name)) > 0) {
			all[n_all][0] = (int)strtol(e->d_name, NULL, 10);
			all[n_all][1] = pp;
			n_all++;
		}
	}
	closedir(d);
	tree[n_tree++] = (int)s->pid;
	for (int i = 0; i < n_tree; i++)
		for (size_t k = 0; k < n_all && n_tree < MAX_TREE; k++)
			if (all[k][1] == tree[i])
				tree[n_tree++] = all[k][0];
	free(all);
	for (int i = 0; i < n_tree; i++)
		usage_of(tree[i], cpu_ns, threads);
	if (!*threads)
		return kf_err_set(err, KF_ERR_IO, "/proc/%d lists no thread", (int)s->pid);
	return KF_OK;
}

enum kf_status kf_device_probe(enum kf_backend_kind b, const char *worker_path, struct kf_device_info *info,
			       struct kf_err *err)
{
	struct kf_worker_opts opts = {.backend = b, .worker_path = worker_path};
	struct kf_session *s;
	enum kf_status st = session_new(&opts, &s, err);

	if (st)
		return st;
	st = spawn(s, &opts, err);
	if (!st)
		st = read_hello(s, now_ms() + DEFAULT_START_TIMEOUT_MS, err);
	if (!st && info)
		*info = s->info;
	kf_session_end(s, NULL);
	return st;
}
