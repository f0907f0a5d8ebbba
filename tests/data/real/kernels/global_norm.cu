// llm.c global_norm_squared: a templated kernel (the parameter type), grid-stride over a size_t count, a
// block reduction and one atomicAdd per block into an output the host code zeroes first.
// kforge:zero out
// kforge:launch global_norm_squared_kernel<float> grid=(min(cdiv(N, 512), 64)) block=(512) args=(out, x, long(N))
__device__ inline float warpReduceSum(float val)
{
	for (int offset = 16; offset > 0; offset /= 2)
		val += __shfl_xor_sync(0xFFFFFFFF, val, offset);
	return val;
}
__device__ inline float blockReduceSum(float val)
{
	__shared__ float shared[32];
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, n_warps = blockDim.x / 32;
	val = warpReduceSum(val);
	if (lane == 0)
		shared[warp] = val;
	__syncthreads();
	val = lane < n_warps ? shared[lane] : 0.0f;
	return warpReduceSum(val);
}
template <class T> __device__ float global_norm_squared_for_range(const T *data, size_t count)
{
	size_t index = blockIdx.x * blockDim.x + threadIdx.x;
	size_t grid_width = blockDim.x * gridDim.x;
	float accumulator = 0.f;
	for (size_t i = index; i < count; i += grid_width)
		accumulator += (float)data[i] * (float)data[i];
	return blockReduceSum(accumulator);
}
template <class T> __global__ void global_norm_squared_kernel(float *out, const T *data, size_t count)
{
	float block_sum = global_norm_squared_for_range(data, count);
	if (threadIdx.x == 0)
		atomicAdd(out, block_sum);
}
