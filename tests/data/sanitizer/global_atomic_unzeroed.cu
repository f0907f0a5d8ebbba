// Wrong: the same atomic accumulation without kforge:zero: the output holds the harness's poison, and
// the first atomicAdd reads it (an uninitialised read of an output, not a race).
// kforge:launch rowsum grid=(B, 4) block=(64) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int row = blockIdx.x;
	float s = 0.0f;
	for (int i = blockIdx.y * 64 + threadIdx.x; i < N; i += 256)
		s += x[row * N + i];
	atomicAdd(&y[row], s);
}
