// Conformance: extern __shared__ (dynamic shared memory) at file scope and in a kernel, with __align__.
// kforge:launch reverse grid=(B) block=(N) smem=(N*4+16) args=(x, out)
extern __shared__ __align__(16) float buf[];
extern "C" __global__ void reverse(const float *x, float *out)
{
	extern __shared__ int ibuf[];
	unsigned n = blockDim.x, t = threadIdx.x, base = blockIdx.x * n;
	buf[t] = x[base + t];
	__syncthreads();
	out[base + t] = buf[n - 1 - t] + (float)(ibuf == (int *)buf);
}
