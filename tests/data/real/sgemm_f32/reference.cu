// The SGEMM_CUDA naive kernel: one thread per element of C, C = alpha * A @ B + beta * C.
// kforge:launch sgemm_naive grid=(cdiv(M, 32), cdiv(N, 32)) block=(32, 32) args=(M, N, K, alpha, A, B, beta, C)
extern "C" __global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
				       float *C)
{
	const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
	const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < (unsigned)M && y < (unsigned)N) {
		float tmp = 0.0f;
		for (int i = 0; i < K; ++i)
			tmp += A[x * K + i] * B[i * N + y];
		C[x * N + y] = alpha * tmp + beta * C[x * N + y];
	}
}
