#include <cuda_fp16.h>
// kforge:launch gemv grid=(cdiv(M,32)) block=(32) args=(A, x, y, M, K)
extern "C" __global__ void gemv(const __half *A, const __half *x, __half *y, int M, int K)
{
	int m = blockIdx.x * blockDim.x + threadIdx.x;
	if (m >= M)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += __half2float(A[(long long)m * K + k]) * __half2float(x[k]);
	y[m] = __float2half(acc);
}
