// llm.c residual_forward_kernel2: 128-bit loads and stores (x128 = 4 floats per thread), no tail: the
// element count must be a multiple of 4, which the task's constraint on C guarantees. The launch passes
// the flattened size B*T*C as llm.c's host code does.
// kforge:launch residual_forward_kernel2 grid=(cdiv(B*T*C, 4 * 512)) block=(512) args=(out, inp1, inp2, B*T*C)
struct alignas(16) x128 {
	float v[4];
};
__device__ inline x128 load128cs(const float *p)
{
	return *reinterpret_cast<const x128 *>(p);
}
__device__ inline void store128(float *p, x128 v)
{
	*reinterpret_cast<x128 *>(p) = v;
}
extern "C" __global__ void residual_forward_kernel2(float *out, const float *inp1, const float *inp2, int N)
{
	int idx = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
	if (idx < N) {
		x128 a = load128cs(inp1 + idx), b = load128cs(inp2 + idx), c;
		for (int k = 0; k < 4; k++)
			c.v[k] = a.v[k] + b.v[k];
		store128(out + idx, c);
	}
}
