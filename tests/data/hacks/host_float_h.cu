// Host-only: <float.h> and FLT_MAX (NVRTC has neither).
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
#include <float.h>
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = fminf(fmaxf(x[i], 0.0f), FLT_MAX);
}
