// Deliberately slow reference (eval tests): 128 redundant barriers per thread make every block switch fibers
// 128 times on the cpu backend, so a plain kernel is far more than 10x faster: an implausible speedup.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (int k = 0; k < 128; k++)
		__syncthreads();
	if (i < M * N)
		y[i] = 2.0f * x[i];
}
