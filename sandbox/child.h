/* Private to sandbox/: the confinement a forked child applies to itself before exec (or before running
 * untrusted work in-process), and the parent's bounded wait that kills the child's whole process group.
 * The public entry points (kf_child_run_argv, kf_child_run_fn) are in sandbox.h. */
#ifndef KF_SANDBOX_CHILD_H
#define KF_SANDBOX_CHILD_H

#include <sys/types.h>

#include "sandbox.h"

/* Exit code of a child that could not confine itself as asked (a limit or the seccomp filter failed to
 * install): it never runs the work less confined than requested. */
#define KF_CHILD_EXIT_SETUP 125
/* Exit code of a child whose exec failed (the shell's convention). */
#define KF_CHILD_EXIT_EXEC 127

/* Called in the forked child only. Puts it in a new process group (setpgid), asks for SIGKILL when the
 * parent dies (PR_SET_PDEATHSIG), restores default signal dispositions (SIGINT, SIGTERM, SIGPIPE...),
 * sets RLIMIT_CORE=0, RLIMIT_CPU (soft cpu_s, hard cpu_s+1: SIGXCPU then
 * SIGKILL), RLIMIT_FSIZE, RLIMIT_NOFILE (default 256) and RLIMIT_AS when set; unshare(CLONE_NEWNET) when
 * no_network (a refusal such as EPERM is tolerated: seccomp still blocks network sockets); when seccomp,
 * PR_SET_NO_NEW_PRIVS and a libseccomp deny-list returning EPERM (ptrace, process_vm_*, mount family,
 * module loading, bpf, keyrings, namespaces, io_uring, setrlimit, setsid/setpgid, sockets other than
 * AF_UNIX, ...), which survives exec. On a failure it writes a line to fd 2 and _exit()s with
 * KF_CHILD_EXIT_SETUP. */
void kf_child_apply_limits(const struct kf_child_limits *lim);
/* Compiles the seccomp filter once, in the parent: call it before fork, so kf_child_apply_limits in the
 * child installs it without allocating (a fork from a multi-threaded parent may inherit a held
 * allocator lock). Thread-safe; the kf_child_run_* functions call it themselves. */
void kf_child_prepare(void);

/* Called in the parent. Waits for pid (a child that called kf_child_apply_limits, so it leads its own
 * process group) for at most timeout_ms (<= 0: no limit); at the limit kills the whole process group
 * (kill(-pid, SIGKILL)) and reaps the child. When the child exits by itself, the rest of its group (any
 * grandchildren left running) is killed too. Fills res (exit code or signal, wall time, rusage via
 * wait4). Returns KF_OK when the child ended by itself, KF_ERR_TIMEOUT when it was killed at its wall
 * limit or died of SIGXCPU (res->timed_out set either way), KF_ERR_IO when waiting failed (the group is
 * killed and reaped then too). */
enum kf_status kf_child_wait(pid_t pid, int timeout_ms, struct kf_child_result *res, struct kf_err *err);

#endif
