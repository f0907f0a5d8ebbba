/* Write 1 GB: to a file outside (refused), to a memfd (refused), then to stderr, which the parent
 * drains and keeps to its bound. */
#include "redteam.h"

#include <sys/mman.h>

static void rt_attack(void)
{
	static char chunk[1 << 20];
	int fd = open(RT_OUTSIDE "/big", O_WRONLY | O_CREAT, 0644);
	if (fd >= 0) {
		RT_BREACH("created a file for the 1 GB write");
		close(fd);
		unlink(RT_OUTSIDE "/big");
	}
	fd = memfd_create("rt", 0);
	if (fd >= 0) {
		RT_BREACH("memfd_create");
		close(fd);
	}
	memset(chunk, 'W', sizeof(chunk));
	for (int i = 0; i < 1024; i++)
		if (write(2, chunk, sizeof(chunk)) < 0)
			break;
}
