// Reference for softmax_rows_f32: one block of 256 threads per row. Subtracting the row maximum
// keeps exp() finite for any finite input; the two tree reductions need a power-of-two block.
// kforge:launch softmax_rows grid=(B) block=(256) smem=(256*4) args=(x, y, B, N)
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
	extern __shared__ float red[];
	const int t = threadIdx.x;
	const float *xr = x + (long long)blockIdx.x * N;
	float *yr = y + (long long)blockIdx.x * N;

	float m = -3.402823466e+38f;
	for (int i = t; i < N; i += blockDim.x)
		m = fmaxf(m, xr[i]);
	red[t] = m;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] = fmaxf(red[t], red[t + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();

	float sum = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		sum += expf(xr[i] - m);
	red[t] = sum;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	sum = red[0];

	for (int i = t; i < N; i += blockDim.x)
		yr[i] = expf(xr[i] - m) / sum;
}
