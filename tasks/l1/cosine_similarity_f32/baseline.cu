// Tuned baseline for cosine_similarity_f32: one warp per row (8 rows per 256-thread block), each lane
// striding the row with float4 loads of a and b when both rows are 16-byte aligned (D % 4 == 0) and scalar
// loads otherwise, the three sums (a.b, a.a, b.b) kept in f32 and combined with xor shuffles. Rows past B
// leave the whole warp idle (row is uniform within a warp, so every shuffle has all lanes).
// kforge:launch cosine_warp grid=(cdiv(B, 8)) block=(256) args=(a, b, y, B, D, eps)
extern "C" __global__ void __launch_bounds__(256)
    cosine_warp(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y, int B, int D,
		float eps)
{
	const int lane = threadIdx.x & 31;
	const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
	if (row >= B)
		return;
	const float *ar = a + row * D, *br = b + row * D;
	float dot = 0.0f, na = 0.0f, nb = 0.0f;
	int done = 0;
	if ((((unsigned long long)ar | (unsigned long long)br) & 15) == 0) {
		const float4 *a4 = reinterpret_cast<const float4 *>(ar);
		const float4 *b4 = reinterpret_cast<const float4 *>(br);
		const int n4 = D >> 2;
		for (int i = lane; i < n4; i += 32) {
			float4 u = a4[i], v = b4[i];
			dot += u.x * v.x + u.y * v.y + u.z * v.z + u.w * v.w;
			na += u.x * u.x + u.y * u.y + u.z * u.z + u.w * u.w;
			nb += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
		}
		done = n4 << 2;
	}
	for (int i = done + lane; i < D; i += 32) {
		float u = ar[i], v = br[i];
		dot += u * v;
		na += u * u;
		nb += v * v;
	}
	for (int o = 16; o > 0; o >>= 1) {
		dot += __shfl_xor_sync(0xffffffffu, dot, o);
		na += __shfl_xor_sync(0xffffffffu, na, o);
		nb += __shfl_xor_sync(0xffffffffu, nb, o);
	}
	if (lane == 0)
		y[row] = dot / (fmaxf(sqrtf(na), eps) * fmaxf(sqrtf(nb), eps));
}
