// Wrong: four blocks per row write partial sums to scratch and the row's last block adds them up,
// trusting that blocks run in order, as they do on the cpu backend. A GPU runs them concurrently: with
// no __threadfence and no atomic ticket the partials may not be there yet (ok_fence_last_block.cu).
// kforge:scratch part f32 (4*B)
// kforge:launch rowsum grid=(4, B) block=(64) args=(x, y, part, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, float *part, int B, int N)
{
	__shared__ float red[64];
	int t = threadIdx.x, q = blockIdx.x, row = blockIdx.y;
	float s = 0.0f;
	for (int i = q * 64 + t; i < N; i += 256)
		s += x[row * N + i];
	red[t] = s;
	__syncthreads();
	for (int k = 32; k > 0; k >>= 1) {
		if (t < k)
			red[t] += red[t + k];
		__syncthreads();
	}
	if (t == 0)
		part[row * 4 + q] = red[0];
	if (q == 3 && t == 0)
		y[row] = part[row * 4] + part[row * 4 + 1] + part[row * 4 + 2] + part[row * 4 + 3];
}
