// Broken on purpose (tests/integration/baselines.sh, tests/unit/test_profiler_baselines.c): right for the
// first 48 launches of a worker, wrong after. Verification runs at most 41 launches per worker (its
// schedule has 40 steps at most, and a fresh worker re-checks), so this baseline passes it; the profile
// re-checks the outputs of its timed launches against the reference and rejects it before any speedup
// against it is reported.
// kforge:launch vector_add_late grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)
__device__ unsigned int launches;

extern "C" __global__ void vector_add_late(const float *a, const float *b, float *c, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int seen = *(volatile unsigned int *)&launches;
	if (i < N)
		c[i] = seen >= 48 ? a[i] + b[i] + 1.0f : a[i] + b[i];
	if (i == 0)
		atomicAdd(&launches, 1u);
}
