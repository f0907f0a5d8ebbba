/* kforge regress: reading the shipped-kernel manifest with a field path in every error, and writing it
 * back byte-for-byte deterministically (sorted keys, one kernel per line group) so that a baseline update
 * is a reviewable diff. Fields kforge does not know are kept in the tree and written back unchanged. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "regress/regress.h"

#define MANIFEST_MAX_BYTES (4u << 20) /* a manifest of thousands of kernels stays far below 4 MiB */

bool kf_regress_arch_valid(const char *arch)
{
	size_t n = strlen(arch), digits = 0;
	if (n < 5 || n > 8 || strncmp(arch, "sm_", 3))
		return false;
	for (size_t i = 3; i < n; i++) {
		if (arch[i] >= '0' && arch[i] <= '9')
			digits++;
		else if (arch[i] != 'a' || i != n - 1)
			return false;
	}
	return digits >= 2 && digits <= 3;
}

void kf_regress_manifest_free(struct kf_regress_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_entries; i++) {
		free(m->entries[i].name);
		free(m->entries[i].task_path);
		free(m->entries[i].kernel_path);
		free(m->entries[i].baselines);
	}
	free(m->entries);
	cJSON_Delete(m->root);
	free(m->path);
	free(m);
}

/* dir/rel, or rel itself when absolute; NULL on allocation failure. */
static char *join_path(const char *dir, const char *rel)
{
	size_t n;
	char *s;
	if (rel[0] == '/' || !dir[0] || !strcmp(dir, "."))
		return strdup(rel);
	n = strlen(dir) + strlen(rel) + 2;
	if (!(s = malloc(n)))
		return NULL;
	snprintf(s, n, "%s/%s", dir, rel);
	return s;
}

static enum kf_status copy_str(char *dst, size_t cap, const char *s, struct kf_jpath *p, const char *key,
			       struct kf_err *err)
{
	if (strlen(s) >= cap) {
		size_t mark = kf_jpath_push_key(p, key);
		enum kf_status st =
		    kf_jpath_err(p, err, KF_ERR_INVALID, "longer than %zu characters", cap - 1);
		kf_jpath_pop(p, mark);
		return st;
	}
	memcpy(dst, s, strlen(s) + 1);
	return KF_OK;
}

static enum kf_status load_baseline(const cJSON *o, struct kf_regress_baseline *b, struct kf_jpath *p,
				    struct kf_buf *warnings, struct kf_err *err)
{
	static const char *const known[] = {"median_us", "toolchain",   "ci_lo_us", "ci_hi_us", "samples",
					    "device",    "recorded_at", "clock",    "shape"};
	const char *s;
	bool has_lo = false, has_hi = false;
	enum kf_status st;

	if (!cJSON_IsObject(o))
		return kf_jpath_err(p, err, KF_ERR_INVALID, "expected an object, not %s",
				    kf_json_type_name(o));
	if ((st = kf_json_check_fields(o, known, KF_ARRAY_SIZE(known), false, p, warnings, err)))
		return st;
	if ((st = kf_json_get_number(o, "median_us", true, &b->median_us, NULL, p, err)))
		return st;
	if (!(b->median_us > 0)) {
		size_t mark = kf_jpath_push_key(p, "median_us");
		st = kf_jpath_err(p, err, KF_ERR_INVALID, "must be a positive time in microseconds");
		kf_jpath_pop(p, mark);
		return st;
	}
	if ((st = kf_json_get_string(o, "toolchain", true, &s, NULL, p, err)) ||
	    (st = copy_str(b->toolchain, sizeof(b->toolchain), s, p, "toolchain", err)))
		return st;
	s = NULL;
	if ((st = kf_json_get_string(o, "device", false, &s, NULL, p, err)))
		return st;
	snprintf(b->device, sizeof(b->device), "%s",
		 s ? s : ""); /* a longer name is only shown, never compared */
	if ((st = kf_json_get_number(o, "ci_lo_us", false, &b->ci_lo_us, &has_lo, p, err)) ||
	    (st = kf_json_get_number(o, "ci_hi_us", false, &b->ci_hi_us, &has_hi, p, err)))
		return st;
	if (has_lo != has_hi)
		return kf_jpath_err(p, err, KF_ERR_INVALID, "ci_lo_us and ci_hi_us go together");
	if (has_lo && !(b->ci_lo_us > 0 && b->ci_lo_us <= b->median_us && b->median_us <= b->ci_hi_us))
		return kf_jpath_err(p, err, KF_ERR_INVALID, "needs 0 < ci_lo_us <= median_us <= ci_hi_us");
	b->has_ci = has_lo;
	return KF_OK;
}

