/* Host implementations of the task suite, one function per task, in double precision, written the
 * textbook way from each task's description (never transliterated from its CUDA reference), so that a
 * shared mistake is unlikely. Layouts are the tasks' row-major layouts. */
#include "taskref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- access by name (a missing name is a bug in this file or in a task: abort loudly) -------------- */

static double *tr_tensor(const struct taskref_io *io, const char *name)
{
	for (size_t i = 0; i < io->n_tensors; i++)
		if (strcmp(io->tensor_names[i], name) == 0)
			return io->data[i];
	fprintf(stderr, "taskref: no tensor '%s'\n", name);
	abort();
}

static int64_t tr_dim(const struct taskref_io *io, const char *name)
{
	for (size_t i = 0; i < io->n_dims; i++)
		if (strcmp(io->dim_names[i], name) == 0)
			return io->dims[i];
	fprintf(stderr, "taskref: no dim '%s'\n", name);
	abort();
}

static double tr_param(const struct taskref_io *io, const char *name)
{
	for (size_t i = 0; i < io->n_params; i++)
		if (strcmp(io->param_names[i], name) == 0)
			return io->params[i];
	fprintf(stderr, "taskref: no param '%s'\n", name);
	abort();
}

#define TS(n) tr_tensor(io, n)
#define DM(n) tr_dim(io, n)
#define PR(n) tr_param(io, n)

static double *scratch(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(double));
	if (!p)
		abort();
	return p;
}

/* ---- shared textbook pieces ---------------------------------------------------------------------- */

static double sigmoid(double v)
{
	return 1.0 / (1.0 + exp(-v));
}

static double gelu(double v)
{
	return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
}

static double silu(double v)
{
	return v * sigmoid(v);
}

/* out[M,N] = a[M,K] . b[K,N] (both as given), then + bias[N] when bias is not NULL. */
static void mm(const double *a, const double *b, double *out, int64_t M, int64_t N, int64_t K)
{
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++)
				s += a[i * K + k] * b[k * N + j];
			out[i * N + j] = s;
		}
}

/* nn.Linear: out[M,N] = x[M,K] . w[N,K]^T + bias[N] (bias may be NULL). */
static void linear(const double *x, const double *w, const double *bias, double *out, int64_t M, int64_t N,
		   int64_t K)
{
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = bias ? bias[j] : 0.0;
			for (int64_t k = 0; k < K; k++)
				s += x[i * K + k] * w[j * K + k];
			out[i * N + j] = s;
		}
}

static void softmax_vec(const double *x, double *y, int64_t n)
{
	double m = x[0];
	for (int64_t i = 1; i < n; i++)
		m = x[i] > m ? x[i] : m;
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += exp(x[i] - m);
	for (int64_t i = 0; i < n; i++)
		y[i] = exp(x[i] - m) / s;
}

static void layernorm_vec(const double *x, const double *g, const double *b, double *y, int64_t n, double eps)
{
	double mean = 0, var = 0;
	for (int64_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	for (int64_t i = 0; i < n; i++)
		var += (x[i] - mean) * (x[i] - mean);
	var /= (double)n;
	for (int64_t i = 0; i < n; i++)
		y[i] = (x[i] - mean) / sqrt(var + eps) * g[i] + b[i];
}

static void rmsnorm_vec(const double *x, const double *g, double *y, int64_t n, double eps)
{
	double ms = 0;
	for (int64_t i = 0; i < n; i++)
		ms += x[i] * x[i];
	ms /= (double)n;
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] / sqrt(ms + eps) * g[i];
}

/* Cross-correlation, 3x3, stride 1, zero padding 1: x[N,CI,H,W], w[CO,CI,3,3] -> y[N,CO,H,W] (+bias). */
static void conv3x3(const double *x, const double *w, const double *bias, double *y, int64_t N, int64_t CI,
		    int64_t CO, int64_t H, int64_t W)
{
	for (int64_t n = 0; n < N; n++)
		for (int64_t co = 0; co < CO; co++)
			for (int64_t i = 0; i < H; i++)
				for (int64_t j = 0; j < W; j++) {
					double s = bias ? bias[co] : 0.0;
					for (int64_t ci = 0; ci < CI; ci++)
						for (int64_t di = -1; di <= 1; di++)
							for (int64_t dj = -1; dj <= 1; dj++) {
								int64_t r = i + di, c = j + dj;
								if (r < 0 || r >= H || c < 0 || c >= W)
									continue;
								s += x[((n * CI + ci) * H + r) * W + c] *
								     w[((co * CI + ci) * 3 + (di + 1)) * 3 +
								       (dj + 1)];
							}
					y[((n * CO + co) * H + i) * W + j] = s;
				}
}

