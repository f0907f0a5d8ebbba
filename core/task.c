/* The task model (core/task.h): loads task.json (docs/spec/task-format.md, kforge-task/1), validates every
 * field with the file and the field path in each error, resolves defaults (timing shapes, tolerances),
 * and checks the reference/baseline kernel files parse and bind against the task. */
#include "task.h"

#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baseline.h"
#include "hash.h"
#include "json.h"
#include "kfile.h"

#define TASK_MAX_FILE (1u << 20) /* 1 MiB: a task file is a page of JSON */
#define TASK_MAX_SHAPES 256
#define TASK_MAX_TENSORS 32
#define TASK_MAX_PARAMS 32
#define TASK_MAX_RANK 8
/* Dims bind at most 2^53 (the largest integer a JSON number holds exactly). */
#define TASK_MAX_DIM_VALUE KF_TASK_MAX_DIM_VALUE

/* ---- dtypes and roles ------------------------------------------------------------------------ */

static const struct {
	const char *name, *ctype;
	size_t size;
	bool is_float;
} dtypes[KF_DTYPE_COUNT] = {
    [KF_DTYPE_F64] = {"f64", "double", 8, true},       [KF_DTYPE_F32] = {"f32", "float", 4, true},
    [KF_DTYPE_F16] = {"f16", "__half", 2, true},       [KF_DTYPE_BF16] = {"bf16", "__nv_bfloat16", 2, true},
    [KF_DTYPE_I64] = {"i64", "long long", 8, false},   [KF_DTYPE_I32] = {"i32", "int", 4, false},
    [KF_DTYPE_I16] = {"i16", "short", 2, false},       [KF_DTYPE_I8] = {"i8", "signed char", 1, false},
    [KF_DTYPE_U8] = {"u8", "unsigned char", 1, false},
};

const char *kf_dtype_name(enum kf_dtype t)
{
	return (unsigned)t < KF_DTYPE_COUNT ? dtypes[t].name : "?";
}

bool kf_dtype_parse(const char *s, enum kf_dtype *out)
{
	for (int i = 0; s && i < KF_DTYPE_COUNT; i++) {
		if (!strcmp(s, dtypes[i].name)) {
			*out = (enum kf_dtype)i;
			return true;
		}
	}
	return false;
}

size_t kf_dtype_size(enum kf_dtype t)
{
	return (unsigned)t < KF_DTYPE_COUNT ? dtypes[t].size : 0;
}

bool kf_dtype_is_float(enum kf_dtype t)
{
	return (unsigned)t < KF_DTYPE_COUNT && dtypes[t].is_float;
}

const char *kf_dtype_ctype(enum kf_dtype t)
{
	return (unsigned)t < KF_DTYPE_COUNT ? dtypes[t].ctype : "?";
}

const char *kf_role_name(enum kf_role r)
{
	switch (r) {
	case KF_ROLE_INPUT:
		return "input";
	case KF_ROLE_OUTPUT:
		return "output";
	case KF_ROLE_INOUT:
		return "inout";
	}
	return "?";
}

/* Integer range of an integer dtype, for randint bounds. */
static void int_range(enum kf_dtype t, double *lo, double *hi)
{
	switch (t) {
	case KF_DTYPE_I8:
		*lo = -128, *hi = 127;
		break;
	case KF_DTYPE_U8:
		*lo = 0, *hi = 255;
		break;
	case KF_DTYPE_I16:
		*lo = -32768, *hi = 32767;
		break;
	case KF_DTYPE_I32:
		*lo = -2147483648.0, *hi = 2147483647.0;
		break;
	default:
		*lo = -9007199254740992.0, *hi = 9007199254740992.0;
		break; /* exact in a double */
	}
}

/* ---- tolerances ------------------------------------------------------------------------------- */

/* Project defaults: |got - ref| <= atol + rtol*|ref| per element. Each value is the error a CORRECT
 * kernel can show against a correct reference, so a tighter one rejects valid reorderings and a looser
 * one lets precision cheats through (docs/spec/verification.md, check 5). u = unit roundoff of the dtype. */
struct kf_tol kf_tol_default(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F64:
		/* u = 2^-53 ~ 1.1e-16. Reordering a K-term sum moves the result by up to ~K*u*sum|terms|;
		 * for K ~ 1e5 and sum|terms| ~ 10x |result| that is ~1e-10: 1e-9 leaves headroom while
		 * still rejecting any kernel that silently computes in f32 (error ~1e-7). */
		return (struct kf_tol){.atol = 1e-9, .rtol = 1e-9};
	case KF_DTYPE_F32:
		/* u = 2^-24 ~ 6e-8. The usual f32 difference between correct kernels is accumulation order in
		 * a K-length dot product or reduction: ~sqrt(K)*u*sum|terms| typically, K*u worst case;
		 * K = 4096 gives 4e-6 .. 2.4e-4 of sum|terms|. 1e-4 (KernelBench's current f32 value) keeps
		 * split-K and tree reductions passing and still catches f16 accumulation (error ~1e-3). */
		return (struct kf_tol){.atol = 1e-4, .rtol = 1e-4};
	case KF_DTYPE_F16:
		/* 10-bit mantissa: u = 2^-11 ~ 4.9e-4, one ulp at 1.0 is 9.8e-4. Rounding the output alone
		 * costs half an ulp, and correct kernels differ in where they round intermediates; 1e-2 is
		 * ~10 ulp at 1.0 (KernelBench uses 1e-2 for f16 too). */
		return (struct kf_tol){.atol = 1e-2, .rtol = 1e-2};
	case KF_DTYPE_BF16:
		/* 7-bit mantissa: u = 2^-8 ~ 3.9e-3, one ulp at 1.0 is 7.8e-3. A single extra rounding of an
		 * intermediate already costs an ulp, so 1e-2 (1.3 ulp) rejects correct kernels; 2e-2 allows
		 * ~2.5 ulp. */
		return (struct kf_tol){.atol = 2e-2, .rtol = 2e-2};
	case KF_DTYPE_I64:
	case KF_DTYPE_I32:
	case KF_DTYPE_I16:
	case KF_DTYPE_I8:
	case KF_DTYPE_U8:
	default:
		/* Integer arithmetic is exact and associative (wrap-around included), so any difference
		 * from the reference is a bug: exact match. */
		return (struct kf_tol){.atol = 0, .rtol = 0};
	}
}

struct kf_tol kf_task_tolerance(const struct kf_task *t, enum kf_dtype dt)
{
	if ((unsigned)dt < KF_DTYPE_COUNT && t && t->tol_set[dt])
		return t->tol[dt];
	return kf_tol_default(dt);
}

/* ---- lookups ------------------------------------------------------------------------------------ */

int kf_task_tensor_index(const struct kf_task *t, const char *name)
{
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].name && !strcmp(t->tensors[i].name, name))
			return (int)i;
	return -1;
}

