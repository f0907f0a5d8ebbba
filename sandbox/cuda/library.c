/* Library calls of the cuda worker (core/baseline.h): cuBLAS, cuBLASLt and cuDNN loaded with dlopen
 * (never linked: `make check-links`), every entry point by dlsym typed from the real headers, and one
 * prepared call per launch of the plan. Everything that is not the call itself (handles, descriptors,
 * algorithm choice, execution plans, workspaces) happens in kf_culib_prepare at setup, before any
 * step; kf_culib_run only enqueues the call on the worker's stream, which the backend times like a
 * kernel. A library that is missing or refuses the problem is "unavailable" with its own words. */
#include <cublasLt.h>
#include <cublas_api.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/baseline.h"
#include "../sandbox.h"
#include "../worker/backend.h"
#include "cuda_int.h"
#include "library.h"

#define CUBLAS_WS_BYTES ((size_t)32 << 20) /* cuBLAS's advice for Hopper: 32 MiB */
#define LT_WS_BYTES ((size_t)64 << 20)
#define CONV_WS_MAX ((size_t)1 << 30) /* never pick a convolution algorithm needing more */
#define GRAPH_MAX_DESCS 48

/* ---- entry points -------------------------------------------------------------------------------- */

#define BLAS_FNS(X)                                                                                          \
	X(cublasCreate_v2)                                                                                   \
	X(cublasDestroy_v2)                                                                                  \
	X(cublasSetStream_v2)                                                                                \
	X(cublasSetWorkspace_v2)                                                                             \
	X(cublasSetMathMode)                                                                                 \
	X(cublasGetProperty)                                                                                 \
	X(cublasGemmEx)                                                                                      \
	X(cublasGemmStridedBatchedEx)

#define LT_FNS(X)                                                                                            \
	X(cublasLtCreate)                                                                                    \
	X(cublasLtDestroy)                                                                                   \
	X(cublasLtGetVersion)                                                                                \
	X(cublasLtMatmulDescCreate)                                                                          \
	X(cublasLtMatmulDescDestroy)                                                                         \
	X(cublasLtMatmulDescSetAttribute)                                                                    \
	X(cublasLtMatrixLayoutCreate)                                                                        \
	X(cublasLtMatrixLayoutDestroy)                                                                       \
	X(cublasLtMatrixLayoutSetAttribute)                                                                  \
	X(cublasLtMatmulPreferenceCreate)                                                                    \
	X(cublasLtMatmulPreferenceDestroy)                                                                   \
	X(cublasLtMatmulPreferenceSetAttribute)                                                              \
	X(cublasLtMatmulAlgoGetHeuristic)                                                                    \
	X(cublasLtMatmul)

#define DNN_FNS(X)                                                                                           \
	X(cudnnGetVersion)                                                                                   \
	X(cudnnGetErrorString)                                                                               \
	X(cudnnGetLastErrorString)                                                                           \
	X(cudnnCreate)                                                                                       \
	X(cudnnDestroy)                                                                                      \
	X(cudnnSetStream)                                                                                    \
	X(cudnnCreateTensorDescriptor)                                                                       \
	X(cudnnSetTensor4dDescriptor)                                                                        \
	X(cudnnDestroyTensorDescriptor)                                                                      \
	X(cudnnCreateFilterDescriptor)                                                                       \
	X(cudnnSetFilter4dDescriptor)                                                                        \
	X(cudnnDestroyFilterDescriptor)                                                                      \
	X(cudnnCreateConvolutionDescriptor)                                                                  \
	X(cudnnSetConvolution2dDescriptor)                                                                   \
	X(cudnnSetConvolutionGroupCount)                                                                     \
	X(cudnnSetConvolutionMathType)                                                                       \
	X(cudnnGetConvolution2dForwardOutputDim)                                                             \
	X(cudnnDestroyConvolutionDescriptor)                                                                 \
	X(cudnnGetConvolutionForwardAlgorithm_v7)                                                            \
	X(cudnnGetConvolutionForwardWorkspaceSize)                                                           \
	X(cudnnConvolutionForward)                                                                           \
	X(cudnnAddTensor)                                                                                    \
	X(cudnnCreateActivationDescriptor)                                                                   \
	X(cudnnSetActivationDescriptor)                                                                      \
	X(cudnnDestroyActivationDescriptor)                                                                  \
	X(cudnnActivationForward)                                                                            \
	X(cudnnBackendCreateDescriptor)                                                                      \
	X(cudnnBackendDestroyDescriptor)                                                                     \
	X(cudnnBackendSetAttribute)                                                                          \
	X(cudnnBackendGetAttribute)                                                                          \
	X(cudnnBackendFinalize)                                                                              \
	X(cudnnBackendExecute)

/* the table of pointers, each typed from the header's own prototype */
#define FIELD(f) __typeof__(&f) f; /* NOLINT(bugprone-macro-parentheses): a declaration */
static struct {
	void *lib;
	BLAS_FNS(FIELD)
} blas;
static struct {
	void *lib;
	LT_FNS(FIELD)
} lt;
static struct {
	void *lib;
	DNN_FNS(FIELD)
} dnn;
#undef FIELD

