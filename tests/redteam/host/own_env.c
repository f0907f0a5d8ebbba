/* Its own environment: kforge's children once inherited HOME, KFORGE_* paths (the database, the
 * cache) and, filtered by name only, whatever else the parent had. */
#include "redteam.h"

static void rt_attack(void)
{
	extern char **environ;
	static const char *const wanted[] = {"KEY", "TOKEN", "SECRET", "KFORGE", "HOME=", "PATH=", "USER="};
	for (char **v = environ; v && *v; v++)
		for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
			if (strstr(*v, wanted[i])) {
				RT_BREACH("its environment holds %.60s", *v);
				break;
			}
	if (getenv("KFORGE_DB"))
		RT_BREACH("the database path reached the worker");
}
