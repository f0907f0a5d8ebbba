// Reference: SwiGLU feed-forward input half: y = silu(x @ wg^T) * (x @ wu^T). One thread per output
// element computes both dot products in f32 in increasing k.
// Storage is f16; every product and sum is computed in f32, rounded once on store.
#include <cuda_fp16.h>
typedef __half T;
static __device__ float ld(T v) { return __half2float(v); }
static __device__ T st(float v) { return __float2half(v); }

// kforge:launch swiglu grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(x, wg, wu, y, M, N, K)
extern "C" __global__ void swiglu(const T *x, const T *wg, const T *wu, T *y, int M, int N, int K)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float g = 0.0f, u = 0.0f;
	for (int k = 0; k < K; ++k) {
		float xv = ld(x[(long long)m * K + k]);
		g += xv * ld(wg[(long long)n * K + k]);
		u += xv * ld(wu[(long long)n * K + k]);
	}
	y[(long long)m * N + n] = st(g / (1.0f + expf(-g)) * u);
}
