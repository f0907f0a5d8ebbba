// Cost-model corpus, copy_strided (the fast side): one thread per element, consecutive threads on
// consecutive floats, so a warp's load and store are 4 full 32-byte sectors each.
// kforge:launch copy grid=(cdiv(N, 256)) block=(256) args=(x, y, N)
extern "C" __global__ void copy(const float *x, float *y, int N)
{
	const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = x[i];
}
