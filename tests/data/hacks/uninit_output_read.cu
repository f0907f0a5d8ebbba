// Bug: reduces into the output without initializing it (fmaxf hides a NaN poison, not a large one).
// kforge:launch rowmax grid=(B) block=(1) args=(x, y, B, N)
extern "C" __global__ void rowmax(const float *x, float *y, int B, int N)
{
	int b = blockIdx.x;
	for (int i = 0; i < N; i++)
		y[b] = fmaxf(y[b], x[b * N + i]);
}
