// Reference: C = A * B with a tall, skinny A (M x K, M >> K) and a small B (K x N). One thread per output
// element, f32 accumulation in increasing k.
// kforge:launch matmul_tall_skinny grid=(cdiv(N,16), cdiv(M,16)) block=(16,16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul_tall_skinny(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += A[(long long)row * K + k] * B[(long long)k * N + col];
	C[(long long)row * N + col] = acc;
}
