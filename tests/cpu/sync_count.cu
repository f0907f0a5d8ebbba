// Conformance: __syncthreads_count, __syncthreads_and, __syncthreads_or.
// kforge:launch sync_count grid=(2) block=(96) args=(x, out)
extern "C" __global__ void sync_count(const int *x, int *out)
{
	int v = x[blockIdx.x * blockDim.x + threadIdx.x];
	int c = __syncthreads_count(v > 0);
	int a = __syncthreads_and(v > -100);
	int o = __syncthreads_or(v > 1000);
	if (threadIdx.x == 5) {
		out[3 * blockIdx.x + 0] = c;
		out[3 * blockIdx.x + 1] = a;
		out[3 * blockIdx.x + 2] = o;
	}
}
