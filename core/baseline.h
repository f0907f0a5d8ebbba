/* Baselines of a task (docs/spec/task-format.md `baseline`, `baselines`): kernel files and library calls
 * (cuBLAS, cuBLASLt, cuDNN) that speed is also compared against. Parses and validates the list with
 * field paths in every error, and resolves a library call at one shape into the launch plan the cuda
 * worker runs: one launch named KF_LIBCALL_PREFIX + the op's name (a name no kernel file can give:
 * directive kernels are C identifiers) whose arguments sit at the fixed positions below. */
#ifndef KF_BASELINE_H
#define KF_BASELINE_H

#include <cjson/cJSON.h>

#include "json.h"
#include "kf.h"
#include "kfile.h"
#include "task.h"

#define KF_LIBCALL_PREFIX '@'
#define KF_BASELINES_MAX 8     /* entries of one task, `baseline` included */
#define KF_LIBCALL_MAX_ARGS 32 /* wire positions of one call (<= KF_PLAN_MAX_ARGS) */

enum kf_libop {
	KF_LIBOP_CUBLAS_GEMM,     /* cublasGemmEx / cublasGemmStridedBatchedEx */
	KF_LIBOP_CUBLASLT_MATMUL, /* cublasLtMatmul with a bias / relu / gelu epilogue */
	KF_LIBOP_CUDNN_CONV_FWD,  /* cudnnConvolutionForward (+ cudnnAddTensor, cudnnActivationForward) */
	KF_LIBOP_CUDNN_SDPA,      /* cuDNN graph API fused attention (flash), f16/bf16 */
	KF_LIBOP_CUDNN_NORM,      /* cuDNN graph API LayerNorm / RMSNorm forward, inference phase */
	KF_LIBOP_COUNT
};

const char *kf_libop_name(enum kf_libop op); /* "cublas.gemm" */
bool kf_libop_parse(const char *s, enum kf_libop *out);
const char *kf_libop_library(enum kf_libop op); /* "cuBLAS", "cuBLASLt", "cuDNN" */
/* A launch-plan kernel name that is a library call ("@cublas.gemm"): the op, else false. */
bool kf_libop_from_launch(const char *kernel, enum kf_libop *out);

/* ---- wire positions (the worker reads argument i of the launch as position i) ----------------------
 * Tensors travel as buffers (their device address); an absent optional tensor as the integer 0.
 * Integers are 8-byte int64, reals 8-byte doubles, flags and choices int64. All matrices are
 * row-major, as the task's tensors are: C[m, n] = sum_k op(A)[m, k] op(B)[k, n]; the worker hands
 * cuBLAS (column-major) the transposed problem. */
enum kf_mm_arg {
	KF_MM_A,
	KF_MM_B,
	KF_MM_C, /* read when beta != 0 (cublas.gemm: the output itself) */
	KF_MM_D, /* the output */
	KF_MM_BIAS,
	KF_MM_M,
	KF_MM_N,
	KF_MM_K,
	KF_MM_TRANS_A, /* A stored [K, M] (else [M, K]) */
	KF_MM_TRANS_B, /* B stored [N, K] (else [K, N]) */
	KF_MM_LDA,     /* elements between consecutive rows of the stored matrix */
	KF_MM_LDB,
	KF_MM_LDC,
	KF_MM_LDD,
	KF_MM_BATCH,
	KF_MM_STRIDE_A, /* elements between consecutive matrices of a batch */
	KF_MM_STRIDE_B,
	KF_MM_STRIDE_C,
	KF_MM_STRIDE_D,
	KF_MM_ALPHA, /* real */
	KF_MM_BETA,  /* real */
	KF_MM_ACTIVATION,
	KF_MM_COMPUTE,
	KF_MM_DTYPE_AB, /* enum kf_dtype */
	KF_MM_DTYPE_C,
	KF_MM_DTYPE_D,
	KF_MM_DTYPE_BIAS,
	KF_MM_NARGS
};

enum kf_conv_arg {
	KF_CONV_X,
	KF_CONV_W,
	KF_CONV_Y,
	KF_CONV_BIAS,     /* [K], broadcast over N, P, Q */
	KF_CONV_RESIDUAL, /* y's shape, added before the activation */
	KF_CONV_N,
	KF_CONV_C,
	KF_CONV_H,
	KF_CONV_WIDTH,
	KF_CONV_K,
	KF_CONV_R,
	KF_CONV_S,
	KF_CONV_P, /* output height and width, computed by the parent */
	KF_CONV_Q,
	KF_CONV_GROUPS,
	KF_CONV_PAD_H,
	KF_CONV_PAD_W,
	KF_CONV_STRIDE_H,
	KF_CONV_STRIDE_W,
	KF_CONV_DIL_H,
	KF_CONV_DIL_W,
	KF_CONV_ACTIVATION,
	KF_CONV_DTYPE,
	KF_CONV_NARGS
};

