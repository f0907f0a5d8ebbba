// SGEMM_CUDA kernel 5 (2D blocktiling): BM x BN tiles of C per block, TM x TN results per thread, no
// bounds checks at all: M and N must be multiples of BM = BN = 64 and K of BK = 8, which the task
// states as constraints (so the verifier never tries other sizes).
// kforge:launch sgemm2DBlocktiling<64, 64, 8, 4, 4> grid=(N / 64, M / 64) block=((64 * 64) / (4 * 4)) args=(M, N, K, alpha, A, B, beta, C)
template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
    sgemm2DBlocktiling(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
	const unsigned cRow = blockIdx.y, cCol = blockIdx.x;
	const unsigned totalResultsBlocktile = BM * BN;
	const unsigned numThreadsBlocktile = totalResultsBlocktile / (TM * TN);
	const int threadCol = threadIdx.x % (BN / TN);
	const int threadRow = threadIdx.x / (BN / TN);
	__shared__ float As[BM * BK];
	__shared__ float Bs[BK * BN];
	A += cRow * BM * K;
	B += cCol * BN;
	C += cRow * BM * N + cCol * BN;
	const unsigned innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK;
	const unsigned strideA = numThreadsBlocktile / BK;
	const unsigned innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN;
	const unsigned strideB = numThreadsBlocktile / BN;
	float threadResults[TM * TN] = {0.0};
	float regM[TM] = {0.0}, regN[TN] = {0.0};
	for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
		for (unsigned loadOffset = 0; loadOffset < BM; loadOffset += strideA)
			As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];
		for (unsigned loadOffset = 0; loadOffset < BK; loadOffset += strideB)
			Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];
		__syncthreads();
		A += BK;
		B += BK * N;
		for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
			for (unsigned i = 0; i < TM; ++i)
				regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
			for (unsigned i = 0; i < TN; ++i)
				regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
			for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
				for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
					threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
		}
		__syncthreads();
	}
	for (unsigned resIdxM = 0; resIdxM < TM; ++resIdxM)
		for (unsigned resIdxN = 0; resIdxN < TN; ++resIdxN)
			C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =
			    alpha * threadResults[resIdxM * TN + resIdxN] +
			    beta * C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN];
}
