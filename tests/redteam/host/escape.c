/* Leave the sandbox: new namespaces, setns, mount, chroot, setuid(0), bpf, io_uring, userfaultfd,
 * keyrings. */
#include "redteam.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

static void rt_attack(void)
{
	if (unshare(CLONE_NEWUSER) == 0)
		RT_BREACH("unshare(CLONE_NEWUSER)");
	if (mount("none", RT_OUTSIDE, "tmpfs", 0, NULL) == 0)
		RT_BREACH("mounted a tmpfs");
	if (chroot("/") == 0)
		RT_BREACH("chroot");
	if (syscall(SYS_bpf, 0, 0, 0) >= 0)
		RT_BREACH("bpf");
	if (syscall(SYS_io_uring_setup, 1, 0) >= 0)
		RT_BREACH("io_uring_setup");
	if (syscall(SYS_userfaultfd, 0) >= 0)
		RT_BREACH("userfaultfd");
	if (syscall(SYS_keyctl, 0, 0, 0) >= 0)
		RT_BREACH("keyctl");
}
