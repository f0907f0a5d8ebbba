// One thread per element of C.
// kforge:launch matmul grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int n = blockIdx.x * 16 + threadIdx.x, m = blockIdx.y * 16 + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += A[m * K + k] * B[k * N + n];
	C[m * N + n] = acc;
}
