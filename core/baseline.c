/* Baselines (core/baseline.h): the task's `baselines` list parsed against a schema per library op,
 * checked for what the call can and cannot do (dtypes, roles, epilogues), and resolved at a shape into
 * the integers, reals and buffer indices of a one-launch plan for the cuda worker. A wrong mapping is
 * caught here, at every declared shape, before any worker exists. */
#include "baseline.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- ops and their argument schemas ---------------------------------------------------------------- */

enum argkind { ARG_TENSOR, ARG_EXPR, ARG_REAL, ARG_BOOL, ARG_CHOICE };

struct argspec {
	const char *name;
	enum argkind kind;
	bool required;
	const char *const *choices; /* CHOICE: NULL-terminated */
};

static const char *const act_mm[] = {"none", "relu", "gelu", NULL};
static const char *const act_conv[] = {"none", "relu", NULL};
static const char *const computes[] = {"default", "f32", "tf32", "f16", "f64", NULL};
static const char *const layouts[] = {"bhsd", "bshd", NULL};
static const char *const norms[] = {"layer", "rms", NULL};

#define MM_COMMON                                                                                            \
	{"A", ARG_TENSOR, true, NULL}, {"B", ARG_TENSOR, true, NULL}, {"M", ARG_EXPR, true, NULL},           \
	    {"N", ARG_EXPR, true, NULL}, {"K", ARG_EXPR, true, NULL}, {"trans_a", ARG_BOOL, false, NULL},    \
	    {"trans_b", ARG_BOOL, false, NULL}, {"lda", ARG_EXPR, false, NULL},                              \
	    {"ldb", ARG_EXPR, false, NULL}, {"ldc", ARG_EXPR, false, NULL},                                  \
	    {"batch", ARG_EXPR, false, NULL}, {"stride_a", ARG_EXPR, false, NULL},                           \
	    {"stride_b", ARG_EXPR, false, NULL}, {"stride_c", ARG_EXPR, false, NULL},                        \
	    {"alpha", ARG_REAL, false, NULL}, {"beta", ARG_REAL, false, NULL},                               \
	{                                                                                                    \
		"compute", ARG_CHOICE, false, computes                                                       \
	}

static const struct argspec gemm_spec[] = {MM_COMMON, {"C", ARG_TENSOR, true, NULL}};
static const struct argspec lt_spec[] = {MM_COMMON,
					 {"C", ARG_TENSOR, false, NULL},
					 {"D", ARG_TENSOR, true, NULL},
					 {"ldd", ARG_EXPR, false, NULL},
					 {"stride_d", ARG_EXPR, false, NULL},
					 {"bias", ARG_TENSOR, false, NULL},
					 {"activation", ARG_CHOICE, false, act_mm}};
static const struct argspec conv_spec[] = {
    {"x", ARG_TENSOR, true, NULL},         {"w", ARG_TENSOR, true, NULL},
    {"y", ARG_TENSOR, true, NULL},         {"bias", ARG_TENSOR, false, NULL},
    {"residual", ARG_TENSOR, false, NULL}, {"N", ARG_EXPR, true, NULL},
    {"C", ARG_EXPR, true, NULL},           {"H", ARG_EXPR, true, NULL},
    {"W", ARG_EXPR, true, NULL},           {"K", ARG_EXPR, true, NULL},
    {"R", ARG_EXPR, true, NULL},           {"S", ARG_EXPR, true, NULL},
    {"groups", ARG_EXPR, false, NULL},     {"pad_h", ARG_EXPR, false, NULL},
    {"pad_w", ARG_EXPR, false, NULL},      {"stride_h", ARG_EXPR, false, NULL},
    {"stride_w", ARG_EXPR, false, NULL},   {"dilation_h", ARG_EXPR, false, NULL},
    {"dilation_w", ARG_EXPR, false, NULL}, {"activation", ARG_CHOICE, false, act_conv}};
static const struct argspec sdpa_spec[] = {{"q", ARG_TENSOR, true, NULL},
					   {"k", ARG_TENSOR, true, NULL},
					   {"v", ARG_TENSOR, true, NULL},
					   {"o", ARG_TENSOR, true, NULL},
					   {"B", ARG_EXPR, true, NULL},
					   {"H", ARG_EXPR, true, NULL},
					   {"T", ARG_EXPR, true, NULL},
					   {"T_kv", ARG_EXPR, false, NULL},
					   {"D", ARG_EXPR, true, NULL},
					   {"D_v", ARG_EXPR, false, NULL},
					   {"layout", ARG_CHOICE, false, layouts},
					   {"scale", ARG_REAL, false, NULL},
					   {"causal", ARG_BOOL, false, NULL}};
static const struct argspec norm_spec[] = {
    {"x", ARG_TENSOR, true, NULL},      {"scale", ARG_TENSOR, true, NULL}, {"bias", ARG_TENSOR, false, NULL},
    {"y", ARG_TENSOR, true, NULL},      {"B", ARG_EXPR, true, NULL},       {"N", ARG_EXPR, true, NULL},
    {"mode", ARG_CHOICE, false, norms}, {"eps", ARG_REAL, false, NULL}};

static const struct {
	const struct argspec *spec;
	size_t n_spec;
	size_t n_wire;
} ops[KF_LIBOP_COUNT] = {
    [KF_LIBOP_CUBLAS_GEMM] = {gemm_spec, KF_ARRAY_SIZE(gemm_spec), KF_MM_NARGS},
    [KF_LIBOP_CUBLASLT_MATMUL] = {lt_spec, KF_ARRAY_SIZE(lt_spec), KF_MM_NARGS},
    [KF_LIBOP_CUDNN_CONV_FWD] = {conv_spec, KF_ARRAY_SIZE(conv_spec), KF_CONV_NARGS},
    [KF_LIBOP_CUDNN_SDPA] = {sdpa_spec, KF_ARRAY_SIZE(sdpa_spec), KF_SDPA_NARGS},
    [KF_LIBOP_CUDNN_NORM] = {norm_spec, KF_ARRAY_SIZE(norm_spec), KF_NORM_NARGS},
};

_Static_assert(KF_MM_NARGS <= KF_LIBCALL_MAX_ARGS && KF_CONV_NARGS <= KF_LIBCALL_MAX_ARGS &&
		   KF_SDPA_NARGS <= KF_LIBCALL_MAX_ARGS && KF_NORM_NARGS <= KF_LIBCALL_MAX_ARGS &&
		   KF_LIBCALL_MAX_ARGS <= KF_PLAN_MAX_ARGS,
	       "wire positions fit a launch");
