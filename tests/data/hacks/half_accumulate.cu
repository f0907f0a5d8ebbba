#include <cuda_fp16.h>
// Bug: accumulates in fp16, losing precision the task does not allow.
// kforge:launch gemv grid=(cdiv(M,32)) block=(32) args=(A, x, y, M, K)
extern "C" __global__ void gemv(const __half *A, const __half *x, __half *y, int M, int K)
{
	int m = blockIdx.x * blockDim.x + threadIdx.x;
	if (m >= M)
		return;
	__half acc = __float2half(0.0f);
	for (int k = 0; k < K; k++)
		acc = __hadd(acc, __hmul(A[m * K + k], x[k]));
	y[m] = acc;
}
