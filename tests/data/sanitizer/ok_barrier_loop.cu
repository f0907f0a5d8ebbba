// Correct: a shared tile refilled in a loop, with a barrier after the fill and another before the next
// fill (the tiled-loop pattern), then a tree reduction with a barrier per level.
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float tile[128];
	__shared__ float part[128];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int base = 0; base < N; base += 128) {
		tile[t] = base + t < N ? x[row * N + base + t] : 0.0f;
		__syncthreads();
		/* every thread reads a neighbour's element: the barriers order it */
		s += tile[(t + 1) % 128];
		__syncthreads();
	}
	part[t] = s;
	__syncthreads();
	for (int k = 64; k > 0; k >>= 1) {
		if (t < k)
			part[t] += part[t + k];
		__syncthreads();
	}
	if (t == 0)
		y[row] = part[0];
}
