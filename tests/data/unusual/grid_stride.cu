// A grid-stride loop with a small fixed grid: correct for any N.
// kforge:launch vadd grid=(4) block=(64) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
		z[i] = x[i] + y[i];
}
