/* kforge cpu backend: <cooperative_groups.h>, the part the cpu backend runs: this_thread_block() and
 * tiled_partition<N>() (N a power of two <= 32) with sync, ranks, shuffles and votes. Grid, cluster,
 * coalesced and labeled groups are reported unsupported by the scan (sandbox/cpu/scan.c). */
#ifndef KF_SHIM_COOPERATIVE_GROUPS_H
#define KF_SHIM_COOPERATIVE_GROUPS_H
#include "kf_shim.h"

namespace cooperative_groups
{

struct thread_block {
	void sync() const
	{
		__syncthreads();
	}
	unsigned long long thread_rank() const
	{
		return threadIdx.x + (unsigned long long)blockDim.x *
					 (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
	}
	unsigned long long size() const
	{
		return (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
	}
	unsigned long long num_threads() const
	{
		return size();
	}
	dim3 group_index() const
	{
		return dim3(blockIdx.x, blockIdx.y, blockIdx.z);
	}
	dim3 thread_index() const
	{
		return dim3(threadIdx.x, threadIdx.y, threadIdx.z);
	}
	dim3 group_dim() const
	{
		return blockDim;
	}
	dim3 dim_threads() const
	{
		return blockDim;
	}
};

static __inline__ thread_block this_thread_block()
{
	return thread_block();
}

template <unsigned N> struct thread_block_tile {
	static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tile size must be a power of two <= 32");
	static unsigned linear()
	{
		return (unsigned)this_thread_block().thread_rank();
	}
	static unsigned mask()
	{
		return N == 32 ? 0xffffffffu : ((1u << N) - 1u) << ((linear() & 31u) / N * N);
	}
	void sync() const
	{
		__syncwarp(mask());
	}
	unsigned long long thread_rank() const
	{
		return linear() % N;
	}
	unsigned long long size() const
	{
		return N;
	}
	unsigned long long num_threads() const
	{
		return N;
	}
	unsigned long long meta_group_rank() const
	{
		return linear() / N;
	}
	unsigned long long meta_group_size() const
	{
		return (this_thread_block().size() + N - 1) / N;
	}
	template <class T> T shfl(T v, int src) const
	{
		return __shfl_sync(mask(), v, src, N);
	}
	template <class T> T shfl_down(T v, unsigned d) const
	{
		return __shfl_down_sync(mask(), v, d, N);
	}
	template <class T> T shfl_up(T v, unsigned d) const
	{
		return __shfl_up_sync(mask(), v, d, N);
	}
	template <class T> T shfl_xor(T v, int m) const
	{
		return __shfl_xor_sync(mask(), v, m, N);
	}
	unsigned ballot(int p) const
	{
		unsigned b = __ballot_sync(mask(), p);
		return N == 32 ? b : (b >> ((linear() & 31u) / N * N)) & ((1u << N) - 1u);
	}
	int any(int p) const
	{
		return __any_sync(mask(), p);
	}
	int all(int p) const
	{
		return __all_sync(mask(), p);
	}
};

template <unsigned N, class P> static __inline__ thread_block_tile<N> tiled_partition(const P &)
{
	return thread_block_tile<N>();
}

template <class G> static __inline__ void sync(const G &g)
{
	g.sync();
}

template <class T> struct plus {
	T operator()(T a, T b) const
	{
		return a + b;
	}
};
template <class T> struct less {
	T operator()(T a, T b) const
	{
		return a < b ? a : b;
	}
};
template <class T> struct greater {
	T operator()(T a, T b) const
	{
		return a > b ? a : b;
	}
};
template <class T> struct bit_and {
	T operator()(T a, T b) const
	{
		return a & b;
	}
};
template <class T> struct bit_or {
	T operator()(T a, T b) const
	{
		return a | b;
	}
};
template <class T> struct bit_xor {
	T operator()(T a, T b) const
	{
		return a ^ b;
	}
};

/* cg::reduce over a tile: a butterfly, so every lane gets the result as on the GPU. */
template <unsigned N, class T, class Op> static __inline__ T reduce(const thread_block_tile<N> &g, T v, Op op)
{
	for (unsigned o = N / 2; o > 0; o /= 2)
		v = op(v, g.shfl_xor(v, (int)o));
	return v;
}

} // namespace cooperative_groups

#endif
