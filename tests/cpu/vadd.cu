// Conformance: 1-D grid, __restrict__, bounds check, size_t indexing.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, out, N)
#include <cuda_runtime.h>
extern "C" __global__ void vadd(const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ out, int n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (size_t)n)
		out[i] = x[i] + 2.0f * y[i];
}