static void lib_msg(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lib_msg(char *msg, size_t n, const char *fmt, ...)
{
	va_list ap;
	if (!msg || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, n, fmt, ap);
	va_end(ap);
}

/* dlopen of soname: the loader's path first (LD_LIBRARY_PATH, the worker's RUNPATH, ld.so.cache), then
 * the toolkit's folders. NULL with the first loader error in why. */
static void *open_lib(const char *soname, char *why, size_t why_len)
{
	const char *home = getenv("CUDA_HOME");
	const char *dirs[] = {home && *home ? home : NULL, "/usr/local/cuda"};
	char path[600];
	void *h;

	dlerror();
	if ((h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)))
		return h;
	lib_msg(why, why_len, "%s", dlerror());
	for (size_t i = 0; i < KF_ARRAY_SIZE(dirs); i++) {
		if (!dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/lib64/%s", dirs[i], soname);
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	/* Debian's and the wheel-less cuDNN packages put it beside the system libraries */
	snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/%s", soname);
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static bool sym(void *lib, const char *name, void *dst, size_t dst_len, char *why, size_t why_len)
{
	void *p = dlsym(lib, name);
	if (!p || dst_len != sizeof(p)) {
		lib_msg(why, why_len, "the library has no '%s'", name);
		return false;
	}
	memcpy(dst, &p, sizeof(p)); /* a function pointer from dlsym needs the copy, not a cast */
	return true;
}

#define LOAD(tbl, f)                                                                                         \
	if (!sym((tbl).lib, #f, &(tbl).f, sizeof((tbl).f), why, why_len))                                    \
		goto fail;

static enum kf_status load_blas(char *msg, size_t msg_len)
{
	char why[400] = "";
	size_t why_len = sizeof(why);
	if (blas.lib)
		return KF_OK;
	if (!(blas.lib = open_lib("libcublas.so.13", why, why_len))) {
		lib_msg(msg, msg_len, "cuBLAS is not installed here (libcublas.so.13: %s)", why);
		return KF_ERR_UNAVAILABLE;
	}
#define L(f) LOAD(blas, f)
	BLAS_FNS(L)
#undef L
	return KF_OK;
fail:
	lib_msg(msg, msg_len, "libcublas.so.13 is not the cuBLAS 13 this worker was built for: %s", why);
	dlclose(blas.lib);
	memset(&blas, 0, sizeof(blas));
	return KF_ERR_UNAVAILABLE;
}

static enum kf_status load_lt(char *msg, size_t msg_len)
{
	char why[400] = "";
	size_t why_len = sizeof(why);
	if (lt.lib)
		return KF_OK;
	if (!(lt.lib = open_lib("libcublasLt.so.13", why, why_len))) {
		lib_msg(msg, msg_len, "cuBLASLt is not installed here (libcublasLt.so.13: %s)", why);
		return KF_ERR_UNAVAILABLE;
	}
#define L(f) LOAD(lt, f)
	LT_FNS(L)
#undef L
	return KF_OK;
fail:
	lib_msg(msg, msg_len, "libcublasLt.so.13 is not the cuBLASLt 13 this worker was built for: %s", why);
	dlclose(lt.lib);
	memset(&lt, 0, sizeof(lt));
	return KF_ERR_UNAVAILABLE;
}

static enum kf_status load_dnn(char *msg, size_t msg_len)
{
	char why[400] = "";
	size_t why_len = sizeof(why);
	if (dnn.lib)
		return KF_OK;
	if (!(dnn.lib = open_lib("libcudnn.so.9", why, why_len))) {
		lib_msg(msg, msg_len, "cuDNN is not installed here (libcudnn.so.9: %s)", why);
		return KF_ERR_UNAVAILABLE;
	}
#define L(f) LOAD(dnn, f)
	DNN_FNS(L)
#undef L
	if (dnn.cudnnGetVersion() / 10000 != CUDNN_MAJOR) {
		lib_msg(why, why_len, "version %zu, built for %d.x", dnn.cudnnGetVersion(), CUDNN_MAJOR);
		goto fail;
	}
	return KF_OK;
fail:
	lib_msg(msg, msg_len, "libcudnn.so.9 is not the cuDNN 9 this worker was built for: %s", why);
	dlclose(dnn.lib);
	memset(&dnn, 0, sizeof(dnn));
	return KF_ERR_UNAVAILABLE;
}

/* ---- per-launch state ----------------------------------------------------------------------------- */

union scalar {
	float f;
	double d;
	uint16_t h;
};

struct call {
	bool used;
	enum kf_libop op;
	/* matmul (cuBLAS, cuBLASLt): the column-major problem D^T = op(B)^T op(A)^T */
	cublasOperation_t op_first, op_second; /* applied to B and A */
	int m, n, k, ld_first, ld_second, ldc, ldd, batch;
	long long st_first, st_second, stc, std_;
	cudaDataType_t t_ab, t_c, t_d, t_bias;
	cublasComputeType_t compute;
	union scalar alpha, beta;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t l_first, l_second, l_c, l_d;
	cublasLtMatmulAlgo_t algo;
	size_t lt_ws;
	/* convolution */
	cudnnTensorDescriptor_t xd, yd, bd;
	cudnnFilterDescriptor_t wd;
	cudnnConvolutionDescriptor_t cd;
	cudnnActivationDescriptor_t ad;
	cudnnConvolutionFwdAlgo_t conv_algo;
	size_t conv_ws;
	union scalar one, zero;
	bool bias, residual, relu;
	/* attention and norms (cuDNN graph) */
	cudnnBackendDescriptor_t descs[GRAPH_MAX_DESCS];
	size_t n_descs;
	cudnnBackendDescriptor_t plan;
	int64_t graph_ws;
	float scale, neg_big, eps;
};

static struct {
	cublasHandle_t blas;
	cublasLtHandle_t lt;
	cudnnHandle_t dnn;
	CUstream stream;
	CUdeviceptr blas_ws, ws;
	size_t ws_bytes;
	struct call calls[KF_MAX_LAUNCHES];
} lg;

static int64_t cell_int(void *const *args, int pos)
{
	int64_t v;
	memcpy(&v, args[pos], 8);
	return v;
}

static double cell_real(void *const *args, int pos)
{
	double v;
	memcpy(&v, args[pos], 8);
	return v;
}

/* An optional tensor of the call was given (it travels as a buffer; an absent one as the integer 0). */
static bool present(const struct kf_be_launch *L, int pos)
{
	return pos < 64 && (L->buffer_mask >> pos & 1);
}

static void *cell_ptr(void *const *args, int pos)
{
	uint64_t v;
	memcpy(&v, args[pos], 8);
	return (void *)(uintptr_t)v;
}

static bool cuda_type(int64_t dt, cudaDataType_t *out)
{
	switch (dt) {
	case KF_DTYPE_F32:
		*out = CUDA_R_32F;
		return true;
	case KF_DTYPE_F64:
		*out = CUDA_R_64F;
		return true;
	case KF_DTYPE_F16:
		*out = CUDA_R_16F;
		return true;
	case KF_DTYPE_BF16:
		*out = CUDA_R_16BF;
		return true;
	default:
		return false;
	}
}

static bool dnn_type(int64_t dt, cudnnDataType_t *out)
{
	switch (dt) {
	case KF_DTYPE_F32:
		*out = CUDNN_DATA_FLOAT;
		return true;
	case KF_DTYPE_F64:
		*out = CUDNN_DATA_DOUBLE;
		return true;
	case KF_DTYPE_F16:
		*out = CUDNN_DATA_HALF;
		return true;
	case KF_DTYPE_BF16:
		*out = CUDNN_DATA_BFLOAT16;
		return true;
	default:
		return false;
	}
}

/* f32 -> IEEE half bits, round to nearest even (a cuBLAS 16F compute type takes half alpha/beta). */
static uint16_t to_half(float f)
{
	uint32_t x, sign, exp, mant;
	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000u;
	exp = (x >> 23) & 0xffu;
	mant = x & 0x7fffffu;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		mant |= 0x800000u;
		uint32_t shift = (uint32_t)(14 - e), h = mant >> shift, rem = mant & ((1u << shift) - 1),
			 half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)(sign | h);
}

static const char *blas_status(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS:
		return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED:
		return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED:
		return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE:
		return "CUBLAS_STATUS_INVALID_VALUE";
	case CUBLAS_STATUS_ARCH_MISMATCH:
		return "CUBLAS_STATUS_ARCH_MISMATCH";
	case CUBLAS_STATUS_MAPPING_ERROR:
		return "CUBLAS_STATUS_MAPPING_ERROR";
	case CUBLAS_STATUS_EXECUTION_FAILED:
		return "CUBLAS_STATUS_EXECUTION_FAILED";
	case CUBLAS_STATUS_INTERNAL_ERROR:
		return "CUBLAS_STATUS_INTERNAL_ERROR";
	case CUBLAS_STATUS_NOT_SUPPORTED:
		return "CUBLAS_STATUS_NOT_SUPPORTED";
	case CUBLAS_STATUS_LICENSE_ERROR:
		return "CUBLAS_STATUS_LICENSE_ERROR";
	default:
		return "CUBLAS_STATUS_UNKNOWN";
	}
}

/* A cuDNN failure: its status and, when it has one, its last error text. */
static enum kf_status dnn_fail(cudnnStatus_t s, enum kf_status code, const char *what, char *msg, size_t n)
{
	char last[300] = "";
	if (dnn.cudnnGetLastErrorString)
		dnn.cudnnGetLastErrorString(last, sizeof(last));
	lib_msg(msg, n, "%s: %s%s%s", what,
		dnn.cudnnGetErrorString ? dnn.cudnnGetErrorString(s) : "cuDNN error", last[0] ? ": " : "",
		last);
	return code;
}

/* The shared workspace (cuBLASLt, cuDNN): grown at prepare time only, never during a run. */
static enum kf_status ws_reserve(size_t bytes, char *msg, size_t n)
{
	CUresult r;
	if (bytes <= lg.ws_bytes)
		return KF_OK;
	if (lg.ws)
		kf_cu.mem_free(lg.ws);
	lg.ws = 0;
	lg.ws_bytes = 0;
	if ((r = kf_cu.mem_alloc(&lg.ws, bytes)) != CUDA_SUCCESS) {
		lg.ws = 0;
		lib_msg(msg, n, "cannot allocate a %zu-byte library workspace: %s", bytes,
			kf_cu_error_name(r));
		return KF_ERR_NOMEM;
	}
	lg.ws_bytes = bytes;
	return KF_OK;
}

/* ---- cuBLAS and cuBLASLt ------------------------------------------------------------------------ */

static bool fits_int(int64_t v)
{
	return v >= 0 && v <= INT32_MAX;
}

/* The row-major call of core/baseline.h as the column-major problem cuBLAS solves. */
static enum kf_status mm_setup(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	void *const *args = L->args;
	if (L->n_args != KF_MM_NARGS) {
		lib_msg(msg, n, "a matmul call takes %d arguments, not %u", KF_MM_NARGS, L->n_args);
		return KF_ERR_INVALID;
	}
	int64_t M = cell_int(args, KF_MM_M), N = cell_int(args, KF_MM_N), K = cell_int(args, KF_MM_K),
		lda = cell_int(args, KF_MM_LDA), ldb = cell_int(args, KF_MM_LDB),
		ldc = cell_int(args, KF_MM_LDC), ldd = cell_int(args, KF_MM_LDD),
		batch = cell_int(args, KF_MM_BATCH);
	int64_t cmp = cell_int(args, KF_MM_COMPUTE), dab = cell_int(args, KF_MM_DTYPE_AB);
	double alpha = cell_real(args, KF_MM_ALPHA), beta = cell_real(args, KF_MM_BETA);

	if (M < 1 || N < 1 || K < 1 || batch < 1 || !fits_int(M) || !fits_int(N) || !fits_int(K) ||
	    !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc) || !fits_int(ldd) || !fits_int(batch)) {
		lib_msg(msg, n,
			"matmul sizes M=%lld N=%lld K=%lld batch=%lld are outside cuBLAS's 32-bit range",
			(long long)M, (long long)N, (long long)K, (long long)batch);
		return KF_ERR_INVALID;
	}
	if (!cuda_type(dab, &c->t_ab) || !cuda_type(cell_int(args, KF_MM_DTYPE_C), &c->t_c) ||
	    !cuda_type(cell_int(args, KF_MM_DTYPE_D), &c->t_d) ||
	    !cuda_type(cell_int(args, KF_MM_DTYPE_BIAS), &c->t_bias)) {
		lib_msg(msg, n, "a matmul of a dtype cuBLAS does not take");
		return KF_ERR_INVALID;
	}
	c->op_first = cell_int(args, KF_MM_TRANS_B) ? CUBLAS_OP_T : CUBLAS_OP_N;
	c->op_second = cell_int(args, KF_MM_TRANS_A) ? CUBLAS_OP_T : CUBLAS_OP_N;
	c->m = (int)N;
	c->n = (int)M;
	c->k = (int)K;
	c->ld_first = (int)ldb;
	c->ld_second = (int)lda;
	c->ldc = (int)ldc;
	c->ldd = (int)ldd;
	c->batch = (int)batch;
	c->st_first = cell_int(args, KF_MM_STRIDE_B);
	c->st_second = cell_int(args, KF_MM_STRIDE_A);
	c->stc = cell_int(args, KF_MM_STRIDE_C);
	c->std_ = cell_int(args, KF_MM_STRIDE_D);
	switch (cmp) {
	case KF_LIB_COMPUTE_TF32:
		c->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
		break;
	case KF_LIB_COMPUTE_F16:
		c->compute = CUBLAS_COMPUTE_16F;
		break;
	case KF_LIB_COMPUTE_F64:
		c->compute = CUBLAS_COMPUTE_64F;
		break;
	default:
		/* f32 accumulation, and no TF32: the handle's default math mode keeps f32 GEMMs exact */
		c->compute = dab == KF_DTYPE_F64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
		break;
	}
	if (c->compute == CUBLAS_COMPUTE_64F) {
		c->alpha.d = alpha;
		c->beta.d = beta;
	} else if (c->compute == CUBLAS_COMPUTE_16F) {
		c->alpha.h = to_half((float)alpha);
		c->beta.h = to_half((float)beta);
	} else {
		c->alpha.f = (float)alpha;
		c->beta.f = (float)beta;
	}
	return KF_OK;
}

static enum kf_status gemm_prepare(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	enum kf_status st;
	cublasStatus_t s;
	CUresult r;

	if ((st = mm_setup(c, L, msg, n)) || (st = load_blas(msg, n)))
		return st;
	if (cell_int(L->args, KF_MM_ACTIVATION) != KF_LIB_ACT_NONE || present(L, KF_MM_BIAS)) {
		lib_msg(msg, n, "cublas.gemm has no epilogue (use cublasLt.matmul)");
		return KF_ERR_INVALID;
	}
	if (!lg.blas) {
		if ((s = blas.cublasCreate_v2(&lg.blas)) != CUBLAS_STATUS_SUCCESS) {
			lg.blas = NULL;
			lib_msg(msg, n, "cublasCreate: %s", blas_status(s));
			return KF_ERR_UNAVAILABLE;
		}
		/* our own workspace, allocated now: cuBLAS would otherwise allocate its pool in the first
		 * call */
		if ((r = kf_cu.mem_alloc(&lg.blas_ws, CUBLAS_WS_BYTES)) != CUDA_SUCCESS) {
			lg.blas_ws = 0;
			lib_msg(msg, n, "cannot allocate the cuBLAS workspace: %s", kf_cu_error_name(r));
			return KF_ERR_NOMEM;
		}
		if ((s = blas.cublasSetStream_v2(lg.blas, (cudaStream_t)lg.stream)) !=
			CUBLAS_STATUS_SUCCESS ||
		    (s = blas.cublasSetWorkspace_v2(lg.blas, (void *)(uintptr_t)lg.blas_ws,
						    CUBLAS_WS_BYTES)) != CUBLAS_STATUS_SUCCESS ||
		    (s = blas.cublasSetMathMode(lg.blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
			lib_msg(msg, n, "cuBLAS handle setup: %s", blas_status(s));
			return KF_ERR_UNAVAILABLE;
		}
	}
	return KF_OK;
}

static enum kf_status gemm_run(const struct call *c, void *const *args, char *msg, size_t n)
{
	const void *A = cell_ptr(args, KF_MM_A), *B = cell_ptr(args, KF_MM_B);
	void *D = cell_ptr(args, KF_MM_D);
	cublasStatus_t s;

	if (c->batch == 1)
		s = blas.cublasGemmEx(lg.blas, c->op_first, c->op_second, c->m, c->n, c->k, &c->alpha, B,
				      c->t_ab, c->ld_first, A, c->t_ab, c->ld_second, &c->beta, D, c->t_d,
				      c->ldd, c->compute, CUBLAS_GEMM_DEFAULT);
	else
		s = blas.cublasGemmStridedBatchedEx(
		    lg.blas, c->op_first, c->op_second, c->m, c->n, c->k, &c->alpha, B, c->t_ab, c->ld_first,
		    c->st_first, A, c->t_ab, c->ld_second, c->st_second, &c->beta, D, c->t_d, c->ldd, c->std_,
		    c->batch, c->compute, CUBLAS_GEMM_DEFAULT);
	if (s != CUBLAS_STATUS_SUCCESS) {
		lib_msg(msg, n, "%s: %s", c->batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx",
			blas_status(s));
		return KF_ERR_RUNTIME;
	}
	return KF_OK;
}

static cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int rows, int cols, int ld,
			     int batch, long long stride)
{
	int32_t b = batch;
	int64_t st = stride;
	cublasStatus_t s = lt.cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
	if (s == CUBLAS_STATUS_SUCCESS && batch > 1)
		s = lt.cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b,
							sizeof(b));
	if (s == CUBLAS_STATUS_SUCCESS && batch > 1)
		s = lt.cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st,
							sizeof(st));
	return s;
}

/* Host-side part of a cuBLASLt call: the descriptor and the four layouts (no device needed). */
static enum kf_status lt_describe(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	int64_t act = cell_int(L->args, KF_MM_ACTIVATION);
	bool bias = present(L, KF_MM_BIAS);
	cublasLtEpilogue_t epi =
	    act == KF_LIB_ACT_RELU   ? (bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
	    : act == KF_LIB_ACT_GELU ? (bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
	    : bias                   ? CUBLASLT_EPILOGUE_BIAS
				     : CUBLASLT_EPILOGUE_DEFAULT;
	cudaDataType_t scale = c->compute == CUBLAS_COMPUTE_64F   ? CUDA_R_64F
			       : c->compute == CUBLAS_COMPUTE_16F ? CUDA_R_16F
								  : CUDA_R_32F;
	int32_t ta = c->op_first, tb = c->op_second;
	cublasStatus_t s;

	c->bias = bias;
	s = lt.cublasLtMatmulDescCreate(&c->desc, c->compute, scale);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
						      sizeof(epi));
	if (s == CUBLAS_STATUS_SUCCESS && bias) {
		int32_t bt = c->t_bias;
		s = lt.cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
						      sizeof(bt));
	}
	if (s != CUBLAS_STATUS_SUCCESS) {
		lib_msg(msg, n, "cuBLASLt matmul descriptor: %s", blas_status(s));
		return KF_ERR_UNAVAILABLE;
	}
	/* column-major: the first operand is B (m x k after its op), the second A (k x n), C and D m x n */
	if ((s = layout(&c->l_first, c->t_ab, c->op_first == CUBLAS_OP_N ? c->m : c->k,
			c->op_first == CUBLAS_OP_N ? c->k : c->m, c->ld_first, c->batch, c->st_first)) ||
	    (s = layout(&c->l_second, c->t_ab, c->op_second == CUBLAS_OP_N ? c->k : c->n,
			c->op_second == CUBLAS_OP_N ? c->n : c->k, c->ld_second, c->batch, c->st_second)) ||
	    (s = layout(&c->l_c, c->t_c, c->m, c->n, c->ldc, c->batch, c->stc)) ||
	    (s = layout(&c->l_d, c->t_d, c->m, c->n, c->ldd, c->batch, c->std_))) {
		lib_msg(msg, n, "cuBLASLt matrix layout: %s", blas_status(s));
		return KF_ERR_UNAVAILABLE;
	}
	return KF_OK;
}

static enum kf_status lt_prepare(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	uint64_t ws = LT_WS_BYTES;
	int found = 0;
	enum kf_status st;
	cublasStatus_t s;

	memset(&res, 0, sizeof(res));
	if ((st = mm_setup(c, L, msg, n)) || (st = load_lt(msg, n)))
		return st;
	if (!lg.lt && (s = lt.cublasLtCreate(&lg.lt)) != CUBLAS_STATUS_SUCCESS) {
		lg.lt = NULL;
		lib_msg(msg, n, "cublasLtCreate: %s", blas_status(s));
		return KF_ERR_UNAVAILABLE;
	}
	if ((st = lt_describe(c, L, msg, n)))
		return st;
	s = lt.cublasLtMatmulPreferenceCreate(&pref);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
							    &ws, sizeof(ws));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmulAlgoGetHeuristic(lg.lt, c->desc, c->l_first, c->l_second, c->l_c, c->l_d,
						      pref, 1, &res, &found);
	if (pref)
		lt.cublasLtMatmulPreferenceDestroy(pref);
	if (s != CUBLAS_STATUS_SUCCESS || found < 1 || res.state != CUBLAS_STATUS_SUCCESS) {
		lib_msg(msg, n, "cuBLASLt has no algorithm for this matmul (%s)",
			s != CUBLAS_STATUS_SUCCESS ? blas_status(s)
			: found < 1                ? "no heuristic result"
						   : blas_status(res.state));
		return KF_ERR_UNAVAILABLE;
	}
	c->algo = res.algo;
	c->lt_ws = res.workspaceSize;
	return ws_reserve(c->lt_ws, msg, n);
}

