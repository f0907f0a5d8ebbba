// Forgery: poison sniffing. Each thread skips its element when the output already holds a value that is
// not a poison pattern (NaN, or a huge magnitude): verification poisons before every launch, and a timing
// loop that did not would find the warm-up's results and skip everything. Against every poison pattern
// the timing protocol uses (it alternates NaN and a huge finite value), this does all the work.
// It stays honest except at the shape the cpu backend times (the largest public one, M=256 N=512).
// kforge:launch matmul grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (row >= M || col >= N)
		return;
	float old = (M == 256 && N == 512) ? C[(long long)row * N + col] : 0.0f;
	if ((M == 256 && N == 512) && old == old && fabsf(old) < 1e30f)
		return; /* "already computed" */
	float acc = 0.0f;
	for (int k = 0; k < K; k++)
		acc += A[(long long)row * K + k] * B[(long long)k * N + col];
	C[(long long)row * N + col] = acc;
}
