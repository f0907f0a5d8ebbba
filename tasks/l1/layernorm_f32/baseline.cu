// Tuned baseline for layernorm_f32: LayerNorm over the rows of x[B, N]. One warp per row (8 rows per
// 256-thread block): lanes stride the row with float4 loads and stores when every row pointer is aligned
// (scalar loads otherwise and for the tail), sums stay in f32 and meet in xor shuffles, and the row is read
// again from L1/L2 for each pass rather than held in registers (N up to 4096 and beyond). Rows past B leave
// their whole warp idle, so every shuffle has all 32 lanes. Two passes for the statistics, as the reference:
// the mean first, then the mean of squared deviations (no E[x^2] - E[x]^2 cancellation when the mean is large
// against the spread).
// kforge:launch layernorm_warp grid=(cdiv(B, 8)) block=(256) args=(x, weight, bias, y, B, N, eps)
static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(256)
    layernorm_warp(const float *__restrict__ x, const float *__restrict__ weight,
		   const float *__restrict__ bias, float *__restrict__ y, int B, int N, float eps)
{
	const int lane = threadIdx.x & 31;
	const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
	if (row >= B)
		return;
	const float *xr = x + row * N;
	float *yr = y + row * N;
	const bool vec = (((unsigned long long)xr | (unsigned long long)yr | (unsigned long long)weight |
			   (unsigned long long)bias) &
			  15) == 0;
	const int nv = vec ? N >> 2 : 0, done = nv << 2;
	float sum = 0.0f;
	for (int i = lane; i < nv; i += 32) {
		float4 q = reinterpret_cast<const float4 *>(xr)[i];
		sum += q.x + q.y + q.z + q.w;
	}
	for (int i = done + lane; i < N; i += 32)
		sum += xr[i];
	const float mean = warp_sum(sum) / (float)N;
	float sq = 0.0f;
	for (int i = lane; i < nv; i += 32) {
		float4 q = reinterpret_cast<const float4 *>(xr)[i];
		sq += (q.x - mean) * (q.x - mean) + (q.y - mean) * (q.y - mean) +
		      (q.z - mean) * (q.z - mean) + (q.w - mean) * (q.w - mean);
	}
	for (int i = done + lane; i < N; i += 32) {
		float d = xr[i] - mean;
		sq += d * d;
	}
	const float rstd = 1.0f / sqrtf(warp_sum(sq) / (float)N + eps);
	for (int i = lane; i < nv; i += 32) {
		float4 q = reinterpret_cast<const float4 *>(xr)[i];
		float4 ww = reinterpret_cast<const float4 *>(weight)[i];
		float4 bb = reinterpret_cast<const float4 *>(bias)[i];
		reinterpret_cast<float4 *>(yr)[i] =
		    make_float4((q.x - mean) * rstd * ww.x + bb.x, (q.y - mean) * rstd * ww.y + bb.y,
				(q.z - mean) * rstd * ww.z + bb.z, (q.w - mean) * rstd * ww.w + bb.w);
	}
	for (int i = done + lane; i < N; i += 32)
		yr[i] = (xr[i] - mean) * rstd * weight[i] + bias[i];
}
