// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i];
}
