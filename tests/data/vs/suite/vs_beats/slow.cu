// A deliberately slow baseline: eight redundant barriers per thread make every block switch fibers eight
// times on the cpu backend (and stall on a GPU), so a plain kernel is clearly faster than it.
// kforge:launch scale grid=(cdiv(N, 128)) block=(128) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (int k = 0; k < 8; k++)
		__syncthreads();
	if (i < N)
		y[i] = 2.0f * x[i];
}
