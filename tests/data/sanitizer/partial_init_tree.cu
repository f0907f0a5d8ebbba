// Wrong: `if (t < N) sdata[t] = s;` then a tree reduction over all 256 slots: when a row has fewer than
// 256 elements (the edge shapes), the slots past N are never written and the tree reads them.
// kforge:launch rowsum grid=(B) block=(256) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float sdata[256];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += 256)
		s += x[row * N + i];
	if (t < N)
		sdata[t] = s;
	__syncthreads();
	for (int k = 128; k > 0; k >>= 1) {
		if (t < k)
			sdata[t] += sdata[t + k];
		__syncthreads();
	}
	if (t == 0)
		y[row] = sdata[0];
}