/* True for a regular file; else why says what is wrong. */
static bool is_file(const char *path, char *why, size_t n)
{
	struct stat sb;
	if (stat(path, &sb)) {
		snprintf(why, n, "%s", strerror(errno));
		return false;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(why, n, "not a regular file");
		return false;
	}
	return true;
}

static enum kf_status load_entry(const cJSON *o, const char *dir, struct kf_regress_entry *e,
				 struct kf_jpath *p, struct kf_buf *warnings, struct kf_err *err)
{
	static const char *const known[] = {"name", "task", "kernel", "baselines", "note"};
	const char *task, *kernel, *name = NULL;
	const cJSON *bl = NULL, *it;
	char why[128];
	enum kf_status st;
	size_t mark;

	if (!cJSON_IsObject(o))
		return kf_jpath_err(p, err, KF_ERR_INVALID, "expected an object, not %s",
				    kf_json_type_name(o));
	e->json = (cJSON *)o;
	if ((st = kf_json_check_fields(o, known, KF_ARRAY_SIZE(known), false, p, warnings, err)) ||
	    (st = kf_json_get_string(o, "task", true, &task, NULL, p, err)) ||
	    (st = kf_json_get_string(o, "kernel", true, &kernel, NULL, p, err)) ||
	    (st = kf_json_get_string(o, "name", false, &name, NULL, p, err)) ||
	    (st = kf_json_get_object(o, "baselines", false, &bl, p, err)))
		return st;
	if (!(e->task_path = join_path(dir, task)) || !(e->kernel_path = join_path(dir, kernel)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	mark = kf_jpath_push_key(p, "task");
	if (!is_file(e->task_path, why, sizeof(why)))
		return kf_jpath_err(p, err, KF_ERR_NOTFOUND, "cannot read task '%s': %s", e->task_path, why);
	kf_jpath_pop(p, mark);
	mark = kf_jpath_push_key(p, "kernel");
	if (!is_file(e->kernel_path, why, sizeof(why)))
		return kf_jpath_err(p, err, KF_ERR_NOTFOUND, "cannot read kernel '%s': %s", e->kernel_path,
				    why);
	kf_jpath_pop(p, mark);
	if (name) {
		if (!name[0] || strlen(name) > 100)
			return kf_jpath_err(p, err, KF_ERR_INVALID, "name must be 1 to 100 characters");
		e->name = strdup(name);
	} else {
		const char *base = strrchr(kernel, '/');
		size_t n;
		base = base ? base + 1 : kernel;
		n = strlen(base);
		if (n > 3 && !strcmp(base + n - 3, ".cu"))
			n -= 3;
		e->name = strndup(base, n);
	}
	if (!e->name)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (!bl)
		return KF_OK;
	e->baselines = calloc((size_t)cJSON_GetArraySize(bl) + 1, sizeof(*e->baselines));
	if (!e->baselines)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	mark = kf_jpath_push_key(p, "baselines");
	cJSON_ArrayForEach(it, bl)
	{
		struct kf_regress_baseline *b = &e->baselines[e->n_baselines];
		size_t m2 = kf_jpath_push_key(p, it->string);
		if (!kf_regress_arch_valid(it->string))
			return kf_jpath_err(p, err, KF_ERR_INVALID,
					    "'%s' is not a GPU arch (expected e.g. sm_90)", it->string);
		snprintf(b->arch, sizeof(b->arch), "%s", it->string);
		if ((st = load_baseline(it, b, p, warnings, err)))
			return st;
		e->n_baselines++;
		kf_jpath_pop(p, m2);
	}
	kf_jpath_pop(p, mark);
	return KF_OK;
}

enum kf_status kf_regress_manifest_load(const char *path, struct kf_buf *warnings,
					struct kf_regress_manifest **out, struct kf_err *err)
{
	static const char *const known[] = {"format", "kernels", "archs", "note"};
	struct kf_regress_manifest *m;
	struct kf_jpath p;
	const cJSON *kernels, *archs = NULL, *it;
	const char *format;
	char *tmp, *dir;
	enum kf_status st;
	size_t i = 0;

	*out = NULL;
	if (!(m = calloc(1, sizeof(*m))) || !(m->path = strdup(path))) {
		free(m);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	kf_jpath_init(&p, path);
	if ((st = kf_json_read_file(path, MANIFEST_MAX_BYTES, &m->root, NULL, err)))
		goto fail;
	if (!cJSON_IsObject(m->root)) {
		st = kf_jpath_err(&p, err, KF_ERR_INVALID, "expected an object, not %s",
				  kf_json_type_name(m->root));
		goto fail;
	}
	if ((st = kf_json_check_fields(m->root, known, KF_ARRAY_SIZE(known), false, &p, warnings, err)) ||
	    (st = kf_json_get_string(m->root, "format", true, &format, NULL, &p, err)))
		goto fail;
	if (strcmp(format, KF_REGRESS_FORMAT)) {
		size_t mark = kf_jpath_push_key(&p, "format");
		st = kf_jpath_err(&p, err, KF_ERR_INVALID, "expected \"%s\", not \"%s\"", KF_REGRESS_FORMAT,
				  format);
		kf_jpath_pop(&p, mark);
		goto fail;
	}
	if ((st = kf_json_get_array(m->root, "archs", false, &archs, &p, err)) ||
	    (st = kf_json_get_array(m->root, "kernels", true, &kernels, &p, err)))
		goto fail;
	if (archs) {
		size_t mark = kf_jpath_push_key(&p, "archs");
		cJSON_ArrayForEach(it, archs)
		{
			size_t m2 = kf_jpath_push_index(&p, m->n_archs);
			if (!cJSON_IsString(it) || !kf_regress_arch_valid(it->valuestring)) {
				st = kf_jpath_err(&p, err, KF_ERR_INVALID,
						  "expected a GPU arch such as \"sm_90\"");
				goto fail;
			}
			if (m->n_archs == KF_REGRESS_MAX_ARCHS) {
				st = kf_jpath_err(&p, err, KF_ERR_INVALID, "at most %d archs",
						  KF_REGRESS_MAX_ARCHS);
				goto fail;
			}
			snprintf(m->archs[m->n_archs++], sizeof(m->archs[0]), "%s", it->valuestring);
			kf_jpath_pop(&p, m2);
		}
		kf_jpath_pop(&p, mark);
	}
	if (!cJSON_GetArraySize(kernels)) {
		size_t mark = kf_jpath_push_key(&p, "kernels");
		st = kf_jpath_err(&p, err, KF_ERR_INVALID, "lists no kernels");
		kf_jpath_pop(&p, mark);
		goto fail;
	}
	if (!(m->entries = calloc((size_t)cJSON_GetArraySize(kernels), sizeof(*m->entries))) ||
	    !(tmp = strdup(path))) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto fail;
	}
	dir = dirname(tmp);
	cJSON_ArrayForEach(it, kernels)
	{
		size_t mark = kf_jpath_push_key(&p, "kernels");
		kf_jpath_push_index(&p, i);
		m->n_entries = i + 1; /* so that free releases a half-loaded entry */
		st = load_entry(it, dir, &m->entries[i], &p, warnings, err);
		if (!st) {
			for (size_t j = 0; j < i; j++)
				if (!strcmp(m->entries[j].name, m->entries[i].name)) {
					st = kf_jpath_err(
					    &p, err, KF_ERR_INVALID,
					    "kernel name '%s' is used twice (give one a \"name\")",
					    m->entries[i].name);
					break;
				}
		}
		if (st) {
			free(tmp);
			goto fail;
		}
		kf_jpath_pop(&p, mark);
		i++;
	}
	free(tmp);
	*out = m;
	return KF_OK;
fail:
	kf_regress_manifest_free(m);
	return st;
}

const struct kf_regress_baseline *kf_regress_baseline_find(const struct kf_regress_entry *e, const char *arch)
{
	for (size_t i = 0; i < e->n_baselines; i++)
		if (!strcmp(e->baselines[i].arch, arch))
			return &e->baselines[i];
	return NULL;
}

enum kf_status kf_regress_baseline_set(struct kf_regress_entry *e, const char *arch, cJSON *rec,
				       struct kf_err *err)
{
	cJSON *bl = cJSON_GetObjectItemCaseSensitive(e->json, "baselines");
	if (!bl) {
		if (!(bl = cJSON_AddObjectToObject(e->json, "baselines"))) {
			cJSON_Delete(rec);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
	}
	if (cJSON_GetObjectItemCaseSensitive(bl, arch)) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(bl, arch, rec)) {
			cJSON_Delete(rec);
			return kf_err_set(err, KF_ERR_NOMEM, "cannot replace the '%s' baseline", arch);
		}
	} else if (!cJSON_AddItemToObject(bl, arch, rec)) {
		cJSON_Delete(rec);
		return kf_err_set(err, KF_ERR_NOMEM, "cannot add the '%s' baseline", arch);
	}
	return KF_OK;
}

/* ---- the deterministic writer ---- */

static bool is_container(const cJSON *j)
{
	return cJSON_IsObject(j) || cJSON_IsArray(j);
}

static enum kf_status put_string(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_addch(b, '"');
	for (const unsigned char *c = (const unsigned char *)s; !st && *c; c++) {
		if (*c == '"' || *c == '\\')
			st = kf_buf_addf(b, "\\%c", *c);
		else if (*c == '\n')
			st = kf_buf_adds(b, "\\n");
		else if (*c == '\t')
			st = kf_buf_adds(b, "\\t");
		else if (*c < 0x20)
			st = kf_buf_addf(b, "\\u%04x", *c);
		else
			st = kf_buf_addch(b, (char)*c);
	}
	return st ? st : kf_buf_addch(b, '"');
}

/* The shortest of %.1g ... %.17g that reads back as the same double; integers without a fraction. */
static enum kf_status put_number(struct kf_buf *b, double v)
{
	char s[40];
	if (!isfinite(v))
		return kf_buf_adds(b, "null");
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return kf_buf_addf(b, "%.0f", v);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	return kf_buf_adds(b, s);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static enum kf_status put_value(struct kf_buf *b, const cJSON *j, int depth);

static enum kf_status put_container(struct kf_buf *b, const cJSON *j, int depth)
{
	bool obj = cJSON_IsObject(j), flat = true;
	size_t n = (size_t)cJSON_GetArraySize(j), i = 0;
	const cJSON **kids, *it;
	enum kf_status st = KF_OK;

