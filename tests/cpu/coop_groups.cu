// Conformance: cooperative groups this_thread_block() and tiled_partition<32>/<8> with cg::reduce.
// kforge:launch cg_sum grid=(2) block=(128) args=(x, out)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_sum(const int *x, int *out)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	cg::thread_block_tile<8> oct = cg::tiled_partition<8>(block);
	__shared__ int part[4];
	int v = x[blockIdx.x * 128 + block.thread_rank()];
	int ws = cg::reduce(warp, v, cg::plus<int>());
	int om = cg::reduce(oct, v, cg::greater<int>());
	if (warp.thread_rank() == 0)
		part[warp.meta_group_rank()] = ws;
	block.sync();
	if (block.thread_rank() == 0)
		out[3 * blockIdx.x] = part[0] + part[1] + part[2] + part[3];
	if (oct.thread_rank() == 0 && oct.meta_group_rank() == 5)
		out[3 * blockIdx.x + 1] = om;
	int down = warp.shfl_down(v, 3);
	if (block.thread_rank() == 40)
		out[3 * blockIdx.x + 2] = down;
}
