// Wrong: one partial sum per warp belongs in part[], but the store was forgotten: thread 0 adds up four
// __shared__ floats nothing wrote (a host compiler would even fold them to the zeros of static storage).
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float part[4];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += blockDim.x)
		s += x[row * N + i];
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	__syncthreads();
	if (t == 0)
		y[row] = s + part[1] + part[2] + part[3];
}
