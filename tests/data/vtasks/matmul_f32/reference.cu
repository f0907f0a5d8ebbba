// kforge:launch matmul grid=(cdiv(N,16), cdiv(M,16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	double acc = 0.0;
	for (int k = 0; k < K; k++)
		acc += (double)A[(long long)m * K + k] * B[(long long)k * N + n];
	C[(long long)m * N + n] = (float)acc;
}
