// Threads past the end return before the barrier (a common pattern in tail blocks). On the GPU a
// barrier waits only for threads that have not exited, so this is correct there, and must be here.
// kforge:launch early grid=(cdiv(n,64)) block=(64) args=(x, y, n)
extern "C" __global__ void early(const float *x, float *y, int n)
{
	__shared__ float s[64];
	int i = blockIdx.x * 64 + threadIdx.x;
	if (i >= n)
		return;
	s[threadIdx.x] = x[i];
	__syncthreads();
	int cnt = __syncthreads_count(1); /* counts the threads that arrived: those still running */
	y[i] = 2.0f * s[threadIdx.x] + (float)cnt;
}
