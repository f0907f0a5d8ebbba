// Dynamic shared memory sized by the launch (smem=), one block per row, tree reductions.
// kforge:launch softmax_rows grid=(B) block=(256) smem=(256*4) args=(x, y, B, N)
#include <math_constants.h>
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
	extern __shared__ float buf[];
	int t = threadIdx.x;
	const float *row = x + (long long)blockIdx.x * N;
	float m = -CUDART_INF_F;
	for (int i = t; i < N; i += blockDim.x)
		m = fmaxf(m, row[i]);
	buf[t] = m;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1) {
		if (t < w)
			buf[t] = fmaxf(buf[t], buf[t + w]);
		__syncthreads();
	}
	m = buf[0];
	__syncthreads();
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += expf(row[i] - m);
	buf[t] = s;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w >>= 1) {
		if (t < w)
			buf[t] += buf[t + w];
		__syncthreads();
	}
	s = buf[0];
	for (int i = t; i < N; i += blockDim.x)
		y[(long long)blockIdx.x * N + i] = expf(row[i] - m) / s;
}
