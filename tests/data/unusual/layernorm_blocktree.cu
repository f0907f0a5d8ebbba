// LayerNorm in fp32, one block per row: the mean by a tree reduction, then the mean of squared
// deviations the same way (two passes: no cancellation). Correct for offset inputs within fp32 rounding.
// kforge:launch layernorm grid=(B) block=(256) args=(x, w, b, y, N, eps)
extern "C" __global__ void layernorm(const float *x, const float *w, const float *b, float *y, int N, float eps)
{
	__shared__ float s[256];
	const float *row = x + (long long)blockIdx.x * N;
	float a = 0.0f;
	for (int i = threadIdx.x; i < N; i += 256)
		a += row[i];
	s[threadIdx.x] = a;
	__syncthreads();
	for (int k = 128; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	float mean = s[0] / N;
	__syncthreads();
	float q = 0.0f;
	for (int i = threadIdx.x; i < N; i += 256)
		q += (row[i] - mean) * (row[i] - mean);
	s[threadIdx.x] = q;
	__syncthreads();
	for (int k = 128; k > 0; k >>= 1) {
		if (threadIdx.x < k)
			s[threadIdx.x] += s[threadIdx.x + k];
		__syncthreads();
	}
	float rs = rsqrtf(s[0] / N + eps);
	for (int i = threadIdx.x; i < N; i += 256)
		y[(long long)blockIdx.x * N + i] = (row[i] - mean) * rs * w[i] + b[i];
}
