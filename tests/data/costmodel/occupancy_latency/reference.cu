// Cost-model corpus, occupancy_latency (the slow side): S dependent loads per thread, idx = next[idx], every
// lane of a warp on the same index (one sector per request, the 4 KiB table stays in L1), so each step
// waits out a load latency. The launch asks for 200 KiB of dynamic shared memory that the kernel never
// touches: only one 256-thread block (8 warps of 64, 12.5% occupancy) fits on an sm_90 SM, so at the
// timing shape (132 * 8 blocks) the grid runs in 8 waves of 8 warps per SM instead of one wave of 64.
// kforge:launch chase grid=(cdiv(N, 256)) block=(256) smem=(200 * 1024) args=(next, y, N, S)
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