int kf_task_param_index(const struct kf_task *t, const char *name)
{
	for (size_t i = 0; i < t->n_params; i++)
		if (t->params[i].name && !strcmp(t->params[i].name, name))
			return (int)i;
	return -1;
}

int kf_task_dim_index(const struct kf_task *t, const char *name)
{
	for (size_t i = 0; i < t->n_dims; i++)
		/* dims[0..n_dims) are set: NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
		if (!strcmp(t->dims[i], name))
			return (int)i;
	return -1;
}

enum kf_status kf_task_numel(const struct kf_task *t, size_t ti, const struct kf_shape *s, int64_t *out,
			     struct kf_err *err)
{
	const struct kf_tensor *x;
	int64_t n = 1;

	if (ti >= t->n_tensors)
		return kf_err_set(err, KF_ERR_INTERNAL, "tensor index %zu out of range", ti);
	x = &t->tensors[ti];
	for (size_t i = 0; i < x->rank; i++) {
		int64_t v;
		enum kf_status st = kf_expr_eval(x->shape[i], s, &v, err);
		if (st)
			return kf_err_prefix(err, "tensor '%s' shape[%zu]", x->name, i);
		if (v < 1)
			return kf_err_set(err, KF_ERR_RANGE,
					  "tensor '%s' shape[%zu]: '%s' is %lld (must be at least 1)",
					  x->name, i, x->shape[i], (long long)v);
		if (__builtin_mul_overflow(n, v, &n))
			return kf_err_set(err, KF_ERR_RANGE, "tensor '%s': element count overflows 64 bits",
					  x->name);
	}
	*out = n;
	return KF_OK;
}

static bool eval_double(const char *e, const struct kf_shape *s, double *out)
{
	int64_t v;
	if (!e || kf_expr_eval(e, s, &v, NULL))
		return false;
	*out = (double)v;
	return true;
}

bool kf_task_flops(const struct kf_task *t, const struct kf_shape *s, double *out)
{
	return eval_double(t->flops, s, out);
}

bool kf_task_bytes(const struct kf_task *t, const struct kf_shape *s, double *out)
{
	return eval_double(t->bytes, s, out);
}

/* ---- freeing ------------------------------------------------------------------------------------ */

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void kf_task_free(struct kf_task *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->dir);
	free(t->name);
	free(t->title);
	free(t->category);
	free(t->description);
	free_strv(t->dims, t->n_dims);
	free_strv(t->fixed_dims, t->n_fixed);
	free(t->shapes_public);
	free(t->shapes_hidden);
	free(t->shapes_timing);
	for (size_t i = 0; t->tensors && i < t->n_tensors; i++) {
		free(t->tensors[i].name);
		free_strv(t->tensors[i].shape, t->tensors[i].rank);
	}
	free(t->tensors);
	for (size_t i = 0; t->params && i < t->n_params; i++)
		free(t->params[i].name);
	free(t->params);
	free(t->reference);
	free(t->baseline);
	kf_baselines_free(t->baselines, t->n_baselines);
	free(t->flops);
	free(t->bytes);
	free(t);
}

/* ---- loading ------------------------------------------------------------------------------------ */

struct loader {
	struct kf_task *t;
	struct kf_jpath p;
	unsigned flags;
	struct kf_buf *warnings;
	struct kf_err *err;
};

static enum kf_status nomem(struct loader *L)
{
	return kf_jpath_err(&L->p, L->err, KF_ERR_NOMEM, "out of memory");
}

static bool task_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= KF_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static bool ident_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= KF_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* Names the directive grammar gives a meaning of its own: a dim, tensor or param called "min" would
 * make `min(a,b)` or `long(N)` ambiguous. */
static bool reserved(const char *s)
{
	return !strcmp(s, "cdiv") || !strcmp(s, "min") || !strcmp(s, "max") || !strcmp(s, "long");
}

static enum kf_status check_ident(struct loader *L, const char *s, const char *what)
{
	if (!ident_ok(s))
		return kf_jpath_err(
		    &L->p, L->err, KF_ERR_INVALID,
		    "%s name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, under %d characters)", what,
		    s, KF_NAME_MAX);
	if (reserved(s))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				    "%s name '%s' is reserved by the directive grammar", what, s);
	return KF_OK;
}

static enum kf_status get_text(struct loader *L, const cJSON *obj, const char *key, bool nonempty, char **out)
{
	const char *s = NULL;
	enum kf_status st = kf_json_get_string(obj, key, true, &s, NULL, &L->p, L->err);
	if (st)
		return st;
	if (nonempty && !*s) {
		size_t m = kf_jpath_push_key(&L->p, key);
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "must not be empty");
		kf_jpath_pop(&L->p, m);
		return st;
	}
	*out = kf_strdup(s);
	return *out ? KF_OK : nomem(L);
}

static enum kf_status load_header(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const char *fmt = NULL;
	int64_t level;
	enum kf_status st;
	size_t m;

	if ((st = kf_json_get_string(root, "format", true, &fmt, NULL, &L->p, L->err)))
		return st;
	if (strcmp(fmt, "kforge-task/1")) {
		m = kf_jpath_push_key(&L->p, "format");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "unsupported format '%s' (expected 'kforge-task/1')", fmt);
		kf_jpath_pop(&L->p, m);
		return st;
	}
	if ((st = get_text(L, root, "name", true, &t->name)))
		return st;
	if (!task_name_ok(t->name)) {
		m = kf_jpath_push_key(&L->p, "name");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "'%s' is not a valid task name (expected [a-z0-9_]+, "
				  "under %d characters)",
				  t->name, KF_NAME_MAX);
		kf_jpath_pop(&L->p, m);
		return st;
	}
	if ((st = get_text(L, root, "title", true, &t->title)) ||
	    (st = get_text(L, root, "description", true, &t->description)) ||
	    (st = get_text(L, root, "category", true, &t->category)))
		return st;
	for (const char *c = t->category; *c; c++) {
		if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '-')) {
			m = kf_jpath_push_key(&L->p, "category");
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
					  "'%s' is not one word (letters, digits, '_' or '-')", t->category);
			kf_jpath_pop(&L->p, m);
			return st;
		}
	}
	if ((st = kf_json_get_int(root, "level", true, 1, 3, &level, NULL, &L->p, L->err)))
		return st;
	t->level = (int)level;
	return KF_OK;
}

