/* Confinement primitives shared by the trusted parent's forked children and by kforge-worker: a separate
 * uid/gid, namespaces (user, mount, pid, net, ipc) and the pid-namespace relay, dropping capabilities,
 * Landlock filesystem rules and classic-BPF seccomp programs. libc and raw syscalls only, no allocation:
 * every function may run in a child forked from a multi-threaded parent, before exec. */
#ifndef KF_CONFINE_H
#define KF_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../sandbox.h"

/* The start of every line kforge-worker writes to its stderr for a syscall its filter refused; the parent
 * rejects a candidate whose worker wrote one. */
#define KF_SANDBOX_REFUSED_MARK "kforge-worker: sandbox refused"

/* Filesystem rights of a Landlock rule (mapped to the kernel's bits for the ABI found). */
enum {
	KF_FS_READ = 1 << 0,  /* read files, list directories */
	KF_FS_WRITE = 1 << 1, /* write, truncate, create, remove, rename, link inside */
	KF_FS_EXEC = 1 << 2,  /* execve */
	KF_FS_DEV = 1 << 3,   /* ioctl on device files (ABI 5) */
};

struct kf_fs_rule {
	const char *path; /* a directory (the rule covers what is beneath) or a single file */
	unsigned rights;  /* KF_FS_* */
};

/* The Landlock ABI this kernel offers (1...), 0 when it has none (or it is disabled). */
int kf_confine_landlock_abi(void);

/* Restricts the calling thread (and what it later creates or execs) to the rules: everything not
 * granted there is refused, for every right this ABI can restrict. Paths that do not exist are
 * skipped. scope_signals: also refuse signals to processes outside this domain (ABI 6; skipped below).
 * Returns 0, or -1 with errno (ENOSYS/EOPNOTSUPP: no Landlock) and *what naming the step. */
int kf_confine_landlock(const struct kf_fs_rule *rules, size_t n, bool scope_signals, const char **what);

/* setgroups(0), setresgid(gid), setresuid(uid) and a check that none of the old ids remain. 0 or -1. */
int kf_confine_setuid(uid_t uid, gid_t gid, const char **what);

/* unshare(flags) where flags are CLONE_NEW* bits. With CLONE_NEWUSER the caller's current uid and gid
 * are mapped to themselves inside (setgroups denied); with CLONE_NEWNS every mount becomes private.
 * 0 or -1 with errno. */
int kf_confine_unshare(int flags, const char **what);

/* Mounts a tmpfs of at most size_bytes on path (inside a private mount namespace), mode 0700, owned by
 * the caller. 0 or -1. */
int kf_confine_private_tmp(const char *path, uint64_t size_bytes, const char **what);

/* Drops every capability (effective, permitted, inheritable, ambient, bounding as far as allowed) and
 * sets no_new_privs. 0 or -1. */
int kf_confine_drop_caps(const char **what);

/* After unshare(CLONE_NEWPID): forks an init (pid 1 of the new namespace) that forks the process that
 * carries on (pid 2), and returns 0 in that one only. The caller's process and the init only wait and
 * then end the way their child ended (a signal is re-raised outside the namespace; the init, which
 * cannot signal itself, passes it on as exit code 128 + signal). Both close every descriptor first, so
 * pipes and sockets see EOF when the real child ends. Each asks for SIGKILL when its parent dies.
 * Returns -1 with errno when a fork failed (in the caller's process). */
int kf_confine_pidns_relay(const char **what);

/* What a child gets before it runs anything untrusted (layers are enum kf_layer bits). */
struct kf_confine_plan {
	unsigned layers;
	uid_t uid; /* KF_LAYER_UID */
	gid_t gid;
	int nproc;           /* RLIMIT_NPROC, set once the child has its own uid or user namespace (0: no) */
	const char *tmp_dir; /* KF_LAYER_MNTNS: a private tmpfs of tmp_bytes mounted here (NULL: none) */
	uint64_t tmp_bytes;
};

/* In order: as root the pid, net, ipc and mount namespaces asked for, then the separate uid, then a user
 * namespace (as a non-root user: the user namespace together with the others); the private tmpfs; the
 * pid-namespace relay (the caller carries on as pid 2 of the new namespace); RLIMIT_NPROC; every
 * capability dropped and no_new_privs. 0, or -1 with errno and *what. */
int kf_confine_enter(const struct kf_confine_plan *p, const char **what);

/* ---- classic BPF for seccomp ------------------------------------------------------------------ */

#define KF_BPF_MAX 1024

struct kf_bpf {
	size_t n;
	bool overflow;
	struct {
		uint16_t code;
		uint8_t jt, jf;
		uint32_t k;
	} ins[KF_BPF_MAX];
};

/* A program that kills the process on a foreign architecture or the x32 ABI, then leaves the syscall
 * number in the accumulator. */
void kf_bpf_begin(struct kf_bpf *p);
/* Allows syscall nr outright. */
void kf_bpf_allow(struct kf_bpf *p, int nr);
/* Allows nr when the low 32 bits of argument arg equal one of vals[0..n) (and, when high_zero, the high
 * 32 bits are 0); else returns `otherwise`. */
void kf_bpf_allow_arg_in(struct kf_bpf *p, int nr, int arg, const uint32_t *vals, size_t n, bool high_zero,
			 uint32_t otherwise);
/* Allows nr when (low 32 bits of argument arg) & mask == 0; else returns `otherwise`. */
void kf_bpf_allow_arg_clear(struct kf_bpf *p, int nr, int arg, uint32_t mask, uint32_t otherwise);
/* Returns action for syscall nr (e.g. SECCOMP_RET_ERRNO | ENOSYS). */
void kf_bpf_action(struct kf_bpf *p, int nr, uint32_t action);
/* The action for every syscall not named before. */
void kf_bpf_end(struct kf_bpf *p, uint32_t action);
/* Installs p for every thread of the process (TSYNC), with no_new_privs. 0 or -1 with errno. */
int kf_bpf_install(const struct kf_bpf *p, bool all_threads, const char **what);

#endif
