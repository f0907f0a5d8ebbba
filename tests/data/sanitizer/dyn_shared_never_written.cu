// Wrong: the same never-initialised accumulator, in dynamic shared memory (extern __shared__).
// kforge:launch rowsum grid=(B) block=(128) smem=(4) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	extern __shared__ float acc[];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	atomicAdd(&acc[0], s);
	__syncthreads();
	if (t == 0)
		y[row] = acc[0];
}