/* Cross-correlation, kernel 5, stride 1, zero padding 2: x[N,CI,L], w[CO,CI,5] -> y[N,CO,L] + bias. */
static void conv1d5(const double *x, const double *w, const double *bias, double *y, int64_t N, int64_t CI,
		    int64_t CO, int64_t L)
{
	for (int64_t n = 0; n < N; n++)
		for (int64_t co = 0; co < CO; co++)
			for (int64_t l = 0; l < L; l++) {
				double s = bias[co];
				for (int64_t ci = 0; ci < CI; ci++)
					for (int64_t t = -2; t <= 2; t++) {
						int64_t p = l + t;
						if (p >= 0 && p < L)
							s += x[(n * CI + ci) * L + p] *
							     w[(co * CI + ci) * 5 + (t + 2)];
					}
				y[(n * CO + co) * L + l] = s;
			}
}

/* 2x2 stride-2 pooling with ceil mode over x[NC,H,W]; avg divides by the covered count. */
static void pool2x2(const double *x, double *y, int64_t NC, int64_t H, int64_t W, int is_max)
{
	int64_t HO = (H + 1) / 2, WO = (W + 1) / 2;
	for (int64_t p = 0; p < NC; p++)
		for (int64_t i = 0; i < HO; i++)
			for (int64_t j = 0; j < WO; j++) {
				double best = -HUGE_VAL, sum = 0;
				int cnt = 0;
				for (int64_t r = 2 * i; r < 2 * i + 2 && r < H; r++)
					for (int64_t c = 2 * j; c < 2 * j + 2 && c < W; c++) {
						double v = x[(p * H + r) * W + c];
						best = v > best ? v : best;
						sum += v;
						cnt++;
					}
				y[(p * HO + i) * WO + j] = is_max ? best : sum / cnt;
			}
}

/* Multi-head causal self-attention on x[BT, C] (B sequences of T tokens), C = H*D. */
static void causal_mha(const double *x, const double *w_qkv, const double *b_qkv, const double *w_o,
		       const double *b_o, double *y, int64_t B, int64_t T, int64_t H, int64_t D)
{
	int64_t C = H * D;
	double *qkv = scratch((size_t)(B * T * 3 * C)), *att = scratch((size_t)(B * T * C));
	double *p = scratch((size_t)T);
	linear(x, w_qkv, b_qkv, qkv, B * T, 3 * C, C);
	for (int64_t b = 0; b < B; b++)
		for (int64_t h = 0; h < H; h++)
			for (int64_t i = 0; i < T; i++) {
				const double *q = qkv + (b * T + i) * 3 * C + h * D;
				for (int64_t j = 0; j <= i; j++) {
					const double *k = qkv + (b * T + j) * 3 * C + C + h * D;
					double s = 0;
					for (int64_t d = 0; d < D; d++)
						s += q[d] * k[d];
					p[j] = s / sqrt((double)D);
				}
				softmax_vec(p, p, i + 1);
				for (int64_t d = 0; d < D; d++) {
					double s = 0;
					for (int64_t j = 0; j <= i; j++)
						s += p[j] * qkv[(b * T + j) * 3 * C + 2 * C + h * D + d];
					att[(b * T + i) * C + h * D + d] = s;
				}
			}
	linear(att, w_o, b_o, y, B * T, C, C);
	free(qkv);
	free(att);
	free(p);
}

/* ---- level 1 ------------------------------------------------------------------------------------- */

static void ref_matmul_square(const struct taskref_io *io)
{
	int64_t n = DM("N");
	mm(TS("A"), TS("B"), TS("C"), n, n, n);
}

static void ref_matmul_mnk(const struct taskref_io *io)
{
	mm(TS("A"), TS("B"), TS("C"), DM("M"), DM("N"), DM("K"));
}

static void ref_matmul_batched(const struct taskref_io *io)
{
	int64_t BA = DM("BATCH"), M = DM("M"), N = DM("N"), K = DM("K");
	for (int64_t b = 0; b < BA; b++)
		mm(TS("A") + b * M * K, TS("B") + b * K * N, TS("C") + b * M * N, M, N, K);
}

static void ref_matvec(const struct taskref_io *io)
{
	mm(TS("A"), TS("x"), TS("y"), DM("M"), 1, DM("K"));
}

static void ref_matmul_transposed_a(const struct taskref_io *io)
{
	int64_t M = DM("M"), N = DM("N"), K = DM("K");
	const double *A = TS("A"), *B = TS("B");
	double *At = scratch((size_t)(M * K));
	for (int64_t k = 0; k < K; k++)
		for (int64_t m = 0; m < M; m++)
			At[m * K + k] = A[k * M + m];
	mm(At, B, TS("C"), M, N, K);
	free(At);
}

