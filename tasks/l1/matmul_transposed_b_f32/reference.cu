// Reference: C = A * B^T where A is M x K and B is stored N x K (the nn.Linear weight layout).
// One thread per output element, f32 accumulation in increasing k.
// kforge:launch matmul_tb grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul_tb(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += A[(long long)row * K + k] * B[(long long)col * K + k];
	C[(long long)row * N + col] = acc;
}
