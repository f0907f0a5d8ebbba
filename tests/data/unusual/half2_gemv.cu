#include <cuda_fp16.h>
// fp16 tensors, fp32 accumulation, one warp per row with __shfl_down_sync, __half2 loads when aligned.
// kforge:launch gemv grid=(M) block=(32) args=(A, x, y, M, K)
extern "C" __global__ void gemv(const __half *A, const __half *x, __half *y, int M, int K)
{
	int m = blockIdx.x, lane = threadIdx.x;
	const __half *row = A + (long long)m * K;
	float acc = 0.0f;
	int k = 2 * lane;
	if ((K & 1) == 0) {
		for (; k + 1 < K; k += 64) {
			__half2 a = *reinterpret_cast<const __half2 *>(row + k);
			__half2 v = *reinterpret_cast<const __half2 *>(x + k);
			float2 af = __half22float2(a), vf = __half22float2(v);
			acc += af.x * vf.x + af.y * vf.y;
		}
	} else {
		for (k = lane; k < K; k += 32)
			acc += __half2float(row[k]) * __half2float(x[k]);
	}
	for (int off = 16; off > 0; off >>= 1)
		acc += __shfl_down_sync(0xffffffffu, acc, off);
	if (lane == 0)
		y[m] = __float2half(acc);
}
