// Bug: a two-pass reduction whose scratch buffer is assumed to be zeroed.
// kforge:scratch part f32 (B)
// kforge:launch partial grid=(B) block=(1) args=(x, part, B, N)
// kforge:launch finish grid=(B) block=(1) args=(part, y, B)
extern "C" __global__ void partial(const float *x, float *part, int B, int N)
{
	int b = blockIdx.x;
	for (int i = 0; i < N; i++)
		part[b] += x[b * N + i];
}
extern "C" __global__ void finish(const float *part, float *y, int B)
{
	y[blockIdx.x] = part[blockIdx.x];
}
