// Host-only: uint32_t from <stdint.h>, which NVRTC cannot open.
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
#include <stdint.h>
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (uint32_t)N)
		y[i] = fmaxf(x[i], 0.0f);
}