_Static_assert(KF_ARRAY_SIZE(lt_spec) <= KF_LIBOP_MAX_USER_ARGS &&
		   KF_ARRAY_SIZE(conv_spec) <= KF_LIBOP_MAX_USER_ARGS,
	       "user arguments fit a baseline");

static int spec_index(enum kf_libop op, const char *name)
{
	for (size_t i = 0; i < ops[op].n_spec; i++)
		if (!strcmp(ops[op].spec[i].name, name))
			return (int)i;
	return -1;
}

/* ---- freeing ---------------------------------------------------------------------------------------- */

void kf_baselines_free(struct kf_baseline *b, size_t n)
{
	for (size_t i = 0; b && i < n; i++) {
		free(b[i].name);
		free(b[i].kernel);
		for (size_t a = 0; a < KF_LIBOP_MAX_USER_ARGS; a++)
			free(b[i].args[a].expr);
	}
	free(b);
}

/* ---- resolution -------------------------------------------------------------------------------------- */

/* Resolution context: errors name the argument ("lda") in bad[], the message in err. */
struct rctx {
	const struct kf_baseline *b;
	const struct kf_task *t;
	const struct kf_shape *s;
	struct kf_libcall *c;
	char bad[KF_NAME_MAX];
	struct kf_err *err;
};

static enum kf_status rfail(struct rctx *R, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum kf_status rfail(struct rctx *R, const char *arg, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(R->bad, sizeof(R->bad), "%s", arg);
	return kf_err_set(R->err, KF_ERR_INVALID, "%s", msg);
}

static const struct kf_libarg *uarg(const struct rctx *R, const char *name)
{
	int i = spec_index(R->b->op, name);
	return i >= 0 && R->b->args[i].set ? &R->b->args[i] : NULL;
}

static void put_int(struct rctx *R, int pos, int64_t v)
{
	R->c->args[pos] = (struct kf_libval){.kind = KF_LIBVAL_INT, .i = v, .tensor = -1};
}

static void put_real(struct rctx *R, int pos, double v)
{
	R->c->args[pos] = (struct kf_libval){.kind = KF_LIBVAL_REAL, .r = v, .tensor = -1};
}

static void put_tensor(struct rctx *R, int pos, int tensor)
{
	R->c->args[pos] = (struct kf_libval){.kind = KF_LIBVAL_TENSOR, .tensor = tensor};
}

/* An integer argument: its expression at the shape, else dflt; below lo is an error. */
static enum kf_status rinteger(struct rctx *R, const char *name, int64_t dflt, int64_t lo, int64_t *out)
{
	const struct kf_libarg *a = uarg(R, name);
	struct kf_err e = KF_ERR_INIT;
	*out = dflt;
	if (a && kf_expr_eval(a->expr, R->s, out, &e))
		return rfail(R, name, "%s", e.msg);
	if (*out < lo)
		return rfail(R, name, "'%s' is %lld; at least %lld needed", a ? a->expr : "(default)",
			     (long long)*out, (long long)lo);
	return KF_OK;
}

static int rtensor(const struct rctx *R, const char *name)
{
	const struct kf_libarg *a = uarg(R, name);
	return a ? a->tensor : -1;
}

static double rreal(const struct rctx *R, const char *name, double dflt)
{
	const struct kf_libarg *a = uarg(R, name);
	if (!a)
		return dflt;
	if (a->param >= 0) {
		const struct kf_param *q = &R->t->params[a->param];
		return q->dtype == KF_DTYPE_I32 || q->dtype == KF_DTYPE_I64 ? (double)q->ivalue : q->value;
	}
	return a->real;
}

static bool rflag(const struct rctx *R, const char *name)
{
	const struct kf_libarg *a = uarg(R, name);
	return a && a->flag;
}

static int rchoice(const struct rctx *R, const char *name)
{
	const struct kf_libarg *a = uarg(R, name);
	return a ? a->choice : 0;
}

static int64_t numel_of(const struct rctx *R, int tensor)
{
	int64_t n = 0;
	if (kf_task_numel(R->t, (size_t)tensor, R->s, &n, NULL))
		return -1;
	return n;
}

/* Elements a strided batch of row-major matrices touches: (batch-1)*stride + (rows-1)*ld + cols,
 * saturating at INT64_MAX. */
static int64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld, int64_t cols)
{
	int64_t a, b, r;
	if (__builtin_mul_overflow(batch - 1, stride, &a) || __builtin_mul_overflow(rows - 1, ld, &b) ||
	    __builtin_add_overflow(a, b, &r) || __builtin_add_overflow(r, cols, &r))
		return INT64_MAX;
	return r;
}

/* a*b*c*d, saturating at INT64_MAX (no tensor has that many elements) */
static int64_t mul4(int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) ||
	    __builtin_mul_overflow(r, d, &r))
		return INT64_MAX;
	return r;
}

/* One matrix operand: leading dimension at least its row length, batch stride, and the extent inside the
 * tensor. */
static enum kf_status mm_operand(struct rctx *R, const char *tname, int tensor, const char *ldname,
				 const char *stname, int64_t rows, int64_t cols, int64_t batch, int ld_pos,
				 int st_pos, bool is_output)
{
	int64_t ld, st, n, ext;
	enum kf_status e;
	if ((e = rinteger(R, ldname, cols, 1, &ld)))
		return e;
	if (ld < cols)
		return rfail(R, ldname, "%lld is less than the %lld elements of a row of '%s'", (long long)ld,
			     (long long)cols, R->t->tensors[tensor].name);
	if ((e = rinteger(R, stname, rows * ld, 0, &st)))
		return e;
	/* the batch's outputs must not overlap: a shared output would be written by every matrix */
	if (is_output && batch > 1 && st < (rows - 1) * ld + cols)
		return rfail(R, stname, "%lld: the %lld output matrices of '%s' would overlap", (long long)st,
			     (long long)batch, R->t->tensors[tensor].name);
	n = numel_of(R, tensor);
	ext = extent(batch, st, rows, ld, cols);
	if (n < 0 || ext > n)
		return rfail(R, tname, "the call reaches element %lld of '%s', which has %lld",
			     (long long)ext, R->t->tensors[tensor].name, (long long)n);
	put_int(R, ld_pos, ld);
	put_int(R, st_pos, st);
	return KF_OK;
}

static enum kf_status resolve_mm(struct rctx *R)
{
	bool lt = R->b->op == KF_LIBOP_CUBLASLT_MATMUL;
	int A = rtensor(R, "A"), B = rtensor(R, "B"), C = rtensor(R, "C"), D = lt ? rtensor(R, "D") : C;
	int bias = lt ? rtensor(R, "bias") : -1;
	int64_t M, N, K, batch;
	bool ta = rflag(R, "trans_a"), tb = rflag(R, "trans_b");
	double beta = rreal(R, "beta", 0);
	enum kf_status e;

