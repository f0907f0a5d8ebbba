/* Rewrite knowledge-base rows through the database file the parent uses. */
#include "redteam.h"

static void rt_attack(void)
{
	rt_try_write_open(RT_DB, 0);
	rt_try_write_open(RT_DB "-wal", O_CREAT);
	rt_try_write_open(RT_DB "-journal", O_CREAT);
}
