// Does not compile: the feedback carries the compiler's log.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] = 2.0f * x[i] + undeclared_name;
}
