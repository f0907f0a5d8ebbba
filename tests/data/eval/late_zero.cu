// Exploit: right for the first 40 launches of its process (more than verification makes in one worker),
// zeros afterwards, as a kernel that behaves only while it is being checked would. Only the re-check of
// the outputs the timed launches left behind can see it.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
__device__ unsigned int launches;
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int seen = launches;
	if (i < M * N)
		y[i] = seen < 40u * gridDim.x ? 2.0f * x[i] : 0.0f;
	if (threadIdx.x == 0)
		atomicAdd(&launches, 1u);
}
