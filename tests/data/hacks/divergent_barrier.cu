// Deadlock: half of each warp waits at the block barrier while the other half waits in a full-mask
// shuffle that needs the first half. (An early return before a barrier is NOT a deadlock: exited
// threads do not count, as on the GPU.)
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = 0.0f;
	if ((threadIdx.x & 31) < 16)
		__syncthreads();
	else
		v = __shfl_sync(0xffffffffu, 1.0f, 0);
	if (i < N)
		z[i] = x[i] + y[i] + v - v;
}
