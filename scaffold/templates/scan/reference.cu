// Reference for @NAME@ (from the scan template): one thread per row, accumulated in double so the reference
// is the exact prefix sum rounded once (any f32 scan order lies within tolerance of it).
// kforge:launch scan_rows grid=(cdiv(B, 128)) block=(128) args=(x, y, B, N)
extern "C" __global__ void scan_rows(const float *x, float *y, int B, int N)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *xr = x + (long long)row * N;
	float *yr = y + (long long)row * N;
	double acc = 0.0;
	for (int i = 0; i < N; ++i) {
		acc += (double)xr[i];
		yr[i] = (float)acc;
	}
}
