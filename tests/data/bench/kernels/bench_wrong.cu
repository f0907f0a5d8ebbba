// A wrong kernel (scales by 1.5): one thread per element.
// kforge:launch scale grid=(cdiv(N, 128)) block=(128) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = x[i] + x[i] * 0.5f;
}
