// Wrong: every thread of the block stores its partial sum to the row's output: on a GPU whichever store
// lands last wins; two threads write the same bytes with no atomic and no barrier between.
// kforge:launch rowsum grid=(B) block=(64) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	y[row] = s;
}
