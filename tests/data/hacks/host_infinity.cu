// Host-only: INFINITY without <math.h> (glibc's macro, which NVRTC does not define).
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = fminf(fmaxf(x[i], 0.0f), INFINITY);
}