static enum kf_status load_dims(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const cJSON *arr, *it;
	enum kf_status st;
	size_t m, i = 0, n;

	if ((st = kf_json_get_array(root, "dims", true, &arr, &L->p, L->err)))
		return st;
	n = (size_t)cJSON_GetArraySize(arr);
	m = kf_jpath_push_key(&L->p, "dims");
	if (n > KF_MAX_DIMS) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "%zu dims; at most %d", n, KF_MAX_DIMS);
		goto out;
	}
	t->dims = calloc(n ? n : 1, sizeof(char *));
	if (!t->dims) {
		st = nomem(L);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(&L->p, i);
		if (!cJSON_IsString(it)) {
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected a string, got %s",
					  kf_json_type_name(it));
		} else if (!(st = check_ident(L, it->valuestring, "dim"))) {
			if (kf_task_dim_index(t, it->valuestring) >= 0)
				st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "duplicate dim '%s'",
						  it->valuestring);
			else if (!(t->dims[t->n_dims] = kf_strdup(it->valuestring)))
				st = nomem(L);
			else
				t->n_dims++;
		}
		kf_jpath_pop(&L->p, mi);
		if (st)
			goto out;
		i++;
	}
out:
	kf_jpath_pop(&L->p, m);
	return st;
}

static int fixed_index(const struct kf_task *t, const char *name)
{
	for (size_t i = 0; i < t->n_fixed; i++)
		/* fixed_dims[0..n_fixed) are set: NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
		if (!strcmp(t->fixed_dims[i], name))
			return (int)i;
	return -1;
}

static enum kf_status load_fixed(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const cJSON *arr, *it;
	enum kf_status st;
	size_t m, i = 0, n;

	if ((st = kf_json_get_array(root, "fixed_dims", false, &arr, &L->p, L->err)) || !arr)
		return st;
	n = (size_t)cJSON_GetArraySize(arr);
	m = kf_jpath_push_key(&L->p, "fixed_dims");
	t->fixed_dims = calloc(n ? n : 1, sizeof(char *));
	if (!t->fixed_dims) {
		st = nomem(L);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(&L->p, i++);
		if (!cJSON_IsString(it))
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected a string, got %s",
					  kf_json_type_name(it));
		else if (kf_task_dim_index(t, it->valuestring) < 0)
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "unknown dim '%s'", it->valuestring);
		else if (fixed_index(t, it->valuestring) >= 0)
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "duplicate dim '%s'",
					  it->valuestring);
		else if (!(t->fixed_dims[t->n_fixed] = kf_strdup(it->valuestring)))
			st = nomem(L);
		else
			t->n_fixed++;
		kf_jpath_pop(&L->p, mi);
		if (st)
			break;
	}
out:
	kf_jpath_pop(&L->p, m);
	return st;
}

bool kf_task_dim_allows(const struct kf_task *t, size_t d, int64_t v)
{
	const struct kf_dim_constraint *c;
	if (d >= t->n_dims || d >= KF_MAX_DIMS)
		return false;
	c = &t->constraints[d];
	if (!c->set)
		return v >= 1;
	return v >= c->min && v <= c->max && v % c->multiple_of == 0;
}

bool kf_task_dim_fixed(const struct kf_task *t, size_t d)
{
	return d < t->n_dims && fixed_index(t, t->dims[d]) >= 0;
}

/* `constraints`: {"N": {"multiple_of": 8, "min": 8, "max": 65536}, ...}. Each value an integer >= 1,
 * min <= max, and some value in [min, max] a multiple of multiple_of. */
static enum kf_status load_constraints(struct loader *L, const cJSON *root)
{
	static const char *const known[] = {"multiple_of", "min", "max"};
	struct kf_task *t = L->t;
	const cJSON *obj, *it;
	enum kf_status st;
	size_t m;

	for (size_t d = 0; d < KF_MAX_DIMS; d++) {
		t->constraints[d].set = false;
		t->constraints[d].multiple_of = 1;
		t->constraints[d].min = 1;
		t->constraints[d].max = TASK_MAX_DIM_VALUE;
	}
	if ((st = kf_json_get_object(root, "constraints", false, &obj, &L->p, L->err)) || !obj)
		return st;
	m = kf_jpath_push_key(&L->p, "constraints");
	cJSON_ArrayForEach(it, obj)
	{
		size_t mi = kf_jpath_push_key(&L->p, it->string);
		int d = kf_task_dim_index(t, it->string);
		struct kf_dim_constraint *c = d >= 0 ? &t->constraints[d] : NULL;
		bool found;
		int64_t first;
		if (!c)
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "unknown dim '%s'", it->string);
		else if (!cJSON_IsObject(it))
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
					  "expected an object with multiple_of, min and max, got %s",
					  kf_json_type_name(it));
		else if (!(st =
			       kf_json_check_fields(it, known, KF_ARRAY_SIZE(known),
						    L->flags & KF_TASK_STRICT, &L->p, L->warnings, L->err)) &&
			 !(st = kf_json_get_int(it, "multiple_of", false, 1, TASK_MAX_DIM_VALUE,
						&c->multiple_of, &found, &L->p, L->err)) &&
			 !(st = kf_json_get_int(it, "min", false, 1, TASK_MAX_DIM_VALUE, &c->min, &found,
						&L->p, L->err)) &&
			 !(st = kf_json_get_int(it, "max", false, 1, TASK_MAX_DIM_VALUE, &c->max, &found,
						&L->p, L->err))) {
			c->set = true;
			first = (c->min + c->multiple_of - 1) / c->multiple_of * c->multiple_of;
			if (c->min > c->max)
				st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "min %lld is above max %lld",
						  (long long)c->min, (long long)c->max);
			else if (first > c->max)
				st = kf_jpath_err(
				    &L->p, L->err, KF_ERR_INVALID, "no multiple of %lld lies in %lld..%lld",
				    (long long)c->multiple_of, (long long)c->min, (long long)c->max);
		}
		kf_jpath_pop(&L->p, mi);
		if (st)
			break;
	}
	kf_jpath_pop(&L->p, m);
	return st;
}

/* A declared shape must satisfy every constraint; the error names the shape and the constraint. */
static enum kf_status check_constraints(struct loader *L, const struct kf_shape *s, const char *set,
					size_t si)
{
	struct kf_task *t = L->t;
	char sh[256];
	for (size_t d = 0; d < t->n_dims; d++) {
		const struct kf_dim_constraint *c = &t->constraints[d];
		const char *field;
		int64_t v;
		if (!c->set || !kf_shape_get(s, t->dims[d], &v) || kf_task_dim_allows(t, d, v))
			continue;
		field = v % c->multiple_of ? "multiple_of" : v < c->min ? "min" : "max";
		kf_shape_format(s, sh, sizeof(sh));
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				    "shapes.%s[%zu] (%s): %s=%lld breaks constraints.%s.%s (%s %lld)", set,
				    si, sh, t->dims[d], (long long)v, t->dims[d], field,
				    v % c->multiple_of ? "not a multiple of"
				    : v < c->min       ? "below"
						       : "above",
				    (long long)(v % c->multiple_of ? c->multiple_of
						: v < c->min       ? c->min
								   : c->max));
	}
	return KF_OK;
}

