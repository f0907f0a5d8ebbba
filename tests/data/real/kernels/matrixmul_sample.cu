// cuda-samples matrixMul: MatrixMulCUDA<BLOCK_SIZE> as the sample writes it (wA = K, wB = N; every dim a
// multiple of the block size, a precondition the task declares). The grid divides exactly.
// kforge:launch MatrixMulCUDA<32> grid=(N / 32, M / 32) block=(32, 32) args=(C, A, B, K, N)
template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB)
{
	int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
	int aBegin = wA * BLOCK_SIZE * by, aEnd = aBegin + wA - 1, aStep = BLOCK_SIZE;
	int bBegin = BLOCK_SIZE * bx, bStep = BLOCK_SIZE * wB;
	float Csub = 0;
	for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
		__shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
		__shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
		As[ty][tx] = A[a + wA * ty + tx];
		Bs[ty][tx] = B[b + wB * ty + tx];
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BLOCK_SIZE; ++k)
			Csub += As[ty][k] * Bs[k][tx];
		__syncthreads();
	}
	int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
	C[c + wB * ty + tx] = Csub;
}