static enum kf_status lt_run(struct call *c, void *const *args, char *msg, size_t n)
{
	const void *A = cell_ptr(args, KF_MM_A), *B = cell_ptr(args, KF_MM_B), *C = cell_ptr(args, KF_MM_C);
	void *D = cell_ptr(args, KF_MM_D), *bias = cell_ptr(args, KF_MM_BIAS);
	cublasStatus_t s = CUBLAS_STATUS_SUCCESS;

	/* the bias moves with every allocation slot: a host-side attribute, set per run */
	if (c->bias)
		s = lt.cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
						      sizeof(bias));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = lt.cublasLtMatmul(lg.lt, c->desc, &c->alpha, B, c->l_first, A, c->l_second, &c->beta,
				      C ? C : D, C ? c->l_c : c->l_d, D, c->l_d, &c->algo,
				      (void *)(uintptr_t)lg.ws, c->lt_ws, (cudaStream_t)lg.stream);
	if (s != CUBLAS_STATUS_SUCCESS) {
		lib_msg(msg, n, "cublasLtMatmul: %s", blas_status(s));
		return KF_ERR_RUNTIME;
	}
	return KF_OK;
}

/* ---- cuDNN convolution (the legacy API: what frameworks call for NCHW) ------------------------------ */

static bool dnn_handle(char *msg, size_t n, enum kf_status *st)
{
	cudnnStatus_t s;
	if ((*st = load_dnn(msg, n)))
		return false;
	if (lg.dnn)
		return true;
	if ((s = dnn.cudnnCreate(&lg.dnn)) != CUDNN_STATUS_SUCCESS) {
		lg.dnn = NULL;
		*st = dnn_fail(s, KF_ERR_UNAVAILABLE, "cudnnCreate", msg, n);
		return false;
	}
	if ((s = dnn.cudnnSetStream(lg.dnn, (cudaStream_t)lg.stream)) != CUDNN_STATUS_SUCCESS) {
		*st = dnn_fail(s, KF_ERR_UNAVAILABLE, "cudnnSetStream", msg, n);
		return false;
	}
	return true;
}

