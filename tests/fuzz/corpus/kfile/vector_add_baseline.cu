// Tuned baseline for vector_add_f32: a grid-stride loop over float4 (three 16-byte accesses per four
// elements), a scalar tail for the last N % 4 elements and a scalar loop when a pointer is not 16-byte
// aligned; the grid is capped at a few waves so each thread takes several steps. The add is exact, as in the
// reference.
// kforge:launch vector_add_v4 grid=(max(1, min(cdiv(N, 1024), 8192))) block=(256) args=(a, b, c, N)
extern "C" __global__ void __launch_bounds__(256)
    vector_add_v4(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int N)
{
	const long long step = (long long)gridDim.x * blockDim.x;
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if ((((unsigned long long)a | (unsigned long long)b | (unsigned long long)c) & 15) == 0) {
		const long long n4 = N >> 2;
		const float4 *a4 = reinterpret_cast<const float4 *>(a);
		const float4 *b4 = reinterpret_cast<const float4 *>(b);
		float4 *c4 = reinterpret_cast<float4 *>(c);
		for (long long i = t; i < n4; i += step) {
			float4 x = a4[i], y = b4[i];
			c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
		}
		for (long long i = (n4 << 2) + t; i < N; i += step)
			c[i] = a[i] + b[i];
	} else {
		for (long long i = t; i < N; i += step)
			c[i] = a[i] + b[i];
	}
}