static void ref_matmul_transposed_b(const struct taskref_io *io)
{
	linear(TS("A"), TS("B"), NULL, TS("C"), DM("M"), DM("N"), DM("K"));
}

/* element-wise activations over B*D values */
#define ACT(fname, expr)                                                                                     \
	static void fname(const struct taskref_io *io)                                                       \
	{                                                                                                    \
		const double *in = TS("x");                                                                  \
		double *out = TS("y");                                                                       \
		int64_t n = DM("B") * DM("D");                                                               \
		for (int64_t i = 0; i < n; i++) {                                                            \
			double x = in[i];                                                                    \
			out[i] = (expr);                                                                     \
		}                                                                                            \
	}
ACT(ref_relu, x > 0 ? x : 0.0)
ACT(ref_leaky_relu, x >= 0 ? x : PR("negative_slope") * x)
ACT(ref_gelu, gelu(x))
ACT(ref_silu, silu(x))
ACT(ref_tanh, tanh(x))
ACT(ref_sigmoid, sigmoid(x))
ACT(ref_softplus, x > 700 ? x : log1p(exp(x)))
ACT(ref_elu, x > 0 ? x : PR("alpha") * (exp(x) - 1.0))

/* reductions over the middle dim of x[B,R,C] */
static void reduce_mid(const struct taskref_io *io, int op)
{
	int64_t B = DM("B"), R = DM("R"), C = DM("C");
	const double *x = TS("x");
	double *y = op == 4 ? TS("idx") : TS("y");
	for (int64_t b = 0; b < B; b++)
		for (int64_t c = 0; c < C; c++) {
			double s = 0, mx = x[b * R * C + c], mn = mx;
			int64_t arg = 0;
			for (int64_t r = 0; r < R; r++) {
				double v = x[(b * R + r) * C + c];
				s += v;
				if (v > mx) {
					mx = v;
					arg = r;
				}
				mn = v < mn ? v : mn;
			}
			y[b * C + c] = op == 0   ? s
				       : op == 1 ? s / (double)R
				       : op == 2 ? mx
				       : op == 3 ? mn
						 : (double)arg;
		}
}
static void ref_sum_reduce(const struct taskref_io *io)
{
	reduce_mid(io, 0);
}
static void ref_mean_reduce(const struct taskref_io *io)
{
	reduce_mid(io, 1);
}
static void ref_max_reduce(const struct taskref_io *io)
{
	reduce_mid(io, 2);
}
static void ref_min_reduce(const struct taskref_io *io)
{
	reduce_mid(io, 3);
}
static void ref_argmax(const struct taskref_io *io)
{
	reduce_mid(io, 4);
}

static void ref_softmax(const struct taskref_io *io)
{
	int64_t B = DM("B"), N = DM("N");
	for (int64_t b = 0; b < B; b++)
		softmax_vec(TS("x") + b * N, TS("y") + b * N, N);
}

static void ref_log_softmax(const struct taskref_io *io)
{
	int64_t B = DM("B"), N = DM("N");
	const double *x = TS("x");
	double *y = TS("y");
	for (int64_t b = 0; b < B; b++) {
		const double *r = x + b * N;
		double m = r[0], s = 0;
		for (int64_t i = 1; i < N; i++)
			m = r[i] > m ? r[i] : m;
		for (int64_t i = 0; i < N; i++)
			s += exp(r[i] - m);
		for (int64_t i = 0; i < N; i++)
			y[b * N + i] = r[i] - (m + log(s));
	}
}

static void ref_layernorm(const struct taskref_io *io)
{
	int64_t B = DM("B"), N = DM("N");
	for (int64_t b = 0; b < B; b++)
		layernorm_vec(TS("x") + b * N, TS("weight"), TS("bias"), TS("y") + b * N, N, PR("eps"));
}

static void ref_rmsnorm(const struct taskref_io *io)
{
	int64_t B = DM("B"), N = DM("N");
	for (int64_t b = 0; b < B; b++)
		rmsnorm_vec(TS("x") + b * N, TS("weight"), TS("y") + b * N, N, PR("eps"));
}

static void ref_batchnorm(const struct taskref_io *io)
{
	int64_t N = DM("N"), C = DM("C"), S = DM("S");
	const double *x = TS("x"), *mu = TS("running_mean"), *var = TS("running_var"), *g = TS("weight"),
		     *b = TS("bias");
	double *y = TS("y");
	for (int64_t n = 0; n < N; n++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t s = 0; s < S; s++) {
				int64_t i = (n * C + c) * S + s;
				y[i] = g[c] * (x[i] - mu[c]) / sqrt(var[c] + PR("eps")) + b[c];
			}
}

