// Compile fixture: CCCL headers (cuda/std, CUB) and cooperative groups resolve through include/cccl.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
namespace cg = cooperative_groups;
// kforge:launch block_sum grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void block_sum(const float *x, float *y, int N)
{
	typedef cub::BlockReduce<float, 128> Reduce;
	__shared__ typename Reduce::TempStorage tmp;
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	cuda::std::int64_t i = (cuda::std::int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < N ? x[i] : 0.0f;
	float w = cg::reduce(warp, v, cg::plus<float>());
	float s = Reduce(tmp).Sum(v);
	if (threadIdx.x == 0)
		y[blockIdx.x] = s + 0.0f * w + 0.0f * cuda::std::numeric_limits<float>::min();
}
