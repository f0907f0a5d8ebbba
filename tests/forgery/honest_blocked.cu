// Not a forgery: a genuinely faster matmul (each thread computes four outputs of a row, reading each A
// element once for all four), for the corpus's control. It must stay significant under the protocol.
// kforge:launch matmul grid=(cdiv(N, 64), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
	for (int k = 0; k < K; k++) {
		float a = A[(long long)row * K + k];
		const float *b = B + (long long)k * N + col;
		for (int j = 0; j < 4; j++)
			if (col + j < N)
				acc[j] += a * b[j];
	}
	for (int j = 0; j < 4; j++)
		if (col + j < N)
			C[(long long)row * N + col + j] = acc[j];
}
