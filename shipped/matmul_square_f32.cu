// Shipped matmul for tasks/l1/matmul_square_f32: 32x32 output tiles staged through shared memory, each
// thread of a 32x8 block computing 4 outputs of one column, so every A and B element loaded from global
// memory is reused 32 times (the reference reloads both for every output). k still runs in increasing
// order per output, as in the reference.
#define TS 32  /* tile edge, elements */
#define RPT 4  /* rows per thread: TS / blockDim.y */

// kforge:launch matmul_square grid=(cdiv(N,32), cdiv(N,32)) block=(32,8) args=(A, B, C, N)
extern "C" __global__ void matmul_square(const float *A, const float *B, float *C, int N)
{
	__shared__ float As[TS][TS + 1]; /* +1: no bank conflicts when reading a column of As */
	__shared__ float Bs[TS][TS + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	int col = blockIdx.x * TS + tx, row0 = blockIdx.y * TS;
	float acc[RPT];
	for (int i = 0; i < RPT; ++i)
		acc[i] = 0.0f;
	for (int k0 = 0; k0 < N; k0 += TS) {
		for (int i = 0; i < RPT; ++i) {
			int r = ty + 8 * i, ar = row0 + r, ac = k0 + tx, br = k0 + r;
			As[r][tx] = ar < N && ac < N ? A[(long long)ar * N + ac] : 0.0f;
			Bs[r][tx] = br < N && col < N ? B[(long long)br * N + col] : 0.0f;
		}
		__syncthreads();
		int kn = min(TS, N - k0);
		for (int k = 0; k < kn; ++k) {
			float b = Bs[k][tx];
			for (int i = 0; i < RPT; ++i)
				acc[i] += As[ty + 8 * i][k] * b;
		}
		__syncthreads();
	}
	for (int i = 0; i < RPT; ++i) {
		int row = row0 + ty + 8 * i;
		if (row < N && col < N)
			C[(long long)row * N + col] = acc[i];
	}
}
