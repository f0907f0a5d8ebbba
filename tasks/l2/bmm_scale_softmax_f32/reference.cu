// Reference: attention-score block: y[b] = softmax(scale * q[b] @ k[b]^T) over the last dimension.
// Launch 1: one thread per score, f32 dot product in increasing d, into scratch; launch 2: row softmax.
// kforge:scratch s f32 (BATCH*M*N)
// kforge:launch scores grid=(cdiv(N,16), cdiv(M,16), BATCH) block=(16,16) args=(q, k, s, BATCH, M, N, D, scale)
// kforge:launch softmax_rows grid=(cdiv(BATCH*M,128)) block=(128) args=(s, y, BATCH, M, N)
extern "C" __global__ void scores(const float *q, const float *k, float *s, int BATCH, int M, int N, int D,
				   float scale)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	long long b = blockIdx.z;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int d = 0; d < D; ++d)
		acc += q[(b * M + m) * D + d] * k[(b * N + n) * D + d];
	s[(b * M + m) * N + n] = acc * scale;
}

extern "C" __global__ void softmax_rows(const float *s, float *y, int BATCH, int M, int N)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= (long long)BATCH * M)
		return;
	const float *sr = s + r * N;
	float mx = sr[0];
	for (int n = 1; n < N; ++n)
		mx = fmaxf(mx, sr[n]);
	float sum = 0.0f;
	for (int n = 0; n < N; ++n)
		sum += expf(sr[n] - mx);
	for (int n = 0; n < N; ++n)
		y[r * N + n] = expf(sr[n] - mx) / sum;
}
