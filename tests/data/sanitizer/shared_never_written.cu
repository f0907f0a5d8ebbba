// Wrong: the block's __shared__ accumulator is never initialised (it read as zero on the cpu backend
// before shared memory was poisoned): every thread adds into whatever the block finds there.
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float acc[1];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	atomicAdd(&acc[0], s);
	__syncthreads();
	if (t == 0)
		y[row] = acc[0];
}