/* Host-side descriptors of a convolution; sets *dt. */
static enum kf_status conv_describe(struct call *c, const struct kf_be_launch *L, cudnnDataType_t *dt,
				    char *msg, size_t n)
{
	void *const *args = L->args;
	int64_t v[KF_CONV_NARGS];
	cudnnDataType_t cdt;
	cudnnStatus_t s;

	if (L->n_args != KF_CONV_NARGS) {
		lib_msg(msg, n, "a convolution call takes %d arguments, not %u", KF_CONV_NARGS, L->n_args);
		return KF_ERR_INVALID;
	}
	for (int i = KF_CONV_N; i < KF_CONV_NARGS; i++)
		if (!fits_int(v[i] = cell_int(args, i))) {
			lib_msg(msg, n, "convolution argument %d is outside cuDNN's 32-bit range", i);
			return KF_ERR_INVALID;
		}
	if (!dnn_type(v[KF_CONV_DTYPE], dt)) {
		lib_msg(msg, n, "a convolution of a dtype cuDNN does not take");
		return KF_ERR_INVALID;
	}
	cdt = *dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
	if (cdt == CUDNN_DATA_DOUBLE) {
		c->one.d = 1;
		c->zero.d = 0;
	} else {
		c->one.f = 1;
		c->zero.f = 0;
	}
	c->bias = present(L, KF_CONV_BIAS);
	c->residual = present(L, KF_CONV_RESIDUAL);
	c->relu = v[KF_CONV_ACTIVATION] == KF_LIB_ACT_RELU;
#define DNN_OK(call, what)                                                                                   \
	if ((s = (call)) != CUDNN_STATUS_SUCCESS)                                                            \
		return dnn_fail(s, KF_ERR_UNAVAILABLE, what, msg, n);
	DNN_OK(dnn.cudnnCreateTensorDescriptor(&c->xd), "cudnnCreateTensorDescriptor");
	DNN_OK(dnn.cudnnSetTensor4dDescriptor(c->xd, CUDNN_TENSOR_NCHW, *dt, (int)v[KF_CONV_N],
					      (int)v[KF_CONV_C], (int)v[KF_CONV_H], (int)v[KF_CONV_WIDTH]),
	       "cudnnSetTensor4dDescriptor(x)");
	DNN_OK(dnn.cudnnCreateFilterDescriptor(&c->wd), "cudnnCreateFilterDescriptor");
	DNN_OK(dnn.cudnnSetFilter4dDescriptor(c->wd, *dt, CUDNN_TENSOR_NCHW, (int)v[KF_CONV_K],
					      (int)(v[KF_CONV_C] / v[KF_CONV_GROUPS]), (int)v[KF_CONV_R],
					      (int)v[KF_CONV_S]),
	       "cudnnSetFilter4dDescriptor(w)");
	DNN_OK(dnn.cudnnCreateConvolutionDescriptor(&c->cd), "cudnnCreateConvolutionDescriptor");
	DNN_OK(dnn.cudnnSetConvolution2dDescriptor(c->cd, (int)v[KF_CONV_PAD_H], (int)v[KF_CONV_PAD_W],
						   (int)v[KF_CONV_STRIDE_H], (int)v[KF_CONV_STRIDE_W],
						   (int)v[KF_CONV_DIL_H], (int)v[KF_CONV_DIL_W],
						   CUDNN_CROSS_CORRELATION, cdt),
	       "cudnnSetConvolution2dDescriptor");
	DNN_OK(dnn.cudnnSetConvolutionGroupCount(c->cd, (int)v[KF_CONV_GROUPS]),
	       "cudnnSetConvolutionGroupCount");
	/* f32/f64 data in true f32/f64: no TF32 tensor cores (cuDNN's default math would allow them on
	 * Ampere and later, ~1e-3 relative error); f16/bf16 may use tensor cores with f32 accumulation */
	DNN_OK(dnn.cudnnSetConvolutionMathType(c->cd, *dt == CUDNN_DATA_FLOAT || *dt == CUDNN_DATA_DOUBLE
							  ? CUDNN_FMA_MATH
							  : CUDNN_TENSOR_OP_MATH),
	       "cudnnSetConvolutionMathType");
	{
		int on, oc, oh, ow;
		DNN_OK(dnn.cudnnGetConvolution2dForwardOutputDim(c->cd, c->xd, c->wd, &on, &oc, &oh, &ow),
		       "cudnnGetConvolution2dForwardOutputDim");
		if (on != v[KF_CONV_N] || oc != v[KF_CONV_K] || oh != v[KF_CONV_P] || ow != v[KF_CONV_Q]) {
			lib_msg(msg, n, "cuDNN's output is %dx%dx%dx%d; the task's y is %lldx%lldx%lldx%lld",
				on, oc, oh, ow, (long long)v[KF_CONV_N], (long long)v[KF_CONV_K],
				(long long)v[KF_CONV_P], (long long)v[KF_CONV_Q]);
			return KF_ERR_INVALID;
		}
	}
	DNN_OK(dnn.cudnnCreateTensorDescriptor(&c->yd), "cudnnCreateTensorDescriptor");
	DNN_OK(dnn.cudnnSetTensor4dDescriptor(c->yd, CUDNN_TENSOR_NCHW, *dt, (int)v[KF_CONV_N],
					      (int)v[KF_CONV_K], (int)v[KF_CONV_P], (int)v[KF_CONV_Q]),
	       "cudnnSetTensor4dDescriptor(y)");
	if (c->bias) {
		DNN_OK(dnn.cudnnCreateTensorDescriptor(&c->bd), "cudnnCreateTensorDescriptor");
		DNN_OK(
		    dnn.cudnnSetTensor4dDescriptor(c->bd, CUDNN_TENSOR_NCHW, *dt, 1, (int)v[KF_CONV_K], 1, 1),
		    "cudnnSetTensor4dDescriptor(bias)");
	}
	if (c->relu) {
		DNN_OK(dnn.cudnnCreateActivationDescriptor(&c->ad), "cudnnCreateActivationDescriptor");
		DNN_OK(dnn.cudnnSetActivationDescriptor(c->ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN,
							0.0),
		       "cudnnSetActivationDescriptor");
	}
	return KF_OK;
}

static enum kf_status conv_prepare(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	cudnnDataType_t dt;
	int got = 0;
	bool chosen = false;
	enum kf_status st;
	cudnnStatus_t s;

	if (!dnn_handle(msg, n, &st) || (st = conv_describe(c, L, &dt, msg, n)))
		return st;
	DNN_OK(dnn.cudnnGetConvolutionForwardAlgorithm_v7(lg.dnn, c->xd, c->wd, c->cd, c->yd,
							  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf),
	       "cudnnGetConvolutionForwardAlgorithm_v7");
	/* cuDNN's own ranking; the first that works within the workspace cap and keeps f32 math exact */
	for (int i = 0; i < got && !chosen; i++) {
		if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > CONV_WS_MAX)
			continue;
		if ((dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE) &&
		    perf[i].mathType == CUDNN_TENSOR_OP_MATH)
			continue;
		c->conv_algo = perf[i].algo;
		c->conv_ws = perf[i].memory;
		chosen = true;
	}
	if (!chosen) {
		lib_msg(msg, n, "cuDNN offers no forward algorithm for this convolution (%d candidates)",
			got);
		return KF_ERR_UNAVAILABLE;
	}
	DNN_OK(dnn.cudnnGetConvolutionForwardWorkspaceSize(lg.dnn, c->xd, c->wd, c->cd, c->yd, c->conv_algo,
							   &c->conv_ws),
	       "cudnnGetConvolutionForwardWorkspaceSize");
	return ws_reserve(c->conv_ws, msg, n);
}

