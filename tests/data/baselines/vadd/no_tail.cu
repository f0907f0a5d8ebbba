// Broken on purpose (tests/integration/baselines.sh): float4 loads with no tail and no bounds check,
// the "fast" baseline that only works when N is a multiple of 4 (it reads and writes past the end).
// kforge:launch vector_add_v4 grid=(max(1, min(cdiv(N, 1024), 8192))) block=(256) args=(a, b, c, N)
extern "C" __global__ void __launch_bounds__(256)
    vector_add_v4(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, int N)
{
	const long long step = (long long)gridDim.x * blockDim.x;
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if ((((unsigned long long)a | (unsigned long long)b | (unsigned long long)c) & 15) == 0) {
		const long long n4 = (N + 3) >> 2;
		const float4 *a4 = reinterpret_cast<const float4 *>(a);
		const float4 *b4 = reinterpret_cast<const float4 *>(b);
		float4 *c4 = reinterpret_cast<float4 *>(c);
		for (long long i = t; i < n4; i += step) {
			float4 x = a4[i], y = b4[i];
			c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
		}
	} else {
		for (long long i = t; i < N; i += step)
			c[i] = a[i] + b[i];
	}
}
