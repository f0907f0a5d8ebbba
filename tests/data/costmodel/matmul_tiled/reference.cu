// Cost-model corpus, matmul_tiled (the slow side): tasks/examples/matmul_f32/reference.cu, one thread per
// output in 16 x 16 blocks and a plain k loop over global memory. Every k step is a broadcast load of A
// (one sector per warp) and a coalesced load of B; nothing is reused through shared memory, so each block
// fetches its A rows and B columns K times over from L1/L2.
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
