// Cost-model corpus, copy_strided (the slow side): the array seen as R = cdiv(N, 32) rows of 32 floats,
// walked column by column. Thread t copies element (t % R) * 32 + t / R, so the 32 lanes of a warp are 32
// floats (128 bytes) apart: every lane of every load and store is a sector of its own (32 sectors per warp
// request instead of 4), and a sector's other seven floats are touched only R threads later.
// kforge:launch copy_strided grid=(cdiv(32 * cdiv(N, 32), 256)) block=(256) args=(x, y, N, cdiv(N, 32))
extern "C" __global__ void copy_strided(const float *x, float *y, int N, int R)
{
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= 32LL * R)
		return;
	const long long i = (t % R) * 32 + t / R;
	if (i < N)
		y[i] = x[i];
}
