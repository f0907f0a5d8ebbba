// Compile fixture: a plain element-wise kernel with static shared memory (registers > 0, smem 1024 B).
// kforge:launch scale grid=(cdiv(N,256)) block=(256) args=(x, y, N)
extern "C" __global__ void scale(const float *x, float *y, int N)
{
	__shared__ float tile[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = i < N ? x[i] : 0.0f;
	__syncthreads();
	if (i < N)
		y[i] = 2.0f * tile[threadIdx.x] + tile[255 - threadIdx.x];
}
