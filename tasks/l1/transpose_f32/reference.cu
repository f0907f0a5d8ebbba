// Reference: out-of-place matrix transpose, x[M, N] -> y[N, M], one thread per output element.
// kforge:launch transpose grid=(cdiv(M,16), cdiv(N,16)) block=(16,16) args=(x, y, M, N)
extern "C" __global__ void transpose(const float *x, float *y, int M, int N)
{
	int m = blockIdx.x * blockDim.x + threadIdx.x; /* output column = input row */
	int n = blockIdx.y * blockDim.y + threadIdx.y; /* output row = input column */
	if (m >= M || n >= N)
		return;
	y[(long long)n * M + m] = x[(long long)m * N + n];
}
