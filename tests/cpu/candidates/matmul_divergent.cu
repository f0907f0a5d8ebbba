// Buggy: threads outside the matrix return before the barriers, so the rows of Bs that those threads
// would have loaded hold stale data at the matrix edges (wrong on a GPU too). For tasks/examples/matmul_f32.
// kforge:launch mm grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
#define T 16
extern "C" __global__ void mm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N, int K)
{
	__shared__ float As[T][T + 1];
	__shared__ float Bs[T][T];
	int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
	if (r >= M || c >= N)
		return;
	float acc = 0.f;
	for (int k0 = 0; k0 < K; k0 += T) {
		As[threadIdx.y][threadIdx.x] = (r < M && k0 + threadIdx.x < K) ? A[(size_t)r * K + k0 + threadIdx.x] : 0.f;
		Bs[threadIdx.y][threadIdx.x] = (c < N && k0 + threadIdx.y < K) ? B[(size_t)(k0 + threadIdx.y) * N + c] : 0.f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < T; k++)
			acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
		__syncthreads();
	}
	if (r < M && c < N)
		C[(size_t)r * N + c] = acc;
}
