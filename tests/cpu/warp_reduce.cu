// Conformance: __reduce_add_sync, __reduce_min_sync, __reduce_max_sync and a shuffle-down warp sum.
// kforge:launch warp_reduce grid=(2) block=(64) args=(x, out)
__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffff, v, o);
	return v;
}
extern "C" __global__ void warp_reduce(const int *x, int *out)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	int v = x[i];
	int s = __reduce_add_sync(0xffffffff, v);
	int mn = __reduce_min_sync(0xffffffff, v);
	unsigned mx = __reduce_max_sync(0xffffffff, (unsigned)v);
	float fs = warp_sum((float)v);
	if (threadIdx.x % 32 == 0) {
		unsigned w = i / 32;
		out[4 * w + 0] = s;
		out[4 * w + 1] = mn;
		out[4 * w + 2] = (int)mx;
		out[4 * w + 3] = (int)fs;
	}
}
