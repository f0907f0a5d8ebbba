// Conformance: idioms LLM-written kernels use — float4 loads through __ldg, const __grid_constant__,
// -FLT_MAX and infinity spelled as NVRTC accepts them (no <cfloat>, no INFINITY, no std:: headers:
// NVRTC rejects those and the cpu backend builds only what NVRTC compiles), static device helpers,
// unsigned int/size_t indexing, #pragma unroll N, a warp-shuffle + shared-memory row softmax, a local
// array, __half2 math.
// kforge:launch row_softmax grid=(B) block=(128) args=(x, y, B, N)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#define WARP 32
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = WARP / 2; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

__device__ inline float warp_sum(float v)
{
#pragma unroll 5
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return __shfl_sync(0xffffffffu, v, 0);
}

extern "C" __global__ void __launch_bounds__(128) row_softmax(const float *__restrict__ x, float *__restrict__ y,
							       const __grid_constant__ int B, int N)
{
	__shared__ float red[4];
	const unsigned int tid = threadIdx.x, lane = tid % WARP, warp = tid / WARP;
	const size_t row = blockIdx.x;
	const float *xr = x + row * (size_t)N;
	float *yr = y + row * (size_t)N;
	float local[8]; /* a per-thread array on the fiber's stack */
	float m = -3.402823466e+38f; /* -FLT_MAX */
	if (__int_as_float(0x7f7fffff) != 3.402823466e+38f)
		m = 0.0f;
	int n4 = N / 4;
	for (int i = tid; i < n4; i += blockDim.x) {
		float4 v = __ldg(reinterpret_cast<const float4 *>(xr) + i);
		m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
	}
	for (int i = n4 * 4 + tid; i < N; i += blockDim.x)
		m = fmaxf(m, xr[i]);
	m = warp_max(m);
	if (lane == 0)
		red[warp] = m;
	__syncthreads();
	m = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
	__syncthreads();
	float s = 0.0f;
	for (int k = 0; k < 8; k++)
		local[k] = 0.0f;
	for (int i = tid, k = 0; i < N; i += blockDim.x, k = (k + 1) & 7)
		local[k] += __expf(xr[i] - m);
	for (int k = 0; k < 8; k++)
		s += local[k];
	s = warp_sum(s);
	if (lane == 0)
		red[warp] = s;
	__syncthreads();
	float inv = 1.0f / (red[0] + red[1] + red[2] + red[3]);
	__half2 h = __floats2half2_rn(1.0f, 2.0f);
	h = __hmul2(h, __float2half2_rn(0.5f));
	inv *= __low2float(h) + __high2float(h) - 0.5f; /* exactly 1 */
	if (m == -CUDART_INF_F)
		inv = 0.0f;
	for (unsigned int i = tid; i < (unsigned int)N; i += blockDim.x)
		yr[i] = __expf(xr[i] - m) * inv;
}
