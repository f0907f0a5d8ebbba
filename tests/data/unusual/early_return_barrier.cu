// Threads past the end return before the barrier; the barrier then waits only for the threads still
// running (as on the GPU). Correct.
// kforge:launch relu grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	__shared__ float s[128];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	s[threadIdx.x] = x[i];
	__syncthreads();
	y[i] = fmaxf(s[threadIdx.x], 0.0f);
}
