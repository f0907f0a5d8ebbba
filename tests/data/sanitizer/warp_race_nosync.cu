// Wrong: warp-synchronous reduction in shared memory with no __syncwarp: correct only if the 32 lanes
// run in lockstep, which independent thread scheduling (sm_70 and later) does not promise.
// kforge:launch rowsum grid=(B) block=(32) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float sdata[64];
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += 32)
		s += x[row * N + i];
	sdata[t] = s;
	sdata[t + 32] = 0.0f;
	volatile float *v = sdata;
	v[t] += v[t + 16];
	v[t] += v[t + 8];
	v[t] += v[t + 4];
	v[t] += v[t + 2];
	v[t] += v[t + 1];
	if (t == 0)
		y[row] = v[0];
}
