// Tuned baseline for rmsnorm_f32: RMSNorm over the rows of x[B, N]. One warp per row (8 rows per 256-thread
// block): lanes stride the row with float4 loads and stores when every row pointer is aligned (scalar loads
// otherwise and for the tail), sums stay in f32 and meet in xor shuffles, and the row is read again from
// L1/L2 for each pass rather than held in registers (N up to 4096 and beyond). Rows past B leave their whole
// warp idle, so every shuffle has all 32 lanes.
// kforge:launch rmsnorm_warp grid=(cdiv(B, 8)) block=(256) args=(x, weight, y, B, N, eps)
static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(256)
    rmsnorm_warp(const float *__restrict__ x, const float *__restrict__ weight, float *__restrict__ y, int B,
		 int N, float eps)
{
	const int lane = threadIdx.x & 31;
	const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
	if (row >= B)
		return;
	const float *xr = x + row * N;
	float *yr = y + row * N;
	const bool vec =
	    (((unsigned long long)xr | (unsigned long long)yr | (unsigned long long)weight) & 15) == 0;
	const int nv = vec ? N >> 2 : 0, done = nv << 2;
	float sq = 0.0f;
	for (int i = lane; i < nv; i += 32) {
		float4 q = reinterpret_cast<const float4 *>(xr)[i];
		sq += q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
	}
	for (int i = done + lane; i < N; i += 32) {
		float v = xr[i];
		sq += v * v;
	}
	const float rrms = 1.0f / sqrtf(warp_sum(sq) / (float)N + eps);
	for (int i = lane; i < nv; i += 32) {
		float4 q = reinterpret_cast<const float4 *>(xr)[i];
		float4 ww = reinterpret_cast<const float4 *>(weight)[i];
		reinterpret_cast<float4 *>(yr)[i] =
		    make_float4(q.x * rrms * ww.x, q.y * rrms * ww.y, q.z * rrms * ww.z, q.w * rrms * ww.w);
	}
	for (int i = done + lane; i < N; i += 32)
		yr[i] = xr[i] * rrms * weight[i];
}
