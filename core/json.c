/* JSON helpers over cJSON (core/json.h): bounded reading with precise parse errors, the field-path
 * builder behind every "FILE: PATH: message", typed field access, and safe writing. */
#define KF_JPATH_IMPL /* defines the real kf_jpath_err (see json.h) */
#include "json.h"

#include "expr.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The largest integer a double holds exactly: JSON integers beyond it cannot be trusted. */
#define JSON_MAX_EXACT 9007199254740992.0 /* 2^53 */

void kf_jpath_init(struct kf_jpath *p, const char *file)
{
	p->file = file;
	p->path[0] = '\0';
	p->len = 0;
}

static void jpath_append(struct kf_jpath *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jpath_append(struct kf_jpath *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->len >= sizeof(p->path) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p->path + p->len, sizeof(p->path) - p->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	p->len += (size_t)n;
	if (p->len >= sizeof(p->path))
		p->len =
		    sizeof(p->path) - 1; /* truncated: the path is for people, a cut tail is acceptable */
}

size_t kf_jpath_push_key(struct kf_jpath *p, const char *key)
{
	size_t mark = p->len;
	jpath_append(p, "%s%s", p->len ? "." : "", key);
	return mark;
}

size_t kf_jpath_push_index(struct kf_jpath *p, size_t i)
{
	size_t mark = p->len;
	jpath_append(p, "[%zu]", i);
	return mark;
}

void kf_jpath_pop(struct kf_jpath *p, size_t mark)
{
	if (mark < sizeof(p->path)) {
		p->len = mark;
		p->path[mark] = '\0';
	}
}

const char *kf_jpath_str(const struct kf_jpath *p)
{
	return p->path;
}

static void __attribute__((format(printf, 4, 0)))
jpath_vformat(const struct kf_jpath *p, char *out, size_t n, const char *fmt, va_list ap)
{
	char msg[768];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (p->file && *p->file && p->len)
		snprintf(out, n, "%s: %s: %s", p->file, p->path, msg);
	else if (p->file && *p->file)
		snprintf(out, n, "%s: %s", p->file, msg);
	else if (p->len)
		snprintf(out, n, "%s: %s", p->path, msg);
	else
		snprintf(out, n, "%s", msg);
}

enum kf_status kf_jpath_err(const struct kf_jpath *p, struct kf_err *err, enum kf_status code,
			    const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return code;
	va_start(ap, fmt);
	jpath_vformat(p, err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->code = code;
	return code;
}

void kf_jpath_warn(const struct kf_jpath *p, struct kf_buf *out, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	if (!out)
		return;
	va_start(ap, fmt);
	jpath_vformat(p, line, sizeof(line), fmt, ap);
	va_end(ap);
	/* warnings are advisory: a full buffer drops the line rather than failing the load */
	if (kf_buf_adds(out, line) == KF_OK)
		kf_buf_addch(out, '\n');
}

const char *kf_json_type_name(const cJSON *item)
{
	if (!item)
		return "nothing";
	if (cJSON_IsString(item))
		return "a string";
	if (cJSON_IsNumber(item))
		return "a number";
	if (cJSON_IsBool(item))
		return "a boolean";
	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	return "an invalid value";
}

/* ---- parsing -------------------------------------------------------------------------------- */

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate keys: cJSON keeps them all and lookups see only the first, so a second "name" would be
 * silently ignored. Sorting the keys keeps this O(k log k) even for hostile objects. */
static enum kf_status check_dups(const cJSON *j, struct kf_jpath *p, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	size_t n = 0, i = 0;
	const cJSON *c;

	if (!cJSON_IsArray(j) && !cJSON_IsObject(j))
		return KF_OK;
	for (c = j->child; c; c = c->next)
		n++;
	if (cJSON_IsObject(j) && n > 1) {
		const char **keys = malloc(n * sizeof(*keys));
		if (!keys)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		for (c = j->child; c; c = c->next)
			keys[i++] = c->string ? c->string : "";
		qsort(keys, n, sizeof(*keys), cmp_str_ptr);
		for (i = 1; i < n; i++) {
			if (!strcmp(keys[i - 1], keys[i])) {
				st = kf_jpath_err(p, err, KF_ERR_PARSE, "duplicate key '%s'", keys[i]);
				break;
			}
		}
		free(keys);
		if (st)
			return st;
	}
	i = 0;
	for (c = j->child; c; c = c->next, i++) {
		size_t mark = cJSON_IsObject(j) ? kf_jpath_push_key(p, c->string ? c->string : "")
						: kf_jpath_push_index(p, i);
		st = check_dups(c, p, err);
		kf_jpath_pop(p, mark);
		if (st)
			return st;
	}
	return KF_OK;
}

enum kf_status kf_json_parse(const char *name, const char *text, size_t len, cJSON **out, struct kf_err *err)
{
	const char *end = NULL;
	struct kf_jpath p;
	enum kf_status st;
	cJSON *j;
	char *copy;

	*out = NULL;
	if (memchr(text, '\0', len))
		return kf_err_set(err, KF_ERR_PARSE, "%s: invalid JSON: contains a NUL byte", name);
	/* cJSON wants the terminating NUL inside the length to detect trailing garbage, so parse a
	 * NUL-terminated copy (text need not be terminated). */
	copy = malloc(len + 1);
	if (!copy)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory parsing '%s'", name);
	memcpy(copy, text, len);
	copy[len] = '\0';
	j = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
	if (!j) {
		size_t off = end && end >= copy && end <= copy + len ? (size_t)(end - copy) : len;
		size_t line = 1, col = 1;
		char near[24];
		size_t k;
		for (size_t i = 0; i < off; i++) {
			if (copy[i] == '\n')
				line++, col = 1;
			else
				col++;
		}
		for (k = 0; k + 1 < sizeof(near) && off + k < len && copy[off + k] != '\n'; k++)
			near[k] = copy[off + k] >= 0x20 && copy[off + k] < 0x7f ? copy[off + k] : '?';
		near[k] = '\0';
		free(copy);
		if (!len || off >= len)
			return kf_err_set(err, KF_ERR_PARSE,
					  "%s:%zu:%zu: invalid JSON: unexpected end of input", name, line,
					  col);
		if (!*near)
			return kf_err_set(err, KF_ERR_PARSE,
					  "%s:%zu:%zu: invalid JSON at the end of the line", name, line, col);
		return kf_err_set(err, KF_ERR_PARSE, "%s:%zu:%zu: invalid JSON near '%s'", name, line, col,
				  near);
	}
	free(copy);
	kf_jpath_init(&p, name);
	st = check_dups(j, &p, err);
	if (st) {
		cJSON_Delete(j);
		return st;
	}
	*out = j;
	return KF_OK;
}

enum kf_status kf_json_read_file(const char *path, size_t max_bytes, cJSON **out, struct kf_buf *raw,
				 struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(max_bytes ? max_bytes : KF_JSON_MAX_FILE);
	enum kf_status st;

	*out = NULL;
	st = kf_buf_read_file(&b, path, err);
	if (!st)
		st = kf_json_parse(path, b.data, b.len, out, err);
	if (!st && raw) {
		kf_buf_reset(raw);
		st = kf_buf_add(raw, b.data, b.len);
		if (st) {
			kf_err_set(err, st, "'%s' is larger than %zu bytes", path, raw->max);
			cJSON_Delete(*out);
			*out = NULL;
		}
	}
	kf_buf_release(&b);
	return st;
}

/* ---- typed access ---------------------------------------------------------------------------- */

static enum kf_status get_item(const cJSON *obj, const char *key, bool required, const cJSON **item,
			       bool *found, struct kf_jpath *p, struct kf_err *err)
{
	*item = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
	if (found)
		*found = *item != NULL;
	if (!*item && required) {
		size_t mark = kf_jpath_push_key(p, key);
		enum kf_status st = kf_jpath_err(p, err, KF_ERR_INVALID, "missing required field '%s'", key);
		kf_jpath_pop(p, mark);
		return st;
	}
	return KF_OK;
}

static enum kf_status type_error(struct kf_jpath *p, const char *key, const char *want, const cJSON *item,
				 struct kf_err *err)
{
	size_t mark = kf_jpath_push_key(p, key);
	enum kf_status st =
	    kf_jpath_err(p, err, KF_ERR_INVALID, "expected %s, got %s", want, kf_json_type_name(item));
	kf_jpath_pop(p, mark);
	return st;
}

enum kf_status kf_json_get_string(const cJSON *obj, const char *key, bool required, const char **out,
				  bool *found, struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	enum kf_status st = get_item(obj, key, required, &it, found, p, err);
	if (st || !it)
		return st;
	if (!cJSON_IsString(it) || !it->valuestring)
		return type_error(p, key, "a string", it, err);
	*out = it->valuestring;
	return KF_OK;
}

enum kf_status kf_json_as_int(const cJSON *item, int64_t lo, int64_t hi, int64_t *out,
			      const struct kf_jpath *p, struct kf_err *err)
{
	double d;
	if (!cJSON_IsNumber(item))
		return kf_jpath_err(p, err, KF_ERR_INVALID, "expected an integer, got %s",
				    kf_json_type_name(item));
	d = item->valuedouble;
	if (!isfinite(d) || d != floor(d))
		return kf_jpath_err(p, err, KF_ERR_INVALID, "expected an integer, got %.17g", d);
	if (fabs(d) > JSON_MAX_EXACT || d < (double)lo || d > (double)hi)
		return kf_jpath_err(p, err, KF_ERR_INVALID, "%.17g is out of range [%lld, %lld]", d,
				    (long long)lo, (long long)hi);
	*out = (int64_t)d;
	/* (double)hi may round up past hi (e.g. INT64_MAX); check in the integer domain too */
	if (*out < lo || *out > hi)
		return kf_jpath_err(p, err, KF_ERR_INVALID, "%.17g is out of range [%lld, %lld]", d,
				    (long long)lo, (long long)hi);
	return KF_OK;
}

enum kf_status kf_json_get_int(const cJSON *obj, const char *key, bool required, int64_t lo, int64_t hi,
			       int64_t *out, bool *found, struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	size_t mark;
	enum kf_status st = get_item(obj, key, required, &it, found, p, err);
	if (st || !it)
		return st;
	mark = kf_jpath_push_key(p, key);
	st = kf_json_as_int(it, lo, hi, out, p, err);
	kf_jpath_pop(p, mark);
	return st;
}

enum kf_status kf_json_get_number(const cJSON *obj, const char *key, bool required, double *out, bool *found,
				  struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	enum kf_status st = get_item(obj, key, required, &it, found, p, err);
	if (st || !it)
		return st;
	if (!cJSON_IsNumber(it))
		return type_error(p, key, "a number", it, err);
	if (!isfinite(it->valuedouble)) {
		size_t mark = kf_jpath_push_key(p, key);
		st = kf_jpath_err(p, err, KF_ERR_INVALID, "expected a finite number");
		kf_jpath_pop(p, mark);
		return st;
	}
	*out = it->valuedouble;
	return KF_OK;
}

enum kf_status kf_json_get_bool(const cJSON *obj, const char *key, bool required, bool *out, bool *found,
				struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	enum kf_status st = get_item(obj, key, required, &it, found, p, err);
	if (st || !it)
		return st;
	if (!cJSON_IsBool(it))
		return type_error(p, key, "true or false", it, err);
	*out = cJSON_IsTrue(it);
	return KF_OK;
}

enum kf_status kf_json_get_array(const cJSON *obj, const char *key, bool required, const cJSON **out,
				 struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	enum kf_status st = get_item(obj, key, required, &it, NULL, p, err);
	*out = NULL;
	if (st || !it)
		return st;
	if (!cJSON_IsArray(it))
		return type_error(p, key, "an array", it, err);
	*out = it;
	return KF_OK;
}

enum kf_status kf_json_get_object(const cJSON *obj, const char *key, bool required, const cJSON **out,
				  struct kf_jpath *p, struct kf_err *err)
{
	const cJSON *it;
	enum kf_status st = get_item(obj, key, required, &it, NULL, p, err);
	*out = NULL;
	if (st || !it)
		return st;
	if (!cJSON_IsObject(it))
		return type_error(p, key, "an object", it, err);
	*out = it;
	return KF_OK;
}

enum kf_status kf_json_check_fields(const cJSON *obj, const char *const *known, size_t n, bool strict,
				    struct kf_jpath *p, struct kf_buf *warnings, struct kf_err *err)
{
	for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
		bool ok = false;
		for (size_t i = 0; i < n && !ok; i++)
			ok = c->string && !strcmp(c->string, known[i]);
		if (ok)
			continue;
		if (strict)
			return kf_jpath_err(p, err, KF_ERR_INVALID, "unknown field '%s'",
					    c->string ? c->string : "");
		kf_jpath_warn(p, warnings, "unknown field '%s' (ignored)", c->string ? c->string : "");
	}
	return KF_OK;
}

/* ---- writing --------------------------------------------------------------------------------- */

static cJSON *add(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return NULL;
	if (cJSON_IsArray(obj) ? !cJSON_AddItemToArray(obj, item) : !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return NULL;
	}
	return item;
}

cJSON *kf_json_add_number(cJSON *obj, const char *key, double v)
{
	return add(obj, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

cJSON *kf_json_add_int(cJSON *obj, const char *key, int64_t v)
{
	if (v > (int64_t)JSON_MAX_EXACT || v < -(int64_t)JSON_MAX_EXACT) {
		char s[32];
		snprintf(s, sizeof(s), "%lld", (long long)v);
		return add(obj, key, cJSON_CreateString(s));
	}
	return add(obj, key, cJSON_CreateNumber((double)v));
}

cJSON *kf_json_add_string(cJSON *obj, const char *key, const char *s)
{
	return add(obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

cJSON *kf_json_add_bool(cJSON *obj, const char *key, bool v)
{
	return add(obj, key, cJSON_CreateBool(v));
}

cJSON *kf_json_shape(const struct kf_shape *s)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < s->n; i++)
		if (!kf_json_add_int(o, s->names[i], s->values[i])) {
			cJSON_Delete(o);
			return NULL;
		}
	return o;
}

void kf_json_shape_text(const struct kf_shape *s, char *buf, size_t n)
{
	cJSON *o = kf_json_shape(s);
	char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
	if (n)
		snprintf(buf, n, "%s", txt && strlen(txt) < n ? txt : "{}");
	free(txt);
	cJSON_Delete(o);
}

enum kf_status kf_json_print(const cJSON *j, bool pretty, struct kf_buf *out, struct kf_err *err)
{
	char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	enum kf_status st;
	if (!s)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory printing JSON");
	st = kf_buf_adds(out, s);
	free(s);
	if (st)
		return kf_err_set(
		    err, st, st == KF_ERR_LIMIT ? "JSON document larger than %zu bytes" : "out of memory",
		    out->max);
	return KF_OK;
}

enum kf_status kf_json_fput(const cJSON *j, bool pretty, FILE *f, struct kf_err *err)
{
	char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	int bad;
	if (!s)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory printing JSON");
	bad = fputs(s, f) < 0 || fputc('\n', f) == EOF || fflush(f) != 0;
	free(s);
	if (bad)
		return kf_err_set(err, KF_ERR_IO, "cannot write JSON: %s", strerror(errno));
	return KF_OK;
}

enum kf_status kf_json_write_file(const char *path, const cJSON *j, bool pretty, struct kf_err *err)
{
	char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
	size_t n;
	enum kf_status st;
	if (!s)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory printing JSON");
	n = strlen(s);
	{
		char *t = realloc(s, n + 2);
		if (!t) {
			free(s);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory printing JSON");
		}
		s = t;
	}
	s[n] = '\n';
	s[n + 1] = '\0';
	st = kf_write_file_atomic(path, s, n + 1, err);
	free(s);
	return st;
}
