/* kforge-worker confines itself, after exec and before it reads anything from the parent: the layers the
 * parent chose (--jail), in two steps. kf_wk_jail_enter (first thing in main): the separate uid,
 * namespaces, the pid-namespace relay, capabilities. kf_wk_jail_lock (after the backend's init, before
 * HELLO): the cpu backend gets Landlock (system libraries and its own /proc entry, read only), its block
 * threads, then a seccomp ALLOW-list for every thread; the cuda backend a deny-list. A refused syscall
 * raises SIGSYS, whose handler writes "kforge-worker: sandbox refused ..." to stderr and fails the call
 * with EPERM (the parent rejects a candidate that tried). */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <ucontext.h>
#include <unistd.h>

#include "../common/confine.h"
#include "worker.h"

/* One "name=number" field of the spec (base 16 for layers, else 10); false when it is not there. */
static bool spec_field(const char *spec, const char *name, int base, unsigned long long *out)
{
	size_t n = strlen(name);
	for (const char *p = spec; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		char *end;
		if (strncmp(p, name, n) || p[n] != '=')
			continue;
		errno = 0;
		*out = strtoull(p + n + 1, &end, base);
		return !errno && end != p + n + 1 && (*end == ',' || *end == '\0');
	}
	return false;
}

bool kf_wk_jail_parse(const char *spec, struct kf_wk_jail *j)
{
	unsigned long long layers, uid, gid, nproc = 0;
	memset(j, 0, sizeof(*j));
	if (!spec || !spec_field(spec, "layers", 16, &layers) || !spec_field(spec, "uid", 10, &uid) ||
	    !spec_field(spec, "gid", 10, &gid) || uid > 0xfffffffeull || gid > 0xfffffffeull)
		return false;
	if (strstr(spec, "nproc=") && (!spec_field(spec, "nproc", 10, &nproc) || nproc > 1u << 20))
		return false;
	j->on = true;
	j->layers = (unsigned)layers & KF_LAYERS_ALL;
	j->uid = (uid_t)uid;
	j->gid = (gid_t)gid;
	j->nproc = (int)nproc;
	return true;
}

enum kf_status kf_wk_jail_enter(const struct kf_wk_jail *j, char *msg, size_t msg_len)
{
	struct kf_confine_plan plan = {.layers = j->layers, .uid = j->uid, .gid = j->gid, .nproc = j->nproc};
	const char *what = "sandbox";

	if (!j->on)
		return KF_OK;
	/* The uid and the namespaces need what the worker was started with; nothing else runs first. */
	if (kf_confine_enter(&plan, &what) != 0) {
		snprintf(msg, msg_len, "sandbox: %s: %s", what, strerror(errno));
		return KF_ERR_UNAVAILABLE;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(msg, msg_len, "sandbox: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return KF_ERR_UNAVAILABLE;
	}
	return KF_OK;
}

/* ---- SIGSYS: what the filter refused ----------------------------------------------------------- */

struct sysname {
	int nr;
	const char *name;
};

#define S(x)                                                                                                 \
	{                                                                                                    \
		SYS_##x, #x                                                                                  \
	}
/* clang-format off */
static const struct sysname sysnames[] = {
	S(execve), S(execveat), S(fork), S(vfork), S(clone), S(ptrace), S(process_vm_readv),
	S(process_vm_writev), S(kill), S(tkill), S(tgkill), S(socket), S(socketpair), S(connect), S(bind),
	S(listen), S(accept), S(accept4), S(open), S(openat), S(creat), S(unlink), S(unlinkat), S(rename),
	S(renameat), S(renameat2), S(mkdir), S(mkdirat), S(rmdir), S(link), S(linkat), S(symlink),
	S(symlinkat), S(chmod), S(fchmod), S(fchmodat), S(chown), S(fchown), S(fchownat), S(lchown),
	S(truncate), S(ftruncate), S(mount), S(umount2), S(unshare), S(setns), S(chroot), S(pivot_root),
	S(setuid), S(setgid), S(setresuid), S(setresgid), S(setreuid), S(setregid), S(setgroups),
	S(setsid), S(setpgid), S(setrlimit), S(prlimit64), S(prctl), S(ioctl), S(fcntl), S(sendmsg),
	S(recvmsg), S(sendto), S(recvfrom), S(memfd_create), S(bpf), S(perf_event_open),
	S(userfaultfd), S(io_uring_setup), S(keyctl), S(add_key), S(request_key), S(kcmp),
	S(pidfd_open), S(pidfd_send_signal), S(pidfd_getfd), S(wait4), S(waitid), S(shmget), S(shmat),
	S(msgget), S(semget), S(mq_open), S(chdir), S(fchdir), S(utimensat), S(mknod), S(mknodat),
	S(inotify_init1), S(fanotify_init), S(name_to_handle_at), S(open_by_handle_at), S(init_module),
	S(finit_module), S(reboot), S(kexec_load), S(swapon), S(acct), S(personality), S(timer_create),
	S(alarm), S(setitimer), S(sched_setaffinity), S(sched_setscheduler), S(mlock), S(mlockall),
	S(madvise), S(mbind), S(set_mempolicy), S(migrate_pages), S(move_pages), S(seccomp),
	S(landlock_create_ruleset), S(landlock_restrict_self),
};
/* clang-format on */
#undef S

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		b[at++] = *s++;
	return at;
}

