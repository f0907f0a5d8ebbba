/* The trusted parent's memory: /proc/PID/mem read-write (a patch of its comparison made a kernel that
 * writes 42 everywhere pass), process_vm_readv/writev, ptrace. Nothing is written. */
#include "redteam.h"

#include <sys/ptrace.h>
#include <sys/uio.h>

static void rt_attack(void)
{
	pid_t pids[16];
	int n = rt_kforge_pids(pids, 16);
	pid_t pp = getppid();
	if (n < 16 && pp > 1)
		pids[n++] = pp;
	RT_NOTE("%d processes to try", n);
	for (int i = 0; i < n; i++) {
		char p[64], b;
		struct iovec local = {&b, 1}, remote = {(void *)&rt_breaches, 1};
		int fd;
		snprintf(p, sizeof(p), "/proc/%d/mem", (int)pids[i]);
		fd = open(p, O_RDWR);
		if (fd >= 0) {
			RT_BREACH("opened %s read-write", p);
			close(fd);
		}
		if (process_vm_readv(pids[i], &local, 1, &remote, 1, 0) >= 0)
			RT_BREACH("process_vm_readv of process %d", (int)pids[i]);
		if (ptrace(PTRACE_SEIZE, pids[i], 0, 0) == 0) {
			RT_BREACH("ptrace of process %d", (int)pids[i]);
			ptrace(PTRACE_DETACH, pids[i], 0, 0);
		}
	}
}
