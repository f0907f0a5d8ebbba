// Reference: Linear + bias + GELU, bf16. One thread per output element: the dot product of x's row and w's row (nn.Linear
// layout, w is N x K) in f32 in increasing k, then the epilogue in f32, one rounding on store.
// Storage is bf16; every product and sum is computed in f32, rounded once on store.
#include <cuda_bf16.h>
typedef __nv_bfloat16 T;
static __device__ float ld(T v) { return __bfloat162float(v); }
static __device__ T st(float v) { return __float2bfloat16(v); }

// kforge:launch gemm_bias_gelu_bf16 grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(x, w, b, y, M, N, K)
extern "C" __global__ void gemm_bias_gelu_bf16(const T *x, const T *w, const T *b, T *y, int M, int N, int K)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += ld(x[(long long)m * K + k]) * ld(w[(long long)n * K + k]);
	float h = acc + ld(b[n]);
	long long o = (long long)m * N + n;
	y[o] = st(0.5f * h * (1.0f + erff(h * 0.70710678118654752f)));
}
