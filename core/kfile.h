/* Kernel files: CUDA source plus `// kforge:launch`, `// kforge:scratch` and `// kforge:zero` directives
 * (docs/spec/task-format.md). Parsing is syntax only; binding resolves names against a task and checks the
 * arguments against the kernels' parameter lists; planning evaluates the expressions at one shape into
 * a launch plan the worker executes. */
#ifndef KF_KFILE_H
#define KF_KFILE_H

#include "kf.h"
#include "task.h"

enum kf_arg_kind {
	KF_ARG_UNBOUND,   /* parsed, not yet bound to a task */
	KF_ARG_TENSOR,    /* device pointer of tensor `index` */
	KF_ARG_SCRATCH,   /* device pointer of scratch buffer `index` */
	KF_ARG_DIM_INT,   /* dim `index` as int */
	KF_ARG_DIM_LONG,  /* long(D): dim `index` as long long */
	KF_ARG_PARAM,     /* param `index` as its dtype */
	KF_ARG_LITERAL,   /* integer literal (64-bit): at its parameter's width, int when that is unknown */
	KF_ARG_EXPR,      /* integer expression over dims and literals (`N*C`, `cdiv(T, 32)`) as int */
	KF_ARG_EXPR_LONG, /* long(E) for an expression E: as long long */
};

struct kf_arg {
	enum kf_arg_kind kind;
	char *name;   /* as written (for long(E): E); for DIM_* and EXPR* the expression evaluated */
	bool is_long; /* written as long(E) */
	int index;
	int64_t literal;
	/* Set by binding for the integer kinds (LITERAL, DIM_*, EXPR*): the bytes passed (4 or 8) and the
	 * range every value must lie in at every shape: the kernel's parameter type where its parameter
	 * list is readable (int, unsigned, long long, size_t, ...), else int (long long for long(E)). */
	uint8_t width;
	bool is_unsigned;
	bool typed; /* the parameter's type was read from the source */
};

struct kf_launch {
	int line;     /* 1-based line number in the file */
	char *kernel; /* "sgemm" or, for a template, the canonical name expression "sgemm<128,8,float>" */
	char *base;   /* the function's name ("sgemm") */
	char *targs;  /* canonical template arguments ("128,8,float"), NULL for an extern "C" kernel */
	size_t grid_rank, block_rank; /* 1..3 */
	char *grid[3], *block[3];     /* expressions */
	char *smem;                   /* expression or NULL (0) */
	size_t n_args;
	struct kf_arg *args;
};

struct kf_scratch {
	int line;
	char *name;
	enum kf_dtype dtype;
	char *count; /* expression: number of elements */
};

/* `// kforge:zero NAME [byte=V]`: before launch `before` (0: before the plan) set every byte of a
 * scratch, output or inout buffer to `byte`, as a host memset would. */
struct kf_zero {
	int line;
	char *name;
	uint8_t byte;
	size_t before;
	bool is_scratch; /* set by binding: index is a scratch index, else a tensor index */
	int index;
};

struct kf_kfile {
	char *path;
	char *source;
	size_t source_len;
	size_t n_launches;
	struct kf_launch *launches;
	size_t n_scratch;
	struct kf_scratch *scratch;
	size_t n_zeros;
	struct kf_zero *zeros;
	size_t n_kernels;
	char **kernels; /* names of the extern "C" __global__ functions found in the source */
	/* Parallel to kernels: the text of each kernel's parameter list (between the parentheses, comments
	 * removed, whitespace collapsed), or NULL when it could not be read (macros, #if inside). Binding
	 * checks the directive's arguments against it: count, and pointer/int/long long/float/double. */
	char **kernel_params;
	/* The `__global__` function templates of the source, with their parameter lists as above and the
	 * text of their template parameter lists (between the angle brackets), NULL where unreadable or
	 * ambiguous (overloads). */
	size_t n_templates;
	char **templates;
	char **template_params;
	char **template_tparams;
	unsigned char *template_overloaded; /* 1: declared with different lists (overloads) */
};