enum kf_sdpa_arg {
	KF_SDPA_Q,
	KF_SDPA_K,
	KF_SDPA_V,
	KF_SDPA_O,
	KF_SDPA_B,
	KF_SDPA_H,
	KF_SDPA_T,    /* query length */
	KF_SDPA_T_KV, /* key/value length */
	KF_SDPA_D,    /* head size of q and k */
	KF_SDPA_D_V,  /* head size of v and o */
	KF_SDPA_LAYOUT,
	KF_SDPA_SCALE, /* real */
	KF_SDPA_CAUSAL,
	KF_SDPA_DTYPE,
	KF_SDPA_NARGS
};

/* y[b, :] = norm(x[b, :]) * scale + bias over the N elements of each of B rows */
enum kf_norm_arg {
	KF_NORM_X,
	KF_NORM_SCALE, /* [N] */
	KF_NORM_BIAS,  /* [N], optional for rms */
	KF_NORM_Y,
	KF_NORM_B, /* rows */
	KF_NORM_N, /* elements normalized together */
	KF_NORM_MODE,
	KF_NORM_EPS, /* real */
	KF_NORM_DTYPE,
	KF_NORM_NARGS
};

enum kf_lib_activation { KF_LIB_ACT_NONE, KF_LIB_ACT_RELU, KF_LIB_ACT_GELU };
/* Compute precision: DEFAULT is f32 accumulation for f32/f16/bf16 data and f64 for f64. */
enum kf_lib_compute {
	KF_LIB_COMPUTE_DEFAULT,
	KF_LIB_COMPUTE_F32,
	KF_LIB_COMPUTE_TF32,
	KF_LIB_COMPUTE_F16,
	KF_LIB_COMPUTE_F64
};
/* Tensor layouts of attention: [B, H, T, D] or [B, T, H, D], each contiguous. */
enum kf_lib_layout { KF_LIB_LAYOUT_BHSD, KF_LIB_LAYOUT_BSHD };
/* Normalizations: (x - mean) / sqrt(var + eps) (biased variance), or x / sqrt(mean(x^2) + eps). */
enum kf_lib_norm { KF_LIB_NORM_LAYER, KF_LIB_NORM_RMS };

/* ---- the task's list ------------------------------------------------------------------------------ */

enum kf_baseline_kind { KF_BASELINE_KERNEL, KF_BASELINE_LIBRARY };

#define KF_LIBOP_MAX_USER_ARGS 32

/* One argument as the task wrote it. */
struct kf_libarg {
	bool set;
	int tensor;  /* tensor index, or -1 */
	char *expr;  /* an integer expression over dims */
	double real; /* a literal */
	int param;   /* a param name standing for the real, or -1 */
	bool flag;
	int choice; /* index into the spec's choices */
};

struct kf_baseline {
	enum kf_baseline_kind kind;
	char *name;   /* "baseline.cu" as written, or "cublas.gemm" */
	char *kernel; /* KERNEL: the resolved path */
	enum kf_libop op;
	struct kf_libarg args[KF_LIBOP_MAX_USER_ARGS]; /* LIBRARY: indexed like the op's spec */
	char canon[1024]; /* LIBRARY: the call in canonical text, for display and cache keys */
};

/* Reads the optional "baselines" array of root into t->baselines; the legacy `baseline` file (already
 * in t->baseline) becomes entry 0. Errors name the field path ("baselines[1].args.lda") and are
 * KF_ERR_INVALID (KF_ERR_NOTFOUND for a missing kernel file unless no_files). Every library call is
 * resolved at every declared shape, so a mapping that reads past a tensor fails here, not in a worker.
 * Kernel files are only located: the task loader checks they parse and plan. */
enum kf_status kf_baselines_load(struct kf_task *t, const cJSON *root, bool no_files, struct kf_jpath *p,
				 struct kf_err *err);
void kf_baselines_free(struct kf_baseline *b, size_t n);

/* A resolved call: the value of every wire position at one shape. */
enum kf_libval_kind { KF_LIBVAL_INT, KF_LIBVAL_REAL, KF_LIBVAL_TENSOR };
struct kf_libval {
	enum kf_libval_kind kind;
	int64_t i;
	double r;
	int tensor; /* TENSOR: the task tensor, or -1 when absent (sent as the integer 0) */
};
struct kf_libcall {
	enum kf_libop op;
	size_t n_args;
	struct kf_libval args[KF_LIBCALL_MAX_ARGS];
};

/* Resolves library baseline b at shape s: defaults filled in, expressions evaluated, every extent
 * checked against the tensors' element counts. KF_ERR_INVALID "args.lda: ..." when the mapping does
 * not hold at s. */
enum kf_status kf_libcall_resolve(const struct kf_baseline *b, const struct kf_task *t,
				  const struct kf_shape *s, struct kf_libcall *out, struct kf_err *err);
/* The launch plan of b at s: the task's tensors as buffers (as kf_plan_make lays them out) and one
 * launch of the call. Free with kf_plan_free. */
enum kf_status kf_libcall_plan(const struct kf_baseline *b, const struct kf_task *t, const struct kf_shape *s,
			       struct kf_plan **out, struct kf_err *err);

#endif
