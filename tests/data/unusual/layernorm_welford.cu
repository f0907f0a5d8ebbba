// LayerNorm in fp32 with Welford's running mean and variance, one thread per row (sequential): the
// least accurate correct formulation here, still well inside the offset tolerance.
// kforge:launch layernorm grid=(cdiv(B, 32)) block=(32) args=(x, w, b, y, B, N, eps)
extern "C" __global__ void layernorm(const float *x, const float *w, const float *b, float *y, int B, int N,
				     float eps)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= B)
		return;
	const float *row = x + (long long)r * N;
	float mean = 0.0f, m2 = 0.0f;
	for (int i = 0; i < N; i++) {
		float d = row[i] - mean;
		mean += d / (i + 1);
		m2 += d * (row[i] - mean);
	}
	float rs = rsqrtf(m2 / N + eps);
	for (int i = 0; i < N; i++)
		y[(long long)r * N + i] = (row[i] - mean) * rs * w[i] + b[i];
}
