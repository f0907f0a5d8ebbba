/* Take the machine's memory: fork 4 x 1.5 GiB (each child touches its share only with RT_REAL_BOMB),
 * then map 64 GiB. The syscall filter and the address-space limit must hold. */
#include "redteam.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void rt_attack(void)
{
	size_t big = (size_t)64 << 30;
	char *p;
	for (int i = 0; i < 4; i++) {
		pid_t c = fork();
		if (c == 0) {
#ifdef RT_REAL_BOMB
			size_t n = (size_t)3 << 29;
			char *q = (char *)malloc(n);
			for (size_t k = 0; q && k < n; k += 4096)
				q[k] = 1;
#endif
			_exit(0);
		}
		if (c > 0) {
			RT_BREACH("fork() for the memory bomb");
			waitpid(c, NULL, 0);
		}
	}
	/* The address-space limit is set on every worker but a sanitized one (AddressSanitizer reserves
	 * terabytes of shadow): there the cgroup bounds what is touched, and mapping is no breach. */
	struct rlimit rl;
	bool bounded = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	p = (char *)mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			 0);
	if (p != MAP_FAILED) {
		if (bounded)
			RT_BREACH("mapped 64 GiB past its address-space limit");
		else
			RT_NOTE("mapped 64 GiB (no address-space limit in a sanitized worker)");
		munmap(p, big);
	}
}
