// One thread per row: simple and obviously correct (it defines truth, not speed).
// kforge:launch softmax_rows grid=(cdiv(B,64)) block=(64) args=(x, y, B, N)
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B)
		return;
	const float *row = x + (long long)b * N;
	float m = row[0];
	for (int i = 1; i < N; i++)
		m = fmaxf(m, row[i]);
	double s = 0.0;
	for (int i = 0; i < N; i++)
		s += exp((double)row[i] - (double)m);
	for (int i = 0; i < N; i++)
		y[(long long)b * N + i] = (float)(exp((double)row[i] - (double)m) / s);
}
