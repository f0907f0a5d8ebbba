// Buggy on purpose: in warp 0, lanes 0-15 wait at __syncthreads while lanes 16-31 wait in a full-mask
// shuffle that needs lanes 0-15: neither can complete (on a GPU: undefined, in practice a hang). The cpu
// backend reports a deadlock. `fine` is a correct kernel of the same module.
// kforge:launch divergent grid=(2) block=(64) args=(out)
extern "C" __global__ void divergent(float *out)
{
	float v = (float)threadIdx.x;
	if (threadIdx.x < 16)
		__syncthreads();
	else
		v = __shfl_sync(0xffffffffu, v, 0);
	out[threadIdx.x] = v;
}

extern "C" __global__ void fine(float *out)
{
	out[threadIdx.x] = 2.0f;
}
