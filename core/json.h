/* JSON helpers over cJSON: bounded file reading with line:column parse errors, a field-path builder
 * so every error reads "t.json: tensors[1].shape[0]: expected a string or integer", typed field access,
 * and safe writing (NaN/Inf never reach the output as bare tokens; files are written atomically). */
#ifndef KF_JSON_H
#define KF_JSON_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "kf.h"

#define KF_JSON_MAX_FILE (1u << 20) /* default bound for task-sized JSON files: 1 MiB */

/* Where we are in a document: the file name (borrowed, lives as long as the ctx) and the field path. */
struct kf_jpath {
	const char *file;
	char path[256];
	size_t len;
};

void kf_jpath_init(struct kf_jpath *p, const char *file);
/* Appends ".key" (or "key" at the root) / "[i]"; returns a mark for kf_jpath_pop. */
size_t kf_jpath_push_key(struct kf_jpath *p, const char *key);
size_t kf_jpath_push_index(struct kf_jpath *p, size_t i);
void kf_jpath_pop(struct kf_jpath *p, size_t mark);
/* The path ("tensors[1].shape[0]"), or "" at the root. */
const char *kf_jpath_str(const struct kf_jpath *p);

/* Sets err to "FILE: PATH: message" (parts left out when empty); returns code. */
enum kf_status kf_jpath_err(const struct kf_jpath *p, struct kf_err *err, enum kf_status code,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#if defined(__clang_analyzer__) && !defined(KF_JPATH_IMPL)
/* For static analysis only (see kf_err_set in core/kf.h): returns the code it is given. */
#define kf_jpath_err(p, err, code, ...)                                                                      \
	(kf_jpath_err((p), (err), (code), __VA_ARGS__), (enum kf_status)(code))
#endif
/* Same text for a warning line appended to out ("FILE: PATH: message\n"); out may be NULL. */
void kf_jpath_warn(const struct kf_jpath *p, struct kf_buf *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parses text (len bytes) named name; KF_ERR_PARSE "NAME:LINE:COL: invalid JSON" on error. Duplicate
 * keys in any object are a parse error too (cJSON would silently keep the first). */
enum kf_status kf_json_parse(const char *name, const char *text, size_t len, cJSON **out, struct kf_err *err);
/* Reads and parses path, at most max_bytes (0: KF_JSON_MAX_FILE). raw (may be NULL) receives the bytes. */
enum kf_status kf_json_read_file(const char *path, size_t max_bytes, cJSON **out, struct kf_buf *raw,
				 struct kf_err *err);

/* Typed access to obj[key] with the path used in errors. A missing key: KF_ERR_INVALID "missing required
 * field" when required, else KF_OK with *found false (found may be NULL). Wrong type: KF_ERR_INVALID
 * "expected a string". Each pushes key onto p only while checking; p is unchanged on return. */
enum kf_status kf_json_get_string(const cJSON *obj, const char *key, bool required, const char **out,
				  bool *found, struct kf_jpath *p, struct kf_err *err);
/* An integral JSON number in [lo, hi] (values beyond 2^53 are rejected: a double cannot hold them). */
enum kf_status kf_json_get_int(const cJSON *obj, const char *key, bool required, int64_t lo, int64_t hi,
			       int64_t *out, bool *found, struct kf_jpath *p, struct kf_err *err);
/* A finite JSON number. */
enum kf_status kf_json_get_number(const cJSON *obj, const char *key, bool required, double *out, bool *found,
				  struct kf_jpath *p, struct kf_err *err);
enum kf_status kf_json_get_bool(const cJSON *obj, const char *key, bool required, bool *out, bool *found,
				struct kf_jpath *p, struct kf_err *err);
/* obj[key] must be an array / object; *out borrowed from obj (NULL when absent and not required). */
enum kf_status kf_json_get_array(const cJSON *obj, const char *key, bool required, const cJSON **out,
				 struct kf_jpath *p, struct kf_err *err);
enum kf_status kf_json_get_object(const cJSON *obj, const char *key, bool required, const cJSON **out,
				  struct kf_jpath *p, struct kf_err *err);
/* Value checks on an item already at the current path. */
enum kf_status kf_json_as_int(const cJSON *item, int64_t lo, int64_t hi, int64_t *out,
			      const struct kf_jpath *p, struct kf_err *err);
/* Name of a JSON value's type for messages ("a string", "an array", "null"). */
const char *kf_json_type_name(const cJSON *item);

/* Reports each key of obj not in known[0..n) as "unknown field 'k'": an error when strict, else a
 * warning line in warnings. */
enum kf_status kf_json_check_fields(const cJSON *obj, const char *const *known, size_t n, bool strict,
				    struct kf_jpath *p, struct kf_buf *warnings, struct kf_err *err);

/* Builders that report allocation failure instead of ignoring it. A non-finite double is written as
 * null (cJSON would too, but we do not rely on that). Integers beyond 2^53 are written as strings so
 * they round-trip exactly. */
cJSON *kf_json_add_number(cJSON *obj, const char *key, double v);
cJSON *kf_json_add_int(cJSON *obj, const char *key, int64_t v);
cJSON *kf_json_add_string(cJSON *obj, const char *key, const char *s); /* NULL s: JSON null */
cJSON *kf_json_add_bool(cJSON *obj, const char *key, bool v);

/* A shape's dims as a JSON object ({"B":16,"N":4096}, in the shape's order); NULL when out of memory.
 * kf_json_shape_text writes the same object unformatted into buf (always NUL-terminated; "{}" when it
 * does not fit): the form the knowledge base stores shapes in. */
struct kf_shape;
cJSON *kf_json_shape(const struct kf_shape *s);
void kf_json_shape_text(const struct kf_shape *s, char *buf, size_t n);

/* Serializes j (pretty when pretty) into out (bounded by out->max). */
enum kf_status kf_json_print(const cJSON *j, bool pretty, struct kf_buf *out, struct kf_err *err);
/* Prints j and a newline to f (stdout for --json); KF_ERR_NOMEM / KF_ERR_IO. */
enum kf_status kf_json_fput(const cJSON *j, bool pretty, FILE *f, struct kf_err *err);
/* Writes j to path atomically (kf_write_file_atomic), with a trailing newline. */
enum kf_status kf_json_write_file(const char *path, const cJSON *j, bool pretty, struct kf_err *err);

#endif
