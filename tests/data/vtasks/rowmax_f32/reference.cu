// kforge:launch rowmax grid=(B) block=(1) args=(x, y, B, N)
extern "C" __global__ void rowmax(const float *x, float *y, int B, int N)
{
	int b = blockIdx.x;
	float m = x[(long long)b * N];
	for (int i = 1; i < N; i++)
		m = fmaxf(m, x[(long long)b * N + i]);
	y[b] = m;
}
