// Correct: a warp reduction whose mask names exactly the lanes that hold data (the edge shapes make
// some lanes return early), and a plain-read compare-and-swap loop (the atomicMax-for-float idiom) on a
// shared word other threads update atomically.
// kforge:launch rowmax grid=(B) block=(32) args=(x, y, B, N)
#include <math_constants.h>
__device__ float atomic_max_f(float *addr, float v)
{
	int *a = (int *)addr;
	int old = *a, assumed;
	while (__int_as_float(old) < v) {
		assumed = old;
		old = atomicCAS(a, assumed, __float_as_int(v));
		if (old == assumed)
			break;
	}
	return __int_as_float(old);
}
extern "C" __global__ void rowmax(const float *x, float *y, int B, int N)
{
	__shared__ float best;
	int t = threadIdx.x, row = blockIdx.x;
	if (t == 0)
		best = -CUDART_INF_F;
	__syncthreads();
	unsigned live = __ballot_sync(0xffffffffu, t < N);
	if (t >= N)
		return;
	float m = -CUDART_INF_F;
	for (int i = t; i < N; i += 32)
		m = fmaxf(m, x[row * N + i]);
	for (int o = 16; o > 0; o >>= 1) {
		float other = __shfl_down_sync(live, m, o);
		if (t + o < N && t + o < 32)
			m = fmaxf(m, other);
	}
	atomic_max_f(&best, m);
	__syncthreads();
	if (t == 0)
		y[row] = best;
}