static size_t put_uint(char *b, size_t at, size_t cap, unsigned long v)
{
	char t[24];
	size_t n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof(t));
	while (n && at + 1 < cap)
		b[at++] = t[--n];
	return at;
}

/* Async-signal-safe: no stdio, no allocation. */
static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char line[160];
	size_t n = 0;
	const char *name = NULL;
	int e = errno;
	ssize_t w;

	(void)sig;
	for (size_t i = 0; i < KF_ARRAY_SIZE(sysnames) && !name; i++)
		if (sysnames[i].nr == si->si_syscall)
			name = sysnames[i].name;
	n = put_str(line, n, sizeof(line), KF_SANDBOX_REFUSED_MARK " ");
	if (name)
		n = put_str(line, n, sizeof(line), name);
	else {
		n = put_str(line, n, sizeof(line), "syscall ");
		n = put_uint(line, n, sizeof(line), (unsigned long)si->si_syscall);
	}
	n = put_str(line, n, sizeof(line), " (the candidate tried something the sandbox forbids)\n");
	w = write(2, line, n);
	(void)w;
#if defined(__x86_64__)
	uc->uc_mcontext.gregs[REG_RAX] = -EPERM; /* the refused call returns -1 with errno EPERM */
#else
	(void)uc;
#endif
	errno = e;
}

static int install_sigsys(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSYS, &sa, NULL);
}

/* ---- the cpu worker's allow-list --------------------------------------------------------------- */

#define TRAP SECCOMP_RET_TRAP
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_rseq
#define SYS_rseq 334
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

/* Opening for anything but reading. */
#define OPEN_WRITE_FLAGS ((uint32_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | 020000000))

