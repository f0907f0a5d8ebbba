/* Reach the network: a TCP connection to a listener the test runs on the loopback (RT_PORT), a raw
 * socket. Making a socket is not yet a breach; reaching something is. */
#include "redteam.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#ifndef RT_PORT
#define RT_PORT 9
#endif

static void rt_attack(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s >= 0) {
		struct sockaddr_in a;
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_port = htons(RT_PORT);
		a.sin_addr.s_addr = htonl(0x7f000001);
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			RT_BREACH("connected to 127.0.0.1:%d", RT_PORT);
		else
			RT_NOTE("connect: %s", strerror(errno));
		close(s);
	}
	/* a raw socket is a breach where it sees a real interface (in a network namespace there is only
	 * the loopback, down) */
	s = socket(AF_PACKET, SOCK_RAW, 0);
	if (s >= 0) {
		struct if_nameindex *ifs = if_nameindex();
		for (struct if_nameindex *i = ifs; i && i->if_index; i++)
			if (strcmp(i->if_name, "lo")) {
				RT_BREACH("a raw packet socket that sees interface %s", i->if_name);
				break;
			}
		if (ifs)
			if_freenameindex(ifs);
		close(s);
	}
}
