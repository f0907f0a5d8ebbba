// Uses inline PTX: unsupported on the cpu backend (never a wrong verdict). For tasks/examples/matmul_f32.
// kforge:launch mm grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void mm(const float *A, const float *B, float *C, int M, int N, int K)
{
	int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
	unsigned lane;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
	if (r < M && c < N) {
		float acc = 0.f;
		for (int k = 0; k < K; k++)
			acc += A[r * K + k] * B[k * N + c];
		C[r * N + c] = acc + 0.0f * lane;
	}
}
