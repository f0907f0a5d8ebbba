// Cost-model corpus, softmax_rows (the fast side): a copy of tasks/examples/softmax_rows_f32/baseline.cu.
//
// Tuned baseline for softmax_rows_f32: a row softmax, one warp per row (8 rows per 256-thread block). One
// pass computes the row max and the sum of exp(x - max) together (online rescaling: when a larger value
// arrives the sum so far is scaled by exp(old - new)), lanes merge their pairs with xor shuffles, a second
// pass writes; float4 loads and stores when the row is aligned, scalar otherwise and for the tail.
// Numerically the reference's formulation: every exponent is x - max <= 0, so large inputs cannot overflow.
// Rows past B leave their whole warp idle (a warp's row is uniform: full-mask shuffles).
// kforge:launch softmax_warp grid=(cdiv(B, 8)) block=(256) args=(x, y, B, N)

/* (m, s): the running max of a row and the sum of exp(x - m) so far; merging two rescales the smaller */
static __device__ __forceinline__ void push(float v, float &m, float &s)
{
	if (v > m) {
		s = s * expf(m - v) + 1.0f;
		m = v;
	} else {
		s += expf(v - m);
	}
}

static __device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
	float mm = fmaxf(m, m2);
	s = s * expf(m - mm) + s2 * expf(m2 - mm);
	m = mm;
}

extern "C" __global__ void __launch_bounds__(256)
    softmax_warp(const float *__restrict__ x, float *__restrict__ y, int B, int N)
{
	const int lane = threadIdx.x & 31;
	const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
	if (row >= B)
		return;
	const float *xr = x + row * N;
	float *yr = y + row * N;
	float m = -3.402823466e+38f, s = 0.0f; /* -FLT_MAX: NVRTC has no <float.h> */
	int done = 0;
	if ((((unsigned long long)xr | (unsigned long long)yr) & 15) == 0) {
		const float4 *x4 = reinterpret_cast<const float4 *>(xr);
		const int n4 = N >> 2;
		for (int i = lane; i < n4; i += 32) {
			float4 v = x4[i];
			push(v.x, m, s);
			push(v.y, m, s);
			push(v.z, m, s);
			push(v.w, m, s);
		}
		done = n4 << 2;
	}
	for (int i = done + lane; i < N; i += 32)
		push(xr[i], m, s);
	for (int o = 16; o > 0; o >>= 1) {
		float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
		merge(m, s, m2, s2);
	}
	if (done) {
		const float4 *x4 = reinterpret_cast<const float4 *>(xr);
		float4 *y4 = reinterpret_cast<float4 *>(yr);
		for (int i = lane; i < (done >> 2); i += 32) {
			float4 v = x4[i];
			y4[i] = make_float4(expf(v.x - m) / s, expf(v.y - m) / s, expf(v.z - m) / s,
					    expf(v.w - m) / s);
		}
	}
	for (int i = done + lane; i < N; i += 32)
		yr[i] = expf(xr[i] - m) / s;
}
