// Host-only: M_PI (a POSIX math.h name NVRTC lacks).
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = fmaxf(x[i], 0.0f) * (float)(M_PI / M_PI);
}