	if ((e = rinteger(R, "M", 0, 1, &M)) || (e = rinteger(R, "N", 0, 1, &N)) ||
	    (e = rinteger(R, "K", 0, 1, &K)) || (e = rinteger(R, "batch", 1, 1, &batch)))
		return e;
	if ((e = mm_operand(R, "A", A, "lda", "stride_a", ta ? K : M, ta ? M : K, batch, KF_MM_LDA,
			    KF_MM_STRIDE_A, false)) ||
	    (e = mm_operand(R, "B", B, "ldb", "stride_b", tb ? N : K, tb ? K : N, batch, KF_MM_LDB,
			    KF_MM_STRIDE_B, false)))
		return e;
	if (lt) {
		if ((e = mm_operand(R, "D", D, "ldd", "stride_d", M, N, batch, KF_MM_LDD, KF_MM_STRIDE_D,
				    true)))
			return e;
		if (C >= 0 && (e = mm_operand(R, "C", C, "ldc", "stride_c", M, N, batch, KF_MM_LDC,
					      KF_MM_STRIDE_C, false)))
			return e;
		if (C < 0) {
			put_int(R, KF_MM_LDC, R->c->args[KF_MM_LDD].i);
			put_int(R, KF_MM_STRIDE_C, R->c->args[KF_MM_STRIDE_D].i);
		}
	} else {
		/* cublas.gemm: C is read (beta) and written in place */
		if ((e = mm_operand(R, "C", C, "ldc", "stride_c", M, N, batch, KF_MM_LDC, KF_MM_STRIDE_C,
				    true)))
			return e;
		put_int(R, KF_MM_LDD, R->c->args[KF_MM_LDC].i);
		put_int(R, KF_MM_STRIDE_D, R->c->args[KF_MM_STRIDE_C].i);
	}
	if (bias >= 0) {
		int64_t n = numel_of(R, bias);
		if (n != N)
			return rfail(R, "bias",
				     "'%s' has %lld elements; the epilogue adds one per column (N = %lld)",
				     R->t->tensors[bias].name, (long long)n, (long long)N);
	}
	put_tensor(R, KF_MM_A, A);
	put_tensor(R, KF_MM_B, B);
	put_tensor(R, KF_MM_C, beta != 0 ? C : -1);
	put_tensor(R, KF_MM_D, D);
	put_tensor(R, KF_MM_BIAS, bias);
	put_int(R, KF_MM_M, M);
	put_int(R, KF_MM_N, N);
	put_int(R, KF_MM_K, K);
	put_int(R, KF_MM_TRANS_A, ta);
	put_int(R, KF_MM_TRANS_B, tb);
	put_int(R, KF_MM_BATCH, batch);
	put_real(R, KF_MM_ALPHA, rreal(R, "alpha", 1));
	put_real(R, KF_MM_BETA, beta);
	put_int(R, KF_MM_ACTIVATION, lt ? rchoice(R, "activation") : KF_LIB_ACT_NONE);
	put_int(R, KF_MM_COMPUTE, rchoice(R, "compute"));
	put_int(R, KF_MM_DTYPE_AB, R->t->tensors[A].dtype);
	put_int(R, KF_MM_DTYPE_C, R->t->tensors[C >= 0 ? C : D].dtype);
	put_int(R, KF_MM_DTYPE_D, R->t->tensors[D].dtype);
	put_int(R, KF_MM_DTYPE_BIAS, bias >= 0 ? R->t->tensors[bias].dtype : R->t->tensors[D].dtype);
	return KF_OK;
}

static enum kf_status conv_size(struct rctx *R, const char *tname, int tensor, int64_t want, const char *how)
{
	int64_t n = numel_of(R, tensor);
	if (n != want)
		return rfail(R, tname, "'%s' has %lld elements; %s is %lld", R->t->tensors[tensor].name,
			     (long long)n, how, (long long)want);
	return KF_OK;
}

static enum kf_status resolve_conv(struct rctx *R)
{
	int x = rtensor(R, "x"), w = rtensor(R, "w"), y = rtensor(R, "y"), bias = rtensor(R, "bias"),
	    res = rtensor(R, "residual");
	int64_t N, C, H, W, K, Rr, S, g, ph, pw, sh, sw, dh, dw, P, Q;
	enum kf_status e;

	if ((e = rinteger(R, "N", 0, 1, &N)) || (e = rinteger(R, "C", 0, 1, &C)) ||
	    (e = rinteger(R, "H", 0, 1, &H)) || (e = rinteger(R, "W", 0, 1, &W)) ||
	    (e = rinteger(R, "K", 0, 1, &K)) || (e = rinteger(R, "R", 0, 1, &Rr)) ||
	    (e = rinteger(R, "S", 0, 1, &S)) || (e = rinteger(R, "groups", 1, 1, &g)) ||
	    (e = rinteger(R, "pad_h", 0, 0, &ph)) || (e = rinteger(R, "pad_w", 0, 0, &pw)) ||
	    (e = rinteger(R, "stride_h", 1, 1, &sh)) || (e = rinteger(R, "stride_w", 1, 1, &sw)) ||
	    (e = rinteger(R, "dilation_h", 1, 1, &dh)) || (e = rinteger(R, "dilation_w", 1, 1, &dw)))
		return e;
	if (C % g || K % g)
		return rfail(R, "groups", "%lld groups do not divide C = %lld and K = %lld", (long long)g,
			     (long long)C, (long long)K);
	if (N > INT32_MAX || C > INT32_MAX || H > INT32_MAX || W > INT32_MAX || K > INT32_MAX ||
	    Rr > INT32_MAX || S > INT32_MAX || ph > INT32_MAX || pw > INT32_MAX || sh > INT32_MAX ||
	    sw > INT32_MAX || dh > INT32_MAX || dw > INT32_MAX)
		return rfail(R, "N", "cuDNN takes 32-bit sizes");
	P = (H + 2 * ph - dh * (Rr - 1) - 1) / sh + 1;
	Q = (W + 2 * pw - dw * (S - 1) - 1) / sw + 1;
	if (H + 2 * ph - dh * (Rr - 1) - 1 < 0 || P < 1)
		return rfail(R, "R",
			     "a %lld-high filter (dilation %lld) does not fit H = %lld with padding %lld",
			     (long long)Rr, (long long)dh, (long long)H, (long long)ph);
	if (W + 2 * pw - dw * (S - 1) - 1 < 0 || Q < 1)
		return rfail(R, "S",
			     "a %lld-wide filter (dilation %lld) does not fit W = %lld with padding %lld",
			     (long long)S, (long long)dw, (long long)W, (long long)pw);
	if ((e = conv_size(R, "x", x, mul4(N, C, H, W), "N*C*H*W")) ||
	    (e = conv_size(R, "w", w, mul4(K, C / g, Rr, S), "K*(C/groups)*R*S")) ||
	    (e = conv_size(R, "y", y, mul4(N, K, P, Q), "N*K*P*Q (the output size)")))
		return e;
	if (bias >= 0 && (e = conv_size(R, "bias", bias, K, "K")))
		return e;
	if (res >= 0 && (e = conv_size(R, "residual", res, mul4(N, K, P, Q), "N*K*P*Q (the output size)")))
		return e;
	put_tensor(R, KF_CONV_X, x);
	put_tensor(R, KF_CONV_W, w);
	put_tensor(R, KF_CONV_Y, y);
	put_tensor(R, KF_CONV_BIAS, bias);
	put_tensor(R, KF_CONV_RESIDUAL, res);
	put_int(R, KF_CONV_N, N);
	put_int(R, KF_CONV_C, C);
	put_int(R, KF_CONV_H, H);
	put_int(R, KF_CONV_WIDTH, W);
	put_int(R, KF_CONV_K, K);
	put_int(R, KF_CONV_R, Rr);
	put_int(R, KF_CONV_S, S);
	put_int(R, KF_CONV_P, P);
	put_int(R, KF_CONV_Q, Q);
	put_int(R, KF_CONV_GROUPS, g);
	put_int(R, KF_CONV_PAD_H, ph);
	put_int(R, KF_CONV_PAD_W, pw);
	put_int(R, KF_CONV_STRIDE_H, sh);
	put_int(R, KF_CONV_STRIDE_W, sw);
	put_int(R, KF_CONV_DIL_H, dh);
	put_int(R, KF_CONV_DIL_W, dw);
	put_int(R, KF_CONV_ACTIVATION, rchoice(R, "activation"));
	put_int(R, KF_CONV_DTYPE, R->t->tensors[x].dtype);
	return KF_OK;
}