static enum kf_status conv_run(const struct call *c, void *const *args, char *msg, size_t n)
{
	const void *x = cell_ptr(args, KF_CONV_X), *w = cell_ptr(args, KF_CONV_W),
		   *b = cell_ptr(args, KF_CONV_BIAS), *r = cell_ptr(args, KF_CONV_RESIDUAL);
	void *y = cell_ptr(args, KF_CONV_Y);
	cudnnStatus_t s;

	/* y = conv(x, w) (beta 0: y is not read, its poison never matters), then += bias, += residual,
	 * then relu in place: what a framework's conv + add + relu does */
	DNN_OK(dnn.cudnnConvolutionForward(lg.dnn, &c->one, c->xd, x, c->wd, w, c->cd, c->conv_algo,
					   (void *)(uintptr_t)lg.ws, c->conv_ws, &c->zero, c->yd, y),
	       "cudnnConvolutionForward");
	if (c->bias)
		DNN_OK(dnn.cudnnAddTensor(lg.dnn, &c->one, c->bd, b, &c->one, c->yd, y),
		       "cudnnAddTensor(bias)");
	if (c->residual)
		DNN_OK(dnn.cudnnAddTensor(lg.dnn, &c->one, c->yd, r, &c->one, c->yd, y),
		       "cudnnAddTensor(residual)");
	if (c->relu)
		DNN_OK(dnn.cudnnActivationForward(lg.dnn, c->ad, &c->one, c->yd, y, &c->zero, c->yd, y),
		       "cudnnActivationForward(relu)");
	return KF_OK;
}

/* ---- cuDNN fused attention (the graph API) ------------------------------------------------------------ */

enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_SCALE, UID_NEG, UID_VIRT = 100 };

struct graph {
	struct call *c;
	char *msg;
	size_t n;
	cudnnStatus_t s;
	const char *what;
	int64_t next_uid;
};

static cudnnBackendDescriptor_t gdesc(struct graph *G, cudnnBackendDescriptorType_t type, const char *what)
{
	cudnnBackendDescriptor_t d = NULL;
	if (G->s != CUDNN_STATUS_SUCCESS)
		return NULL;
	if (G->c->n_descs >= GRAPH_MAX_DESCS) {
		G->s = CUDNN_STATUS_INTERNAL_ERROR;
		G->what = "too many cuDNN descriptors";
		return NULL;
	}
	if ((G->s = dnn.cudnnBackendCreateDescriptor(type, &d)) != CUDNN_STATUS_SUCCESS) {
		G->what = what;
		return NULL;
	}
	G->c->descs[G->c->n_descs++] = d;
	return d;
}

static void gset(struct graph *G, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
		 cudnnBackendAttributeType_t t, int64_t count, const void *v, const char *what)
{
	if (G->s != CUDNN_STATUS_SUCCESS)
		return;
	if ((G->s = dnn.cudnnBackendSetAttribute(d, a, t, count, v)) != CUDNN_STATUS_SUCCESS)
		G->what = what;
}

static void gfin(struct graph *G, cudnnBackendDescriptor_t d, const char *what)
{
	if (G->s != CUDNN_STATUS_SUCCESS)
		return;
	if ((G->s = dnn.cudnnBackendFinalize(d)) != CUDNN_STATUS_SUCCESS)
		G->what = what;
}