/* Parses directives. A malformed directive is KF_ERR_INVALID with "PATH:LINE: ..." (an invalid_launch
 * verdict). A file with no launch directive is an error too. */
enum kf_status kf_kfile_parse(const char *path, const char *source, size_t len, struct kf_kfile **out,
			      struct kf_err *err);
enum kf_status kf_kfile_load(const char *path, struct kf_kfile **out, struct kf_err *err);
void kf_kfile_free(struct kf_kfile *k);

/* Resolves every name against the task (tensors, scratch, dims, params), checks every launched kernel
 * is an extern "C" __global__ function of the file or an instantiation of a __global__ template of it
 * (its template arguments counted against the template's parameter list and free of dims), that
 * expressions name only dims and that `zero` names a scratch, output or inout buffer. Where the
 * kernel's parameter list is readable (a template's with its type arguments substituted), the number
 * of arguments must match it and each argument its parameter's kind: pointer for tensors and scratch,
 * a 4-byte integer (int, unsigned) for dims and expressions, an 8-byte one (long long, size_t) for
 * long(E), any integer for a literal (passed at the parameter's width), the param's own type; a
 * mismatch would make the launch read garbage. Errors: KF_ERR_INVALID "PATH:LINE: unknown argument 'q'". */
enum kf_status kf_kfile_bind(struct kf_kfile *k, const struct kf_task *t, struct kf_err *err);

/* The distinct template name expressions the launches use ("sgemm<128,8,float>"), in file order, into
 * out[0..max); returns how many there are (may exceed max). Borrowed from k. */
size_t kf_kfile_name_exprs(const struct kf_kfile *k, const char **out, size_t max);

/* A launch plan at one shape: what the worker needs, with no names left to resolve. */
enum kf_parg_kind { KF_PARG_BUFFER, KF_PARG_SCALAR };

struct kf_parg {
	enum kf_parg_kind kind;
	uint32_t buffer;  /* BUFFER: index into plan buffers */
	uint32_t size;    /* SCALAR: 4 or 8 bytes */
	uint8_t bytes[8]; /* SCALAR: the value, host byte order */
};

#define KF_PLAN_MAX_ARGS 64

struct kf_plan_launch {
	char kernel[128];
	uint32_t grid[3], block[3];
	uint32_t smem_bytes;
	uint32_t n_args;
	struct kf_parg args[KF_PLAN_MAX_ARGS];
	int line;
};

/* Buffers of a plan: every task tensor in task order, then every scratch buffer in file order. */
struct kf_plan_buffer {
	char name[KF_NAME_MAX];
	enum kf_dtype dtype;
	enum kf_role role; /* scratch buffers have role OUTPUT semantics (poisoned) */
	bool is_scratch;
	uint64_t numel;
	uint64_t n_bytes;
};

/* A harness-owned memset of the plan: before launch `before` (0 = before the plan, each run) every byte
 * of buffer `buffer` becomes `byte`. */
struct kf_plan_zero {
	uint32_t buffer;
	uint32_t before;
	uint32_t byte;
	int32_t line;
};

struct kf_plan {
	size_t n_launches;
	struct kf_plan_launch *launches;
	size_t n_buffers;
	struct kf_plan_buffer *buffers;
	size_t n_zeros;
	struct kf_plan_zero *zeros; /* in file order */
	struct kf_shape shape;
};

/* Evaluates a bound kernel file at shape s. Grid/block/smem values that are zero, negative or over the
 * generic limits (block x,y <= 1024, z <= 64, x*y*z <= 1024; grid y,z <= 65535, x < 2^31) are
 * KF_ERR_INVALID with the line; so is an integer argument outside its parameter's range ("args[2]:
 * 'N*C' = 3000000000 does not fit in an int"); device-specific limits are checked by the backend. */
enum kf_status kf_plan_make(const struct kf_kfile *k, const struct kf_task *t, const struct kf_shape *s,
			    struct kf_plan **out, struct kf_err *err);
void kf_plan_free(struct kf_plan *p);

#endif