static void build_allow_list(struct kf_bpf *p, int sock, pid_t self)
{
	/* clang-format off */
	static const int plain[] = {
		SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_pwrite64, SYS_preadv,
		SYS_pwritev, SYS_close, SYS_close_range, SYS_fstat, SYS_newfstatat, SYS_stat, SYS_lstat,
		SYS_statx, SYS_lseek, SYS_mmap, SYS_mprotect, SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk,
		SYS_msync, SYS_mincore, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn,
		SYS_rt_sigpending, SYS_rt_sigtimedwait, SYS_rt_sigsuspend, SYS_sigaltstack, SYS_futex,
		SYS_futex_waitv, SYS_set_robust_list, SYS_get_robust_list, SYS_rseq, SYS_sched_yield,
		SYS_sched_getaffinity, SYS_sched_getparam, SYS_sched_getscheduler,
		SYS_sched_get_priority_max, SYS_sched_get_priority_min, SYS_nanosleep, SYS_clock_nanosleep,
		SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_time, SYS_getpid, SYS_gettid,
		SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_getresuid,
		SYS_getresgid, SYS_getgroups, SYS_getpgrp, SYS_getsid, SYS_exit, SYS_exit_group,
		SYS_restart_syscall, SYS_getrandom, SYS_uname, SYS_sysinfo, SYS_getrusage, SYS_times,
		SYS_getcpu, SYS_getrlimit, SYS_dup, SYS_dup2, SYS_dup3, SYS_pipe, SYS_pipe2, SYS_poll,
		SYS_ppoll, SYS_select, SYS_pselect6, SYS_readlink, SYS_readlinkat, SYS_access,
		SYS_faccessat, SYS_faccessat2, SYS_getcwd, SYS_getdents64, SYS_statfs, SYS_fstatfs,
		SYS_set_tid_address, SYS_arch_prctl, SYS_membarrier,
	};
	/* clang-format on */
	const uint32_t me[] = {(uint32_t)self};
	const uint32_t fd[] = {(uint32_t)sock};
	const uint32_t nullp[] = {0};
	const uint32_t fcntl_ok[] = {F_GETFD, F_SETFD,         F_GETFL,    F_SETFL,
				     F_DUPFD, F_DUPFD_CLOEXEC, F_GET_SEALS};
	const uint32_t ioctl_ok[] = {TCGETS, FIONREAD};
	const uint32_t prctl_ok[] = {PR_SET_NAME,       PR_GET_NAME,         PR_GET_DUMPABLE,
				     PR_GET_SECCOMP,    PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ,
				     PR_GET_TIMERSLACK, 0x53564d41 /* PR_SET_VMA */};

	kf_bpf_begin(p);
	for (size_t i = 0; i < KF_ARRAY_SIZE(plain); i++)
		kf_bpf_allow(p, plain[i]);
	/* Files: read-only opens (Landlock says which files); nothing is ever created or written. */
	kf_bpf_allow_arg_clear(p, SYS_openat, 2, OPEN_WRITE_FLAGS, TRAP);
	kf_bpf_allow_arg_clear(p, SYS_open, 1, OPEN_WRITE_FLAGS, TRAP);
	kf_bpf_action(p, SYS_openat2, ERRNO(ENOSYS)); /* flags in memory: libc falls back to openat */
	kf_bpf_allow_arg_in(p, SYS_fcntl, 1, fcntl_ok, KF_ARRAY_SIZE(fcntl_ok), false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_ioctl, 1, ioctl_ok, KF_ARRAY_SIZE(ioctl_ok), false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_prctl, 0, prctl_ok, KF_ARRAY_SIZE(prctl_ok), false, TRAP);
	/* Signals to itself only (raise, abort, pthread_kill). */
	kf_bpf_allow_arg_in(p, SYS_kill, 0, me, 1, false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_tgkill, 0, me, 1, false, TRAP);
	/* Limits may be read, never set. */
	kf_bpf_allow_arg_in(p, SYS_prlimit64, 2, nullp, 1, true, TRAP);
	/* The one socket it was given; no new ones. */
	kf_bpf_allow_arg_in(p, SYS_sendmsg, 0, fd, 1, false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_recvmsg, 0, fd, 1, false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_sendto, 0, fd, 1, false, TRAP);
	kf_bpf_allow_arg_in(p, SYS_recvfrom, 0, fd, 1, false, TRAP);
	/* No threads or processes after setup: clone3 passes its flags in memory, so it says ENOSYS
	 * (libc then tries clone, which is refused). */
	kf_bpf_action(p, SYS_clone3, ERRNO(ENOSYS));
	kf_bpf_end(p, TRAP);
}

/* ---- the GPU worker's deny-list (what child.c's libseccomp filter refuses, as raw BPF) --------- */

