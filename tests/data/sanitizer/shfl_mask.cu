// Wrong: a half-warp mask, and the shuffle reads lanes outside it (lanes 0-15 take lanes 16-31's values).
// kforge:launch rowsum grid=(B) block=(32) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += 32)
		s += x[row * N + i];
	if (t < 16)
		s += __shfl_down_sync(0x0000ffffu, s, 16);
	for (int o = 8; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if (t == 0)
		y[row] = s;
}