static void ref_conv1d(const struct taskref_io *io)
{
	conv1d5(TS("x"), TS("w"), TS("b"), TS("y"), DM("N"), DM("CI"), DM("CO"), DM("L"));
}

static void ref_conv2d(const struct taskref_io *io)
{
	conv3x3(TS("x"), TS("w"), TS("b"), TS("y"), DM("N"), DM("CI"), DM("CO"), DM("H"), DM("W"));
}

static void ref_depthwise_conv2d(const struct taskref_io *io)
{
	/* depthwise = an ordinary 3x3 convolution of each channel alone */
	int64_t N = DM("N"), C = DM("C"), H = DM("H"), W = DM("W");
	for (int64_t n = 0; n < N; n++)
		for (int64_t c = 0; c < C; c++)
			conv3x3(TS("x") + (n * C + c) * H * W, TS("w") + c * 9, TS("b") + c,
				TS("y") + (n * C + c) * H * W, 1, 1, 1, H, W);
}

static void ref_maxpool2d(const struct taskref_io *io)
{
	pool2x2(TS("x"), TS("y"), DM("N") * DM("C"), DM("H"), DM("W"), 1);
}

static void ref_avgpool2d(const struct taskref_io *io)
{
	pool2x2(TS("x"), TS("y"), DM("N") * DM("C"), DM("H"), DM("W"), 0);
}

static void ref_cumsum(const struct taskref_io *io)
{
	int64_t B = DM("B"), N = DM("N");
	const double *x = TS("x");
	double *y = TS("y");
	for (int64_t b = 0; b < B; b++)
		for (int64_t i = 0; i < N; i++)
			y[b * N + i] = (i ? y[b * N + i - 1] : 0.0) + x[b * N + i];
}

static void ref_cross_entropy(const struct taskref_io *io)
{
	int64_t B = DM("B"), V = DM("V");
	const double *x = TS("logits"), *t = TS("targets");
	double total = 0;
	/* -log softmax(x)[t] as logsumexp(x) - x[t]: the probability itself underflows for a target far
	 * below the row's maximum */
	for (int64_t b = 0; b < B; b++) {
		const double *r = x + b * V;
		double m = r[0], s = 0;
		for (int64_t i = 1; i < V; i++)
			m = r[i] > m ? r[i] : m;
		for (int64_t i = 0; i < V; i++)
			s += exp(r[i] - m);
		total += m + log(s) - r[(int64_t)t[b]];
	}
	TS("loss")[0] = total / (double)B;
}

static void ref_mse_loss(const struct taskref_io *io)
{
	int64_t n = DM("B") * DM("N");
	const double *p = TS("pred"), *t = TS("target");
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += (p[i] - t[i]) * (p[i] - t[i]);
	TS("loss")[0] = s / (double)n;
}

static void ref_cosine_similarity(const struct taskref_io *io)
{
	int64_t B = DM("B"), D = DM("D");
	double eps = PR("eps");
	for (int64_t b = 0; b < B; b++) {
		const double *u = TS("a") + b * D, *v = TS("b") + b * D;
		double dot = 0, nu = 0, nv = 0;
		for (int64_t i = 0; i < D; i++) {
			dot += u[i] * v[i];
			nu += u[i] * u[i];
			nv += v[i] * v[i];
		}
		TS("y")[b] = dot / (fmax(sqrt(nu), eps) * fmax(sqrt(nv), eps));
	}
}

static void ref_l2_normalize(const struct taskref_io *io)
{
	int64_t B = DM("B"), D = DM("D");
	for (int64_t b = 0; b < B; b++) {
		const double *x = TS("x") + b * D;
		double n2 = 0;
		for (int64_t i = 0; i < D; i++)
			n2 += x[i] * x[i];
		double nrm = fmax(sqrt(n2), PR("eps"));
		for (int64_t i = 0; i < D; i++)
			TS("y")[b * D + i] = x[i] / nrm;
	}
}

static void ref_transpose(const struct taskref_io *io)
{
	int64_t M = DM("M"), N = DM("N");
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++)
			TS("y")[j * M + i] = TS("x")[i * N + j];
}

static void ref_embedding(const struct taskref_io *io)
{
	int64_t T = DM("T"), D = DM("D");
	for (int64_t t = 0; t < T; t++)
		memcpy(TS("y") + t * D, TS("table") + (int64_t)TS("idx")[t] * D, (size_t)D * sizeof(double));
}

