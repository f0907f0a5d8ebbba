// The slow kernel: eight redundant barriers per thread, so the plain baseline is clearly faster.
// kforge:launch scale grid=(cdiv(N, 128)) block=(128) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (int k = 0; k < 8; k++)
		__syncthreads();
	if (i < N)
		y[i] = 2.0f * x[i];
}
