/* Suites and shards (runner/runner.h): the tasks of a folder or a list file, named, filtered, sorted. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"
#include "runner/runner.h"
#include "core/baseline.h"
#include "task.h"

#define LIST_FILE_MAX ((size_t)16 << 20)

void kf_suite_free(struct kf_suite *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].name);
		free(s->v[i].category);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* The task paths a list file names: one per line, relative to the file's folder, a folder meaning its
 * task.json. */
static enum kf_status list_file_read(const char *spec, struct kf_paths *out, struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(LIST_FILE_MAX);
	char dir[PATH_MAX];
	const char *slash = strrchr(spec, '/');
	enum kf_status st;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - spec) : 1, slash ? spec : ".");
	if ((st = kf_buf_read_file(&b, spec, err)))
		return st;
	for (char *line = b.data, *next; line && *line && !st; line = next) {
		char path[PATH_MAX * 2], *e;
		struct stat sb;
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		e = line + strlen(line);
		while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		if (line[0] == '/')
			snprintf(path, sizeof(path), "%s", line);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, line);
		if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
			strncat(path, "/task.json", sizeof(path) - strlen(path) - 1);
		st = kf_paths_add(out, path, err);
	}
	kf_buf_release(&b);
	return st;
}

static int task_cmp(const void *a, const void *b)
{
	const struct kf_suite_task *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* Loads each path's task and keeps those that pass the filters. */
static enum kf_status suite_fill(const struct kf_paths *paths, int level, const char *glob,
				 struct kf_suite *s, struct kf_err *err)
{
	s->v = calloc(paths->n ? paths->n : 1, sizeof(*s->v));
	if (!s->v)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < paths->n; i++) {
		struct kf_task *t = NULL;
		struct kf_suite_task *e = &s->v[s->n];
		enum kf_status st = kf_task_load(paths->v[i], 0, NULL, &t, err);
		if (st)
			return st;
		if ((level && t->level != level) || (glob && fnmatch(glob, t->name, 0))) {
			kf_task_free(t);
			continue;
		}
		e->path = kf_strdup(paths->v[i]);
		e->name = kf_strdup(t->name);
		e->category = kf_strdup(t->category ? t->category : "");
		e->level = t->level;
		for (size_t b = 0; b < t->n_baselines; b++) {
			if (t->baselines[b].kind == KF_BASELINE_LIBRARY)
				e->n_library_baselines++;
			else
				e->n_kernel_baselines++;
		}
		kf_task_free(t);
		s->n++;
		if (!e->path || !e->name || !e->category)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	return KF_OK;
}

enum kf_status kf_suite_load(const char *spec, int level, const char *glob, struct kf_suite *s,
			     struct kf_err *err)
{
	struct kf_paths paths = {0};
	struct stat sb;
	enum kf_status st;

	memset(s, 0, sizeof(*s));
	if (stat(spec, &sb))
		return kf_err_set(err, KF_ERR_NOTFOUND, "cannot read suite '%s': %s", spec, strerror(errno));
	st = S_ISDIR(sb.st_mode) ? kf_task_files_find(spec, &paths, err) : list_file_read(spec, &paths, err);
	if (st == KF_ERR_NOTFOUND && S_ISDIR(sb.st_mode))
		st = kf_err_set(err, KF_ERR_NOTFOUND, "no tasks in suite '%s'", spec);
	if (!st)
		st = suite_fill(&paths, level, glob, s, err);
	kf_paths_free(&paths);
	if (!st && !s->n)
		st = kf_err_set(err, KF_ERR_NOTFOUND, "no tasks in suite '%s'%s", spec,
				level || glob ? " after --level/--tasks" : "");
	if (!st) {
		qsort(s->v, s->n, sizeof(*s->v), task_cmp);
		for (size_t i = 1; i < s->n && !st; i++)
			if (!strcmp(s->v[i].name, s->v[i - 1].name))
				st = kf_err_set(err, KF_ERR_INVALID,
						"two tasks are named '%s' ('%s' and '%s')", s->v[i].name,
						s->v[i - 1].path, s->v[i].path);
	}
	if (st)
		kf_suite_free(s);
	return st;
}

void kf_suite_shard(struct kf_suite *s, unsigned i, unsigned n)
{
	size_t k = 0;
	for (size_t j = 0; j < s->n; j++) {
		if (j % n == i - 1) {
			s->v[k++] = s->v[j];
		} else {
			free(s->v[j].path);
			free(s->v[j].name);
			free(s->v[j].category);
		}
	}
	s->n = k;
}

/* strtoul, not sscanf, so that a number out of range is an error (cert-err34-c). */
bool kf_suite_shard_parse(const char *s, unsigned *i, unsigned *n)
{
	unsigned long a, b;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	a = strtoul(s, &end, 10);
	if (*end != '/' || !isdigit((unsigned char)end[1]))
		return false;
	b = strtoul(end + 1, &end, 10);
	if (*end || errno || a > UINT_MAX || b > UINT_MAX)
		return false;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return *n >= 1 && *i >= 1 && *i <= *n;
}