static enum kf_status resolve_sdpa(struct rctx *R)
{
	int q = rtensor(R, "q"), k = rtensor(R, "k"), v = rtensor(R, "v"), o = rtensor(R, "o");
	int64_t B, H, T, Tkv, D, Dv;
	enum kf_status e;

	if ((e = rinteger(R, "B", 0, 1, &B)) || (e = rinteger(R, "H", 0, 1, &H)) ||
	    (e = rinteger(R, "T", 0, 1, &T)) || (e = rinteger(R, "D", 0, 1, &D)) ||
	    (e = rinteger(R, "T_kv", T, 1, &Tkv)) || (e = rinteger(R, "D_v", D, 1, &Dv)))
		return e;
	if ((e = conv_size(R, "q", q, mul4(B, H, T, D), "B*H*T*D")) ||
	    (e = conv_size(R, "k", k, mul4(B, H, Tkv, D), "B*H*T_kv*D")) ||
	    (e = conv_size(R, "v", v, mul4(B, H, Tkv, Dv), "B*H*T_kv*D_v")) ||
	    (e = conv_size(R, "o", o, mul4(B, H, T, Dv), "B*H*T*D_v")))
		return e;
	put_tensor(R, KF_SDPA_Q, q);
	put_tensor(R, KF_SDPA_K, k);
	put_tensor(R, KF_SDPA_V, v);
	put_tensor(R, KF_SDPA_O, o);
	put_int(R, KF_SDPA_B, B);
	put_int(R, KF_SDPA_H, H);
	put_int(R, KF_SDPA_T, T);
	put_int(R, KF_SDPA_T_KV, Tkv);
	put_int(R, KF_SDPA_D, D);
	put_int(R, KF_SDPA_D_V, Dv);
	put_int(R, KF_SDPA_LAYOUT, rchoice(R, "layout"));
	put_real(R, KF_SDPA_SCALE, rreal(R, "scale", 1.0 / sqrt((double)D)));
	put_int(R, KF_SDPA_CAUSAL, rflag(R, "causal"));
	put_int(R, KF_SDPA_DTYPE, R->t->tensors[q].dtype);
	return KF_OK;
}

static enum kf_status resolve_norm(struct rctx *R)
{
	int x = rtensor(R, "x"), scale = rtensor(R, "scale"), bias = rtensor(R, "bias"), y = rtensor(R, "y");
	int64_t B, N;
	double eps = rreal(R, "eps", 1e-5);
	enum kf_status e;

	if ((e = rinteger(R, "B", 0, 1, &B)) || (e = rinteger(R, "N", 0, 1, &N)))
		return e;
	if (!(eps > 0) || !isfinite(eps))
		return rfail(R, "eps", "%g: cuDNN's norm needs an eps above 0", eps);
	if ((e = conv_size(R, "x", x, mul4(B, N, 1, 1), "B*N")) ||
	    (e = conv_size(R, "y", y, mul4(B, N, 1, 1), "B*N")) ||
	    (e = conv_size(R, "scale", scale, N, "N (one per element of a row)")))
		return e;
	if (bias >= 0 && (e = conv_size(R, "bias", bias, N, "N (one per element of a row)")))
		return e;
	put_tensor(R, KF_NORM_X, x);
	put_tensor(R, KF_NORM_SCALE, scale);
	put_tensor(R, KF_NORM_BIAS, bias);
	put_tensor(R, KF_NORM_Y, y);
	put_int(R, KF_NORM_B, B);
	put_int(R, KF_NORM_N, N);
	put_int(R, KF_NORM_MODE, rchoice(R, "mode"));
	put_real(R, KF_NORM_EPS, eps);
	put_int(R, KF_NORM_DTYPE, R->t->tensors[x].dtype);
	return KF_OK;
}

static enum kf_status resolve(const struct kf_baseline *b, const struct kf_task *t, const struct kf_shape *s,
			      struct kf_libcall *out, char *bad, size_t bad_len, struct kf_err *err)
{
	struct rctx R = {.b = b, .t = t, .s = s, .c = out, .err = err};
	enum kf_status st;

