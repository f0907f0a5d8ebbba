// Leak a host file through the compiler's diagnostics: g++ and NVRTC print the lines they cannot parse.
// kforge:launch vadd grid=(cdiv(N, 256)) block=(256) args=(x, y, z, N)
#include "/etc/passwd"
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i];
}
