// A plain baseline: one thread per element.
// kforge:launch scale grid=(cdiv(N, 128)) block=(128) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = 2.0f * x[i];
}
