// A tiled matmul for matmul_f32 (and the fast side of tests/data/costmodel/matmul_tiled): 32 x 32 tiles of A and B staged in shared memory by
// 32 x 8 blocks, each thread computing four outputs of the block's 32 x 32 tile of C (rows threadIdx.y +
// 8q). Global loads are coalesced rows of a tile, loaded once per tile instead of once per output; the
// inner loop reads As[row][k] (a broadcast within a warp) and Bs[k][threadIdx.x] (32 banks), and each B
// value read from shared memory feeds four FMAs.
// kforge:launch matmul_tiled grid=(cdiv(N, 32), cdiv(M, 32)) block=(32, 8) args=(A, B, C, M, N, K)
extern "C" __global__ void __launch_bounds__(256)
    matmul_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N,
		 int K)
{
	__shared__ float As[32][32], Bs[32][32];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int m0 = blockIdx.y * 32, n0 = blockIdx.x * 32;
	float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
	for (int k0 = 0; k0 < K; k0 += 32) {
#pragma unroll
		for (int q = 0; q < 4; q++) {
			const int r = ty + 8 * q;
			As[r][tx] = (m0 + r < M && k0 + tx < K) ? A[(long long)(m0 + r) * K + k0 + tx] : 0.0f;
			Bs[r][tx] = (k0 + r < K && n0 + tx < N) ? B[(long long)(k0 + r) * N + n0 + tx] : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < 32; k++) {
			const float b = Bs[k][tx];
#pragma unroll
			for (int q = 0; q < 4; q++)
				acc[q] += As[ty + 8 * q][k] * b;
		}
		__syncthreads();
	}
#pragma unroll
	for (int q = 0; q < 4; q++)
		if (m0 + ty + 8 * q < M && n0 + tx < N)
			C[(long long)(m0 + ty + 8 * q) * N + n0 + tx] = acc[q];
}
