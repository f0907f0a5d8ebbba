// Forgery: memoisation by pointer. A launch with the same input and output addresses as the last one
// returns at once (the output is assumed to still hold the answer). Timed launches on a fixed input set
// at fixed addresses would all be skipped.
// It stays honest except at the shape the cpu backend times (the largest public one, M=256 N=512).
// kforge:launch matmul grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
__device__ const float *seen_a, *seen_b;
__device__ float *seen_c;

extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if ((M == 256 && N == 512) && seen_a == A && seen_b == B && seen_c == C)
		return;
	if (row < M && col < N) {
		float acc = 0.0f;
		for (int k = 0; k < K; k++)
			acc += A[(long long)row * K + k] * B[(long long)k * N + col];
		C[(long long)row * N + col] = acc;
	}
	__syncthreads();
	if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && threadIdx.x == 0 && threadIdx.y == 0) {
		seen_a = A;
		seen_b = B;
		seen_c = C;
	}
}
