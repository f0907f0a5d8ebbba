/* The task model: task.json (docs/spec/task-format.md, kforge-task/1) loaded, validated and resolved.
 * Every error names the file and the field path, e.g. "t.json: tensors[1].shape[0]: unknown dim 'Q'". */
#ifndef KF_TASK_H
#define KF_TASK_H

#include "expr.h"
#include "kf.h"

struct kf_baseline;

enum kf_dtype {
	KF_DTYPE_F64,
	KF_DTYPE_F32,
	KF_DTYPE_F16,
	KF_DTYPE_BF16,
	KF_DTYPE_I64,
	KF_DTYPE_I32,
	KF_DTYPE_I16,
	KF_DTYPE_I8,
	KF_DTYPE_U8,
	KF_DTYPE_COUNT
};

const char *kf_dtype_name(enum kf_dtype t); /* "f32" */
bool kf_dtype_parse(const char *s, enum kf_dtype *out);
size_t kf_dtype_size(enum kf_dtype t); /* bytes per element */
bool kf_dtype_is_float(enum kf_dtype t);
const char *kf_dtype_ctype(enum kf_dtype t); /* "float", "__half", "__nv_bfloat16", "int" ... */

enum kf_role { KF_ROLE_INPUT, KF_ROLE_OUTPUT, KF_ROLE_INOUT };
const char *kf_role_name(enum kf_role r);

enum kf_dist { KF_DIST_DEFAULT, KF_DIST_NORMAL, KF_DIST_UNIFORM, KF_DIST_RANDINT };

struct kf_init {
	enum kf_dist dist; /* DEFAULT when the task gives none */
	double a, b;       /* normal: mean, std; uniform: lo, hi; randint: lo (inclusive), hi (exclusive) */
};

struct kf_tensor {
	char *name;
	enum kf_role role;
	enum kf_dtype dtype;
	size_t rank;
	char **shape; /* rank expressions (dim names, literals or expressions) */
	struct kf_init init;
	bool has_domain;
	double domain_lo, domain_hi;
};

struct kf_param {
	char *name;
	enum kf_dtype dtype; /* F32, F64, I32 or I64 */
	double value;        /* floats */
	int64_t ivalue;      /* ints */
};

struct kf_tol {
	double atol, rtol;
	double max_nmse; /* 0: no NMSE bound */
};

/* The largest value a dim may bind: 2^53, the largest integer a JSON number holds exactly. */
#define KF_TASK_MAX_DIM_VALUE 9007199254740992LL

/* `constraints`: per dim, preconditions a kernel may rely on (docs/spec/task-format.md). Unset dims have
 * multiple_of 1, min 1 and max KF_TASK_MAX_DIM_VALUE. */
struct kf_dim_constraint {
	bool set;
	int64_t multiple_of;
	int64_t min, max;
};

struct kf_task {
	char *path; /* as given */
	char *dir;  /* folder of the task file, for resolving relative paths */
	char *name, *title, *category, *description;
	int level;
	char hash[65]; /* sha256 of the task file's bytes, hex */

	size_t n_dims;
	char **dims;
	size_t n_fixed;
	char **fixed_dims;
	struct kf_dim_constraint constraints[KF_MAX_DIMS]; /* by dim index */

	size_t n_public, n_hidden, n_timing;
	struct kf_shape *shapes_public, *shapes_hidden,
	    *shapes_timing; /* timing defaults to the largest public */

	size_t n_tensors;
	struct kf_tensor *tensors;
	size_t n_params;
	struct kf_param *params;

	char *reference; /* resolved path (dir + relative) */
	char *baseline;  /* resolved path or NULL */
	/* Every baseline (core/baseline.h): `baseline` first when set, then the `baselines` list. */
	size_t n_baselines;
	struct kf_baseline *baselines;

	bool tol_set[KF_DTYPE_COUNT]; /* the task's own overrides */
	struct kf_tol tol[KF_DTYPE_COUNT];

	char *flops, *bytes; /* expressions or NULL */
};

enum {
	KF_TASK_STRICT = 1 << 0,   /* unknown top-level fields are errors, not warnings */
	KF_TASK_NO_FILES = 1 << 1, /* do not check that reference/baseline files exist */
};

/* Loads and validates path. Warnings (unknown fields when not strict) are appended to warnings
 * (may be NULL) one per line. On failure *out is NULL and err names file and field path;
 * returns KF_ERR_PARSE (bad JSON), KF_ERR_INVALID (bad field), KF_ERR_NOTFOUND/IO (file). */
enum kf_status kf_task_load(const char *path, unsigned flags, struct kf_buf *warnings, struct kf_task **out,
			    struct kf_err *err);
/* The same for a task file's text already in memory (len bytes, at most 1 MiB): path names it in errors
 * and its folder resolves the relative kernel paths; the hash is of text. */
enum kf_status kf_task_parse(const char *path, const char *text, size_t len, unsigned flags,
			     struct kf_buf *warnings, struct kf_task **out, struct kf_err *err);
void kf_task_free(struct kf_task *t);

/* Index of a tensor/param/dim by name, or -1. */
int kf_task_tensor_index(const struct kf_task *t, const char *name);
int kf_task_param_index(const struct kf_task *t, const char *name);
int kf_task_dim_index(const struct kf_task *t, const char *name);

/* Does value v satisfy the constraint of dim index d (multiple_of, min, max)? */
bool kf_task_dim_allows(const struct kf_task *t, size_t d, int64_t v);
/* Is dim index d one of fixed_dims? */
bool kf_task_dim_fixed(const struct kf_task *t, size_t d);

/* Number of elements of tensor ti at shape s (product of its shape expressions). */
enum kf_status kf_task_numel(const struct kf_task *t, size_t ti, const struct kf_shape *s, int64_t *out,
			     struct kf_err *err);

/* The tolerance for a dtype: the task's override, else the project default (verifier/README.md). */
struct kf_tol kf_task_tolerance(const struct kf_task *t, enum kf_dtype dt);
/* Project defaults per dtype, documented with reasons in core/task.c. */
struct kf_tol kf_tol_default(enum kf_dtype dt);

/* flops/bytes at a shape; false when the task has no such expression. */
bool kf_task_flops(const struct kf_task *t, const struct kf_shape *s, double *out);
bool kf_task_bytes(const struct kf_task *t, const struct kf_shape *s, double *out);

#endif
