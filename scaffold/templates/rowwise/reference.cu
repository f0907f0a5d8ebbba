// Reference for @NAME@ (from the rowwise template): one thread per row; the mean of squares is accumulated
// in double (the exact value rounded once), then every element is scaled.
// kforge:launch rms_rows grid=(cdiv(B, 128)) block=(128) args=(x, y, eps, B, N)
extern "C" __global__ void rms_rows(const float *x, float *y, float eps, int B, int N)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *xr = x + (long long)row * N;
	float *yr = y + (long long)row * N;
	double ss = 0.0;
	for (int i = 0; i < N; ++i)
		ss += (double)xr[i] * (double)xr[i];
	float inv = (float)(1.0 / sqrt(ss / N + (double)eps));
	for (int i = 0; i < N; ++i)
		yr[i] = xr[i] * inv;
}
