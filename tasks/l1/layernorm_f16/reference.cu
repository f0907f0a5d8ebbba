// Reference: LayerNorm over the last dimension of x[B, N] with weight and bias, one thread per row, two
// passes for the statistics (mean, then the mean of squared deviations: no cancellation), biased variance.
// Storage is f16; the statistics are accumulated in double (activations with a mean far above their
// spread, and constant rows, cancel in f32); the output is computed in double and rounded once on store.
#include <cuda_fp16.h>
typedef __half T;
static __device__ float ld(T v) { return __half2float(v); }
static __device__ T st(float v) { return __float2half(v); }

// kforge:launch layernorm_rows grid=(cdiv(B,128)) block=(128) args=(x, weight, bias, y, B, N, eps)
extern "C" __global__ void layernorm_rows(const T *x, const T *weight, const T *bias, T *y, int B, int N,
					   float eps)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const T *xr = x + (long long)row * N;
	T *yr = y + (long long)row * N;
	double sum = 0.0;
	for (int i = 0; i < N; ++i)
		sum += ld(xr[i]);
	double mean = sum / N;
	double sq = 0.0;
	for (int i = 0; i < N; ++i) {
		double d = ld(xr[i]) - mean;
		sq += d * d;
	}
	double rstd = 1.0 / sqrt(sq / N + (double)eps);
	for (int i = 0; i < N; ++i)
		yr[i] = st((float)((ld(xr[i]) - mean) * rstd * ld(weight[i]) + ld(bias[i])));
}
