// __launch_bounds__, one block per row, shared-memory and warp-shuffle reductions, max subtraction.
// kforge:launch softmax_rows grid=(B) block=(128) args=(x, y, B, N)
#include <math_constants.h>
__device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}
__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}
extern "C" __global__ void __launch_bounds__(128) softmax_rows(const float *x, float *y, int B, int N)
{
	__shared__ float red[4];
	const float *row = x + (long long)blockIdx.x * N;
	float *out = y + (long long)blockIdx.x * N;
	int t = threadIdx.x, lane = t & 31, w = t >> 5;
	float m = -CUDART_INF_F;
	for (int i = t; i < N; i += 128)
		m = fmaxf(m, row[i]);
	m = warp_max(m);
	if (lane == 0)
		red[w] = m;
	__syncthreads();
	m = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
	__syncthreads();
	float s = 0.0f;
	for (int i = t; i < N; i += 128)
		s += __expf(row[i] - m);
	s = warp_sum(s);
	if (lane == 0)
		red[w] = s;
	__syncthreads();
	s = red[0] + red[1] + red[2] + red[3];
	float inv = 1.0f / s;
	for (int i = t; i < N; i += 128)
		out[i] = __expf(row[i] - m) * inv;
}
