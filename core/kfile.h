/* Kernel files: CUDA source plus `// kforge:launch` and `// kforge:scratch` directives
 * (spec/task-format.md). Parsing is syntax only; binding resolves names against a task;
 * planning evaluates the expressions at one shape into a launch plan the worker executes. */
#ifndef KF_KFILE_H
#define KF_KFILE_H

#include "kf.h"
#include "task.h"

enum kf_arg_kind {
	KF_ARG_UNBOUND,  /* parsed, not yet bound to a task */
	KF_ARG_TENSOR,   /* device pointer of tensor `index` */
	KF_ARG_SCRATCH,  /* device pointer of scratch buffer `index` */
	KF_ARG_DIM_INT,  /* dim `index` as int */
	KF_ARG_DIM_LONG, /* long(D): dim `index` as long long */
	KF_ARG_PARAM,    /* param `index` as its dtype */
	KF_ARG_LITERAL,  /* integer literal as int */
};

struct kf_arg {
	enum kf_arg_kind kind;
	char *name;   /* as written (for long(D): D) */
	bool is_long; /* written as long(D) */
	int index;
	int64_t literal;
};

struct kf_launch {
	int line; /* 1-based line number in the file */
	char *kernel;
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

struct kf_kfile {
	char *path;
	char *source;
	size_t source_len;
	size_t n_launches;
	struct kf_launch *launches;
	size_t n_scratch;
	struct kf_scratch *scratch;
	size_t n_kernels;
	char **kernels; /* names of the extern "C" __global__ functions found in the source */
	/* Parallel to kernels: the text of each kernel's parameter list (between the parentheses, comments
	 * removed, whitespace collapsed), or NULL when it could not be read (macros, #if inside). Binding
	 * checks the directive's arguments against it: count, and pointer/int/long long/float/double. */
	char **kernel_params;
};

/* Parses directives. A malformed directive is KF_ERR_INVALID with "PATH:LINE: ..." (an invalid_launch
 * verdict). A file with no launch directive is an error too. */
enum kf_status kf_kfile_parse(const char *path, const char *source, size_t len, struct kf_kfile **out,
			      struct kf_err *err);
enum kf_status kf_kfile_load(const char *path, struct kf_kfile **out, struct kf_err *err);
void kf_kfile_free(struct kf_kfile *k);

/* Resolves every name against the task (tensors, scratch, dims, params), checks every launched kernel
 * is an extern "C" __global__ function of the file and expressions name only dims. Where the kernel's
 * parameter list is readable, the number of arguments must match it and each argument must match its
 * parameter's kind (pointer for tensors and scratch, int for dims and literals, long long for long(D),
 * the param's own type): a mismatch would make the launch read garbage.
 * Errors: KF_ERR_INVALID "PATH:LINE: unknown argument 'q'". */
enum kf_status kf_kfile_bind(struct kf_kfile *k, const struct kf_task *t, struct kf_err *err);

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

struct kf_plan {
	size_t n_launches;
	struct kf_plan_launch *launches;
	size_t n_buffers;
	struct kf_plan_buffer *buffers;
	struct kf_shape shape;
};

/* Evaluates a bound kernel file at shape s. Grid/block/smem values that are zero, negative or over the
 * generic limits (block x,y <= 1024, z <= 64, x*y*z <= 1024; grid y,z <= 65535, x < 2^31) are
 * KF_ERR_INVALID with the line; device-specific limits are checked by the backend. */
enum kf_status kf_plan_make(const struct kf_kfile *k, const struct kf_task *t, const struct kf_shape *s,
			    struct kf_plan **out, struct kf_err *err);
void kf_plan_free(struct kf_plan *p);

#endif