static void ref_sdpa(const struct taskref_io *io)
{
	int64_t BH = DM("B") * DM("H"), T = DM("T"), D = DM("D");
	double *s = scratch((size_t)(T * T)), *p = scratch((size_t)(T * T));
	for (int64_t g = 0; g < BH; g++) {
		const double *q = TS("q") + g * T * D, *k = TS("k") + g * T * D, *v = TS("v") + g * T * D;
		linear(q, k, NULL, s, T, T, D); /* q k^T */
		for (int64_t i = 0; i < T * T; i++)
			s[i] /= sqrt((double)D);
		for (int64_t i = 0; i < T; i++)
			softmax_vec(s + i * T, p + i * T, T);
		mm(p, v, TS("o") + g * T * D, T, D, T);
	}
	free(s);
	free(p);
}

/* ---- level 2 ------------------------------------------------------------------------------------- */

/* h = x w^T + b, then y = f(h, i) for each element */
static double *gemm_bias(const struct taskref_io *io)
{
	int64_t M = DM("M"), N = DM("N"), K = DM("K");
	double *h = scratch((size_t)(M * N));
	linear(TS("x"), TS("w"), TS("b"), h, M, N, K);
	return h;
}

#define GEMM_EPI(fname, expr)                                                                                \
	static void fname(const struct taskref_io *io)                                                       \
	{                                                                                                    \
		double *hh = gemm_bias(io);                                                                  \
		int64_t n = DM("M") * DM("N");                                                               \
		for (int64_t i = 0; i < n; i++) {                                                            \
			double h = hh[i];                                                                    \
			TS("y")[i] = (expr);                                                                 \
		}                                                                                            \
		free(hh);                                                                                    \
	}
GEMM_EPI(ref_gemm_bias_relu, h > 0 ? h : 0.0)
GEMM_EPI(ref_gemm_bias_gelu, gelu(h))
GEMM_EPI(ref_gemm_bias_tanh_scale, PR("scale") * tanh(h))
GEMM_EPI(ref_gemm_scale_residual, PR("scale") * h + TS("r")[i])
GEMM_EPI(ref_gemm_sigmoid_scale_residual, h + PR("scale") * sigmoid(h))

static void ref_swiglu(const struct taskref_io *io)
{
	int64_t M = DM("M"), N = DM("N"), K = DM("K");
	double *g = scratch((size_t)(M * N)), *u = scratch((size_t)(M * N));
	linear(TS("x"), TS("wg"), NULL, g, M, N, K);
	linear(TS("x"), TS("wu"), NULL, u, M, N, K);
	for (int64_t i = 0; i < M * N; i++)
		TS("y")[i] = silu(g[i]) * u[i];
	free(g);
	free(u);
}

static void ref_gemm_bias_layernorm(const struct taskref_io *io)
{
	double *h = gemm_bias(io);
	int64_t M = DM("M"), N = DM("N");
	for (int64_t m = 0; m < M; m++)
		layernorm_vec(h + m * N, TS("gamma"), TS("beta"), TS("y") + m * N, N, PR("eps"));
	free(h);
}

static void ref_gemm_bias_rmsnorm(const struct taskref_io *io)
{
	double *h = gemm_bias(io);
	int64_t M = DM("M"), N = DM("N");
	for (int64_t m = 0; m < M; m++)
		rmsnorm_vec(h + m * N, TS("gamma"), TS("y") + m * N, N, PR("eps"));
	free(h);
}

static void ref_gemm_bias_softmax(const struct taskref_io *io)
{
	double *h = gemm_bias(io);
	int64_t M = DM("M"), N = DM("N");
	for (int64_t m = 0; m < M; m++)
		softmax_vec(h + m * N, TS("y") + m * N, N);
	free(h);
}

static void ref_bmm_scale_softmax(const struct taskref_io *io)
{
	int64_t BA = DM("BATCH"), M = DM("M"), N = DM("N"), D = DM("D");
	double *s = scratch((size_t)(M * N));
	for (int64_t b = 0; b < BA; b++) {
		linear(TS("q") + b * M * D, TS("k") + b * N * D, NULL, s, M, N, D);
		for (int64_t i = 0; i < M * N; i++)
			s[i] *= PR("scale");
		for (int64_t m = 0; m < M; m++)
			softmax_vec(s + m * N, TS("y") + (b * M + m) * N, N);
	}
	free(s);
}

static double *conv_out(const struct taskref_io *io)
{
	int64_t N = DM("N"), CO = DM("CO"), H = DM("H"), W = DM("W");
	double *y = scratch((size_t)(N * CO * H * W));
	conv3x3(TS("x"), TS("w"), TS("b"), y, N, DM("CI"), CO, H, W);
	return y;
}

static void ref_conv2d_bias_relu(const struct taskref_io *io)
{
	double *c = conv_out(io);
	int64_t n = DM("N") * DM("CO") * DM("H") * DM("W");
	for (int64_t i = 0; i < n; i++)
		TS("y")[i] = c[i] > 0 ? c[i] : 0;
	free(c);
}

