// Correct: the threadFenceReduction idiom across blocks: four blocks per row write partial sums to a
// scratch buffer, __threadfence, take a ticket with atomicInc; the last block of the row reads the
// partials (published by the fences) and resets the ticket (it was the last atomic on it).
// kforge:scratch part f32 (4*B)
// kforge:launch rowsum grid=(4, B) block=(64) args=(x, y, part, B, N)
__device__ unsigned tickets[64];
extern "C" __global__ void rowsum(const float *x, float *y, float *part, int B, int N)
{
	__shared__ float red[64];
	__shared__ bool last;
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
	if (t == 0) {
		part[row * 4 + q] = red[0];
		__threadfence();
		last = atomicInc(&tickets[row % 64], 3) == 3;
	}
	__syncthreads();
	if (last && t == 0) {
		y[row] = part[row * 4] + part[row * 4 + 1] + part[row * 4 + 2] + part[row * 4 + 3];
		tickets[row % 64] = 0;
	}
}
