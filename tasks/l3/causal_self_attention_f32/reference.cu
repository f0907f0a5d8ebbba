// Reference: causal multi-head self-attention (minGPT's CausalSelfAttention without dropout):
// qkv = x @ w_qkv^T + b_qkv, per-head causal softmax attention, y = att @ w_o^T + b_o.
// kforge:scratch qkv f32 (B*T*3*H*D)
// kforge:scratch att f32 (B*T*H*D)
// kforge:launch linear_bt grid=(cdiv(3*H*D,16), cdiv(B*T,16)) block=(16,16) args=(x, w_qkv, b_qkv, qkv, B, T, 3, 1, H, D, 0)
// kforge:launch causal_attention grid=(cdiv(B*H*T,64)) block=(64) args=(qkv, att, B, T, H, D)
// kforge:launch linear_bt grid=(cdiv(H*D,16), cdiv(B*T,16)) block=(16,16) args=(att, w_o, b_o, y, B, T, 1, 1, H, D, 0)

/* Projections on the token stream x[B*T, K] with K = kmul*H*D: y = x @ w^T + b, w is N x K with
 * N = nmul*H*D (nn.Linear layout); act 1 applies the exact erf GELU. One thread per output element. */
extern "C" __global__ void linear_bt(const float *x, const float *w, const float *b, float *y, int B, int T,
				      int nmul, int kmul, int H, int D, int act)
{
	long long M = (long long)B * T;
	int N = nmul * H * D, K = kmul * H * D;
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	long long m = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += x[m * K + k] * w[(long long)n * K + k];
	acc += b[n];
	y[m * N + n] = act ? 0.5f * acc * (1.0f + erff(acc * 0.70710678118654752f)) : acc;
}

/* The projection back onto the residual stream: y = x @ w^T + b + res, y and res are B*T x H*D. */
extern "C" __global__ void linear_bt_residual(const float *x, const float *w, const float *b, const float *res,
					       float *y, int B, int T, int kmul, int H, int D)
{
	long long M = (long long)B * T;
	int N = H * D, K = kmul * H * D;
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	long long m = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += x[m * K + k] * w[(long long)n * K + k];
	y[m * N + n] = acc + b[n] + res[m * N + n];
}

/* Causal attention over a packed qkv[B*T, 3*C] buffer (q, k, v blocks of C = H*D columns, head h at
 * columns h*D..h*D+D-1 of each block). One thread per (b, h, i) attends to keys j <= i with scale
 * 1/sqrt(D): max pass, sum pass, then the weighted sum of values written to out[B*T, C]. */
extern "C" __global__ void causal_attention(const float *qkv, float *out, int B, int T, int H, int D)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= (long long)B * H * T)
		return;
	int i = (int)(r % T);
	int h = (int)((r / T) % H);
	long long b = r / ((long long)T * H);
	long long C = (long long)H * D;
	const float *q = qkv + (b * T + i) * 3 * C + (long long)h * D;
	float scale = 1.0f / sqrtf((float)D);
	float m = -3.402823466e+38f; /* -FLT_MAX */
	for (int j = 0; j <= i; ++j) {
		const float *k = qkv + (b * T + j) * 3 * C + C + (long long)h * D;
		float s = 0.0f;
		for (int d = 0; d < D; ++d)
			s += q[d] * k[d];
		m = fmaxf(m, s * scale);
	}
	float l = 0.0f;
	float *o = out + (b * T + i) * C + (long long)h * D;
	for (int d = 0; d < D; ++d)
		o[d] = 0.0f;
	for (int j = 0; j <= i; ++j) {
		const float *k = qkv + (b * T + j) * 3 * C + C + (long long)h * D;
		const float *v = qkv + (b * T + j) * 3 * C + 2 * C + (long long)h * D;
		float s = 0.0f;
		for (int d = 0; d < D; ++d)
			s += q[d] * k[d];
		float p = expf(s * scale - m);
		l += p;
		for (int d = 0; d < D; ++d)
			o[d] += p * v[d];
	}
	for (int d = 0; d < D; ++d)
		o[d] /= l;
}
