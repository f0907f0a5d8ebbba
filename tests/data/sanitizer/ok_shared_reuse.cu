// Correct: one shared buffer used for two phases (a max, then a sum of exp(x - max)), separated by
// barriers; a benign same-value flag write from several threads; softmax rows.
// kforge:launch softmax_rows grid=(B) block=(128) args=(x, y, B, N)
#include <math_constants.h>
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
	__shared__ float buf[128];
	__shared__ int any_big;
	int t = threadIdx.x, row = blockIdx.x;
	const float *xr = x + row * N;
	if (t == 0)
		any_big = 0;
	__syncthreads();
	float m = -CUDART_INF_F;
	for (int i = t; i < N; i += 128) {
		m = fmaxf(m, xr[i]);
		if (xr[i] > 1e30f)
			any_big = 1; /* every thread that sees one writes the same value */
	}
	buf[t] = m;
	__syncthreads();
	for (int k = 64; k > 0; k >>= 1) {
		if (t < k)
			buf[t] = fmaxf(buf[t], buf[t + k]);
		__syncthreads();
	}
	m = buf[0];
	__syncthreads(); /* everyone has the max before the buffer is reused */
	float s = 0.0f;
	for (int i = t; i < N; i += 128)
		s += __expf(xr[i] - m);
	buf[t] = s;
	__syncthreads();
	for (int k = 64; k > 0; k >>= 1) {
		if (t < k)
			buf[t] += buf[t + k];
		__syncthreads();
	}
	s = buf[0] + (float)any_big * 0.0f;
	for (int i = t; i < N; i += 128)
		y[row * N + i] = __expf(xr[i] - m) / s;
}
