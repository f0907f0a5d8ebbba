// Wrong everywhere (scales by three): the feedback names the first public shape and its evidence.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] = 3.0f * x[i];
}