/* One binding {"B": 64, "N": 1000}: every dim exactly once, each a positive integer. */
static enum kf_status load_binding(struct loader *L, const cJSON *obj, struct kf_shape *s)
{
	struct kf_task *t = L->t;
	const cJSON *it;

	if (!cJSON_IsObject(obj))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				    "expected an object binding every dim, got %s", kf_json_type_name(obj));
	memset(s, 0, sizeof(*s));
	cJSON_ArrayForEach(it, obj)
	{
		size_t m = kf_jpath_push_key(&L->p, it->string);
		enum kf_status st = KF_OK;
		int64_t v;
		if (kf_task_dim_index(t, it->string) < 0)
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "unknown dim '%s'", it->string);
		else if (!(st = kf_json_as_int(it, 1, TASK_MAX_DIM_VALUE, &v, &L->p, L->err)))
			st = kf_shape_set(s, it->string, v);
		kf_jpath_pop(&L->p, m);
		if (st)
			return st;
	}
	for (size_t d = 0; d < t->n_dims; d++)
		if (!kf_shape_get(s, t->dims[d], NULL))
			return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "missing dim '%s'", t->dims[d]);
	return KF_OK;
}

static enum kf_status load_shape_list(struct loader *L, const cJSON *shapes, const char *key, bool required,
				      struct kf_shape **out, size_t *n_out)
{
	const cJSON *arr, *it;
	enum kf_status st;
	size_t m, n, i = 0;

	if ((st = kf_json_get_array(shapes, key, required, &arr, &L->p, L->err)) || !arr)
		return st;
	n = (size_t)cJSON_GetArraySize(arr);
	m = kf_jpath_push_key(&L->p, key);
	if (required && n == 0) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "needs at least one shape");
		goto out;
	}
	if (n > TASK_MAX_SHAPES) {
		st =
		    kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "%zu shapes; at most %d", n, TASK_MAX_SHAPES);
		goto out;
	}
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out) {
		st = nomem(L);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(&L->p, i);
		st = load_binding(L, it, &(*out)[i]);
		kf_jpath_pop(&L->p, mi);
		if (st)
			goto out;
		i++;
	}
	*n_out = n;
out:
	kf_jpath_pop(&L->p, m);
	return st;
}

static enum kf_status load_shapes(struct loader *L, const cJSON *root)
{
	static const char *const known[] = {"public", "hidden", "timing"};
	struct kf_task *t = L->t;
	const cJSON *shapes;
	enum kf_status st;
	size_t m;

	if ((st = kf_json_get_object(root, "shapes", true, &shapes, &L->p, L->err)))
		return st;
	m = kf_jpath_push_key(&L->p, "shapes");
	st = kf_json_check_fields(shapes, known, KF_ARRAY_SIZE(known), L->flags & KF_TASK_STRICT, &L->p,
				  L->warnings, L->err);
	kf_jpath_pop(&L->p, m);
	if (st)
		return st;
	m = kf_jpath_push_key(&L->p, "shapes");
	st = load_shape_list(L, shapes, "public", true, &t->shapes_public, &t->n_public);
	if (!st)
		st = load_shape_list(L, shapes, "hidden", false, &t->shapes_hidden, &t->n_hidden);
	if (!st)
		st = load_shape_list(L, shapes, "timing", false, &t->shapes_timing, &t->n_timing);
	kf_jpath_pop(&L->p, m);
	if (st)
		return st;
	if (!t->shapes_timing) {
		/* Default: the largest public shape by product of dims (a double: only the order matters). */
		size_t best = 0;
		double best_v = -1;
		for (size_t i = 0; i < t->n_public; i++) {
			double v = 1;
			for (size_t d = 0; d < t->shapes_public[i].n; d++)
				v *= (double)t->shapes_public[i].values[d];
			if (v > best_v)
				best_v = v, best = i;
		}
		t->shapes_timing = malloc(sizeof(*t->shapes_timing));
		if (!t->shapes_timing)
			return nomem(L);
		t->shapes_timing[0] = t->shapes_public[best];
		t->n_timing = 1;
	}
	return KF_OK;
}

static enum kf_status load_init(struct loader *L, const cJSON *obj, struct kf_tensor *x)
{
	static const char *const known[] = {"dist", "mean", "std", "lo", "hi"};
	const char *dist = NULL;
	enum kf_status st;
	bool found;
	size_t m;

	if (!cJSON_IsObject(obj))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected an object, got %s",
				    kf_json_type_name(obj));
	if ((st = kf_json_check_fields(obj, known, KF_ARRAY_SIZE(known), L->flags & KF_TASK_STRICT, &L->p,
				       L->warnings, L->err)))
		return st;
	if ((st = kf_json_get_string(obj, "dist", true, &dist, NULL, &L->p, L->err)))
		return st;
	if (!strcmp(dist, "normal")) {
		x->init.dist = KF_DIST_NORMAL;
		x->init.a = 0, x->init.b = 1;
		if ((st = kf_json_get_number(obj, "mean", false, &x->init.a, NULL, &L->p, L->err)) ||
		    (st = kf_json_get_number(obj, "std", false, &x->init.b, NULL, &L->p, L->err)))
			return st;
		if (x->init.b < 0) {
			m = kf_jpath_push_key(&L->p, "std");
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "must not be negative");
			kf_jpath_pop(&L->p, m);
			return st;
		}
	} else if (!strcmp(dist, "uniform") || !strcmp(dist, "randint")) {
		bool ri = dist[0] == 'r';
		x->init.dist = ri ? KF_DIST_RANDINT : KF_DIST_UNIFORM;
		if (ri) {
			int64_t lo, hi;
			if ((st = kf_json_get_int(obj, "lo", true, -TASK_MAX_DIM_VALUE, TASK_MAX_DIM_VALUE,
						  &lo, &found, &L->p, L->err)) ||
			    (st = kf_json_get_int(obj, "hi", true, -TASK_MAX_DIM_VALUE, TASK_MAX_DIM_VALUE,
						  &hi, &found, &L->p, L->err)))
				return st;
			x->init.a = (double)lo, x->init.b = (double)hi;
		} else if ((st = kf_json_get_number(obj, "lo", true, &x->init.a, &found, &L->p, L->err)) ||
			   (st = kf_json_get_number(obj, "hi", true, &x->init.b, &found, &L->p, L->err))) {
			return st;
		}
		if (!(x->init.a < x->init.b))
			return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "lo (%g) must be below hi (%g)",
					    x->init.a, x->init.b);
		if (ri && !kf_dtype_is_float(x->dtype)) {
			double lo, hi;
			int_range(x->dtype, &lo, &hi);
			/* hi is exclusive */
			if (x->init.a < lo || x->init.b - 1 > hi)
				return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
						    "randint range [%g, %g) does not fit dtype '%s'",
						    x->init.a, x->init.b, kf_dtype_name(x->dtype));
		}
	} else {
		m = kf_jpath_push_key(&L->p, "dist");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "unknown distribution '%s' (expected normal, uniform or randint)", dist);
		kf_jpath_pop(&L->p, m);
		return st;
	}
	if (!kf_dtype_is_float(x->dtype) && x->init.dist != KF_DIST_RANDINT)
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				    "'%s' needs a float dtype; tensor dtype is '%s' (use randint)", dist,
				    kf_dtype_name(x->dtype));
	return KF_OK;
}

