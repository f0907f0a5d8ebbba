// Bug: tiled matmul without the barriers between loading a tile and using it.
// kforge:launch matmul grid=(cdiv(N,16), cdiv(M,16)) block=(16, 16) args=(A, B, C, M, N, K)
#define T 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	__shared__ float As[T][T], Bs[T][T];
	int tx = threadIdx.x, ty = threadIdx.y, n = blockIdx.x * T + tx, m = blockIdx.y * T + ty;
	float acc = 0.0f;
	for (int k0 = 0; k0 < K; k0 += T) {
		As[ty][tx] = (m < M && k0 + tx < K) ? A[m * K + k0 + tx] : 0.0f;
		Bs[ty][tx] = (n < N && k0 + ty < K) ? B[(k0 + ty) * N + n] : 0.0f;
		for (int k = 0; k < T; k++)
			acc += As[ty][k] * Bs[k][tx];
	}
	if (m < M && n < N)
		C[m * N + n] = acc;
}
