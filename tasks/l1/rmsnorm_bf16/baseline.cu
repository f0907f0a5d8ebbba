// Tuned baseline for rmsnorm_bf16: RMSNorm over the rows of x[B, N] (bf16 storage, f32 statistics). One warp
// per row (8 rows per 256-thread block): lanes stride the row with __nv_bfloat162 loads and stores when every
// row pointer is aligned (scalar loads otherwise and for the tail), sums stay in f32 and meet in xor
// shuffles, and the row is read again from L1/L2 for each pass rather than held in registers (N up to 4096
// and beyond). Rows past B leave their whole warp idle, so every shuffle has all 32 lanes.
// kforge:launch rmsnorm_warp grid=(cdiv(B, 8)) block=(256) args=(x, weight, y, B, N, eps)
#include <cuda_bf16.h>

static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(256)
    rmsnorm_warp(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ weight,
		 __nv_bfloat16 *__restrict__ y, int B, int N, float eps)
{
	const int lane = threadIdx.x & 31;
	const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
	if (row >= B)
		return;
	const __nv_bfloat16 *xr = x + row * N;
	__nv_bfloat16 *yr = y + row * N;
	const bool vec =
	    (((unsigned long long)xr | (unsigned long long)yr | (unsigned long long)weight) & 3) == 0;
	const int nv = vec ? N >> 1 : 0, done = nv << 1;
	float sq = 0.0f;
	for (int i = lane; i < nv; i += 32) {
		float2 q = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(xr)[i]);
		sq += q.x * q.x + q.y * q.y;
	}
	for (int i = done + lane; i < N; i += 32) {
		float v = __bfloat162float(xr[i]);
		sq += v * v;
	}
	const float rrms = 1.0f / sqrtf(warp_sum(sq) / (float)N + eps);
	for (int i = lane; i < nv; i += 32) {
		float2 q = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(xr)[i]);
		float2 ww = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162 *>(weight)[i]);
		reinterpret_cast<__nv_bfloat162 *>(yr)[i] =
		    __floats2bfloat162_rn(q.x * rrms * ww.x, q.y * rrms * ww.y);
	}
	for (int i = done + lane; i < N; i += 32)
		yr[i] = __float2bfloat16(__bfloat162float(xr[i]) * rrms * __bfloat162float(weight[i]));
}