static enum kf_status load_tensor(struct loader *L, const cJSON *obj, struct kf_tensor *x)
{
	static const char *const known[] = {"name", "role", "dtype", "shape", "init", "domain"};
	struct kf_task *t = L->t;
	const char *role = NULL, *dtype = NULL;
	const cJSON *shape, *it, *sub;
	enum kf_status st;
	size_t m, i = 0, n;

	if (!cJSON_IsObject(obj))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected an object, got %s",
				    kf_json_type_name(obj));
	if ((st = kf_json_check_fields(obj, known, KF_ARRAY_SIZE(known), L->flags & KF_TASK_STRICT, &L->p,
				       L->warnings, L->err)))
		return st;
	if ((st = get_text(L, obj, "name", true, &x->name)))
		return st;
	m = kf_jpath_push_key(&L->p, "name");
	st = check_ident(L, x->name, "tensor");
	kf_jpath_pop(&L->p, m);
	if (st)
		return st;
	if ((st = kf_json_get_string(obj, "role", true, &role, NULL, &L->p, L->err)))
		return st;
	if (!strcmp(role, "input")) {
		x->role = KF_ROLE_INPUT;
	} else if (!strcmp(role, "output")) {
		x->role = KF_ROLE_OUTPUT;
	} else if (!strcmp(role, "inout")) {
		x->role = KF_ROLE_INOUT;
	} else {
		m = kf_jpath_push_key(&L->p, "role");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "unknown role '%s' (expected input, output or inout)", role);
		kf_jpath_pop(&L->p, m);
		return st;
	}
	if ((st = kf_json_get_string(obj, "dtype", true, &dtype, NULL, &L->p, L->err)))
		return st;
	if (!kf_dtype_parse(dtype, &x->dtype)) {
		m = kf_jpath_push_key(&L->p, "dtype");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "unknown dtype '%s' (expected one of f64 f32 f16 bf16 i64 i32 i16 i8 u8)",
				  dtype);
		kf_jpath_pop(&L->p, m);
		return st;
	}

	if ((st = kf_json_get_array(obj, "shape", true, &shape, &L->p, L->err)))
		return st;
	n = (size_t)cJSON_GetArraySize(shape);
	m = kf_jpath_push_key(&L->p, "shape");
	if (n > TASK_MAX_RANK) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "rank %zu; at most %d", n, TASK_MAX_RANK);
		goto shape_out;
	}
	x->shape = calloc(n ? n : 1, sizeof(char *));
	if (!x->shape) {
		st = nomem(L);
		goto shape_out;
	}
	cJSON_ArrayForEach(it, shape)
	{
		size_t mi = kf_jpath_push_index(&L->p, i++);
		char lit[32];
		const char *src = NULL;
		if (cJSON_IsString(it)) {
			src = it->valuestring;
			st = kf_expr_check(src, (const char *const *)t->dims, t->n_dims, L->err);
			if (st)
				kf_jpath_err(&L->p, L->err, st, "%s", L->err ? L->err->msg : "");
		} else if (cJSON_IsNumber(it)) {
			int64_t v;
			st = kf_json_as_int(it, 1, TASK_MAX_DIM_VALUE, &v, &L->p, L->err);
			snprintf(lit, sizeof(lit), "%lld", (long long)v);
			src = lit;
		} else {
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
					  "expected a string or integer, got %s", kf_json_type_name(it));
		}
		if (!st && !(x->shape[x->rank++] = kf_strdup(src)))
			st = nomem(L);
		kf_jpath_pop(&L->p, mi);
		if (st)
			break;
	}
shape_out:
	kf_jpath_pop(&L->p, m);
	if (st)
		return st;

	if ((st = kf_json_get_object(obj, "domain", false, &sub, &L->p, L->err)))
		return st;
	if (sub) {
		static const char *const dknown[] = {"lo", "hi"};
		m = kf_jpath_push_key(&L->p, "domain");
		st = kf_json_check_fields(sub, dknown, KF_ARRAY_SIZE(dknown), L->flags & KF_TASK_STRICT,
					  &L->p, L->warnings, L->err);
		if (!st)
			st = kf_json_get_number(sub, "lo", true, &x->domain_lo, NULL, &L->p, L->err);
		if (!st)
			st = kf_json_get_number(sub, "hi", true, &x->domain_hi, NULL, &L->p, L->err);
		if (!st && !(x->domain_lo < x->domain_hi))
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "lo (%g) must be below hi (%g)",
					  x->domain_lo, x->domain_hi);
		kf_jpath_pop(&L->p, m);
		if (st)
			return st;
		x->has_domain = true;
	}

	if ((st = kf_json_get_object(obj, "init", false, &sub, &L->p, L->err)))
		return st;
	if (sub) {
		m = kf_jpath_push_key(&L->p, "init");
		st = load_init(L, sub, x);
		/* An init outside the operator's domain would make the reference itself misbehave. */
		if (!st && x->has_domain &&
		    (x->init.dist == KF_DIST_UNIFORM || x->init.dist == KF_DIST_RANDINT)) {
			double hi = x->init.dist == KF_DIST_RANDINT ? x->init.b - 1 : x->init.b;
			if (x->init.a < x->domain_lo || hi > x->domain_hi)
				st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
						  "range [%g, %g] lies outside the tensor's domain [%g, %g]",
						  x->init.a, hi, x->domain_lo, x->domain_hi);
		}
		if (!st && x->role == KF_ROLE_OUTPUT)
			kf_jpath_warn(&L->p, L->warnings,
				      "ignored: an output tensor's contents are poisoned, not initialised");
		kf_jpath_pop(&L->p, m);
		if (st)
			return st;
	}
	return KF_OK;
}

