// Correct: warp-synchronous reduction in shared memory done right for independent thread scheduling:
// each step reads into a register, __syncwarp, writes, __syncwarp.
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
	__syncwarp();
	for (int k = 16; k > 0; k >>= 1) {
		float v = sdata[t] + sdata[t + k];
		__syncwarp();
		sdata[t] = v;
		__syncwarp();
	}
	if (t == 0)
		y[row] = sdata[0];
}
