/* Stop itself (SIGSTOP): the parent's clock keeps running, so a stopped worker is a verdict, never a
 * hang. */
#include "redteam.h"

static void rt_attack(void)
{
	raise(SIGSTOP);
	RT_NOTE("resumed after SIGSTOP");
}
