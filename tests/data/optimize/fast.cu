// Four elements per thread with a grid-stride loop: a quarter of the threads to schedule.
// kforge:launch vadd grid=(cdiv(N, 1024)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
		z[i] = x[i] + y[i];
}
