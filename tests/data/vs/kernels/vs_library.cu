// The kernel: the reference itself (nothing here is about its speed).
// kforge:launch matmul grid=(cdiv(N,16), cdiv(N,16)) block=(16,16) args=(A, B, C, N)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int N)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= N || col >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < N; ++k)
		acc += A[(long long)row * N + k] * B[(long long)k * N + col];
	C[(long long)row * N + col] = acc;
}
