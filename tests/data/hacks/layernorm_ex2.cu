// LayerNorm with the variance as E[x^2] - E[x]^2 in fp32 (one block per row, tree reductions): right
// for zero-mean inputs, but for activations around 300 with std 1 the two sums cancel catastrophically.
// kforge:launch layernorm grid=(B) block=(256) args=(x, w, b, y, N, eps)
extern "C" __global__ void layernorm(const float *x, const float *w, const float *b, float *y, int N, float eps)
{
	__shared__ float s1[256], s2[256];
	const float *row = x + (long long)blockIdx.x * N;
	float a = 0.0f, q = 0.0f;
	for (int i = threadIdx.x; i < N; i += 256) {
		a += row[i];
		q += row[i] * row[i];
	}
	s1[threadIdx.x] = a;
	s2[threadIdx.x] = q;
	__syncthreads();
	for (int k = 128; k > 0; k >>= 1) {
		if (threadIdx.x < k) {
			s1[threadIdx.x] += s1[threadIdx.x + k];
			s2[threadIdx.x] += s2[threadIdx.x + k];
		}
		__syncthreads();
	}
	float mean = s1[0] / N, var = s2[0] / N - mean * mean;
	float rs = rsqrtf(var + eps);
	for (int i = threadIdx.x; i < N; i += 256)
		y[(long long)blockIdx.x * N + i] = (row[i] - mean) * rs * w[i] + b[i];
}