static void build_deny_list(struct kf_bpf *p)
{
	/* clang-format off */
	static const int denied[] = {
		SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_kcmp, SYS_pidfd_getfd,
		SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_move_mount, SYS_open_tree,
		SYS_fsopen, SYS_fsmount, SYS_fsconfig, SYS_fspick, SYS_mount_setattr, SYS_reboot,
		SYS_kexec_load, SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_bpf, SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_swapon,
		SYS_swapoff, SYS_setns, SYS_unshare, SYS_acct, SYS_quotactl, SYS_syslog, SYS_vhangup,
		SYS_settimeofday, SYS_clock_settime, SYS_clock_adjtime, SYS_adjtimex, SYS_sethostname,
		SYS_setdomainname, SYS_iopl, SYS_ioperm, SYS_open_by_handle_at, SYS_name_to_handle_at,
		SYS_fanotify_init, SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
		SYS_setsid, SYS_setpgid, SYS_setrlimit,
	};
	/* clang-format on */
	const uint32_t unix_only[] = {AF_UNIX};
	const uint32_t nullp[] = {0};
	const uint32_t ns_flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
				  CLONE_NEWNET | CLONE_NEWCGROUP;

	kf_bpf_begin(p);
	for (size_t i = 0; i < KF_ARRAY_SIZE(denied); i++)
		kf_bpf_action(p, denied[i], ERRNO(EPERM));
	kf_bpf_allow_arg_in(p, SYS_socket, 0, unix_only, 1, false, ERRNO(EPERM));
	kf_bpf_allow_arg_in(p, SYS_prlimit64, 2, nullp, 1, true, ERRNO(EPERM));
	kf_bpf_allow_arg_clear(p, SYS_clone, 0, ns_flags, ERRNO(EPERM));
	kf_bpf_action(p, SYS_clone3, ERRNO(ENOSYS));
	kf_bpf_end(p, SECCOMP_RET_ALLOW);
}

enum kf_status kf_wk_jail_lock(const struct kf_wk_jail *j, const struct kf_backend_ops *ops, int sock,
			       char *msg, size_t msg_len)
{
	bool cpu = ops && !strcmp(ops->name, "cpu");
	const char *what = "sandbox";
	struct kf_bpf *prog;
	enum kf_status st;

	if (!j->on)
		return KF_OK;
	if (cpu && (j->layers & KF_LAYER_LANDLOCK)) {
		/* Read-only: the system libraries the module links, and this process's own /proc entry
		 * (AddressSanitizer reads its maps; the module itself is a memfd, opened through
		 * /proc/self/fd). Nothing may be written or executed from a file. */
		static const struct kf_fs_rule rules[] = {
		    {"/usr/lib", KF_FS_READ}, {"/usr/lib64", KF_FS_READ},       {"/lib", KF_FS_READ},
		    {"/lib64", KF_FS_READ},   {"/etc/ld.so.cache", KF_FS_READ}, {"/proc/self", KF_FS_READ},
		};
		if (kf_confine_landlock(rules, KF_ARRAY_SIZE(rules), true, &what) != 0) {
			snprintf(msg, msg_len, "sandbox: %s: %s", what, strerror(errno));
			return KF_ERR_UNAVAILABLE;
		}
	}
	if (!(j->layers & KF_LAYER_SECCOMP))
		return KF_OK;
	/* Threads the filter would refuse later are made now. */
	if (ops && ops->before_filter && (st = ops->before_filter(msg, msg_len)) != KF_OK)
		return st;
	prog = malloc(sizeof(*prog));
	if (!prog) {
		snprintf(msg, msg_len, "sandbox: out of memory");
		return KF_ERR_NOMEM;
	}
	if (cpu)
		build_allow_list(prog, sock, getpid());
	else
		build_deny_list(prog);
	if ((cpu && install_sigsys() != 0) || kf_bpf_install(prog, true, &what) != 0) {
		snprintf(msg, msg_len, "sandbox: %s: %s", what, strerror(errno));
		free(prog);
		return KF_ERR_UNAVAILABLE;
	}
	free(prog);
	return KF_OK;
}
