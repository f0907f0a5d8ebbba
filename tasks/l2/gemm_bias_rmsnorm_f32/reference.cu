// Reference: Linear + bias, then RMSNorm over each output row. Launch 1 writes h = x @ w^T + b to scratch;
// launch 2 scales each row by 1/sqrt(mean(h^2) + eps) and the weight (one thread per row).
// kforge:scratch h f32 (M*N)
// kforge:launch linear_bias grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(x, w, b, h, M, N, K)
// kforge:launch rmsnorm_rows grid=(cdiv(M,128)) block=(128) args=(h, gamma, y, M, N, eps)

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

extern "C" __global__ void rmsnorm_rows(const float *h, const float *gamma, float *y, int M, int N, float eps)
{
	int m = blockIdx.x * blockDim.x + threadIdx.x;
	if (m >= M)
		return;
	const float *hr = h + (long long)m * N;
	float sq = 0.0f;
	for (int n = 0; n < N; ++n)
		sq += hr[n] * hr[n];
	float rrms = 1.0f / sqrtf(sq / (float)N + eps);
	for (int n = 0; n < N; ++n)
		y[(long long)m * N + n] = hr[n] * rrms * gamma[n];
}
