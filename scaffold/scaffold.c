/* kforge tasks new: the category templates (scaffold/templates/KIND/, compiled in), writing a scaffold to
 * a new folder without ever overwriting a file, and finding the fields a scaffold left marked TODO. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "embed.h"
#include "fs.h"
#include "scaffold/scaffold.h"

static const char *const kind_names[KF_SCAFFOLD_KIND_COUNT] = {[KF_SCAFFOLD_ELEMENTWISE] = "elementwise",
							       [KF_SCAFFOLD_REDUCTION] = "reduction",
							       [KF_SCAFFOLD_ROWWISE] = "rowwise",
							       [KF_SCAFFOLD_GEMM] = "gemm",
							       [KF_SCAFFOLD_CONV] = "conv",
							       [KF_SCAFFOLD_SCAN] = "scan"};

const char *kf_scaffold_kind_name(enum kf_scaffold_kind k)
{
	return (unsigned)k < KF_SCAFFOLD_KIND_COUNT ? kind_names[k] : "?";
}

bool kf_scaffold_kind_parse(const char *s, enum kf_scaffold_kind *out)
{
	for (int k = 0; s && k < KF_SCAFFOLD_KIND_COUNT; k++)
		if (!strcmp(s, kind_names[k])) {
			*out = (enum kf_scaffold_kind)k;
			return true;
		}
	return false;
}

void kf_scaffold_init(struct kf_scaffold *s)
{
	kf_buf_init(&s->task_json, (size_t)1 << 20);
	kf_buf_init(&s->reference, (size_t)8 << 20);
	kf_buf_init(&s->notes, (size_t)1 << 16);
	s->n_todo = 0;
}

void kf_scaffold_release(struct kf_scaffold *s)
{
	kf_buf_release(&s->task_json);
	kf_buf_release(&s->reference);
	kf_buf_release(&s->notes);
	s->n_todo = 0;
}

bool kf_scaffold_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (!n || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

/* Appends text with every "@NAME@" replaced by name. */
static enum kf_status subst(struct kf_buf *b, const char *text, const char *name)
{
	enum kf_status st = KF_OK;
	const char *p = text, *q;
	while (!st && (q = strstr(p, "@NAME@"))) {
		st = kf_buf_add(b, p, (size_t)(q - p));
		if (!st)
			st = kf_buf_adds(b, name);
		p = q + 6;
	}
	return st ? st : kf_buf_adds(b, p);
}

enum kf_status kf_scaffold_from_template(const char *name, enum kf_scaffold_kind kind,
					 struct kf_scaffold *out, struct kf_err *err)
{
	char path[128];
	const char *task, *ref;
	size_t n;
	enum kf_status st;

	if (!kf_scaffold_name_ok(name))
		return kf_err_set(err, KF_ERR_INVALID, "'%.80s' is not a task name ([a-z0-9_]+)",
				  name ? name : "");
	if ((unsigned)kind >= KF_SCAFFOLD_KIND_COUNT)
		return kf_err_set(err, KF_ERR_INVALID, "unknown template %d", (int)kind);
	snprintf(path, sizeof(path), "scaffold/templates/%s/task.json", kind_names[kind]);
	task = kf_embed_find(path, &n);
	snprintf(path, sizeof(path), "scaffold/templates/%s/reference.cu", kind_names[kind]);
	ref = kf_embed_find(path, &n);
	if (!task || !ref)
		return kf_err_set(err, KF_ERR_INTERNAL, "the %s template is not compiled in",
				  kind_names[kind]);
	st = subst(&out->task_json, task, name);
	if (!st)
		st = subst(&out->reference, ref, name);
	if (!st)
		st = kf_buf_addf(
		    &out->notes,
		    "from the %s template: a complete task (it validates and its reference verifies); "
		    "edit the description, tensors, shapes and reference into your op\n",
		    kind_names[kind]);
	if (st)
		return kf_err_set(err, st, "cannot build the %s template: %s", kind_names[kind],
				  kf_status_name(st));
	return KF_OK;
}

/* ---- writing ---- */

static bool dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;
	if (!d)
		return false;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

/* Creates path with exactly data (O_EXCL: never replaces a file). */
static enum kf_status write_new(const char *path, const struct kf_buf *b, struct kf_err *err)
{
	FILE *f;
	struct stat sb;
	if (lstat(path, &sb) == 0)
		return kf_err_set(err, KF_ERR_INVALID,
				  "'%s' exists; kforge tasks new never overwrites a file", path);
	f = fopen(path, "wx");
	if (!f)
		return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) || fsync(fileno(f))) {
		int e = errno;
		fclose(f);
		unlink(path);
		return kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
	}
	if (fclose(f)) {
		unlink(path);
		return kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
	}
	return KF_OK;
}

enum kf_status kf_scaffold_write(const struct kf_scaffold *s, const char *dir, struct kf_err *err)
{
	char task[4096], ref[4096];
	struct stat sb;
	bool created = false;
	enum kf_status st;

