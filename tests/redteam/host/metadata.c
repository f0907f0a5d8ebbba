/* Change what a file is rather than what it holds: mode, owner, times (Landlock has no right for these:
 * the syscall filter and the separate uid stop them). */
#include "redteam.h"

#include <sys/time.h>

static void rt_attack(void)
{
	struct timeval tv[2] = {{1, 0}, {1, 0}};
	if (chmod(RT_OUTSIDE "/victim", 0777) == 0)
		RT_BREACH("chmod of a file in %s", RT_OUTSIDE);
	if (chown(RT_OUTSIDE "/victim", 12345, 12345) == 0)
		RT_BREACH("chown of a file in %s", RT_OUTSIDE);
	if (utimes(RT_OUTSIDE "/victim", tv) == 0)
		RT_BREACH("changed the times of a file in %s", RT_OUTSIDE);
}
