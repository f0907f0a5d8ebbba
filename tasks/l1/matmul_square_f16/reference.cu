// Reference: C = A * B for square N x N row-major matrices. One thread per output element, the dot
// product accumulated in f32 in increasing k. Obviously correct, not fast: it defines truth.
// Storage is f16; every product and sum is computed in f32, rounded once on store.
#include <cuda_fp16.h>
typedef __half T;
static __device__ float ld(T v) { return __half2float(v); }
static __device__ T st(float v) { return __float2half(v); }

// kforge:launch matmul_square grid=(cdiv(N,16), cdiv(N,16)) block=(16,16) args=(A, B, C, N)
extern "C" __global__ void matmul_square(const T *A, const T *B, T *C, int N)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= N || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < N; ++k)
		acc += ld(A[(long long)row * N + k]) * ld(B[(long long)k * N + col]);
	C[(long long)row * N + col] = st(acc);
}
