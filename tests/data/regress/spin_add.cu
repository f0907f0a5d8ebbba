// Test data for kforge regress on a GPU (tests/gpu/device-check.sh): vector_add_f32 with a fixed amount
// of dependent f32 work per element, so its run time is set by SPIN (compute-bound: ~2 ms at the task's
// N = 16M timing shape on an H200) and spin_add_slow.cu, with SPIN 10% larger, is ~10% slower on purpose.
// The output is exactly a + b; the empty volatile asm keeps the chain from being optimized away (and makes
// the file GPU-only: the cpu backend does not run inline asm).
#define SPIN 4000 /* dependent FMAs per element */

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