	memset(out, 0, sizeof(*out));
	if (b->kind != KF_BASELINE_LIBRARY || (unsigned)b->op >= KF_LIBOP_COUNT)
		return kf_err_set(err, KF_ERR_INTERNAL, "baseline '%s' is not a library call",
				  b->name ? b->name : "?");
	out->op = b->op;
	out->n_args = ops[b->op].n_wire;
	switch (b->op) {
	case KF_LIBOP_CUBLAS_GEMM:
	case KF_LIBOP_CUBLASLT_MATMUL:
		st = resolve_mm(&R);
		break;
	case KF_LIBOP_CUDNN_CONV_FWD:
		st = resolve_conv(&R);
		break;
	case KF_LIBOP_CUDNN_SDPA:
		st = resolve_sdpa(&R);
		break;
	default:
		st = resolve_norm(&R);
		break;
	}
	snprintf(bad, bad_len, "%s", R.bad);
	return st;
}

enum kf_status kf_libcall_resolve(const struct kf_baseline *b, const struct kf_task *t,
				  const struct kf_shape *s, struct kf_libcall *out, struct kf_err *err)
{
	char bad[KF_NAME_MAX] = "";
	enum kf_status st = resolve(b, t, s, out, bad, sizeof(bad), err);
	if (st && bad[0])
		kf_err_prefix(err, "%s: args.%s", b->name, bad);
	return st;
}

enum kf_status kf_libcall_plan(const struct kf_baseline *b, const struct kf_task *t, const struct kf_shape *s,
			       struct kf_plan **out, struct kf_err *err)
{
	struct kf_libcall call;
	struct kf_plan *p;
	struct kf_plan_launch *l;
	enum kf_status st;

	*out = NULL;
	if ((st = kf_libcall_resolve(b, t, s, &call, err)))
		return st;
	p = calloc(1, sizeof(*p));
	if (!p)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	p->shape = *s;
	p->n_launches = 1;
	p->n_buffers = t->n_tensors;
	p->launches = calloc(1, sizeof(*p->launches));
	p->buffers = calloc(t->n_tensors ? t->n_tensors : 1, sizeof(*p->buffers));
	if (!p->launches || !p->buffers) {
		kf_plan_free(p);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_tensors; i++) {
		struct kf_plan_buffer *pb = &p->buffers[i];
		int64_t n;
		snprintf(pb->name, sizeof(pb->name), "%s", t->tensors[i].name);
		pb->dtype = t->tensors[i].dtype;
		pb->role = t->tensors[i].role;
		if ((st = kf_task_numel(t, i, s, &n, err)) ||
		    __builtin_mul_overflow((uint64_t)n, (uint64_t)kf_dtype_size(pb->dtype), &pb->n_bytes)) {
			kf_plan_free(p);
			return st ? st
				  : kf_err_set(err, KF_ERR_RANGE, "tensor '%s': size overflows", pb->name);
		}
		pb->numel = (uint64_t)n;
	}
	l = &p->launches[0];
	snprintf(l->kernel, sizeof(l->kernel), "%c%s", KF_LIBCALL_PREFIX, kf_libop_name(b->op));
	for (int k = 0; k < 3; k++)
		l->grid[k] = l->block[k] = 1;
	l->n_args = (uint32_t)call.n_args;
	for (size_t a = 0; a < call.n_args; a++) {
		const struct kf_libval *v = &call.args[a];
		struct kf_parg *pa = &l->args[a];
		if (v->kind == KF_LIBVAL_TENSOR && v->tensor >= 0) {
			pa->kind = KF_PARG_BUFFER;
			pa->buffer = (uint32_t)v->tensor;
			continue;
		}
		pa->kind = KF_PARG_SCALAR;
		pa->size = 8;
		if (v->kind == KF_LIBVAL_REAL)
			memcpy(pa->bytes, &v->r, 8);
		else if (v->kind == KF_LIBVAL_INT)
			memcpy(pa->bytes, &v->i, 8);
		/* an absent tensor stays the integer 0 (a null device pointer) */
	}
	*out = p;
	return KF_OK;
}

/* ---- loading ---------------------------------------------------------------------------------------- */

struct bload {
	struct kf_task *t;
	struct kf_jpath *p;
	struct kf_err *err;
};

static enum kf_status at(struct bload *L, const char *key, enum kf_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum kf_status at(struct bload *L, const char *key, enum kf_status code, const char *fmt, ...)
{
	char msg[600];
	size_t m = key ? kf_jpath_push_key(L->p, key) : L->p->len;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kf_jpath_err(L->p, L->err, code, "%s", msg);
	kf_jpath_pop(L->p, m);
	return code;
}

static void list_names(enum kf_libop op, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < ops[op].n_spec && used + 1 < n; i++) {
		int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", ops[op].spec[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static enum kf_status load_arg(struct bload *L, struct kf_baseline *b, const struct argspec *sp,
			       const cJSON *v, struct kf_libarg *a)
{
	const struct kf_task *t = L->t;
	struct kf_err e = KF_ERR_INIT;

	a->tensor = a->param = -1;
	switch (sp->kind) {
	case ARG_TENSOR:
		if (!cJSON_IsString(v))
			return at(L, sp->name, KF_ERR_INVALID, "expected a tensor name, got %s",
				  kf_json_type_name(v));
		if ((a->tensor = kf_task_tensor_index(t, v->valuestring)) < 0)
			return at(L, sp->name, KF_ERR_INVALID, "unknown tensor '%s'", v->valuestring);
		break;
	case ARG_EXPR:
		if (cJSON_IsNumber(v)) {
			int64_t iv;
			char lit[32];
			size_t m = kf_jpath_push_key(L->p, sp->name);
			enum kf_status st = kf_json_as_int(v, 0, INT64_MAX / 2, &iv, L->p, L->err);
			kf_jpath_pop(L->p, m);
			if (st)
				return st;
			snprintf(lit, sizeof(lit), "%lld", (long long)iv);
			a->expr = kf_strdup(lit);
		} else if (cJSON_IsString(v)) {
			if (kf_expr_check(v->valuestring, (const char *const *)t->dims, t->n_dims, &e))
				return at(L, sp->name, KF_ERR_INVALID, "%s", e.msg);
			a->expr = kf_strdup(v->valuestring);
		} else {
			return at(L, sp->name, KF_ERR_INVALID,
				  "expected an integer expression over dims, got %s", kf_json_type_name(v));
		}
		if (!a->expr)
			return at(L, sp->name, KF_ERR_NOMEM, "out of memory");
		break;
	case ARG_REAL:
		if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
			a->real = v->valuedouble;
		} else if (cJSON_IsString(v)) {
			if ((a->param = kf_task_param_index(t, v->valuestring)) < 0)
				return at(L, sp->name, KF_ERR_INVALID, "'%s' is not a param of the task",
					  v->valuestring);
		} else {
			return at(L, sp->name, KF_ERR_INVALID, "expected a number or a param name, got %s",
				  kf_json_type_name(v));
		}
		break;
	case ARG_BOOL:
		if (!cJSON_IsBool(v))
			return at(L, sp->name, KF_ERR_INVALID, "expected true or false, got %s",
				  kf_json_type_name(v));
		a->flag = cJSON_IsTrue(v);
		break;
	case ARG_CHOICE: {
		int i = 0;
		char list[200] = "";
		if (cJSON_IsString(v))
			for (; sp->choices[i] && strcmp(sp->choices[i], v->valuestring); i++)
				;
		if (cJSON_IsString(v) && sp->choices[i]) {
			a->choice = i;
			break;
		}
		for (int k = 0; sp->choices[k]; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
				 sp->choices[k]);
		return at(L, sp->name, KF_ERR_INVALID, "expected one of %s", list);
	}
	}
	(void)b;
	a->set = true;
	return KF_OK;
}

