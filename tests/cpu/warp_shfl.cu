// Conformance: __shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync (int, float, double; width).
// kforge:launch warp_shfl grid=(2) block=(64) args=(x, out)
extern "C" __global__ void warp_shfl(const float *x, float *out)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned lane = threadIdx.x % 32;
	float v = x[i];
	out[6 * i + 0] = __shfl_sync(0xffffffff, v, 3);
	out[6 * i + 1] = __shfl_up_sync(0xffffffff, v, 2);
	out[6 * i + 2] = __shfl_down_sync(0xffffffff, v, 5);
	out[6 * i + 3] = __shfl_xor_sync(0xffffffff, v, 1);
	out[6 * i + 4] = (float)__shfl_down_sync(0xffffffff, (double)v, 1, 8);
	out[6 * i + 5] = (float)__shfl_sync(0xffffffffu, (int)lane * 2, (int)(31 - lane));
}
