// Cost-model corpus, transpose_smem (the fast side): the reference's kernel with the tile padded to
// float[32][33], so the column read tile[threadIdx.x][r] puts the 32 lanes of a warp 33 floats apart: 32
// different banks, one wavefront per request. Global accesses are the reference's.
// kforge:launch transpose grid=(cdiv(N, 32), cdiv(N, 32)) block=(32, 8) args=(x, y, N)
extern "C" __global__ void transpose(const float *x, float *y, int N)
{
	__shared__ float tile[32][33];
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
