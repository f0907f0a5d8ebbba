/* The red-team corpus's host side (tests/redteam/README.md): each attack is plain C that runs inside the
 * cpu worker, either as a test module (`kforge sandbox test-module X.so`: from a constructor with
 * -DRT_CTOR, else from kforge_test_entry) or pasted under `#ifndef __CUDACC_RTC__` into an otherwise
 * correct kernel file. An attack that gets through says so on stderr ("REDTEAM BREACH: ...") and the
 * test fails on that line; what it read it prints after "LEAK:" (the test looks for the text itself
 * everywhere). Probes are harmless where a breach would hurt the machine: a file opened for writing is
 * never written, a signal to the parent is signal 0 unless RT_REAL_SIGNALS. Valid C and C++. */
#ifndef KF_REDTEAM_H
#define KF_REDTEAM_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdbool.h>
#include <unistd.h>

/* Where the test keeps what an attacker wants: set by the test (-D or in the generated kernel file). */
#ifndef RT_DIR
#define RT_DIR "/tmp/kforge-redteam"
#endif
#define RT_OUTSIDE RT_DIR "/outside" /* world-writable: only the sandbox stands between it and a write */
#define RT_HOME RT_DIR "/home"       /* HOME of the kforge under test, with a .bashrc */
#define RT_CACHE RT_DIR "/cache"     /* KFORGE_CACHE */
#define RT_DB RT_DIR "/kb.db"        /* KFORGE_DB */
#ifndef RT_KFORGE
#define RT_KFORGE "/nonexistent/kforge"
#endif

static int rt_breaches;

#define RT_BREACH(...)                                                                                       \
	do {                                                                                                 \
		fprintf(stderr, "REDTEAM BREACH: " __VA_ARGS__);                                             \
		fputc('\n', stderr);                                                                         \
		rt_breaches++;                                                                               \
	} while (0)
#define RT_NOTE(...)                                                                                         \
	do {                                                                                                 \
		fprintf(stderr, "redteam: " __VA_ARGS__);                                                    \
		fputc('\n', stderr);                                                                         \
	} while (0)

/* Opening for writing is the breach; nothing is ever written. */
static void rt_try_write_open(const char *path, int extra)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | extra, 0644);
	if (fd >= 0) {
		RT_BREACH("opened %s for writing", path);
		close(fd);
		if (extra & O_CREAT)
			unlink(path);
	} else {
		RT_NOTE("open %s for writing: %s", path, strerror(errno));
	}
}

/* Reading is the breach when the file has something to steal; its first line goes after LEAK:. */
static void rt_try_read(const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");
	if (!f) {
		RT_NOTE("read %s: %s", path, strerror(errno));
		return;
	}
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		RT_BREACH("read %s", path);
		fprintf(stderr, "LEAK: %s\n", buf);
	}
	fclose(f);
}

/* pids whose command line names kforge (the trusted parent and its kin), not this process. */
static int rt_kforge_pids(pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char p[64], cmd[256];
		long pid = strtol(e->d_name, NULL, 10);
		FILE *f;
		if (pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
		f = fopen(p, "r");
		if (!f)
			continue;
		size_t k = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[k] = '\0';
		if (strstr(cmd, "kforge") && !strstr(cmd, "kforge-worker"))
			out[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

static void rt_attack(void);

#ifdef RT_CTOR
__attribute__((constructor)) static void rt_ctor(void)
{
	rt_attack();
}
#endif

#ifndef RT_IN_KERNEL
#ifdef __cplusplus
extern "C"
#endif
    int
    kforge_test_entry(void)
{
#ifndef RT_CTOR
	rt_attack();
#endif
	return rt_breaches ? 86 : 0;
}
#endif

#endif