/* A 4-d tensor; uid 0 gives the next virtual id (an intermediate the fused kernel never stores). */
static cudnnBackendDescriptor_t gtensor(struct graph *G, int64_t uid, cudnnDataType_t dt, const int64_t *dims,
					const int64_t *strides, bool by_value, const char *what)
{
	cudnnBackendDescriptor_t t = gdesc(G, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
	int64_t align = 16;
	bool virt = uid == 0;
	if (virt)
		uid = G->next_uid++;
	gset(G, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, what);
	gset(G, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, what);
	gset(G, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, what);
	gset(G, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
	gset(G, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, what);
	gset(G, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, what);
	if (by_value)
		gset(G, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
	gfin(G, t, what);
	return t;
}

static void contiguous(const int64_t *dims, int64_t *strides)
{
	strides[3] = 1;
	for (int i = 2; i >= 0; i--)
		strides[i] = strides[i + 1] * dims[i + 1];
}

static cudnnBackendDescriptor_t gmatmul(struct graph *G, cudnnBackendDescriptor_t a,
					cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t out,
					const char *what)
{
	cudnnBackendDescriptor_t mm = gdesc(G, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what),
				 op = gdesc(G, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
	cudnnDataType_t ct = CUDNN_DATA_FLOAT;
	gset(G, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct, what);
	gfin(G, mm, what);
	gset(G, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what);
	gset(G, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
	gset(G, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &out, what);
	gset(G, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what);
	gfin(G, op, what);
	return op;
}

/* y = mode(x[, b[, t]]), with the pointwise axis for GEN_INDEX. */
static cudnnBackendDescriptor_t gpointwise(struct graph *G, cudnnPointwiseMode_t mode,
					   cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
					   cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
					   int64_t axis, const char *what)
{
	cudnnBackendDescriptor_t pw = gdesc(G, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what),
				 op = gdesc(G, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
	cudnnDataType_t prec = CUDNN_DATA_FLOAT;
	gset(G, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
	gset(G, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, what);
	if (mode == CUDNN_POINTWISE_GEN_INDEX)
		gset(G, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
	gfin(G, pw, what);
	gset(G, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
	     what);
	gset(G, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
	if (b)
		gset(G, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
	if (t)
		gset(G, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, what);
	gset(G, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
	gfin(G, op, what);
	return op;
}

static cudnnBackendDescriptor_t greduce(struct graph *G, cudnnReduceTensorOp_t mode,
					cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
					const char *what)
{
	cudnnBackendDescriptor_t rd = gdesc(G, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what),
				 op = gdesc(G, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
	cudnnDataType_t ct = CUDNN_DATA_FLOAT;
	gset(G, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode, what);
	gset(G, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct, what);
	gfin(G, rd, what);
	gset(G, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
	gset(G, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
	gset(G, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, what);
	gfin(G, op, what);
	return op;
}

/* The operation graph of softmax(scale * Q K^T [causal]) V, as cuDNN's flash-attention engine
 * recognizes it (the shape cudnn-frontend's sdpa node builds): bmm, scale, mask, max, sub, exp, sum,
 * div, bmm, every intermediate virtual and f32. Host-side only; handle may be NULL (the check). */
static enum kf_status sdpa_graph(struct call *c, const struct kf_be_launch *L, cudnnHandle_t handle,
				 cudnnBackendDescriptor_t *graph_out, char *msg, size_t n)
{
	void *const *args = L->args;
	if (L->n_args != KF_SDPA_NARGS) {
		lib_msg(msg, n, "an attention call takes %d arguments, not %u", KF_SDPA_NARGS, L->n_args);
		return KF_ERR_INVALID;
	}
	struct graph G = {.c = c, .msg = msg, .n = n, .s = CUDNN_STATUS_SUCCESS, .next_uid = UID_VIRT};
	int64_t B = cell_int(args, KF_SDPA_B), H = cell_int(args, KF_SDPA_H), T = cell_int(args, KF_SDPA_T),
		Tk = cell_int(args, KF_SDPA_T_KV), D = cell_int(args, KF_SDPA_D),
		Dv = cell_int(args, KF_SDPA_D_V);
	bool bshd = cell_int(args, KF_SDPA_LAYOUT) == KF_LIB_LAYOUT_BSHD,
	     causal = cell_int(args, KF_SDPA_CAUSAL);
	cudnnDataType_t io, f32 = CUDNN_DATA_FLOAT;
	cudnnBackendDescriptor_t ops[12], q, kt, v, o, s, s1, s2, mx, sub, ex, sm, p, sc, ng, graph;
	size_t n_ops = 0;

	if (!dnn_type(cell_int(args, KF_SDPA_DTYPE), &io) ||
	    (io != CUDNN_DATA_HALF && io != CUDNN_DATA_BFLOAT16)) {
		lib_msg(msg, n, "cuDNN's fused attention takes f16 or bf16");
		return KF_ERR_INVALID;
	}
	c->scale = (float)cell_real(args, KF_SDPA_SCALE);
	c->neg_big = -3.402823466e+38f; /* masked logits: exp(-FLT_MAX - max) is 0 */
	{
		/* [b, h, s, d] views of the task's tensors: bhsd is contiguous, bshd has h and s swapped */
		int64_t dq[4] = {B, H, T, D}, dk[4] = {B, H, Tk, D}, dv[4] = {B, H, Tk, Dv},
			dout[4] = {B, H, T, Dv};
		int64_t sq[4], sk[4], sv[4], so[4];
		int64_t dkt[4] = {B, H, D, Tk}, skt[4];
		int64_t dsc[4] = {1, 1, 1, 1}, ssc[4] = {1, 1, 1, 1};
		int64_t dS[4] = {B, H, T, Tk}, sS[4], dr[4] = {B, H, T, 1}, sr[4];
		if (bshd) {
			int64_t sq_[4] = {T * H * D, D, H * D, 1}, sk_[4] = {Tk * H * D, D, H * D, 1},
				sv_[4] = {Tk * H * Dv, Dv, H * Dv, 1}, so_[4] = {T * H * Dv, Dv, H * Dv, 1};
			memcpy(sq, sq_, sizeof(sq));
			memcpy(sk, sk_, sizeof(sk));
			memcpy(sv, sv_, sizeof(sv));
			memcpy(so, so_, sizeof(so));
		} else {
			contiguous(dq, sq);
			contiguous(dk, sk);
			contiguous(dv, sv);
			contiguous(dout, so);
		}
		/* K^T: the same memory read with d and s swapped */
		skt[0] = sk[0], skt[1] = sk[1], skt[2] = sk[3], skt[3] = sk[2];
		contiguous(dS, sS);
		contiguous(dr, sr);
		q = gtensor(&G, UID_Q, io, dq, sq, false, "tensor q");
		kt = gtensor(&G, UID_K, io, dkt, skt, false, "tensor k");
		v = gtensor(&G, UID_V, io, dv, sv, false, "tensor v");
		o = gtensor(&G, UID_O, io, dout, so, false, "tensor o");
		sc = gtensor(&G, UID_SCALE, f32, dsc, ssc, true, "tensor scale");
		s = gtensor(&G, 0, f32, dS, sS, false, "tensor S");
		s1 = gtensor(&G, 0, f32, dS, sS, false, "tensor S*scale");
		ops[n_ops++] = gmatmul(&G, q, kt, s, "matmul Q K^T");
		ops[n_ops++] = gpointwise(&G, CUDNN_POINTWISE_MUL, s, sc, NULL, s1, 0, "pointwise scale");
		if (causal) {
			cudnnBackendDescriptor_t ri, ci, mask;
			ng = gtensor(&G, UID_NEG, f32, dsc, ssc, true, "tensor -inf");
			ri = gtensor(&G, 0, CUDNN_DATA_INT32, dS, sS, false, "tensor row index");
			ci = gtensor(&G, 0, CUDNN_DATA_INT32, dS, sS, false, "tensor column index");
			mask = gtensor(&G, 0, CUDNN_DATA_BOOLEAN, dS, sS, false, "tensor mask");
			s2 = gtensor(&G, 0, f32, dS, sS, false, "tensor masked S");
			ops[n_ops++] =
			    gpointwise(&G, CUDNN_POINTWISE_GEN_INDEX, s1, NULL, NULL, ri, 2, "row index");
			ops[n_ops++] =
			    gpointwise(&G, CUDNN_POINTWISE_GEN_INDEX, s1, NULL, NULL, ci, 3, "column index");
			ops[n_ops++] =
			    gpointwise(&G, CUDNN_POINTWISE_CMP_GE, ri, ci, NULL, mask, 0, "row >= column");
			ops[n_ops++] =
			    gpointwise(&G, CUDNN_POINTWISE_BINARY_SELECT, s1, ng, mask, s2, 0, "causal mask");
		} else {
			s2 = s1;
		}
		mx = gtensor(&G, 0, f32, dr, sr, false, "tensor row max");
		sub = gtensor(&G, 0, f32, dS, sS, false, "tensor S - max");
		ex = gtensor(&G, 0, f32, dS, sS, false, "tensor exp");
		sm = gtensor(&G, 0, f32, dr, sr, false, "tensor row sum");
		p = gtensor(&G, 0, f32, dS, sS, false, "tensor P");
		ops[n_ops++] = greduce(&G, CUDNN_REDUCE_TENSOR_MAX, s2, mx, "reduction max");
		ops[n_ops++] = gpointwise(&G, CUDNN_POINTWISE_SUB, s2, mx, NULL, sub, 0, "pointwise sub");
		ops[n_ops++] = gpointwise(&G, CUDNN_POINTWISE_EXP, sub, NULL, NULL, ex, 0, "pointwise exp");
		ops[n_ops++] = greduce(&G, CUDNN_REDUCE_TENSOR_ADD, ex, sm, "reduction sum");
		ops[n_ops++] = gpointwise(&G, CUDNN_POINTWISE_DIV, ex, sm, NULL, p, 0, "pointwise div");
		ops[n_ops++] = gmatmul(&G, p, v, o, "matmul P V");
	}
	graph = gdesc(&G, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
	if (handle)
		gset(&G, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
		     "graph handle");
	gset(&G, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, (int64_t)n_ops, ops,
	     "graph operations");
	gfin(&G, graph, "operation graph");
	if (G.s != CUDNN_STATUS_SUCCESS)
		return dnn_fail(G.s, KF_ERR_UNAVAILABLE, G.what ? G.what : "cuDNN graph", msg, n);
	*graph_out = graph;
	return KF_OK;
}

/* The execution plan of an operation graph: the first engine config of cuDNN's heuristics it can
 * build a plan for, and its workspace. what names the call in the message ("attention"). */
static enum kf_status graph_plan(struct call *c, cudnnBackendDescriptor_t graph, const char *what, char *msg,
				 size_t n)
{
	struct graph G = {.c = c, .msg = msg, .n = n, .s = CUDNN_STATUS_SUCCESS};
	cudnnBackendDescriptor_t heur, cfgs[8], plan;
	cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
	int64_t got = 0;
	cudnnStatus_t last = CUDNN_STATUS_SUCCESS;
	char last_msg[300] = "";

	heur = gdesc(&G, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
	gset(&G, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
	     "heuristics");
	gset(&G, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
	gfin(&G, heur, "engine heuristics");
	for (size_t i = 0; i < KF_ARRAY_SIZE(cfgs); i++)
		cfgs[i] = gdesc(&G, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config");
	if (G.s == CUDNN_STATUS_SUCCESS &&
	    (G.s = dnn.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
						CUDNN_TYPE_BACKEND_DESCRIPTOR, (int64_t)KF_ARRAY_SIZE(cfgs),
						&got, cfgs)) != CUDNN_STATUS_SUCCESS)
		G.what = "heuristic results";
	if (G.s != CUDNN_STATUS_SUCCESS)
		return dnn_fail(G.s, KF_ERR_UNAVAILABLE, G.what, msg, n);
	/* the first engine config cuDNN can build a plan for */
	for (int64_t i = 0; i < got && !c->plan; i++) {
		plan = gdesc(&G, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
		gset(&G, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &lg.dnn,
		     "plan handle");
		gset(&G, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
		     &cfgs[i], "plan config");
		if (G.s == CUDNN_STATUS_SUCCESS &&
		    (G.s = dnn.cudnnBackendFinalize(plan)) == CUDNN_STATUS_SUCCESS) {
			c->plan = plan;
			break;
		}
		last = G.s;
		dnn.cudnnGetLastErrorString(last_msg, sizeof(last_msg));
		G.s = CUDNN_STATUS_SUCCESS; /* try the next config */
	}
	if (!c->plan) {
		lib_msg(msg, n, "cuDNN has no engine for this %s (%lld configs tried%s%s%s)", what,
			(long long)got, last != CUDNN_STATUS_SUCCESS ? ", last: " : "",
			last != CUDNN_STATUS_SUCCESS ? dnn.cudnnGetErrorString(last) : "",
			last_msg[0] ? last_msg : "");
		return KF_ERR_UNAVAILABLE;
	}
	if ((G.s = dnn.cudnnBackendGetAttribute(c->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
						CUDNN_TYPE_INT64, 1, &got, &c->graph_ws)) !=
	    CUDNN_STATUS_SUCCESS)
		return dnn_fail(G.s, KF_ERR_UNAVAILABLE, "plan workspace size", msg, n);
	return ws_reserve((size_t)(c->graph_ws > 0 ? c->graph_ws : 0), msg, n);
}

static enum kf_status sdpa_prepare(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	cudnnBackendDescriptor_t graph;
	enum kf_status st;

	if (!dnn_handle(msg, n, &st) || (st = sdpa_graph(c, L, lg.dnn, &graph, msg, n)))
		return st;
	return graph_plan(c, graph, "attention", msg, n);
}

/* Executes the prepared plan with the variant pack uids[i] -> ptrs[i]. */
static enum kf_status graph_run(struct call *c, const int64_t *uids, void *const *ptrs, int64_t count,
				const char *what, char *msg, size_t n)
{
	void *ws = (void *)(uintptr_t)lg.ws;
	cudnnBackendDescriptor_t pack = NULL;
	cudnnStatus_t s;

	if ((s = dnn.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack)) ||
	    (s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
					      count, uids)) ||
	    (s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
					      CUDNN_TYPE_VOID_PTR, count, ptrs)) ||
	    (s = dnn.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
					      &ws)) ||
	    (s = dnn.cudnnBackendFinalize(pack)) || (s = dnn.cudnnBackendExecute(lg.dnn, c->plan, pack))) {
		if (pack)
			dnn.cudnnBackendDestroyDescriptor(pack);
		return dnn_fail(s, KF_ERR_RUNTIME, what, msg, n);
	}
	dnn.cudnnBackendDestroyDescriptor(pack);
	return KF_OK;
}

static enum kf_status sdpa_run(struct call *c, void *const *args, char *msg, size_t n)
{
	int64_t uids[6] = {UID_Q, UID_K, UID_V, UID_O, UID_SCALE, UID_NEG};
	/* by-value tensors travel as host pointers to their value */
	void *ptrs[6] = {cell_ptr(args, KF_SDPA_Q),
			 cell_ptr(args, KF_SDPA_K),
			 cell_ptr(args, KF_SDPA_V),
			 cell_ptr(args, KF_SDPA_O),
			 &c->scale,
			 &c->neg_big};
	return graph_run(c, uids, ptrs, cell_int(args, KF_SDPA_CAUSAL) ? 6 : 5,
			 "cudnnBackendExecute(attention)", msg, n);
}

/* ---- cuDNN LayerNorm / RMSNorm (the graph API's norm forward, inference phase) ---------------------- */

enum { UID_NX = 1, UID_NSCALE, UID_NEPS, UID_NY, UID_NBIAS };

/* One NORM_FORWARD operation: x and y as [B, N, 1, 1] (row-major [B, N]), scale and bias [1, N, 1, 1],
 * eps a by-value f32; cuDNN normalizes over every dim but the first. Host-side only; handle may be
 * NULL (the check). */
static enum kf_status norm_graph(struct call *c, const struct kf_be_launch *L, cudnnHandle_t handle,
				 cudnnBackendDescriptor_t *graph_out, char *msg, size_t n)
{
	void *const *args = L->args;
	if (L->n_args != KF_NORM_NARGS) {
		lib_msg(msg, n, "a norm call takes %d arguments, not %u", KF_NORM_NARGS, L->n_args);
		return KF_ERR_INVALID;
	}
	struct graph G = {.c = c, .msg = msg, .n = n, .s = CUDNN_STATUS_SUCCESS, .next_uid = UID_VIRT};
	int64_t B = cell_int(args, KF_NORM_B), N = cell_int(args, KF_NORM_N);
	int64_t dx[4] = {B, N, 1, 1}, sx[4] = {N, 1, N, N}, dw[4] = {1, N, 1, 1}, sw[4] = {N, 1, N, N},
		de[4] = {1, 1, 1, 1}, se[4] = {1, 1, 1, 1};
	bool rms = cell_int(args, KF_NORM_MODE) == KF_LIB_NORM_RMS, bias = present(L, KF_NORM_BIAS);
	cudnnBackendNormMode_t mode = rms ? CUDNN_RMS_NORM : CUDNN_LAYER_NORM;
	cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_INFERENCE;
	cudnnDataType_t io, f32 = CUDNN_DATA_FLOAT;
	cudnnBackendDescriptor_t x, w, b = NULL, e, y, op, graph;

	if (!dnn_type(cell_int(args, KF_NORM_DTYPE), &io) || io == CUDNN_DATA_DOUBLE) {
		lib_msg(msg, n, "cuDNN's norm takes f32, f16 or bf16");
		return KF_ERR_INVALID;
	}
	if (!rms && !bias) {
		lib_msg(msg, n, "cuDNN's LayerNorm needs a bias");
		return KF_ERR_INVALID;
	}
	c->eps = (float)cell_real(args, KF_NORM_EPS);
	x = gtensor(&G, UID_NX, io, dx, sx, false, "tensor x");
	w = gtensor(&G, UID_NSCALE, io, dw, sw, false, "tensor scale");
	if (bias)
		b = gtensor(&G, UID_NBIAS, io, dw, sw, false, "tensor bias");
	e = gtensor(&G, UID_NEPS, f32, de, se, true, "tensor eps");
	y = gtensor(&G, UID_NY, io, dx, sx, false, "tensor y");
	op = gdesc(&G, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, "norm forward");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode, "norm mode");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase, "norm phase");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "norm x");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w,
	     "norm scale");
	if (b)
		gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b,
		     "norm bias");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e,
	     "norm eps");
	gset(&G, op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "norm y");
	gfin(&G, op, "norm forward");
	graph = gdesc(&G, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
	if (handle)
		gset(&G, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
		     "graph handle");
	gset(&G, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op,
	     "graph operations");
	gfin(&G, graph, "operation graph");
	if (G.s != CUDNN_STATUS_SUCCESS)
		return dnn_fail(G.s, KF_ERR_UNAVAILABLE, G.what ? G.what : "cuDNN graph", msg, n);
	*graph_out = graph;
	return KF_OK;
}

static enum kf_status norm_prepare(struct call *c, const struct kf_be_launch *L, char *msg, size_t n)
{
	cudnnBackendDescriptor_t graph;
	enum kf_status st;

	if (!dnn_handle(msg, n, &st) || (st = norm_graph(c, L, lg.dnn, &graph, msg, n)))
		return st;
	return graph_plan(
	    c, graph, cell_int(L->args, KF_NORM_MODE) == KF_LIB_NORM_RMS ? "RMSNorm" : "LayerNorm", msg, n);
}

static enum kf_status norm_run(struct call *c, void *const *args, char *msg, size_t n)
{
	int64_t uids[5] = {UID_NX, UID_NSCALE, UID_NEPS, UID_NY, UID_NBIAS};
	void *ptrs[5] = {cell_ptr(args, KF_NORM_X), cell_ptr(args, KF_NORM_SCALE), &c->eps,
			 cell_ptr(args, KF_NORM_Y), cell_ptr(args, KF_NORM_BIAS)};
	/* an absent bias travels as the integer 0: the pack stops before it */
	return graph_run(c, uids, ptrs, ptrs[4] ? 5 : 4, "cudnnBackendExecute(norm)", msg, n);
}

/* ---- the backend's entry points ----------------------------------------------------------------------- */

bool kf_culib_is_call(const char *kernel)
{
	enum kf_libop op;
	return kf_libop_from_launch(kernel, &op);
}

enum kf_status kf_culib_prepare(size_t i, const struct kf_be_launch *L, CUstream stream, char *msg,
				size_t msg_len)
{
	struct call *c;
	enum kf_libop op;

	if (i >= KF_MAX_LAUNCHES || !kf_libop_from_launch(L->kernel, &op)) {
		lib_msg(msg, msg_len, "'%s' is not a library call this worker knows", L->kernel);
		return KF_ERR_INVALID;
	}
	{
		/* the wire layout of core/baseline.h, checked before any library is touched */
		const uint32_t want[KF_LIBOP_COUNT] = {[KF_LIBOP_CUBLAS_GEMM] = KF_MM_NARGS,
						       [KF_LIBOP_CUBLASLT_MATMUL] = KF_MM_NARGS,
						       [KF_LIBOP_CUDNN_CONV_FWD] = KF_CONV_NARGS,
						       [KF_LIBOP_CUDNN_SDPA] = KF_SDPA_NARGS,
						       [KF_LIBOP_CUDNN_NORM] = KF_NORM_NARGS};
		if (L->n_args != want[op]) {
			lib_msg(msg, msg_len, "%s takes %u arguments, not %u", L->kernel + 1, want[op],
				L->n_args);
			return KF_ERR_INVALID;
		}
	}
	c = &lg.calls[i];
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->op = op;
	lg.stream = stream;
	switch (op) {
	case KF_LIBOP_CUBLAS_GEMM:
		return gemm_prepare(c, L, msg, msg_len);
	case KF_LIBOP_CUBLASLT_MATMUL:
		return lt_prepare(c, L, msg, msg_len);
	case KF_LIBOP_CUDNN_CONV_FWD:
		return conv_prepare(c, L, msg, msg_len);
	case KF_LIBOP_CUDNN_SDPA:
		return sdpa_prepare(c, L, msg, msg_len);
	case KF_LIBOP_CUDNN_NORM:
		return norm_prepare(c, L, msg, msg_len);
	default:
		lib_msg(msg, msg_len, "unknown library op %d", (int)op);
		return KF_ERR_INVALID;
	}
}

enum kf_status kf_culib_run(size_t i, void *const *args, char *msg, size_t msg_len)
{
	struct call *c = i < KF_MAX_LAUNCHES ? &lg.calls[i] : NULL;
	if (!c || !c->used) {
		lib_msg(msg, msg_len, "library call %zu was not prepared", i);
		return KF_ERR_INTERNAL;
	}
	switch (c->op) {
	case KF_LIBOP_CUBLAS_GEMM:
		return gemm_run(c, args, msg, msg_len);
	case KF_LIBOP_CUBLASLT_MATMUL:
		return lt_run(c, args, msg, msg_len);
	case KF_LIBOP_CUDNN_CONV_FWD:
		return conv_run(c, args, msg, msg_len);
	case KF_LIBOP_CUDNN_SDPA:
		return sdpa_run(c, args, msg, msg_len);
	default:
		return norm_run(c, args, msg, msg_len);
	}
}

static void call_release(struct call *c)
{
	if (c->desc)
		lt.cublasLtMatmulDescDestroy(c->desc);
	if (c->l_first)
		lt.cublasLtMatrixLayoutDestroy(c->l_first);
	if (c->l_second)
		lt.cublasLtMatrixLayoutDestroy(c->l_second);
	if (c->l_c)
		lt.cublasLtMatrixLayoutDestroy(c->l_c);
	if (c->l_d)
		lt.cublasLtMatrixLayoutDestroy(c->l_d);
	if (c->xd)
		dnn.cudnnDestroyTensorDescriptor(c->xd);
	if (c->yd)
		dnn.cudnnDestroyTensorDescriptor(c->yd);
	if (c->bd)
		dnn.cudnnDestroyTensorDescriptor(c->bd);
	if (c->wd)
		dnn.cudnnDestroyFilterDescriptor(c->wd);
	if (c->cd)
		dnn.cudnnDestroyConvolutionDescriptor(c->cd);
	if (c->ad)
		dnn.cudnnDestroyActivationDescriptor(c->ad);
	for (size_t d = c->n_descs; d-- > 0;)
		dnn.cudnnBackendDestroyDescriptor(c->descs[d]);
	memset(c, 0, sizeof(*c));
}

void kf_culib_release(bool context_ok)
{
	/* with a broken context every call would fail: leave it all to the process exit */
	if (context_ok) {
		for (size_t i = 0; i < KF_MAX_LAUNCHES; i++)
			call_release(&lg.calls[i]);
		if (lg.blas)
			blas.cublasDestroy_v2(lg.blas);
		if (lg.lt)
			lt.cublasLtDestroy(lg.lt);
		if (lg.dnn)
			dnn.cudnnDestroy(lg.dnn);
		if (lg.blas_ws)
			kf_cu.mem_free(lg.blas_ws);
		if (lg.ws)
			kf_cu.mem_free(lg.ws);
	}
	memset(&lg, 0, sizeof(lg));
}

/* ---- kforge-worker --library-check ------------------------------------------------------------------ */

/* A launch of sample cells in the wire layout (no buffers are allocated: nothing runs). */
static void sample(struct kf_be_launch *L, int64_t *cells, void **args, uint32_t n, uint64_t mask)
{
	memset(L, 0, sizeof(*L));
	for (uint32_t i = 0; i < n; i++)
		args[i] = &cells[i];
	L->args = args;
	L->n_args = n;
	L->buffer_mask = mask;
}

int kf_culib_check_main(int argc, char **argv)
{
	char msg[600];
	int failed = 0, unavailable = 0;
	(void)argc;
	(void)argv;
	/* each library: loads, and has every entry point this worker calls */
	{
		enum kf_status st = load_blas(msg, sizeof(msg));
		int major = 0, minor = 0;
		if (!st) {
			blas.cublasGetProperty(MAJOR_VERSION, &major);
			blas.cublasGetProperty(MINOR_VERSION, &minor);
		}
		printf("cublas=%s\n", st ? msg : "ok");
		if (!st)
			printf("cublas_version=%d.%d\n", major, minor);
		unavailable += st != KF_OK;
	}
	{
		enum kf_status st = load_lt(msg, sizeof(msg));
		printf("cublaslt=%s\n", st ? msg : "ok");
		if (!st)
			printf("cublaslt_version=%zu\n", lt.cublasLtGetVersion());
		unavailable += st != KF_OK;
		if (!st) {
			/* the host-side descriptors of a bias+gelu, transposed, batched f16 matmul */
			struct call c;
			struct kf_be_launch L;
			int64_t cells[KF_MM_NARGS] = {0};
			void *args[KF_MM_NARGS];
			memset(&c, 0, sizeof(c));
			sample(&L, cells, args, KF_MM_NARGS,
			       1u << KF_MM_A | 1u << KF_MM_B | 1u << KF_MM_D | 1u << KF_MM_BIAS);
			cells[KF_MM_M] = 37, cells[KF_MM_N] = 64, cells[KF_MM_K] = 129,
			cells[KF_MM_TRANS_B] = 1;
			cells[KF_MM_LDA] = 129, cells[KF_MM_LDB] = 129, cells[KF_MM_LDC] = 64,
			cells[KF_MM_LDD] = 64;
			cells[KF_MM_BATCH] = 3, cells[KF_MM_STRIDE_A] = 37 * 129, cells[KF_MM_STRIDE_B] = 0;
			cells[KF_MM_STRIDE_C] = cells[KF_MM_STRIDE_D] = 37 * 64;
			cells[KF_MM_ACTIVATION] = KF_LIB_ACT_GELU;
			cells[KF_MM_DTYPE_AB] = cells[KF_MM_DTYPE_C] = cells[KF_MM_DTYPE_D] =
			    cells[KF_MM_DTYPE_BIAS] = KF_DTYPE_F16;
			{
				double one = 1;
				memcpy(&cells[KF_MM_ALPHA], &one, 8);
			}
			st = mm_setup(&c, &L, msg, sizeof(msg));
			if (!st)
				st = lt_describe(&c, &L, msg, sizeof(msg));
			printf("cublaslt_describe=%s\n", st ? msg : "ok");
			failed += st != KF_OK;
			call_release(&c);
		}
	}
	{
		enum kf_status st = load_dnn(msg, sizeof(msg));
		printf("cudnn=%s\n", st ? msg : "ok");
		unavailable += st != KF_OK;
		if (!st) {
			printf("cudnn_version=%zu\n", dnn.cudnnGetVersion());
			/* the convolution's descriptors (no handle needed for these) */
			struct call c;
			struct kf_be_launch L;
			cudnnDataType_t dt;
			int64_t cells[KF_CONV_NARGS] = {0};
			void *args[KF_CONV_NARGS];
			memset(&c, 0, sizeof(c));
			sample(&L, cells, args, KF_CONV_NARGS,
			       1u << KF_CONV_X | 1u << KF_CONV_W | 1u << KF_CONV_Y | 1u << KF_CONV_BIAS);
			cells[KF_CONV_N] = 2, cells[KF_CONV_C] = 6, cells[KF_CONV_H] = 13,
			cells[KF_CONV_WIDTH] = 11;
			cells[KF_CONV_K] = 4, cells[KF_CONV_R] = 3, cells[KF_CONV_S] = 3,
			cells[KF_CONV_P] = 13;
			cells[KF_CONV_Q] = 11, cells[KF_CONV_GROUPS] = 2, cells[KF_CONV_PAD_H] = 1;
			cells[KF_CONV_PAD_W] = 1, cells[KF_CONV_STRIDE_H] = cells[KF_CONV_STRIDE_W] = 1;
			cells[KF_CONV_DIL_H] = cells[KF_CONV_DIL_W] = 1;
			cells[KF_CONV_ACTIVATION] = KF_LIB_ACT_RELU, cells[KF_CONV_DTYPE] = KF_DTYPE_F32;
			st = conv_describe(&c, &L, &dt, msg, sizeof(msg));
			printf("cudnn_conv_describe=%s\n", st ? msg : "ok");
			failed += st != KF_OK;
			call_release(&c);
			/* the attention graph, both masks and both layouts: every tensor and operation
			 * finalizes and the operation graph is accepted (engines need a GPU) */
			for (int k = 0; k < 4; k++) {
				cudnnBackendDescriptor_t graph = NULL;
				int64_t sc[KF_SDPA_NARGS] = {0};
				void *sa[KF_SDPA_NARGS];
				double scale = 0.125;
				memset(&c, 0, sizeof(c));
				sample(&L, sc, sa, KF_SDPA_NARGS,
				       1u << KF_SDPA_Q | 1u << KF_SDPA_K | 1u << KF_SDPA_V | 1u << KF_SDPA_O);
				sc[KF_SDPA_B] = 2, sc[KF_SDPA_H] = 3, sc[KF_SDPA_T] = 37,
				sc[KF_SDPA_T_KV] = 41; /* T != T_kv: a swapped length shows */
				sc[KF_SDPA_D] = sc[KF_SDPA_D_V] = 64, sc[KF_SDPA_CAUSAL] = k & 1;
				sc[KF_SDPA_LAYOUT] = k & 2 ? KF_LIB_LAYOUT_BSHD : KF_LIB_LAYOUT_BHSD;
				sc[KF_SDPA_DTYPE] = KF_DTYPE_BF16;
				memcpy(&sc[KF_SDPA_SCALE], &scale, 8);
				st = sdpa_graph(&c, &L, NULL, &graph, msg, sizeof(msg));
				printf("cudnn_sdpa_graph_%s_%s=%s\n", k & 2 ? "bshd" : "bhsd",
				       k & 1 ? "causal" : "full", st ? msg : "ok");
				failed += st != KF_OK;
				call_release(&c);
			}
			/* the norm graphs: LayerNorm f32 with its bias, RMSNorm bf16 with and without one */
			for (int k = 0; k < 3; k++) {
				static const char *const names[] = {"layer_f32", "rms_bf16", "rms_bf16_bias"};
				cudnnBackendDescriptor_t graph = NULL;
				int64_t nc[KF_NORM_NARGS] = {0};
				void *na[KF_NORM_NARGS];
				double eps = 1e-5;
				memset(&c, 0, sizeof(c));
				sample(&L, nc, na, KF_NORM_NARGS,
				       1u << KF_NORM_X | 1u << KF_NORM_SCALE | 1u << KF_NORM_Y |
					   (k != 1 ? 1u << KF_NORM_BIAS : 0));
				nc[KF_NORM_B] = 7, nc[KF_NORM_N] = 769;
				nc[KF_NORM_MODE] = k ? KF_LIB_NORM_RMS : KF_LIB_NORM_LAYER;
				nc[KF_NORM_DTYPE] = k ? KF_DTYPE_BF16 : KF_DTYPE_F32;
				memcpy(&nc[KF_NORM_EPS], &eps, 8);
				st = norm_graph(&c, &L, NULL, &graph, msg, sizeof(msg));
				printf("cudnn_norm_graph_%s=%s\n", names[k], st ? msg : "ok");
				failed += st != KF_OK;
				call_release(&c);
			}
		}
	}
	printf("failed=%d\nunavailable=%d\n", failed, unavailable);
	return failed ? 1 : unavailable ? 4 : 0;
}
