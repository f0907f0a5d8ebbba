// Test data for kforge regress: the shipped RMSNorm after an edit that no longer compiles (it calls a
// helper that was renamed away), as a kernel broken by a refactor or a toolchain change would be.

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

// kforge:launch rmsnorm_rows grid=(B) block=(256) args=(x, weight, y, B, N, eps)
extern "C" __global__ void rmsnorm_rows(const float *x, const float *weight, float *y, int B, int N, float eps)
{
	__shared__ float sh[32];
	const float *xr = x + (long long)blockIdx.x * N;
	float *yr = y + (long long)blockIdx.x * N;
	float sq = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		sq += xr[i] * xr[i];
	sq = block_reduce_sum(sq, sh); /* no such function any more */
	float rrms = 1.0f / sqrtf(sq / (float)N + eps);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		yr[i] = xr[i] * rrms * weight[i];
}