static void ref_conv2d_bias_residual_relu(const struct taskref_io *io)
{
	double *c = conv_out(io);
	int64_t n = DM("N") * DM("CO") * DM("H") * DM("W");
	for (int64_t i = 0; i < n; i++) {
		double v = c[i] + TS("r")[i];
		TS("y")[i] = v > 0 ? v : 0;
	}
	free(c);
}

static void ref_conv2d_bn_relu(const struct taskref_io *io)
{
	double *c = conv_out(io);
	int64_t N = DM("N"), CO = DM("CO"), HW = DM("H") * DM("W");
	for (int64_t n = 0; n < N; n++)
		for (int64_t co = 0; co < CO; co++)
			for (int64_t s = 0; s < HW; s++) {
				int64_t i = (n * CO + co) * HW + s;
				double v = TS("gamma")[co] * (c[i] - TS("bn_mean")[co]) /
					       sqrt(TS("bn_var")[co] + PR("eps")) +
					   TS("beta")[co];
				TS("y")[i] = v > 0 ? v : 0;
			}
	free(c);
}

static void ref_conv1d_bias_gelu(const struct taskref_io *io)
{
	int64_t n = DM("N") * DM("CO") * DM("L");
	conv1d5(TS("x"), TS("w"), TS("b"), TS("y"), DM("N"), DM("CI"), DM("CO"), DM("L"));
	for (int64_t i = 0; i < n; i++)
		TS("y")[i] = gelu(TS("y")[i]);
}

static void ref_conv2d_relu_maxpool(const struct taskref_io *io)
{
	double *c = conv_out(io);
	int64_t n = DM("N") * DM("CO") * DM("H") * DM("W");
	for (int64_t i = 0; i < n; i++)
		c[i] = c[i] > 0 ? c[i] : 0;
	pool2x2(c, TS("y"), DM("N") * DM("CO"), DM("H"), DM("W"), 1);
	free(c);
}

/* ---- level 3 ------------------------------------------------------------------------------------- */

static void ref_mlp_relu(const struct taskref_io *io)
{
	int64_t B = DM("B"), D = DM("D"), H = DM("H"), O = DM("O");
	double *h1 = scratch((size_t)(B * H)), *h2 = scratch((size_t)(B * H));
	linear(TS("x"), TS("w1"), TS("b1"), h1, B, H, D);
	for (int64_t i = 0; i < B * H; i++)
		h1[i] = fmax(h1[i], 0.0);
	linear(h1, TS("w2"), TS("b2"), h2, B, H, H);
	for (int64_t i = 0; i < B * H; i++)
		h2[i] = fmax(h2[i], 0.0);
	linear(h2, TS("w3"), TS("b3"), TS("y"), B, O, H);
	free(h1);
	free(h2);
}

static void ref_causal_self_attention(const struct taskref_io *io)
{
	causal_mha(TS("x"), TS("w_qkv"), TS("b_qkv"), TS("w_o"), TS("b_o"), TS("y"), DM("B"), DM("T"),
		   DM("H"), DM("D"));
}

static void ref_transformer_layer(const struct taskref_io *io)
{
	int64_t BT = DM("B") * DM("T"), C = DM("H") * DM("D");
	double eps = PR("eps");
	double *a = scratch((size_t)(BT * C)), *att = scratch((size_t)(BT * C)),
	       *x1 = scratch((size_t)(BT * C));
	double *hid = scratch((size_t)(BT * 4 * C)), *mlp = scratch((size_t)(BT * C));
	const double *x = TS("x");
	for (int64_t r = 0; r < BT; r++)
		layernorm_vec(x + r * C, TS("ln1_w"), TS("ln1_b"), a + r * C, C, eps);
	causal_mha(a, TS("w_qkv"), TS("b_qkv"), TS("w_o"), TS("b_o"), att, DM("B"), DM("T"), DM("H"),
		   DM("D"));
	for (int64_t i = 0; i < BT * C; i++)
		x1[i] = x[i] + att[i];
	for (int64_t r = 0; r < BT; r++)
		layernorm_vec(x1 + r * C, TS("ln2_w"), TS("ln2_b"), a + r * C, C, eps);
	linear(a, TS("w_fc"), TS("b_fc"), hid, BT, 4 * C, C);
	for (int64_t i = 0; i < BT * 4 * C; i++)
		hid[i] = gelu(hid[i]);
	linear(hid, TS("w_proj"), TS("b_proj"), mlp, BT, C, 4 * C);
	for (int64_t i = 0; i < BT * C; i++)
		TS("y")[i] = x1[i] + mlp[i];
	free(a);
	free(att);
	free(x1);
	free(hid);
	free(mlp);
}

