// Cost-model corpus, occupancy_latency (the fast side): the reference's kernel and block, without the
// unused dynamic shared memory: 8 blocks of 8 warps fit on an sm_90 SM (100% occupancy), so the timing
// shape's 132 * 8 blocks run as one wave and 64 warps per SM overlap their load latencies.
// kforge:launch chase grid=(cdiv(N, 256)) block=(256) args=(next, y, N, S)
extern "C" __global__ void __launch_bounds__(256) chase(const int *next, int *y, int N, int S)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	int idx = (i >> 5) & 1023;
	for (int s = 0; s < S; s++)
		idx = next[idx];
	y[i] = idx;
}
