/* Filesystem helpers (core/fs.h): mkdir -p, a path list, and the one walk that finds task files, shared
 * by `kforge tasks` and the bench runner's suites. */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FIND_MAX_DEPTH 16

enum kf_status kf_mkdir_p(const char *path, mode_t mode, struct kf_err *err)
{
	char tmp[PATH_MAX];
	if (!path || !*path || snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return kf_err_set(err, KF_ERR_INVALID, "bad folder path '%.200s'", path ? path : "");
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
	return KF_OK;
}

enum kf_status kf_paths_add(struct kf_paths *l, const char *path, struct kf_err *err)
{
	if (l->n >= KF_PATHS_MAX)
		return kf_err_set(err, KF_ERR_LIMIT, "more than %d task files", KF_PATHS_MAX);
	char **v = kf_grow(l->v, l->n, &l->cap, sizeof(*l->v), 64);
	if (!v)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	l->v = v;
	if (!(l->v[l->n] = kf_strdup(path)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	l->n++;
	return KF_OK;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kf_paths_sort(struct kf_paths *l, size_t from)
{
	if (from < l->n)
		qsort(l->v + from, l->n - from, sizeof(char *), cmp_path);
}

void kf_paths_free(struct kf_paths *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* Every task.json below dir (hidden entries skipped), in no particular order. */
static enum kf_status find_tasks(const char *dir, int depth, struct kf_paths *out, struct kf_err *err)
{
	DIR *d;
	struct dirent *e;
	enum kf_status st = KF_OK;

	if (depth > FIND_MAX_DEPTH)
		return KF_OK;
	d = opendir(dir);
	if (!d)
		return kf_err_set(err, errno == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO,
				  "cannot read folder '%s': %s", dir, strerror(errno));
	while (!st && (e = readdir(d))) {
		char p[PATH_MAX];
		struct stat sb;
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p))
			continue;
		if (stat(p, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode))
			st = find_tasks(p, depth + 1, out, err);
		else if (S_ISREG(sb.st_mode) && !strcmp(e->d_name, "task.json"))
			st = kf_paths_add(out, p, err);
	}
	closedir(d);
	return st;
}

enum kf_status kf_task_files_find(const char *path, struct kf_paths *out, struct kf_err *err)
{
	struct stat sb;
	size_t before = out->n, n;
	char clean[PATH_MAX];
	enum kf_status st;

	snprintf(clean, sizeof(clean), "%s", path);
	n = strlen(clean);
	while (n > 1 && clean[n - 1] == '/')
		clean[--n] = '\0';
	if (stat(clean, &sb) != 0)
		return kf_err_set(err, KF_ERR_NOTFOUND, "'%s' does not exist", path);
	if (!S_ISDIR(sb.st_mode))
		return kf_paths_add(out, clean, err);
	if ((st = find_tasks(clean, 0, out, err)))
		return st;
	if (out->n == before)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no task.json under '%s'", path);
	kf_paths_sort(out, before);
	return KF_OK;
}
