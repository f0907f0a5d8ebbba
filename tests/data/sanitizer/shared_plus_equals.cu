// Wrong: every thread adds into one __shared__ float without an atomic. Fibers switching only at
// barriers make it come out right on the cpu; on a GPU the additions race.
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float total;
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	if (t == 0)
		total = 0.0f;
	__syncthreads();
	total += s;
	__syncthreads();
	if (t == 0)
		y[row] = total;
}
