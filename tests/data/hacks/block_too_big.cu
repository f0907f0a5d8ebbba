// Invalid launch: a block of 2048 threads.
// kforge:launch vadd grid=(cdiv(N,2048)) block=(2048) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i];
}
