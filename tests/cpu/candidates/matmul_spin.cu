// Buggy: never terminates; the session's step timeout ends it. For tasks/examples/matmul_f32.
// kforge:launch mm grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void mm(const float *A, const float *B, float *C, int M, int N, int K)
{
	volatile int k = 0;
	while (k >= 0)
		k = (k + 1) & 0xffff;
}