	if (snprintf(task, sizeof(task), "%s/task.json", dir) >= (int)sizeof(task) ||
	    snprintf(ref, sizeof(ref), "%s/reference.cu", dir) >= (int)sizeof(ref))
		return kf_err_set(err, KF_ERR_INVALID, "folder name too long");
	if (stat(dir, &sb) == 0) {
		if (!S_ISDIR(sb.st_mode))
			return kf_err_set(err, KF_ERR_INVALID, "'%s' exists and is not a folder", dir);
		if (!dir_empty(dir))
			return kf_err_set(err, KF_ERR_INVALID,
					  "'%s' exists and is not empty: choose another --dir", dir);
	} else {
		if ((st = kf_mkdir_p(dir, 0777, err)))
			return st;
		created = true;
	}
	if ((st = write_new(task, &s->task_json, err)))
		goto fail;
	if ((st = write_new(ref, &s->reference, err))) {
		unlink(task);
		goto fail;
	}
	return KF_OK;
fail:
	if (created)
		rmdir(dir);
	return st;
}

/* ---- TODO fields ---- */

struct todo_ctx {
	const char *file;
	struct kf_buf *out;
	size_t n;
	enum kf_status st;
};

static void todo_add(struct todo_ctx *c, const char *where, const char *text)
{
	c->n++;
	if (c->out && !c->st)
		c->st = kf_buf_addf(c->out, "%s: %s: %.300s\n", c->file, where, text);
}

static void walk(struct todo_ctx *c, const cJSON *j, char *path, size_t cap, int depth)
{
	size_t len = strlen(path);
	int i = 0;
	if (depth > 32)
		return;
	if (cJSON_IsString(j) && j->valuestring && !strncmp(j->valuestring, "TODO", 4)) {
		todo_add(c, path[0] ? path : "(top)", j->valuestring);
		return;
	}
	for (const cJSON *e = j ? j->child : NULL; e; e = e->next, i++) {
		if (cJSON_IsArray(j))
			snprintf(path + len, cap - len, "[%d]", i);
		else if (e->string)
			snprintf(path + len, cap - len, "%s%s", len ? "." : "", e->string);
		walk(c, e, path, cap, depth + 1);
		path[len] = '\0';
	}
}

enum kf_status kf_scaffold_todos(const char *task_path, struct kf_buf *out, size_t *n, struct kf_err *err)
{
	struct kf_buf text = KF_BUF_INIT((size_t)16 << 20);
	struct todo_ctx c = {.file = task_path, .out = out};
	cJSON *j;
	char path[1024] = "";
	const cJSON *ref;

	*n = 0;
	if (kf_buf_read_file(&text, task_path, NULL)) {
		kf_buf_release(&text);
		return KF_OK;
	}
	j = cJSON_Parse(text.data);
	kf_buf_release(&text);
	if (!j)
		return KF_OK;
	walk(&c, j, path, sizeof(path), 0);
	ref = cJSON_GetObjectItemCaseSensitive(j, "reference");
	if (ref && cJSON_IsString(ref) && ref->valuestring && ref->valuestring[0] != '/' &&
	    strncmp(ref->valuestring, "TODO", 4)) {
		char rp[4096];
		const char *slash = strrchr(task_path, '/');
		int dl = slash ? (int)(slash - task_path + 1) : 0;
		if (snprintf(rp, sizeof(rp), "%.*s%s", dl, task_path, ref->valuestring) < (int)sizeof(rp)) {
			struct kf_buf src = KF_BUF_INIT((size_t)16 << 20);
			if (!kf_buf_read_file(&src, rp, NULL)) {
				int line = 1;
				struct todo_ctx rc = {.file = rp, .out = out};
				for (char *p = src.data; *p;) {
					char *nl = strchr(p, '\n');
					char where[32];
					if (nl)
						*nl = '\0';
					/* each TODO in a directive ends where its parenthesis or angle
					 * bracket closes, else at the end of the line */
					for (char *t = p; (t = strstr(t, "TODO(kforge"));) {
						char *e = t + 11 + (t[11] == ')'), saved;
						int depth = 0;
						for (; *e; e++) {
							if (*e == '(')
								depth++;
							else if ((*e == ')' && depth-- == 0) ||
								 (*e == '>' && !depth))
								break;
						}
						saved = *e;
						*e = '\0';
						snprintf(where, sizeof(where), "line %d", line);
						todo_add(&rc, where, t);
						*e = saved;
						t = e;
					}
					if (!nl)
						break;
					p = nl + 1;
					line++;
				}
				c.n += rc.n;
				if (!c.st)
					c.st = rc.st;
			}
			kf_buf_release(&src);
		}
	}
	cJSON_Delete(j);
	*n = c.n;
	if (c.st)
		return kf_err_set(err, c.st, "cannot list the TODO fields of '%s': %s", task_path,
				  kf_status_name(c.st));
	return KF_OK;
}