static const struct kf_tensor *targ(const struct bload *L, const struct kf_baseline *b, const char *name)
{
	int i = spec_index(b->op, name);
	return i >= 0 && b->args[i].set && b->args[i].tensor >= 0 ? &L->t->tensors[b->args[i].tensor] : NULL;
}

static bool is_read(const struct kf_tensor *x)
{
	return x->role != KF_ROLE_OUTPUT;
}

/* What the call can express: dtypes, roles, combinations. Everything that does not depend on a shape. */
static enum kf_status check_semantics(struct bload *L, struct kf_baseline *b)
{
	static const char *const reads[] = {"A", "B", "bias", "x", "w", "residual", "q", "k", "v", "scale"};
	static const char *const writes[] = {"D", "y", "o"};
	const char *outname = b->op == KF_LIBOP_CUBLAS_GEMM ? "C" : NULL;

	for (size_t i = 0; i < KF_ARRAY_SIZE(reads); i++) {
		const struct kf_tensor *x = targ(L, b, reads[i]);
		if (x && !is_read(x))
			return at(L, reads[i], KF_ERR_INVALID,
				  "'%s' is an output (poisoned before each run); the call reads it", x->name);
	}
	for (size_t i = 0; i <= KF_ARRAY_SIZE(writes); i++) {
		const char *nm = i < KF_ARRAY_SIZE(writes) ? writes[i] : outname;
		const struct kf_tensor *x = nm ? targ(L, b, nm) : NULL;
		if (!x)
			continue;
		if (x->role == KF_ROLE_INPUT)
			return at(L, nm, KF_ERR_INVALID, "'%s' is an input; the call writes it", x->name);
		/* the output must not be one of the operands the call reads */
		for (size_t k = 0; k < KF_ARRAY_SIZE(reads); k++)
			if (targ(L, b, reads[k]) == x)
				return at(L, nm, KF_ERR_INVALID, "'%s' is also the call's '%s'", x->name,
					  reads[k]);
	}
	if (b->op == KF_LIBOP_CUBLAS_GEMM || b->op == KF_LIBOP_CUBLASLT_MATMUL) {
		const struct kf_tensor *A = targ(L, b, "A"), *B = targ(L, b, "B"), *C = targ(L, b, "C"),
				       *D = b->op == KF_LIBOP_CUBLAS_GEMM ? C : targ(L, b, "D"),
				       *bias = targ(L, b, "bias");
		int ci = spec_index(b->op, "compute"), bi = spec_index(b->op, "beta");
		enum kf_lib_compute cmp =
		    b->args[ci].set ? (enum kf_lib_compute)b->args[ci].choice : KF_LIB_COMPUTE_DEFAULT;
		bool beta_set = b->args[bi].set && (b->args[bi].param >= 0 || b->args[bi].real != 0);
		enum kf_dtype ab = A->dtype;
		if (ab != KF_DTYPE_F32 && ab != KF_DTYPE_F64 && ab != KF_DTYPE_F16 && ab != KF_DTYPE_BF16)
			return at(L, "A", KF_ERR_INVALID, "'%s' is %s; the call takes f64, f32, f16 or bf16",
				  A->name, kf_dtype_name(ab));
		if (B->dtype != ab)
			return at(L, "B", KF_ERR_INVALID, "'%s' is %s but '%s' is %s: A and B share a dtype",
				  B->name, kf_dtype_name(B->dtype), A->name, kf_dtype_name(ab));
		if (D->dtype != ab &&
		    !(D->dtype == KF_DTYPE_F32 && (ab == KF_DTYPE_F16 || ab == KF_DTYPE_BF16)))
			return at(L, b->op == KF_LIBOP_CUBLAS_GEMM ? "C" : "D", KF_ERR_INVALID,
				  "'%s' is %s; with %s inputs the output is %s%s", D->name,
				  kf_dtype_name(D->dtype), kf_dtype_name(ab), kf_dtype_name(ab),
				  ab == KF_DTYPE_F16 || ab == KF_DTYPE_BF16 ? " or f32" : "");
		if (b->op == KF_LIBOP_CUBLASLT_MATMUL && C && C->dtype != D->dtype)
			return at(L, "C", KF_ERR_INVALID, "'%s' is %s; C has the output's dtype (%s)",
				  C->name, kf_dtype_name(C->dtype), kf_dtype_name(D->dtype));
		if (bias && bias->dtype != D->dtype)
			return at(L, "bias", KF_ERR_INVALID,
				  "'%s' is %s; the bias has the output's dtype (%s)", bias->name,
				  kf_dtype_name(bias->dtype), kf_dtype_name(D->dtype));
		if (beta_set && b->op == KF_LIBOP_CUBLAS_GEMM && C->role != KF_ROLE_INOUT)
			return at(
			    L, "beta", KF_ERR_INVALID,
			    "beta is not 0 but C ('%s') is an output, poisoned before each run: make it "
			    "an inout tensor, or use cublasLt.matmul with an input C",
			    C->name);
		if (beta_set && b->op == KF_LIBOP_CUBLASLT_MATMUL && !C)
			return at(L, "beta", KF_ERR_INVALID, "beta is not 0 but there is no C to scale");
		if ((cmp == KF_LIB_COMPUTE_TF32 && ab != KF_DTYPE_F32) ||
		    (cmp == KF_LIB_COMPUTE_F16 && (ab != KF_DTYPE_F16 || D->dtype != KF_DTYPE_F16)) ||
		    (cmp == KF_LIB_COMPUTE_F64 && ab != KF_DTYPE_F64) ||
		    (ab == KF_DTYPE_F64 && cmp != KF_LIB_COMPUTE_DEFAULT && cmp != KF_LIB_COMPUTE_F64))
			return at(L, "compute", KF_ERR_INVALID, "compute '%s' does not apply to %s data",
				  computes[cmp], kf_dtype_name(ab));
		if (b->op == KF_LIBOP_CUBLASLT_MATMUL) {
			int ai = spec_index(b->op, "activation");
			if (b->args[ai].set && b->args[ai].choice != KF_LIB_ACT_NONE && ab == KF_DTYPE_F64)
				return at(L, "activation", KF_ERR_INVALID,
					  "cuBLASLt has no f64 relu or gelu epilogue");
		}
	} else if (b->op == KF_LIBOP_CUDNN_CONV_FWD) {
		static const char *const all[] = {"w", "y", "bias", "residual"};
		const struct kf_tensor *x = targ(L, b, "x");
		if (x->dtype != KF_DTYPE_F32 && x->dtype != KF_DTYPE_F64 && x->dtype != KF_DTYPE_F16 &&
		    x->dtype != KF_DTYPE_BF16)
			return at(L, "x", KF_ERR_INVALID, "'%s' is %s; cuDNN takes f64, f32, f16 or bf16",
				  x->name, kf_dtype_name(x->dtype));
		for (size_t i = 0; i < KF_ARRAY_SIZE(all); i++) {
			const struct kf_tensor *o = targ(L, b, all[i]);
			if (o && o->dtype != x->dtype)
				return at(L, all[i], KF_ERR_INVALID, "'%s' is %s; every operand is %s like x",
					  o->name, kf_dtype_name(o->dtype), kf_dtype_name(x->dtype));
		}
	} else if (b->op == KF_LIBOP_CUDNN_NORM) {
		static const char *const all[] = {"scale", "bias", "y"};
		const struct kf_tensor *x = targ(L, b, "x");
		int mi = spec_index(b->op, "mode");
		if (x->dtype != KF_DTYPE_F32 && x->dtype != KF_DTYPE_F16 && x->dtype != KF_DTYPE_BF16)
			return at(L, "x", KF_ERR_INVALID, "'%s' is %s; cuDNN's norm takes f32, f16 or bf16",
				  x->name, kf_dtype_name(x->dtype));
		for (size_t i = 0; i < KF_ARRAY_SIZE(all); i++) {
			const struct kf_tensor *o = targ(L, b, all[i]);
			if (o && o->dtype != x->dtype)
				return at(L, all[i], KF_ERR_INVALID, "'%s' is %s; every operand is %s like x",
					  o->name, kf_dtype_name(o->dtype), kf_dtype_name(x->dtype));
		}
		/* cuDNN's LayerNorm always adds a bias; its RMSNorm takes one optionally */
		if ((!b->args[mi].set || b->args[mi].choice == KF_LIB_NORM_LAYER) && !targ(L, b, "bias"))
			return at(
			    L, "bias", KF_ERR_INVALID,
			    "mode 'layer' needs a bias (cuDNN's LayerNorm adds one); a norm without one "
			    "is mode 'rms' or has no library baseline");
	} else {
		static const char *const all[] = {"k", "v", "o"};
		const struct kf_tensor *q = targ(L, b, "q");
		if (q->dtype != KF_DTYPE_F16 && q->dtype != KF_DTYPE_BF16)
			return at(L, "q", KF_ERR_INVALID,
				  "'%s' is %s; cuDNN's fused attention takes f16 or bf16 only", q->name,
				  kf_dtype_name(q->dtype));
		for (size_t i = 0; i < KF_ARRAY_SIZE(all); i++) {
			const struct kf_tensor *o = targ(L, b, all[i]);
			if (o->dtype != q->dtype)
				return at(L, all[i], KF_ERR_INVALID, "'%s' is %s; every operand is %s like q",
					  o->name, kf_dtype_name(o->dtype), kf_dtype_name(q->dtype));
		}
	}
	return KF_OK;
}

