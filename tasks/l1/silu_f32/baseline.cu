// Tuned baseline for silu_f32: SiLU, as an expert writes a memory-bound element-wise kernel. A grid-stride
// loop over float4 (16-byte loads and stores, four elements per thread and step) with a scalar tail for the
// last (B*D) % 4 elements, and a scalar loop when a pointer is not 16-byte aligned; the grid is capped at a
// few waves so each thread takes several steps; indices are 64-bit (B*D passes 2^31 at the timing shape).
// Same formula and math functions as the reference.
// kforge:launch silu_v4 grid=(max(1, min(cdiv(B*D, 1024), 8192))) block=(256) args=(x, y, B, D)
static __device__ __forceinline__ float op(float x)
{
	return x / (1.0f + expf(-x));
}

extern "C" __global__ void __launch_bounds__(256)
    silu_v4(const float *__restrict__ in, float *__restrict__ out, int B, int D)
{
	const long long n = (long long)B * D;
	const long long step = (long long)gridDim.x * blockDim.x;
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if ((((unsigned long long)in | (unsigned long long)out) & 15) == 0) {
		const long long n4 = n >> 2;
		const float4 *in4 = reinterpret_cast<const float4 *>(in);
		float4 *out4 = reinterpret_cast<float4 *>(out);
		for (long long i = t; i < n4; i += step) {
			float4 v = in4[i];
			v.x = op(v.x);
			v.y = op(v.y);
			v.z = op(v.z);
			v.w = op(v.w);
			out4[i] = v;
		}
		for (long long i = (n4 << 2) + t; i < n; i += step)
			out[i] = op(in[i]);
	} else {
		for (long long i = t; i < n; i += step)
			out[i] = op(in[i]);
	}
}
