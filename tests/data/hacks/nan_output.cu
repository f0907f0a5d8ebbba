// Bug: divides by a value that can be zero, giving Inf/NaN where the reference is finite.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = (x[i] + y[i]) * ((float)(i % 97) / (float)(i % 97));
}
