// Reference: Linear + bias, then LayerNorm over each output row. Launch 1 writes h = x @ w^T + b to
// scratch; launch 2 normalises each row of h (one thread per row, two-pass statistics).
// kforge:scratch h f32 (M*N)
// kforge:launch linear_bias grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(x, w, b, h, M, N, K)
// kforge:launch layernorm_rows grid=(cdiv(M,128)) block=(128) args=(h, gamma, beta, y, M, N, eps)

/* h = x @ w^T + b (w is N x K), one thread per element, f32 in increasing k. */
extern "C" __global__ void linear_bias(const float *x, const float *w, const float *b, float *h, int M, int N,
					int K)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += x[(long long)m * K + k] * w[(long long)n * K + k];
	h[(long long)m * N + n] = acc + b[n];
}

extern "C" __global__ void layernorm_rows(const float *h, const float *gamma, const float *beta, float *y, int M,
					   int N, float eps)
{
	int m = blockIdx.x * blockDim.x + threadIdx.x;
	if (m >= M)
		return;
	const float *hr = h + (long long)m * N;
	/* statistics in double: rows with a mean far above their spread (offset activations) or constant
	 * rows cancel in f32 */
	double sum = 0.0;
	for (int n = 0; n < N; ++n)
		sum += hr[n];
	double mean = sum / N;
	double sq = 0.0;
	for (int n = 0; n < N; ++n)
		sq += (hr[n] - mean) * (hr[n] - mean);
	double rstd = 1.0 / sqrt(sq / N + (double)eps);
	for (int n = 0; n < N; ++n)
		y[(long long)m * N + n] = (float)((hr[n] - mean) * rstd * gamma[n] + beta[n]);
}
