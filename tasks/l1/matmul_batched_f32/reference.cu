// Reference: batched C[b] = A[b] * B[b], every matrix row-major and packed one after another.
// One thread per output element (grid z = batch), f32 accumulation in increasing k.
// kforge:launch matmul_batched grid=(cdiv(N,16), cdiv(M,16), BATCH) block=(16,16) args=(A, B, C, BATCH, M, N, K)
extern "C" __global__ void matmul_batched(const float *A, const float *B, float *C, int BATCH, int M, int N,
					  int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	long long b = blockIdx.z;
	if (row >= M || col >= N || b >= BATCH)
		return;
	const float *a = A + b * M * K;
	const float *bm = B + b * K * N;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += a[(long long)row * K + k] * bm[(long long)k * N + col];
	C[b * M * N + (long long)row * N + col] = acc;
}
