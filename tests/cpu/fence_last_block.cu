// Conformance: __threadfence and an atomic ticket: the last block to finish sums every block's partial.
// kforge:launch fence_sum grid=(cdiv(N,128)) block=(128) args=(x, partial, ticket, out, N)
extern "C" __global__ void fence_sum(const float *x, float *partial, unsigned *ticket, float *out, int n)
{
	__shared__ float s[128];
	__shared__ bool last;
	unsigned t = threadIdx.x, i = blockIdx.x * 128 + t;
	s[t] = i < (unsigned)n ? x[i] : 0.f;
	__syncthreads();
	for (unsigned st = 64; st > 0; st >>= 1) {
		if (t < st)
			s[t] += s[t + st];
		__syncthreads();
	}
	if (t == 0) {
		partial[blockIdx.x] = s[0];
		__threadfence();
		unsigned v = atomicInc(ticket, gridDim.x);
		last = (v == gridDim.x - 1);
	}
	__syncthreads();
	if (last && t == 0) {
		float sum = 0.f;
		for (unsigned b = 0; b < gridDim.x; b++)
			sum += ((volatile float *)partial)[b];
		*out = sum;
	}
}