static void canon(struct kf_baseline *b, const struct kf_task *t)
{
	struct kf_buf c = KF_BUF_INIT(sizeof(b->canon) - 1);
	kf_buf_addf(&c, "%s(", kf_libop_name(b->op));
	for (size_t i = 0, n = 0; i < ops[b->op].n_spec; i++) {
		const struct argspec *sp = &ops[b->op].spec[i];
		const struct kf_libarg *a = &b->args[i];
		if (!a->set)
			continue;
		kf_buf_addf(&c, "%s%s=", n++ ? ", " : "", sp->name);
		switch (sp->kind) {
		case ARG_TENSOR:
			kf_buf_adds(&c, t->tensors[a->tensor].name);
			break;
		case ARG_EXPR:
			kf_buf_adds(&c, a->expr);
			break;
		case ARG_REAL:
			if (a->param >= 0)
				kf_buf_adds(&c, t->params[a->param].name);
			else
				kf_buf_addf(&c, "%.17g", a->real);
			break;
		case ARG_BOOL:
			kf_buf_adds(&c, a->flag ? "true" : "false");
			break;
		case ARG_CHOICE:
			kf_buf_adds(&c, sp->choices[a->choice]);
			break;
		}
	}
	kf_buf_adds(&c, ")");
	snprintf(b->canon, sizeof(b->canon), "%s", c.data ? c.data : "");
	kf_buf_release(&c);
}

static enum kf_status load_library(struct bload *L, const cJSON *o, struct kf_baseline *b)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "args"), *it;
	const char *lib = cJSON_GetObjectItemCaseSensitive(o, "library")->valuestring;
	enum kf_status st;
	char names[400];
	size_t m;

	if (!kf_libop_parse(lib, &b->op)) {
		char all[200] = "";
		for (int i = 0; i < KF_LIBOP_COUNT; i++)
			snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", i ? ", " : "",
				 kf_libop_name((enum kf_libop)i));
		return at(L, "library", KF_ERR_INVALID, "unknown library op '%s' (known: %s)", lib, all);
	}
	b->kind = KF_BASELINE_LIBRARY;
	if (!(b->name = kf_strdup(lib)))
		return at(L, NULL, KF_ERR_NOMEM, "out of memory");
	if (!args)
		return at(L, "args", KF_ERR_INVALID, "missing required field (the call's operands)");
	if (!cJSON_IsObject(args))
		return at(L, "args", KF_ERR_INVALID, "expected an object, got %s", kf_json_type_name(args));
	list_names(b->op, names, sizeof(names));
	m = kf_jpath_push_key(L->p, "args");
	st = KF_OK;
	cJSON_ArrayForEach(it, args)
	{
		int i = spec_index(b->op, it->string);
		if (i < 0) {
			st = at(L, it->string, KF_ERR_INVALID, "unknown argument of %s (it takes %s)", lib,
				names);
			break;
		}
		if ((st = load_arg(L, b, &ops[b->op].spec[i], it, &b->args[i])))
			break;
	}
	for (size_t i = 0; !st && i < ops[b->op].n_spec; i++)
		if (ops[b->op].spec[i].required && !b->args[i].set)
			st = at(L, ops[b->op].spec[i].name, KF_ERR_INVALID, "missing required argument of %s",
				lib);
	if (!st)
		st = check_semantics(L, b);
	kf_jpath_pop(L->p, m);
	if (!st)
		canon(b, L->t);
	return st;
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

