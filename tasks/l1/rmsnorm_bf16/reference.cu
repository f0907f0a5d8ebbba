// Reference: RMSNorm over the last dimension of x[B, N] with a weight, one thread per row:
// y = x / sqrt(mean(x^2) + eps) * weight.
// Storage is bf16; every product and sum is computed in f32, rounded once on store.
#include <cuda_bf16.h>
typedef __nv_bfloat16 T;
static __device__ float ld(T v) { return __bfloat162float(v); }
static __device__ T st(float v) { return __float2bfloat16(v); }

// kforge:launch rmsnorm_rows grid=(cdiv(B,128)) block=(128) args=(x, weight, y, B, N, eps)
extern "C" __global__ void rmsnorm_rows(const T *x, const T *weight, T *y, int B, int N, float eps)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const T *xr = x + (long long)row * N;
	T *yr = y + (long long)row * N;
	float sq = 0.0f;
	for (int i = 0; i < N; ++i)
		sq += ld(xr[i]) * ld(xr[i]);
	float rrms = 1.0f / sqrtf(sq / (float)N + eps);
	for (int i = 0; i < N; ++i)
		yr[i] = st(ld(xr[i]) * rrms * ld(weight[i]));
}
