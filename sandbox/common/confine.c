/* Confinement primitives (confine.h): uid drop, namespaces and the pid-namespace relay, capabilities,
 * Landlock and seccomp BPF. Raw syscalls through libc, no allocation, nothing printed: callers in a
 * forked child report failures themselves. */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Rights newer than the installed kernel headers (values from the kernel's uapi). */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6; older kernels take a prefix of it. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

static int fail(const char **what, const char *step)
{
	if (what)
		*what = step;
	return -1;
}

int kf_confine_landlock_abi(void)
{
#ifdef SYS_landlock_create_ruleset
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return v > 0 ? (int)v : 0;
#else
	return 0;
#endif
}

static uint64_t fs_handled(int abi)
{
	uint64_t h = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
	if (abi >= 2)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		h |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return h;
}

static uint64_t fs_bits(unsigned rights, bool is_dir, uint64_t handled)
{
	uint64_t a = 0;
	if (rights & KF_FS_READ)
		a |= LANDLOCK_ACCESS_FS_READ_FILE | (is_dir ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
	if (rights & KF_FS_WRITE) {
		a |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
		if (is_dir)
			a |= LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
			     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
			     LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_MAKE_FIFO |
			     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_REFER;
	}
	if (rights & KF_FS_EXEC)
		a |= LANDLOCK_ACCESS_FS_EXECUTE;
	if (rights & KF_FS_DEV)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a & handled;
}

int kf_confine_landlock(const struct kf_fs_rule *rules, size_t n, bool scope_signals, const char **what)
{
#ifdef SYS_landlock_create_ruleset
	struct ll_ruleset_attr attr;
	size_t attr_size = sizeof(uint64_t);
	int abi = kf_confine_landlock_abi(), rs, e;

	if (abi <= 0) {
		errno = EOPNOTSUPP;
		return fail(what, "landlock");
	}
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = fs_handled(abi);
	if (abi >= 4) {
		/* No TCP at all (there is no network namespace everywhere). */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = 2 * sizeof(uint64_t);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | (scope_signals ? LL_SCOPE_SIGNAL : 0);
		attr_size = sizeof(attr);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs < 0)
		return fail(what, "landlock_create_ruleset");
	for (size_t i = 0; i < n; i++) {
		struct landlock_path_beneath_attr pb;
		struct stat sb;
		int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			e = errno;
			close(rs);
			errno = e;
			return fail(what, "landlock rule path");
		}
		if (fstat(fd, &sb) != 0) {
			e = errno;
			close(fd);
			close(rs);
			errno = e;
			return fail(what, "landlock rule stat");
		}
		memset(&pb, 0, sizeof(pb));
		pb.parent_fd = fd;
		pb.allowed_access = fs_bits(rules[i].rights, S_ISDIR(sb.st_mode), attr.handled_access_fs);
		if (pb.allowed_access &&
		    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) {
			e = errno;
			close(fd);
			close(rs);
			errno = e;
			return fail(what, "landlock_add_rule");
		}
		close(fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		e = errno;
		close(rs);
		errno = e;
		return fail(what, "PR_SET_NO_NEW_PRIVS");
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
		e = errno;
		close(rs);
		errno = e;
		return fail(what, "landlock_restrict_self");
	}
	close(rs);
	return 0;
#else
	(void)rules;
	(void)n;
	(void)scope_signals;
	errno = ENOSYS;
	return fail(what, "landlock");
#endif
}

int kf_confine_setuid(uid_t uid, gid_t gid, const char **what)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (setgroups(0, NULL) != 0)
		return fail(what, "setgroups");
	if (setresgid(gid, gid, gid) != 0)
		return fail(what, "setresgid");
	if (setresuid(uid, uid, uid) != 0)
		return fail(what, "setresuid");
	if (getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid || getresgid(&rg, &eg, &sg) != 0 ||
	    rg != gid || eg != gid || sg != gid) {
		errno = EPERM;
		return fail(what, "uid check");
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(text);
	ssize_t w;
	int e;

	if (fd < 0)
		return -1;
	w = write(fd, text, n);
	e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

int kf_confine_unshare(int flags, const char **what)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (unshare(flags) != 0)
		return fail(what, "unshare");
	if (flags & CLONE_NEWUSER) {
		/* A process that is not dumpable (a child of kforge's, or one that changed its uid) has its
		 * /proc files owned by root: dumpable just long enough to write its own maps. */
		int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), rc = 0;
		if (was != 1)
			prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		/* One id each, mapped to itself: inside, the process is who it was outside. */
		if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
			rc = fail(what, "/proc/self/setgroups");
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (!rc && write_file("/proc/self/uid_map", map) != 0)
			rc = fail(what, "/proc/self/uid_map");
		snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		if (!rc && write_file("/proc/self/gid_map", map) != 0)
			rc = fail(what, "/proc/self/gid_map");
		if (was != 1) {
			int e = errno;
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
			errno = e;
		}
		if (rc)
			return rc;
	}
	if ((flags & CLONE_NEWNS) && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return fail(what, "making mounts private");
	return 0;
}

int kf_confine_private_tmp(const char *path, uint64_t size_bytes, const char **what)
{
	char opts[96];
	snprintf(opts, sizeof(opts), "size=%llu,mode=0700,nr_inodes=65536", (unsigned long long)size_bytes);
	if (mount("kforge-tmp", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
		return fail(what, "mounting the private tmpfs");
	return 0;
}

int kf_confine_drop_caps(const char **what)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which capset removes. EINVAL marks
	 * the end of the capabilities this kernel knows; EPERM means there was nothing to drop. */
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) != 0)
		return fail(what, "capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return fail(what, "PR_SET_NO_NEW_PRIVS");
	return 0;
}

/* Waits for kid (an init also reaps the orphans of its namespace meanwhile) and ends the same way. */
static void relay_end(pid_t kid, bool is_init)
{
	int st = 0, sig;
	pid_t w;
	sigset_t all;

	if (close_range(0, ~0U, 0) != 0)
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	for (;;) {
		w = waitpid(is_init ? -1 : kid, &st, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			_exit(125);
		if (w == kid && (WIFEXITED(st) || WIFSIGNALED(st)))
			break;
	}
	if (WIFEXITED(st)) {
		int code = WEXITSTATUS(st);
		/* An init passes a death by signal on as 128 + signal; the outer relay re-raises it. */
		if (!is_init && code > 128 && code < 128 + 65) {
			sig = code - 128;
			goto raise_it;
		}
		_exit(code);
	}
	sig = WTERMSIG(st);
	if (is_init)
		_exit(128 + sig);
raise_it:
	signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigaddset(&all, sig);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	kill(getpid(), sig);
	_exit(128 + sig); /* a signal whose default is to be ignored */
}

int kf_confine_pidns_relay(const char **what)
{
	pid_t init = fork(), kid;

	if (init < 0)
		return fail(what, "fork (pid namespace init)");
	if (init > 0)
		relay_end(init, false);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	kid = fork();
	if (kid < 0)
		_exit(125);
	if (kid > 0)
		relay_end(kid, true);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	return 0;
}

int kf_confine_enter(const struct kf_confine_plan *p, const char **what)
{
	unsigned L = p->layers;
	int ns = ((L & KF_LAYER_PIDNS) ? CLONE_NEWPID : 0) | ((L & KF_LAYER_NETNS) ? CLONE_NEWNET : 0) |
		 ((L & KF_LAYER_IPCNS) ? CLONE_NEWIPC : 0) | ((L & KF_LAYER_MNTNS) ? CLONE_NEWNS : 0);
	bool root = geteuid() == 0;

	if (root && ns && kf_confine_unshare(ns, what) != 0)
		return -1;
	if (root && (L & KF_LAYER_MNTNS) && p->tmp_dir &&
	    kf_confine_private_tmp(p->tmp_dir, p->tmp_bytes, what))
		return -1;
	if (root && (L & KF_LAYER_MNTNS) && p->tmp_dir && (L & KF_LAYER_UID) &&
	    chown(p->tmp_dir, p->uid, p->gid) != 0)
		return fail(what, "chown of the private tmpfs");
	if ((L & KF_LAYER_UID) && kf_confine_setuid(p->uid, p->gid, what) != 0)
		return -1;
	if (L & KF_LAYER_USERNS) {
		if (kf_confine_unshare(CLONE_NEWUSER | (root ? 0 : ns), what) != 0)
			return -1;
		if (!root && (L & KF_LAYER_MNTNS) && p->tmp_dir &&
		    kf_confine_private_tmp(p->tmp_dir, p->tmp_bytes, what) != 0)
			return -1;
	} else if (!root && ns) {
		errno = EPERM;
		return fail(what, "namespaces without a user namespace");
	}
	if ((L & KF_LAYER_PIDNS) && kf_confine_pidns_relay(what) != 0)
		return -1;
	if (p->nproc > 0 && (L & (KF_LAYER_UID | KF_LAYER_USERNS))) {
		struct rlimit rl = {(rlim_t)p->nproc, (rlim_t)p->nproc};
		if (setrlimit(RLIMIT_NPROC, &rl) != 0)
			return fail(what, "RLIMIT_NPROC");
	}
	if ((L & (KF_LAYER_UID | KF_LAYER_USERNS)) && kf_confine_drop_caps(what) != 0)
		return -1;
	return 0;
}

/* ---- BPF ---------------------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define KF_AUDIT_ARCH AUDIT_ARCH_X86_64
#define KF_X32_BIT 0x40000000u
#elif defined(__aarch64__)
#define KF_AUDIT_ARCH AUDIT_ARCH_AARCH64
#define KF_X32_BIT 0u
#else
#define KF_AUDIT_ARCH 0u
#define KF_X32_BIT 0u
#endif

#define ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)

static void emit(struct kf_bpf *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (p->n >= KF_BPF_MAX) {
		p->overflow = true;
		return;
	}
	p->ins[p->n].code = code;
	p->ins[p->n].jt = jt;
	p->ins[p->n].jf = jf;
	p->ins[p->n].k = k;
	p->n++;
}

#define LD(p, off) emit(p, BPF_LD | BPF_W | BPF_ABS, (off), 0, 0)
#define RET(p, v) emit(p, BPF_RET | BPF_K, (v), 0, 0)
#define JEQ(p, v, t, f) emit(p, BPF_JMP | BPF_JEQ | BPF_K, (v), (t), (f))

void kf_bpf_begin(struct kf_bpf *p)
{
	p->n = 0;
	p->overflow = false;
	LD(p, offsetof(struct seccomp_data, arch));
	JEQ(p, KF_AUDIT_ARCH, 1, 0);
	RET(p, SECCOMP_RET_KILL_PROCESS);
	LD(p, offsetof(struct seccomp_data, nr));
	if (KF_X32_BIT) {
		emit(p, BPF_JMP | BPF_JGE | BPF_K, KF_X32_BIT, 0, 1);
		RET(p, SECCOMP_RET_KILL_PROCESS);
	}
}

void kf_bpf_allow(struct kf_bpf *p, int nr)
{
	kf_bpf_action(p, nr, SECCOMP_RET_ALLOW);
}

void kf_bpf_action(struct kf_bpf *p, int nr, uint32_t action)
{
	if (nr < 0)
		return;
	JEQ(p, (uint32_t)nr, 0, 1);
	RET(p, action);
}

void kf_bpf_allow_arg_in(struct kf_bpf *p, int nr, int arg, const uint32_t *vals, size_t n, bool high_zero,
			 uint32_t otherwise)
{
	/* nr? [ld hi; jeq 0] ld lo; jeq v0..vn-1 -> allow; ret otherwise; ret allow */
	size_t body = (high_zero ? 2 : 0) + 1 + n + 2;

	if (nr < 0 || n > 200 || body > 255)
		return;
	JEQ(p, (uint32_t)nr, 0, (uint8_t)body);
	if (high_zero) {
		LD(p, ARG_HI(arg));
		/* to "ret otherwise": skip ld lo and the n compares */
		JEQ(p, 0, 0, (uint8_t)(1 + n));
	}
	LD(p, ARG_LO(arg));
	for (size_t i = 0; i < n; i++)
		JEQ(p, vals[i], (uint8_t)(n - i), 0); /* to "ret allow" */
	RET(p, otherwise);
	RET(p, SECCOMP_RET_ALLOW);
}

void kf_bpf_allow_arg_clear(struct kf_bpf *p, int nr, int arg, uint32_t mask, uint32_t otherwise)
{
	if (nr < 0)
		return;
	JEQ(p, (uint32_t)nr, 0, 4);
	LD(p, ARG_LO(arg));
	emit(p, BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1);
	RET(p, otherwise);
	RET(p, SECCOMP_RET_ALLOW);
}

void kf_bpf_end(struct kf_bpf *p, uint32_t action)
{
	RET(p, action);
}

int kf_bpf_install(const struct kf_bpf *p, bool all_threads, const char **what)
{
	struct sock_fprog prog;
	long r;

	if (!KF_AUDIT_ARCH) {
		errno = ENOSYS;
		return fail(what, "seccomp (unsupported architecture)");
	}
	if (p->overflow || p->n == 0) {
		errno = E2BIG;
		return fail(what, "seccomp program");
	}
	_Static_assert(sizeof(p->ins[0]) == sizeof(struct sock_filter), "BPF instruction layout");
	prog.len = (unsigned short)p->n;
	prog.filter = (struct sock_filter *)(void *)p->ins;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return fail(what, "PR_SET_NO_NEW_PRIVS");
	r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
	if (r > 0) {
		errno = EAGAIN; /* a thread that could not be synchronised */
		return fail(what, "seccomp TSYNC");
	}
	if (r != 0)
		return fail(what, "seccomp");
	return 0;
}
