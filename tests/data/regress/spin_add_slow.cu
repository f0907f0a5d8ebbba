// Test data for kforge regress on a GPU: spin_add.cu slowed by 10% on purpose (SPIN 4400 instead of 4000
// dependent FMAs per element; the work is compute-bound, so the run time grows by ~10%). Same output.
#define SPIN 4400 /* 10% more than spin_add.cu: the slowdown on purpose */

// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	float x = a[i], y = b[i], z = x;
	for (int k = 0; k < SPIN; ++k)
		z = z * 0.999999f + 1e-7f;
	asm volatile("" ::"f"(z));
	c[i] = x + y;
}
