/* Forge a cache: rewrite a compile-cache entry, plant a reference output, append a constructor to the
 * shim of a compile in progress, replace the runtime object. */
#include "redteam.h"

static void rt_scan(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char p[1024];
		if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.'))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && depth < 3)
			rt_scan(p, depth + 1);
		else
			rt_try_write_open(p, 0);
	}
	if (d)
		closedir(d);
}

static void rt_attack(void)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	rt_scan(RT_CACHE, 0);
	rt_try_write_open(RT_CACHE "/ref/planted.bin", O_CREAT);
	rt_try_write_open(RT_CACHE "/00/planted.kfc", O_CREAT);
	/* compile folders of other evaluations (their shim copy) */
	while (d && (e = readdir(d))) {
		char p[512];
		if (strncmp(e->d_name, "kforge-cc-", 10))
			continue;
		snprintf(p, sizeof(p), "/tmp/%s/shim/kf_shim.h", e->d_name);
		rt_try_write_open(p, 0);
	}
	if (d)
		closedir(d);
}
