/* Lie to the parent: a forged datagram on the worker's socket (fd 3), a result before its step. */
#include "redteam.h"

#include <sys/socket.h>

static void rt_attack(void)
{
	static const char junk[] = "KFWP\x01\x00\x07\x00 forged result, all outputs correct";
	if (send(3, junk, sizeof(junk), 0) < 0)
		RT_NOTE("send on the socket: %s", strerror(errno));
}
