// kforge:launch relu grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
