// One thread per row, statistics accumulated in double: exact enough that inputs with a large mean
// (offset) do not move the reference.
// kforge:launch layernorm grid=(cdiv(B, 64)) block=(64) args=(x, w, b, y, B, N, eps)
extern "C" __global__ void layernorm(const float *x, const float *w, const float *b, float *y, int B, int N,
				     float eps)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= B)
		return;
	const float *row = x + (long long)r * N;
	double m = 0.0, v = 0.0;
	for (int i = 0; i < N; i++)
		m += row[i];
	m /= N;
	for (int i = 0; i < N; i++)
		v += (row[i] - m) * (row[i] - m);
	v /= N;
	double rs = 1.0 / sqrt(v + (double)eps);
	for (int i = 0; i < N; i++)
		y[(long long)r * N + i] = (float)((row[i] - m) * rs * w[i] + b[i]);
}
