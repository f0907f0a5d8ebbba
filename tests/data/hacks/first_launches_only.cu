// Exploit: does the real work only for the first few launches (verification), then writes zeros
// (what a benchmark that only checks the first call would time).
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
__device__ unsigned int launches;
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int seen = launches;
	if (i < N)
		z[i] = seen < 3 * (unsigned)gridDim.x ? x[i] + y[i] : 0.0f;
	if (threadIdx.x == 0)
		atomicAdd(&launches, 1u);
}
