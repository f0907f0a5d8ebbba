/* Read what the parent and the machine hold: every process's environment through /proc (the API keys
 * came back that way once), the user's dotfiles, host files and devices, the cache's MAC key, the
 * knowledge base, a file in a world-readable folder. */
#include "redteam.h"

static void rt_attack(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char p[64], buf[8192];
		long pid = strtol(e->d_name, NULL, 10);
		int fd;
		ssize_t n;
		if (pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/environ", pid);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, "KFORGE_REDTEAM")) {
			RT_BREACH("read the environment of process %ld", pid);
			fprintf(stderr, "LEAK: %s\n", buf);
		}
	}
	if (d)
		closedir(d);
	rt_try_read(RT_HOME "/.bashrc");
	rt_try_read("/etc/hostname");
	rt_try_read("/etc/shadow");
	rt_try_read(RT_CACHE "/.mac-key");
	rt_try_read(RT_DB);
	rt_try_read(RT_OUTSIDE "/secret.txt");
	rt_try_read("/dev/kmsg");
}
