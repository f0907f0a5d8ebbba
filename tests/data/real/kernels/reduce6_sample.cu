// cuda-samples reduction, reduce6: templated on the element type, the block size and whether n is a
// power of two; the first pass leaves one partial sum per block in a scratch buffer, the second pass
// (another instantiation of the same template) sums the partials. The second launch's n is the first
// launch's grid size, an expression.
// kforge:scratch part f32 (min(cdiv(N, 512), 64))
// kforge:launch reduce6<float, 256, false> grid=(min(cdiv(N, 512), 64)) block=(256) smem=(256 * 4) args=(x, part, N)
// kforge:launch reduce6<float, 64, false> grid=(1) block=(64) smem=(64 * 4) args=(part, out, min(cdiv(N, 512), 64))
template <class T> struct SharedMemory {
	__device__ inline operator T *()
	{
		extern __shared__ int __smem[];
		return (T *)__smem;
	}
};
template <class T, unsigned int blockSize, bool nIsPow2> __global__ void reduce6(const T *g_idata, T *g_odata, unsigned int n)
{
	T *sdata = SharedMemory<T>();
	unsigned int tid = threadIdx.x;
	unsigned int gridSize = blockSize * gridDim.x;
	T mySum = 0;
	if (nIsPow2) {
		unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
		gridSize = gridSize << 1;
		while (i < n) {
			mySum += g_idata[i];
			if ((i + blockSize) < n)
				mySum += g_idata[i + blockSize];
			i += gridSize;
		}
	} else {
		unsigned int i = blockIdx.x * blockSize + threadIdx.x;
		while (i < n) {
			mySum += g_idata[i];
			i += gridSize;
		}
	}
	sdata[tid] = mySum;
	__syncthreads();
	if ((blockSize >= 512) && (tid < 256))
		sdata[tid] = mySum = mySum + sdata[tid + 256];
	__syncthreads();
	if ((blockSize >= 256) && (tid < 128))
		sdata[tid] = mySum = mySum + sdata[tid + 128];
	__syncthreads();
	if ((blockSize >= 128) && (tid < 64))
		sdata[tid] = mySum = mySum + sdata[tid + 64];
	__syncthreads();
	if (tid < 32) {
		if (blockSize >= 64)
			mySum += sdata[tid + 32];
		for (int offset = 32 / 2; offset > 0; offset /= 2)
			mySum += __shfl_down_sync(0xffffffff, mySum, offset);
	}
	if (tid == 0)
		g_odata[blockIdx.x] = mySum;
}
