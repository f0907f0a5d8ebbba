// Conformance: 3-D grids and blocks; every built-in index variable and warpSize.
// kforge:launch grid3d grid=(3,2,2) block=(4,3,2) args=(out)
extern "C" __global__ void grid3d(int *out)
{
	int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	int tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	int nthreads = blockDim.x * blockDim.y * blockDim.z;
	int g = bx * nthreads + tx;
	out[4 * g + 0] = (threadIdx.x) | (threadIdx.y << 4) | (threadIdx.z << 8);
	out[4 * g + 1] = (blockIdx.x) | (blockIdx.y << 4) | (blockIdx.z << 8);
	out[4 * g + 2] = (blockDim.x) | (blockDim.y << 4) | (blockDim.z << 8);
	out[4 * g + 3] = (gridDim.x) | (gridDim.y << 4) | (gridDim.z << 8) | (warpSize << 12);
}
