// SGEMM_CUDA kernel 2 (global memory coalescing), templated on the block size and launched as is.
// kforge:launch sgemm_global_mem_coalesce<32> grid=(cdiv(M, 32), cdiv(N, 32)) block=(32 * 32) args=(M, N, K, alpha, A, B, beta, C)
template <const unsigned BLOCKSIZE>
__global__ void sgemm_global_mem_coalesce(int M, int N, int K, float alpha, const float *A, const float *B,
					  float beta, float *C)
{
	const int cRow = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
	const int cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
	if (cRow < M && cCol < N) {
		float tmp = 0.0;
		for (int i = 0; i < K; ++i)
			tmp += A[cRow * K + i] * B[i * N + cCol];
		C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
	}
}