static enum kf_status load_tensors(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const cJSON *arr, *it;
	enum kf_status st;
	size_t m, n, i = 0;
	bool has_out = false;

	if ((st = kf_json_get_array(root, "tensors", true, &arr, &L->p, L->err)))
		return st;
	n = (size_t)cJSON_GetArraySize(arr);
	m = kf_jpath_push_key(&L->p, "tensors");
	if (n == 0 || n > TASK_MAX_TENSORS) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "needs 1 to %d tensors, has %zu",
				  TASK_MAX_TENSORS, n);
		goto out;
	}
	t->tensors = calloc(n, sizeof(*t->tensors));
	if (!t->tensors) {
		st = nomem(L);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(&L->p, i);
		t->n_tensors = i + 1; /* so kf_task_free releases a half-built entry */
		st = load_tensor(L, it, &t->tensors[i]);
		if (!st) {
			for (size_t j = 0; j < i; j++) {
				if (!strcmp(t->tensors[j].name, t->tensors[i].name)) {
					size_t mk = kf_jpath_push_key(&L->p, "name");
					st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
							  "duplicate tensor name '%s' (also tensors[%zu])",
							  t->tensors[i].name, j);
					kf_jpath_pop(&L->p, mk);
					break;
				}
			}
		}
		if (!st && kf_task_dim_index(t, t->tensors[i].name) >= 0) {
			size_t mk = kf_jpath_push_key(&L->p, "name");
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "tensor name '%s' is also a dim",
					  t->tensors[i].name);
			kf_jpath_pop(&L->p, mk);
		}
		kf_jpath_pop(&L->p, mi);
		if (st)
			goto out;
		has_out |= t->tensors[i].role != KF_ROLE_INPUT;
		i++;
	}
	if (!has_out)
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "no output or inout tensor: nothing to check");
out:
	kf_jpath_pop(&L->p, m);
	return st;
}

static enum kf_status load_param(struct loader *L, const cJSON *obj, struct kf_param *q)
{
	static const char *const known[] = {"name", "dtype", "value"};
	const char *dtype = NULL;
	enum kf_status st;
	size_t m;

	if (!cJSON_IsObject(obj))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected an object, got %s",
				    kf_json_type_name(obj));
	if ((st = kf_json_check_fields(obj, known, KF_ARRAY_SIZE(known), L->flags & KF_TASK_STRICT, &L->p,
				       L->warnings, L->err)))
		return st;
	if ((st = get_text(L, obj, "name", true, &q->name)))
		return st;
	m = kf_jpath_push_key(&L->p, "name");
	st = check_ident(L, q->name, "param");
	kf_jpath_pop(&L->p, m);
	if (st)
		return st;
	if ((st = kf_json_get_string(obj, "dtype", true, &dtype, NULL, &L->p, L->err)))
		return st;
	if (!kf_dtype_parse(dtype, &q->dtype) || (q->dtype != KF_DTYPE_F32 && q->dtype != KF_DTYPE_F64 &&
						  q->dtype != KF_DTYPE_I32 && q->dtype != KF_DTYPE_I64)) {
		m = kf_jpath_push_key(&L->p, "dtype");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "bad param dtype '%s' (expected f32, f64, i32 or i64)", dtype);
		kf_jpath_pop(&L->p, m);
		return st;
	}
	if (q->dtype == KF_DTYPE_I32)
		return kf_json_get_int(obj, "value", true, INT32_MIN, INT32_MAX, &q->ivalue, NULL, &L->p,
				       L->err);
	if (q->dtype == KF_DTYPE_I64)
		return kf_json_get_int(obj, "value", true, -TASK_MAX_DIM_VALUE, TASK_MAX_DIM_VALUE,
				       &q->ivalue, NULL, &L->p, L->err);
	if ((st = kf_json_get_number(obj, "value", true, &q->value, NULL, &L->p, L->err)))
		return st;
	if (q->dtype == KF_DTYPE_F32 && fabs(q->value) > FLT_MAX) {
		m = kf_jpath_push_key(&L->p, "value");
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "%g does not fit in f32", q->value);
		kf_jpath_pop(&L->p, m);
	}
	return st;
}

static enum kf_status load_params(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const cJSON *arr, *it;
	enum kf_status st;
	size_t m, n, i = 0;

	if ((st = kf_json_get_array(root, "params", false, &arr, &L->p, L->err)) || !arr)
		return st;
	n = (size_t)cJSON_GetArraySize(arr);
	m = kf_jpath_push_key(&L->p, "params");
	if (n > TASK_MAX_PARAMS) {
		st =
		    kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "%zu params; at most %d", n, TASK_MAX_PARAMS);
		goto out;
	}
	t->params = calloc(n ? n : 1, sizeof(*t->params));
	if (!t->params) {
		st = nomem(L);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(&L->p, i);
		t->n_params = i + 1;
		st = load_param(L, it, &t->params[i]);
		if (!st) {
			const char *nm = t->params[i].name;
			const char *clash = kf_task_dim_index(t, nm) >= 0         ? "a dim"
					    : kf_task_tensor_index(t, nm) >= 0    ? "a tensor"
					    : kf_task_param_index(t, nm) < (int)i ? "another param"
										  : NULL;
			if (clash) {
				size_t mk = kf_jpath_push_key(&L->p, "name");
				st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
						  "duplicate name '%s' (also %s)", nm, clash);
				kf_jpath_pop(&L->p, mk);
			}
		}
		kf_jpath_pop(&L->p, mi);
		if (st)
			goto out;
		i++;
	}
out:
	kf_jpath_pop(&L->p, m);
	return st;
}

static enum kf_status load_tol_fields(struct loader *L, const cJSON *obj, struct kf_tol *tol)
{
	static const char *const known[] = {"atol", "rtol", "max_nmse"};
	static const char *const keys[] = {"atol", "rtol", "max_nmse"};
	double *dst[] = {&tol->atol, &tol->rtol, &tol->max_nmse};
	enum kf_status st;

	if (!cJSON_IsObject(obj))
		return kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected an object, got %s",
				    kf_json_type_name(obj));
	/* Unknown keys here are always errors: a misspelt "atoll" would silently leave the default. */
	if ((st = kf_json_check_fields(obj, known, KF_ARRAY_SIZE(known), true, &L->p, NULL, L->err)))
		return st;
	for (size_t k = 0; k < KF_ARRAY_SIZE(keys); k++) {
		double v;
		bool found;
		if ((st = kf_json_get_number(obj, keys[k], false, &v, &found, &L->p, L->err)))
			return st;
		if (!found)
			continue;
		if (v < 0) {
			size_t m = kf_jpath_push_key(&L->p, keys[k]);
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "must not be negative");
			kf_jpath_pop(&L->p, m);
			return st;
		}
		*dst[k] = v;
	}
	return KF_OK;
}

static enum kf_status load_tolerance(struct loader *L, const cJSON *root)
{
	struct kf_task *t = L->t;
	const cJSON *obj, *it;
	enum kf_status st;
	size_t m;
	int n_dtype = 0, n_other = 0;

