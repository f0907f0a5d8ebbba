// Reference: row-wise log-softmax of x[B, N], one thread per row: y = x - max - log(sum exp(x - max)).
// kforge:launch log_softmax_rows grid=(cdiv(B,128)) block=(128) args=(x, y, B, N)
extern "C" __global__ void log_softmax_rows(const float *x, float *y, int B, int N)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *xr = x + (long long)row * N;
	float *yr = y + (long long)row * N;
	float m = -3.402823466e+38f /* -FLT_MAX (NVRTC has no <float.h>) */;
	for (int i = 0; i < N; ++i)
		m = fmaxf(m, xr[i]);
	float s = 0.0f;
	for (int i = 0; i < N; ++i)
		s += expf(xr[i] - m);
	float lse = m + logf(s);
	for (int i = 0; i < N; ++i)
		yr[i] = xr[i] - lse;
}
