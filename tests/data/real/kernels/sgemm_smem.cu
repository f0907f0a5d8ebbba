// SGEMM_CUDA kernel 3 (shared-memory cache blocking), templated on the tile, with bounds checks on the
// tile loads and the store so any M, N, K work.
// kforge:launch sgemm_shared_mem_block<32> grid=(cdiv(M, 32), cdiv(N, 32)) block=(32 * 32) args=(M, N, K, alpha, A, B, beta, C)
template <const int BLOCKSIZE>
__global__ void sgemm_shared_mem_block(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
				       float *C)
{
	const unsigned cRow = blockIdx.x, cCol = blockIdx.y;
	__shared__ float As[BLOCKSIZE * BLOCKSIZE];
	__shared__ float Bs[BLOCKSIZE * BLOCKSIZE];
	const unsigned threadCol = threadIdx.x % BLOCKSIZE, threadRow = threadIdx.x / BLOCKSIZE;
	const int row = cRow * BLOCKSIZE + threadRow, col = cCol * BLOCKSIZE + threadCol;
	float tmp = 0.0;
	for (int bkIdx = 0; bkIdx < K; bkIdx += BLOCKSIZE) {
		As[threadRow * BLOCKSIZE + threadCol] =
		    row < M && bkIdx + (int)threadCol < K ? A[row * K + bkIdx + threadCol] : 0.0f;
		Bs[threadRow * BLOCKSIZE + threadCol] =
		    bkIdx + (int)threadRow < K && col < N ? B[(bkIdx + threadRow) * N + col] : 0.0f;
		__syncthreads();
		for (int dotIdx = 0; dotIdx < BLOCKSIZE; ++dotIdx)
			tmp += As[threadRow * BLOCKSIZE + dotIdx] * Bs[dotIdx * BLOCKSIZE + threadCol];
		__syncthreads();
	}
	if (row < M && col < N)
		C[row * N + col] = alpha * tmp + beta * C[row * N + col];
}
