// Wrong: lanes past the row's end return early, then a full-mask shuffle reads them: undefined on the
// GPU (the cpu backend's "own value" made it look fine). Shows at the edge shapes (N < 32).
// kforge:launch rowsum grid=(B) block=(32) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int t = threadIdx.x, row = blockIdx.x;
	if (t >= N)
		return;
	float s = 0.0f;
	for (int i = t; i < N; i += 32)
		s += x[row * N + i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if (t == 0)
		y[row] = s;
}
