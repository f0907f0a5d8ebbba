// Cost-model corpus, hostile (for ../copy_strided/task.json): a correct copy that is fast only where a
// careless sampler looks. Blocks 0..63 copy the first 64 * 256 elements coalesced; every later block
// copies its 256 elements of the rest with the reference's column walk (the rest seen as cdiv(N - 16384,
// 32) rows of 32 floats, consecutive threads 32 floats apart). At the timing shape (N = 1 << 24) the
// coalesced part is 64 of 65600 blocks: the kernel costs what the reference costs.
// kforge:launch copy_front grid=(64 + cdiv(N, 256) + 1) block=(256) args=(x, y, N)
extern "C" __global__ void copy_front(const float *x, float *y, int N)
{
	const long long F = 64 * 256; /* elements the front blocks copy */
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (blockIdx.x < 64) {
		if (t < N)
			y[t] = x[t];
		return;
	}
	const long long rest = N - F;
	if (rest <= 0)
		return;
	const long long R = (rest + 31) / 32, u = t - F;
	if (u >= 32 * R)
		return;
	const long long i = F + (u % R) * 32 + u / R;
	if (i < N)
		y[i] = x[i];
}
