// A host library in a kernel file: cuBLAS's header (the message must say kernel files cannot call
// host libraries, not a bare 'not found').
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
#include <cublas_v2.h>
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = fmaxf(x[i], 0.0f);
}
