/* Stop or kill the parent (a stopped kforge hung for ever: no timeout fires in a stopped process) and
 * every process in reach. Each kforge process found, the parent, and every pid up to a little past its
 * own are tried with signal 0 (permission only: kill(-1) says nothing, it returns 0 even when every
 * target refused); with RT_REAL_SIGNALS the kforge processes and the parent get SIGSTOP. */
#include "redteam.h"

static void rt_attack(void)
{
	pid_t pids[16], self = getpid();
	int n = rt_kforge_pids(pids, 16);
	pid_t pp = getppid();
	/* pid 1 of its own pid namespace is the sandbox's relay: its own kind, and unkillable from inside */
	bool in_pidns = self == 2;
	if (n < 16 && pp > 1)
		pids[n++] = pp;
	for (int i = 0; i < n; i++) {
#ifdef RT_REAL_SIGNALS
		if (kill(pids[i], SIGSTOP) == 0)
			RT_BREACH("SIGSTOP to process %d", (int)pids[i]);
#endif
		if (kill(pids[i], 0) == 0)
			RT_BREACH("could signal process %d", (int)pids[i]);
	}
	for (pid_t p = 1; p < self + 64; p++) {
		if (p == self || (p == 1 && in_pidns))
			continue;
		if (kill(p, 0) == 0) {
			RT_BREACH("could signal process %d", (int)p);
			break;
		}
	}
}
