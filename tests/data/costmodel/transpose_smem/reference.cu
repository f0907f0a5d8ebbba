// Cost-model corpus, transpose_smem (the slow side): a 32 x 32 tile per block of 32 x 8 threads, each thread
// moving four elements. Global loads and stores are coalesced (a warp reads one tile row and writes one
// tile row); the tile is float[32][32], so the read of a tile column, tile[threadIdx.x][r], puts the 32
// lanes of a warp 32 floats apart: all in one bank, a 32-way conflict (32 wavefronts per request).
// kforge:launch transpose grid=(cdiv(N, 32), cdiv(N, 32)) block=(32, 8) args=(x, y, N)
extern "C" __global__ void transpose(const float *x, float *y, int N)
{
	__shared__ float tile[32][32];
	int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
	for (int k = 0; k < 32; k += 8)
		if (c < N && r + k < N)
			tile[threadIdx.y + k][threadIdx.x] = x[(long long)(r + k) * N + c];
	__syncthreads();
	/* the output tile: rows blockIdx.x * 32 + ..., columns blockIdx.y * 32 + threadIdx.x */
	c = blockIdx.y * 32 + threadIdx.x;
	r = blockIdx.x * 32 + threadIdx.y;
	for (int k = 0; k < 32; k += 8)
		if (c < N && r + k < N)
			y[(long long)(r + k) * N + c] = tile[threadIdx.x][threadIdx.y + k];
}
