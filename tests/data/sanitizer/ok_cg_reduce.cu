// Correct: cooperative-groups reduction: cg::reduce over 32-thread tiles, one shared slot per tile,
// the block's sync, then the first tile reduces the slots.
// kforge:launch rowsum grid=(B) block=(128) args=(x, y, B, N)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float slot[4];
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
	int t = threadIdx.x, row = blockIdx.x;
	float s = 0.0f;
	for (int i = t; i < N; i += 128)
		s += x[row * N + i];
	s = cg::reduce(tile, s, cg::plus<float>());
	if (tile.thread_rank() == 0)
		slot[tile.meta_group_rank()] = s;
	block.sync();
	if (tile.meta_group_rank() == 0) {
		float v = tile.thread_rank() < 4 ? slot[tile.thread_rank()] : 0.0f;
		v = cg::reduce(tile, v, cg::plus<float>());
		if (tile.thread_rank() == 0)
			y[row] = v;
	}
}
