// Correct: a shared accumulator set by one thread, a barrier, atomics from every thread, a barrier.
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float acc;
	int t = threadIdx.x, row = blockIdx.x;
	if (t == 0)
		acc = 0.0f;
	__syncthreads();
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	atomicAdd(&acc, s);
	__syncthreads();
	if (t == 0)
		y[row] = acc;
}
