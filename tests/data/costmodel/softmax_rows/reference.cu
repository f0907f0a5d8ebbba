// Cost-model corpus, softmax_rows (the slow side): one thread per row, looping over its row three times
// (the max, the sum of exp(x - max), the writes). The lanes of a warp are a row (4N bytes) apart, so every
// load and store of a warp touches 32 sectors; at B = 4096 the whole grid is 128 warps (under one warp
// per SM scheduler on a 132-SM part), so nothing hides the latency either.
// kforge:launch softmax_thread grid=(cdiv(B, 256)) block=(256) args=(x, y, B, N)
extern "C" __global__ void softmax_thread(const float *x, float *y, int B, int N)
{
	const long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *xr = x + row * N;
	float *yr = y + row * N;
	float m = -3.402823466e+38f; /* -FLT_MAX: NVRTC has no <float.h> */
	for (int i = 0; i < N; i++)
		m = fmaxf(m, xr[i]);
	float s = 0.0f;
	for (int i = 0; i < N; i++)
		s += expf(xr[i] - m);
	for (int i = 0; i < N; i++)
		yr[i] = expf(xr[i] - m) / s;
}
