// Wrong: the launch asks for 128 floats of dynamic shared memory and the kernel uses 256.
// kforge:launch rowsum grid=(B) block=(256) smem=(512) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	extern __shared__ float sdata[];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += 256)
		s += x[row * N + i];
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
