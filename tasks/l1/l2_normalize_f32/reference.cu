// Reference: L2 normalisation of each row of x[B, D], one thread per row: y = x / max(||x||_2, eps).
// kforge:launch l2norm_rows grid=(cdiv(B,128)) block=(128) args=(x, y, B, D, eps)
extern "C" __global__ void l2norm_rows(const float *x, float *y, int B, int D, float eps)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *xr = x + (long long)row * D;
	float sq = 0.0f;
	for (int i = 0; i < D; ++i)
		sq += xr[i] * xr[i];
	float inv = 1.0f / fmaxf(sqrtf(sq), eps);
	for (int i = 0; i < D; ++i)
		y[(long long)row * D + i] = xr[i] * inv;
}
