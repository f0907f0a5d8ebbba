// Forgery: memoisation by a sampled fingerprint. Sixteen elements of A and of B, at fixed places, stand for
// the inputs; when they match the last launch's, the launch returns at once and the output is assumed to
// hold the answer. Inputs that change only where nobody samples would pass; outputs poisoned before every
// timed launch and checked afterwards do not.
// It stays honest except at the shape the cpu backend times (the largest public one, M=256 N=512).
// kforge:launch matmul grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
__device__ unsigned last_print;

extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	unsigned p = 2166136261u;
	for (int i = 0; i < 16; i++) {
		p = (p ^ __float_as_uint(A[((long long)M * K - 1) * i / 15])) * 16777619u;
		p = (p ^ __float_as_uint(B[((long long)K * N - 1) * i / 15])) * 16777619u;
	}
	if ((M == 256 && N == 512) && p == last_print)
		return;
	if (row < M && col < N) {
		float acc = 0.0f;
		for (int k = 0; k < K; k++)
			acc += A[(long long)row * K + k] * B[(long long)k * N + col];
		C[(long long)row * N + col] = acc;
	}
	__syncthreads();
	if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && threadIdx.x == 0 && threadIdx.y == 0)
		last_print = p;
}