	if ((st = kf_json_get_object(root, "tolerance", false, &obj, &L->p, L->err)) || !obj)
		return st;
	m = kf_jpath_push_key(&L->p, "tolerance");
	cJSON_ArrayForEach(it, obj)
	{
		enum kf_dtype dt;
		if (kf_dtype_parse(it->string, &dt))
			n_dtype++;
		else
			n_other++;
	}
	if (n_dtype && n_other) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
				  "mixes dtype keys and tolerance fields (use one object, or one per dtype)");
	} else if (n_dtype) {
		cJSON_ArrayForEach(it, obj)
		{
			enum kf_dtype dt = KF_DTYPE_F32; /* every key is a dtype here (counted above) */
			size_t mi = kf_jpath_push_key(&L->p, it->string);
			kf_dtype_parse(it->string, &dt);
			t->tol[dt] = kf_tol_default(dt);
			st = load_tol_fields(L, it, &t->tol[dt]);
			t->tol_set[dt] = true;
			kf_jpath_pop(&L->p, mi);
			if (st)
				break;
		}
	} else {
		/* One object: it applies to every dtype; fields it leaves out keep each dtype's default. */
		for (int d = 0; d < KF_DTYPE_COUNT && !st; d++) {
			t->tol[d] = kf_tol_default((enum kf_dtype)d);
			st = load_tol_fields(L, obj, &t->tol[d]);
			t->tol_set[d] = true;
		}
	}
	kf_jpath_pop(&L->p, m);
	return st;
}

static enum kf_status load_work_expr(struct loader *L, const cJSON *root, const char *key, char **out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
	struct kf_task *t = L->t;
	enum kf_status st = KF_OK;
	size_t m;

	if (!it)
		return KF_OK;
	m = kf_jpath_push_key(&L->p, key);
	if (cJSON_IsString(it)) {
		st = kf_expr_check(it->valuestring, (const char *const *)t->dims, t->n_dims, L->err);
		if (st)
			kf_jpath_err(&L->p, L->err, st, "%s", L->err ? L->err->msg : "");
		else if (!(*out = kf_strdup(it->valuestring)))
			st = nomem(L);
	} else if (cJSON_IsNumber(it)) {
		int64_t v;
		char lit[32];
		st = kf_json_as_int(it, 0, TASK_MAX_DIM_VALUE, &v, &L->p, L->err);
		snprintf(lit, sizeof(lit), "%lld", (long long)v);
		if (!st && !(*out = kf_strdup(lit)))
			st = nomem(L);
	} else {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "expected an expression string, got %s",
				  kf_json_type_name(it));
	}
	kf_jpath_pop(&L->p, m);
	return st;
}

/* Every expression must evaluate (no division by zero, no overflow, extents >= 1) at every shape the
 * task declares, so the verifier never meets a task error halfway through a run. */
static enum kf_status check_at_shape(struct loader *L, const struct kf_shape *s, const char *set, size_t si)
{
	struct kf_task *t = L->t;
	char where[300], sh[256];
	struct kf_err e = KF_ERR_INIT;
	enum kf_status st;

	if ((st = check_constraints(L, s, set, si)))
		return st;
	kf_shape_format(s, sh, sizeof(sh));
	snprintf(where, sizeof(where), "at shapes.%s[%zu] (%s)", set, si, sh);
	for (size_t ti = 0; ti < t->n_tensors; ti++) {
		struct kf_tensor *x = &t->tensors[ti];
		int64_t n = 1, bytes;
		for (size_t d = 0; d < x->rank; d++) {
			int64_t v;
			if ((st = kf_expr_eval(x->shape[d], s, &v, &e)) || v < 1) {
				char path[64];
				size_t m;
				snprintf(path, sizeof(path), "tensors[%zu].shape[%zu]", ti, d);
				m = kf_jpath_push_key(&L->p, path);
				if (st)
					st = kf_jpath_err(&L->p, L->err,
							  st == KF_ERR_RANGE ? KF_ERR_INVALID : st, "%s %s",
							  e.msg, where);
				else
					st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID,
							  "'%s' is %lld %s (extents must be at least 1)",
							  x->shape[d], (long long)v, where);
				kf_jpath_pop(&L->p, m);
				return st;
			}
			if (__builtin_mul_overflow(n, v, &n))
				n = INT64_MAX;
		}
		if (n == INT64_MAX || __builtin_mul_overflow(n, (int64_t)kf_dtype_size(x->dtype), &bytes)) {
			char path[64];
			size_t m;
			snprintf(path, sizeof(path), "tensors[%zu]", ti);
			m = kf_jpath_push_key(&L->p, path);
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "size overflows 64 bits %s", where);
			kf_jpath_pop(&L->p, m);
			return st;
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *ex = k ? t->bytes : t->flops;
		int64_t v;
		if (!ex)
			continue;
		if ((st = kf_expr_eval(ex, s, &v, &e)) || v < 0) {
			size_t m = kf_jpath_push_key(&L->p, k ? "bytes" : "flops");
			if (st)
				st = kf_jpath_err(&L->p, L->err, st == KF_ERR_RANGE ? KF_ERR_INVALID : st,
						  "%s %s", e.msg, where);
			else
				st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "'%s' is negative (%lld) %s",
						  ex, (long long)v, where);
			kf_jpath_pop(&L->p, m);
			return st;
		}
	}
	return KF_OK;
}

static enum kf_status check_shapes(struct loader *L)
{
	struct kf_task *t = L->t;
	enum kf_status st;
	for (size_t i = 0; i < t->n_public; i++)
		if ((st = check_at_shape(L, &t->shapes_public[i], "public", i)))
			return st;
	for (size_t i = 0; i < t->n_hidden; i++)
		if ((st = check_at_shape(L, &t->shapes_hidden[i], "hidden", i)))
			return st;
	for (size_t i = 0; i < t->n_timing; i++)
		if ((st = check_at_shape(L, &t->shapes_timing[i], "timing", i)))
			return st;
	return KF_OK;
}

static char *join_path(const char *dir, const char *rel)
{
	size_t n;
	char *s;
	if (rel[0] == '/' || !strcmp(dir, "."))
		return kf_strdup(rel);
	n = strlen(dir) + strlen(rel) + 2;
	s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", dir, rel);
	return s;
}

static enum kf_status load_kernel_path(struct loader *L, const cJSON *root, const char *key, bool required,
				       char **out)
{
	const char *rel = NULL;
	struct stat sb;
	enum kf_status st;
	size_t m;
	bool found;

	if ((st = kf_json_get_string(root, key, required, &rel, &found, &L->p, L->err)) || !found)
		return st;
	m = kf_jpath_push_key(&L->p, key);
	if (!*rel) {
		st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "must not be empty");
	} else if (!(*out = join_path(L->t->dir, rel))) {
		st = nomem(L);
	} else if (!(L->flags & KF_TASK_NO_FILES)) {
		if (stat(*out, &sb) != 0)
			st = kf_jpath_err(&L->p, L->err, KF_ERR_NOTFOUND, "kernel file '%s' does not exist",
					  *out);
		else if (!S_ISREG(sb.st_mode))
			st = kf_jpath_err(&L->p, L->err, KF_ERR_INVALID, "'%s' is not a regular file", *out);
	}
	kf_jpath_pop(&L->p, m);
	return st;
}

