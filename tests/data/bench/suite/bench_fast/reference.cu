// Deliberately slow reference (bench tests), slow on both clocks: eight redundant barriers per thread make
// every block switch fibers eight times on the cpu backend (CPU clock), and consecutive threads handle
// elements 32 floats apart (thread t: element (t % R) * 32 + t / R, R = cdiv(N, 32), a bijection of
// [0, 32 R)), so each warp request touches 32 sectors instead of 4 on a GPU (the cost model's clock).
// kforge:launch scale grid=(cdiv(32 * cdiv(N, 32), 128)) block=(128) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long R = (N + 31) / 32;
	long long i = (t % R) * 32 + t / R;
	for (int k = 0; k < 8; k++)
		__syncthreads();
	if (i < N)
		y[i] = 2.0f * x[i];
}
