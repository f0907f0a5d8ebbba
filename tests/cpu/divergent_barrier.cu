// Buggy on purpose: a barrier only half of the block reaches; the other half has exited. On a GPU this
// is undefined behaviour; the cpu backend reports a deadlock.
// kforge:launch divergent grid=(2) block=(64) args=(out)
extern "C" __global__ void divergent(float *out)
{
	if (threadIdx.x < 32) {
		__syncthreads();
		out[threadIdx.x] = 1.0f;
	}
}