static void bn_inplace(double *v, int64_t N, int64_t C, int64_t HW, const double *mu, const double *var,
		       const double *g, const double *b, double eps)
{
	for (int64_t n = 0; n < N; n++)
		for (int64_t c = 0; c < C; c++)
			for (int64_t s = 0; s < HW; s++) {
				double *p = &v[(n * C + c) * HW + s];
				*p = (*p - mu[c]) / sqrt(var[c] + eps) * g[c] + b[c];
			}
}

static void ref_conv_residual_block(const struct taskref_io *io)
{
	int64_t N = DM("N"), C = DM("C"), H = DM("H"), W = DM("W"), tot = N * C * H * W;
	double eps = PR("eps");
	double *a = scratch((size_t)tot), *c2 = scratch((size_t)tot);
	conv3x3(TS("x"), TS("w1"), NULL, a, N, C, C, H, W);
	bn_inplace(a, N, C, H * W, TS("bn1_mean"), TS("bn1_var"), TS("bn1_w"), TS("bn1_b"), eps);
	for (int64_t i = 0; i < tot; i++)
		a[i] = fmax(a[i], 0.0);
	conv3x3(a, TS("w2"), NULL, c2, N, C, C, H, W);
	bn_inplace(c2, N, C, H * W, TS("bn2_mean"), TS("bn2_var"), TS("bn2_w"), TS("bn2_b"), eps);
	for (int64_t i = 0; i < tot; i++)
		TS("y")[i] = fmax(c2[i] + TS("x")[i], 0.0);
	free(a);
	free(c2);
}

static void ref_lstm_cell(const struct taskref_io *io)
{
	int64_t B = DM("B"), I = DM("I"), H = DM("H");
	double *gi = scratch((size_t)(B * 4 * H)), *gh = scratch((size_t)(B * 4 * H));
	linear(TS("x"), TS("w_ih"), TS("b_ih"), gi, B, 4 * H, I);
	linear(TS("h"), TS("w_hh"), TS("b_hh"), gh, B, 4 * H, H);
	for (int64_t b = 0; b < B; b++)
		for (int64_t j = 0; j < H; j++) {
			double g[4];
			for (int q = 0; q < 4; q++)
				g[q] = gi[b * 4 * H + q * H + j] + gh[b * 4 * H + q * H + j];
			double c = sigmoid(g[1]) * TS("c")[b * H + j] + sigmoid(g[0]) * tanh(g[2]);
			TS("c_out")[b * H + j] = c;
			TS("h_out")[b * H + j] = sigmoid(g[3]) * tanh(c);
		}
	free(gi);
	free(gh);
}

static void ref_gru_cell(const struct taskref_io *io)
{
	int64_t B = DM("B"), I = DM("I"), H = DM("H");
	double *gi = scratch((size_t)(B * 3 * H)), *gh = scratch((size_t)(B * 3 * H));
	linear(TS("x"), TS("w_ih"), TS("b_ih"), gi, B, 3 * H, I);
	linear(TS("h"), TS("w_hh"), TS("b_hh"), gh, B, 3 * H, H);
	for (int64_t b = 0; b < B; b++)
		for (int64_t j = 0; j < H; j++) {
			const double *a = gi + b * 3 * H, *c = gh + b * 3 * H;
			double r = sigmoid(a[j] + c[j]);
			double z = sigmoid(a[H + j] + c[H + j]);
			double n = tanh(a[2 * H + j] + r * c[2 * H + j]);
			TS("h_out")[b * H + j] = (1 - z) * n + z * TS("h")[b * H + j];
		}
	free(gi);
	free(gh);
}

static void ref_selective_scan(const struct taskref_io *io)
{
	int64_t B = DM("B"), L = DM("L"), D = DM("D"), N = DM("N");
	double *h = scratch((size_t)N);
	const double *u = TS("u"), *dr = TS("delta_raw"), *A = TS("A"), *Bm = TS("Bm"), *Cm = TS("Cm");
	for (int64_t b = 0; b < B; b++)
		for (int64_t d = 0; d < D; d++) {
			memset(h, 0, (size_t)N * sizeof(double));
			for (int64_t t = 0; t < L; t++) {
				int64_t i = (b * L + t) * D + d;
				double z = dr[i] + TS("delta_bias")[d];
				double delta = z > 700 ? z : log1p(exp(z));
				double y = TS("Dskip")[d] * u[i];
				for (int64_t n = 0; n < N; n++) {
					h[n] = exp(delta * A[d * N + n]) * h[n] +
					       delta * Bm[(b * L + t) * N + n] * u[i];
					y += Cm[(b * L + t) * N + n] * h[n];
				}
				TS("y")[i] = y;
			}
		}
	free(h);
}

