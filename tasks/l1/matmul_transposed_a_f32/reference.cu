// Reference: C = A^T * B where A is stored K x M (so A^T is M x K) and B is K x N, all row-major.
// One thread per output element, f32 accumulation in increasing k.
// kforge:launch matmul_ta grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul_ta(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += A[(long long)k * M + row] * B[(long long)k * N + col];
	C[(long long)row * N + col] = acc;
}
