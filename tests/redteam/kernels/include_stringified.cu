// NVRTC's stringified include: the name is built by the preprocessor, so no literal path is visible;
// /proc/self/environ of the compile child was the parent's whole environment.
// kforge:launch vadd grid=(cdiv(N, 256)) block=(256) args=(x, y, z, N)
#define KF_STR(x) #x
#define KF_PATH(x) KF_STR(x)
#include KF_PATH(/proc/self/environ)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i];
}