	if (!n)
		return kf_buf_adds(b, obj ? "{}" : "[]");
	if (!(kids = malloc(n * sizeof(const cJSON *))))
		return KF_ERR_NOMEM;
	cJSON_ArrayForEach(it, j)
	{
		kids[i++] = it;
		flat = flat && !is_container(it);
	}
	n = i; /* the items walked: what cJSON_GetArraySize counted, as the analyzer cannot tell */
	if (obj)
		qsort(kids, n, sizeof(const cJSON *), cmp_key);
	st = kf_buf_addch(b, obj ? '{' : '[');
	for (i = 0; !st && i < n; i++) {
		if (i)
			st = kf_buf_adds(b, flat ? ", " : ",");
		if (!st && !flat)
			st = kf_buf_addf(b, "\n%*s", 2 * (depth + 1), "");
		if (!st && obj && !(st = put_string(b, kids[i]->string)))
			st = kf_buf_adds(b, ": ");
		if (!st)
			st = put_value(b, kids[i], depth + 1);
	}
	if (!st && !flat)
		st = kf_buf_addf(b, "\n%*s", 2 * depth, "");
	if (!st)
		st = kf_buf_addch(b, obj ? '}' : ']');
	free(kids);
	return st;
}

static enum kf_status put_value(struct kf_buf *b, const cJSON *j, int depth)
{
	if (is_container(j))
		return put_container(b, j, depth);
	if (cJSON_IsString(j))
		return put_string(b, j->valuestring);
	if (cJSON_IsNumber(j))
		return put_number(b, j->valuedouble);
	if (cJSON_IsBool(j))
		return kf_buf_adds(b, cJSON_IsTrue(j) ? "true" : "false");
	return kf_buf_adds(b, "null");
}

enum kf_status kf_regress_json_write(const cJSON *j, struct kf_buf *out, struct kf_err *err)
{
	enum kf_status st = put_value(out, j, 0);
	if (!st)
		st = kf_buf_addch(out, '\n');
	if (st)
		return kf_err_set(err, st, "cannot serialize the manifest (%zu bytes max)", out->max);
	return KF_OK;
}

enum kf_status kf_regress_manifest_save(const struct kf_regress_manifest *m, struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(MANIFEST_MAX_BYTES);
	enum kf_status st = kf_regress_json_write(m->root, &b, err);
	if (!st)
		st = kf_write_file_atomic(m->path, b.data, b.len, err);
	kf_buf_release(&b);
	return st;
}
