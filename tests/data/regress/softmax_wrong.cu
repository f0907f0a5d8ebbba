// Test data for kforge regress: the shipped softmax made wrong on purpose. The sum skips the last element
// of each row, so every output is a little too large; it still compiles everywhere.

// Sum / max over a warp of 32 lanes, every lane gets the result.
static __device__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

static __device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// Block-wide reductions for blockDim.x a multiple of 32 (<= 1024); every thread gets the result. sh holds
// one partial per warp; the trailing barrier lets the caller reuse sh at once.
static __device__ float block_max(float v, float *sh)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
	v = warp_max(v);
	if (lane == 0)
		sh[warp] = v;
	__syncthreads();
	v = lane < n_warps ? sh[lane] : -3.402823466e+38f;
	v = warp_max(v);
	__syncthreads();
	return v;
}

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

// kforge:launch softmax_rows grid=(B) block=(256) args=(x, y, B, N)
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
	__shared__ float sh[32];
	const float *xr = x + (long long)blockIdx.x * N;
	float *yr = y + (long long)blockIdx.x * N;
	float m = -3.402823466e+38f; /* -FLT_MAX: exp never overflows after subtracting the row max */
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		m = fmaxf(m, xr[i]);
	m = block_max(m, sh);
	float s = 0.0f;
	for (int i = threadIdx.x; i < N - 1; i += blockDim.x) /* the bug: the last element is left out */
		s += expf(xr[i] - m);
	s = block_sum(s, sh);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		yr[i] = expf(xr[i] - m) / s;
}
