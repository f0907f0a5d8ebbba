// Shipped LayerNorm for tasks/l1/layernorm_f32: one 256-thread block per row with two block reductions
// (mean, then the centred sum of squares: the same two-pass formula as the reference, so no cancellation)
// built from warp shuffles; loads are coalesced along the row instead of one thread walking a row alone.

static __device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// Block-wide sum for blockDim.x a multiple of 32; every thread gets it; sh is reusable on return.
static __device__ float block_sum(float v, float *sh)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
	v = warp_sum(v);
	if (lane == 0)
		sh[warp] = v;
	__syncthreads();
	v = lane < n_warps ? sh[lane] : 0.0f;
	v = warp_sum(v);
	__syncthreads();
	return v;
}

// kforge:launch layernorm_rows grid=(B) block=(256) args=(x, weight, bias, y, B, N, eps)
extern "C" __global__ void layernorm_rows(const float *x, const float *weight, const float *bias, float *y, int B,
					   int N, float eps)
{
	__shared__ float sh[32];
	const float *xr = x + (long long)blockIdx.x * N;
	float *yr = y + (long long)blockIdx.x * N;
	float s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += xr[i];
	float mean = block_sum(s, sh) / (float)N;
	float sq = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x) {
		float d = xr[i] - mean;
		sq += d * d;
	}
	float rstd = 1.0f / sqrtf(block_sum(sq, sh) / (float)N + eps);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		yr[i] = (xr[i] - mean) * rstd * weight[i] + bias[i];
}