static enum kf_status load_entry(struct bload *L, const cJSON *o, bool no_files, struct kf_baseline *b)
{
	static const char *const known[] = {"kernel", "library", "args"};
	const cJSON *kern, *lib;
	enum kf_status st;

	if (!cJSON_IsObject(o))
		return at(
		    L, NULL, KF_ERR_INVALID,
		    "expected an object {\"kernel\": FILE} or {\"library\": OP, \"args\": {...}}, got %s",
		    kf_json_type_name(o));
	/* always strict: a misspelt "arg" would leave the call without its operands */
	if ((st = kf_json_check_fields(o, known, KF_ARRAY_SIZE(known), true, L->p, NULL, L->err)))
		return st;
	kern = cJSON_GetObjectItemCaseSensitive(o, "kernel");
	lib = cJSON_GetObjectItemCaseSensitive(o, "library");
	if (!!kern == !!lib)
		return at(L, NULL, KF_ERR_INVALID, "%s",
			  kern ? "give either \"kernel\" or \"library\", not both"
			       : "needs \"kernel\" (a kernel file) or \"library\" (a library op)");
	if (lib) {
		if (!cJSON_IsString(lib))
			return at(L, "library", KF_ERR_INVALID, "expected a string, got %s",
				  kf_json_type_name(lib));
		return load_library(L, o, b);
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "args"))
		return at(L, "args", KF_ERR_INVALID, "only a library baseline takes args");
	if (!cJSON_IsString(kern) || !kern->valuestring[0])
		return at(L, "kernel", KF_ERR_INVALID, "expected a file name, got %s",
			  cJSON_IsString(kern) ? "an empty string" : kf_json_type_name(kern));
	b->kind = KF_BASELINE_KERNEL;
	b->name = kf_strdup(kern->valuestring);
	b->kernel = join_path(L->t->dir, kern->valuestring);
	if (!b->name || !b->kernel)
		return at(L, NULL, KF_ERR_NOMEM, "out of memory");
	if (!no_files) {
		struct stat sb;
		if (stat(b->kernel, &sb) != 0)
			return at(L, "kernel", KF_ERR_NOTFOUND, "kernel file '%s' does not exist", b->kernel);
		if (!S_ISREG(sb.st_mode))
			return at(L, "kernel", KF_ERR_INVALID, "'%s' is not a regular file", b->kernel);
	}
	return KF_OK;
}

/* Resolves a library entry at every declared shape, naming the shape and the argument on failure. */
static enum kf_status check_at_shapes(struct bload *L, const struct kf_baseline *b)
{
	const struct kf_task *t = L->t;
	for (int set = 0; set < 3; set++) {
		const struct kf_shape *sh = set == 0   ? t->shapes_public
					    : set == 1 ? t->shapes_hidden
						       : t->shapes_timing;
		size_t n = set == 0 ? t->n_public : set == 1 ? t->n_hidden : t->n_timing;
		for (size_t i = 0; i < n; i++) {
			struct kf_libcall call;
			struct kf_err e = KF_ERR_INIT;
			char bad[KF_NAME_MAX] = "", key[KF_NAME_MAX + 8], txt[256];
			if (!resolve(b, t, &sh[i], &call, bad, sizeof(bad), &e))
				continue;
			kf_shape_format(&sh[i], txt, sizeof(txt));
			snprintf(key, sizeof(key), "args.%s", bad[0] ? bad : "?");
			return at(L, key, KF_ERR_INVALID, "%s at shapes.%s[%zu] (%s)", e.msg,
				  set == 0   ? "public"
				  : set == 1 ? "hidden"
					     : "timing",
				  i, txt);
		}
	}
	return KF_OK;
}

enum kf_status kf_baselines_load(struct kf_task *t, const cJSON *root, bool no_files, struct kf_jpath *p,
				 struct kf_err *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "baselines"), *it;
	struct bload L = {.t = t, .p = p, .err = err};
	size_t n = 0, i = 0, m;
	enum kf_status st = KF_OK;

	if (arr && !cJSON_IsArray(arr))
		return at(&L, "baselines", KF_ERR_INVALID, "expected an array, got %s",
			  kf_json_type_name(arr));
	n = (t->baseline ? 1 : 0) + (arr ? (size_t)cJSON_GetArraySize(arr) : 0);
	if (n > KF_BASELINES_MAX)
		return at(&L, "baselines", KF_ERR_INVALID, "%zu baselines; at most %d", n, KF_BASELINES_MAX);
	if (!n)
		return KF_OK;
	t->baselines = calloc(n, sizeof(*t->baselines));
	if (!t->baselines)
		return at(&L, "baselines", KF_ERR_NOMEM, "out of memory");
	if (t->baseline) {
		/* the legacy field: a one-element list (docs/spec/task-format.md) */
		struct kf_baseline *b = &t->baselines[t->n_baselines++];
		const char *slash = strrchr(t->baseline, '/');
		b->kind = KF_BASELINE_KERNEL;
		b->kernel = kf_strdup(t->baseline);
		b->name = kf_strdup(slash ? slash + 1 : t->baseline);
		if (!b->kernel || !b->name)
			return at(&L, "baseline", KF_ERR_NOMEM, "out of memory");
	}
	if (!arr)
		return KF_OK;
	m = kf_jpath_push_key(p, "baselines");
	cJSON_ArrayForEach(it, arr)
	{
		size_t mi = kf_jpath_push_index(p, i++);
		struct kf_baseline *b = &t->baselines[t->n_baselines++];
		st = load_entry(&L, it, no_files, b);
		for (size_t k = 0; !st && b->kind == KF_BASELINE_KERNEL && k + 1 < t->n_baselines; k++)
			if (t->baselines[k].kernel && !strcmp(t->baselines[k].kernel, b->kernel))
				st = at(&L, "kernel", KF_ERR_INVALID, "'%s' is already a baseline%s", b->name,
					k == 0 && t->baseline ? " (the 'baseline' field)" : "");
		if (!st && b->kind == KF_BASELINE_LIBRARY)
			st = check_at_shapes(&L, b);
		kf_jpath_pop(p, mi);
		if (st)
			break;
	}
	kf_jpath_pop(p, m);
	return st;
}