/* ---- the table ----------------------------------------------------------------------------------- */

static const struct taskref_entry table[] = {
    {"matmul_square_f32", ref_matmul_square},
    {"matmul_square_f16", ref_matmul_square},
    {"matmul_square_bf16", ref_matmul_square},
    {"matmul_tall_skinny_f32", ref_matmul_mnk},
    {"matmul_batched_f32", ref_matmul_batched},
    {"matvec_f32", ref_matvec},
    {"matmul_transposed_a_f32", ref_matmul_transposed_a},
    {"matmul_transposed_b_f32", ref_matmul_transposed_b},
    {"relu_f32", ref_relu},
    {"leaky_relu_f32", ref_leaky_relu},
    {"gelu_f32", ref_gelu},
    {"silu_f32", ref_silu},
    {"tanh_f32", ref_tanh},
    {"sigmoid_f32", ref_sigmoid},
    {"softplus_f32", ref_softplus},
    {"elu_f32", ref_elu},
    {"sum_reduce_f32", ref_sum_reduce},
    {"mean_reduce_f32", ref_mean_reduce},
    {"max_reduce_f32", ref_max_reduce},
    {"min_reduce_f32", ref_min_reduce},
    {"argmax_f32", ref_argmax},
    {"softmax_f32", ref_softmax},
    {"softmax_f16", ref_softmax},
    {"log_softmax_f32", ref_log_softmax},
    {"layernorm_f32", ref_layernorm},
    {"layernorm_f16", ref_layernorm},
    {"rmsnorm_f32", ref_rmsnorm},
    {"rmsnorm_bf16", ref_rmsnorm},
    {"batchnorm_inference_f32", ref_batchnorm},
    {"conv1d_f32", ref_conv1d},
    {"conv2d_f32", ref_conv2d},
    {"depthwise_conv2d_f32", ref_depthwise_conv2d},
    {"maxpool2d_f32", ref_maxpool2d},
    {"avgpool2d_f32", ref_avgpool2d},
    {"cumsum_f32", ref_cumsum},
    {"cross_entropy_f32", ref_cross_entropy},
    {"mse_loss_f32", ref_mse_loss},
    {"cosine_similarity_f32", ref_cosine_similarity},
    {"l2_normalize_f32", ref_l2_normalize},
    {"transpose_f32", ref_transpose},
    {"embedding_f32", ref_embedding},
    {"sdpa_f32", ref_sdpa},
    {"sdpa_f16", ref_sdpa},
    {"sdpa_bf16", ref_sdpa},
    {"gemm_bias_relu_f32", ref_gemm_bias_relu},
    {"gemm_bias_gelu_bf16", ref_gemm_bias_gelu},
    {"gemm_bias_tanh_scale_f32", ref_gemm_bias_tanh_scale},
    {"gemm_scale_residual_f32", ref_gemm_scale_residual},
    {"gemm_sigmoid_scale_residual_f32", ref_gemm_sigmoid_scale_residual},
    {"swiglu_f32", ref_swiglu},
    {"swiglu_f16", ref_swiglu},
    {"gemm_bias_layernorm_f32", ref_gemm_bias_layernorm},
    {"gemm_bias_rmsnorm_f32", ref_gemm_bias_rmsnorm},
    {"gemm_bias_softmax_f32", ref_gemm_bias_softmax},
    {"bmm_scale_softmax_f32", ref_bmm_scale_softmax},
    {"conv2d_bias_relu_f32", ref_conv2d_bias_relu},
    {"conv2d_bias_residual_relu_f32", ref_conv2d_bias_residual_relu},
    {"conv2d_bn_relu_f32", ref_conv2d_bn_relu},
    {"conv1d_bias_gelu_f32", ref_conv1d_bias_gelu},
    {"conv2d_relu_maxpool_f32", ref_conv2d_relu_maxpool},
    {"mlp_relu_f32", ref_mlp_relu},
    {"causal_self_attention_f32", ref_causal_self_attention},
    {"transformer_layer_f32", ref_transformer_layer},
    {"conv_residual_block_f32", ref_conv_residual_block},
    {"lstm_cell_f32", ref_lstm_cell},
    {"gru_cell_f32", ref_gru_cell},
    {"selective_scan_f32", ref_selective_scan},
};

taskref_fn taskref_find(const char *task)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].task, task) == 0)
			return table[i].fn;
	return NULL;
}

const struct taskref_entry *taskref_table(size_t *n)
{
	*n = sizeof table / sizeof table[0];
	return table;
}
