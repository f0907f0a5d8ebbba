// Reference for @NAME@ (from the gemm template): one thread per output element, a plain k loop in fp32.
// The atol of 1e-3 covers fp32 summation-order differences at K = 1024 while TF32 or fp16 accumulation
// (errors of 1e-2 and more) fails.
// kforge:launch matmul grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += A[(long long)row * K + k] * B[(long long)k * N + col];
	C[(long long)row * N + col] = acc;
}
