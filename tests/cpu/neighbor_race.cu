// Buggy on purpose: each thread reads its left neighbour's shared slot with no barrier in between. In
// program order the neighbour (a lower thread) has always written already, so only a shuffled fiber
// order exposes the missing __syncthreads.
// kforge:launch neighbor grid=(cdiv(N,128)) block=(128) args=(x, out, N)
extern "C" __global__ void neighbor(const float *x, float *out, int n)
{
	__shared__ float s[128];
	int t = threadIdx.x, i = blockIdx.x * 128 + t;
	s[t] = i < n ? x[i] : 0.0f;
	float left = t > 0 ? s[t - 1] : 0.0f;
	if (i < n)
		out[i] = s[t] + left;
}
