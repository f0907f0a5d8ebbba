// Not a forgery: the corpus's control, genuinely less work for the cpu backend's clock. One thread per
// row of C, the k loop outside the column loop (each A element read once, B and C walked contiguously),
// so there are 512 times fewer threads to schedule than the reference's one per element. (On a GPU this
// layout is a poor kernel; here it is honestly faster, which is all the control must be.)
// kforge:launch matmul grid=(cdiv(M, 32)) block=(32) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= M)
		return;
	float *c = C + (long long)row * N;
	for (int j = 0; j < N; j++)
		c[j] = 0.0f;
	for (int k = 0; k < K; k++) {
		float a = A[(long long)row * K + k];
		const float *b = B + (long long)k * N;
		for (int j = 0; j < N; j++)
			c[j] += a * b[j];
	}
}
