// Conformance: static __shared__ (per block), __syncthreads tree reduction, blocks in parallel.
// kforge:launch block_sum grid=(cdiv(N,256)) block=(256) args=(x, out, N)
#define BLOCK 256
extern "C" __global__ void block_sum(const float *x, float *out, int n)
{
	__shared__ float s[BLOCK];
	unsigned t = threadIdx.x;
	unsigned i = blockIdx.x * BLOCK + t;
	s[t] = i < (unsigned)n ? x[i] : 0.0f;
	__syncthreads();
	for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
		if (t < stride)
			s[t] += s[t + stride];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}