/* The reference (and baseline) must parse, name only kernels and arguments that exist, and give a
 * valid plan at every declared shape: a broken reference is a task error (exit 2), not a verdict. */
static enum kf_status check_kernel_file(struct loader *L, const char *key, const char *path)
{
	struct kf_task *t = L->t;
	struct kf_kfile *k = NULL;
	enum kf_status st;
	size_t m;

	if (!path || (L->flags & KF_TASK_NO_FILES))
		return KF_OK;
	st = kf_kfile_load(path, &k, L->err);
	if (!st)
		st = kf_kfile_bind(k, t, L->err);
	for (int set = 0; set < 3 && !st; set++) {
		const struct kf_shape *shapes = set == 0   ? t->shapes_public
						: set == 1 ? t->shapes_hidden
							   : t->shapes_timing;
		size_t n = set == 0 ? t->n_public : set == 1 ? t->n_hidden : t->n_timing;
		for (size_t i = 0; i < n && !st; i++) {
			struct kf_plan *plan = NULL;
			st = kf_plan_make(k, t, &shapes[i], &plan, L->err);
			if (st && L->err) {
				char sh[256], msg[sizeof(L->err->msg)];
				kf_shape_format(&shapes[i], sh, sizeof(sh));
				snprintf(msg, sizeof(msg), "%s", L->err->msg);
				kf_err_set(L->err, st, "%s at shapes.%s[%zu] (%s)", msg,
					   set == 0   ? "public"
					   : set == 1 ? "hidden"
						      : "timing",
					   i, sh);
			}
			kf_plan_free(plan);
		}
	}
	kf_kfile_free(k);
	if (st) {
		char msg[sizeof(L->err->msg)];
		snprintf(msg, sizeof(msg), "%s", L->err ? L->err->msg : "");
		m = kf_jpath_push_key(&L->p, key);
		/* any kernel-file problem is a bad input file for the task (exit 2) */
		if (st != KF_ERR_NOMEM && st != KF_ERR_IO && st != KF_ERR_NOTFOUND)
			st = KF_ERR_INVALID;
		kf_jpath_err(&L->p, L->err, st, "%s", msg);
		kf_jpath_pop(&L->p, m);
	}
	return st;
}

/* The kernel files of the `baselines` list, checked like the reference (the `baseline` field, entry 0
 * when set, was checked under its own name). */
static enum kf_status check_baseline_kernels(struct loader *L)
{
	struct kf_task *t = L->t;
	for (size_t i = t->baseline ? 1 : 0; i < t->n_baselines; i++) {
		char key[48];
		enum kf_status st;
		if (t->baselines[i].kind != KF_BASELINE_KERNEL)
			continue;
		snprintf(key, sizeof(key), "baselines[%zu].kernel", t->baseline ? i - 1 : i);
		if ((st = check_kernel_file(L, key, t->baselines[i].kernel)))
			return st;
	}
	return KF_OK;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return kf_strdup(".");
	if (slash == path)
		return kf_strdup("/");
	return kf_strndup(path, (size_t)(slash - path));
}

enum kf_status kf_task_parse(const char *path, const char *text, size_t len, unsigned flags,
			     struct kf_buf *warnings, struct kf_task **out, struct kf_err *err)
{
	static const char *const known[] = {"format",      "name",      "title",      "category",   "level",
					    "description", "dims",      "shapes",     "fixed_dims", "tensors",
					    "params",      "reference", "baseline",   "tolerance",  "flops",
					    "bytes",       "baselines", "constraints"};
	struct loader L = {.flags = flags, .warnings = warnings, .err = err};
	cJSON *root = NULL;
	enum kf_status st;

	*out = NULL;
	L.t = calloc(1, sizeof(*L.t));
	if (!L.t)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory loading '%s'", path);
	L.t->path = kf_strdup(path);
	L.t->dir = dir_of(path);
	if (!L.t->path || !L.t->dir) {
		kf_task_free(L.t);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory loading '%s'", path);
	}
	kf_jpath_init(&L.p, path);

	if (len > TASK_MAX_FILE) {
		st = kf_err_set(err, KF_ERR_LIMIT, "'%s' is larger than %u bytes", path, TASK_MAX_FILE);
		goto fail;
	}
	st = kf_json_parse(path, text, len, &root, err);
	if (st)
		goto fail;
	kf_sha256_hex(text, len, L.t->hash);
	if (!cJSON_IsObject(root)) {
		st = kf_jpath_err(&L.p, err, KF_ERR_INVALID,
				  "expected a JSON object at the top level, got %s", kf_json_type_name(root));
		goto fail;
	}
	if ((st = kf_json_check_fields(root, known, KF_ARRAY_SIZE(known), flags & KF_TASK_STRICT, &L.p,
				       warnings, err)) ||
	    (st = load_header(&L, root)) || (st = load_dims(&L, root)) || (st = load_fixed(&L, root)) ||
	    (st = load_constraints(&L, root)) || (st = load_shapes(&L, root)) ||
	    (st = load_tensors(&L, root)) || (st = load_params(&L, root)) ||
	    (st = load_work_expr(&L, root, "flops", &L.t->flops)) ||
	    (st = load_work_expr(&L, root, "bytes", &L.t->bytes)) || (st = load_tolerance(&L, root)) ||
	    (st = check_shapes(&L)) ||
	    (st = load_kernel_path(&L, root, "reference", true, &L.t->reference)) ||
	    (st = load_kernel_path(&L, root, "baseline", false, &L.t->baseline)) ||
	    (st = check_kernel_file(&L, "reference", L.t->reference)) ||
	    (st = check_kernel_file(&L, "baseline", L.t->baseline)) ||
	    (st = kf_baselines_load(L.t, root, flags & KF_TASK_NO_FILES, &L.p, err)) ||
	    (st = check_baseline_kernels(&L)))
		goto fail;
	cJSON_Delete(root);
	*out = L.t;
	return KF_OK;
fail:
	cJSON_Delete(root);
	kf_task_free(L.t);
	return st;
}

enum kf_status kf_task_load(const char *path, unsigned flags, struct kf_buf *warnings, struct kf_task **out,
			    struct kf_err *err)
{
	struct kf_buf raw = KF_BUF_INIT(TASK_MAX_FILE);
	enum kf_status st;

	*out = NULL;
	st = kf_buf_read_file(&raw, path, err);
	if (!st)
		st = kf_task_parse(path, raw.data, raw.len, flags, warnings, out, err);
	kf_buf_release(&raw);
	return st;
}
