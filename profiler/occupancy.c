/* Theoretical occupancy: how many blocks of a kernel fit on one SM, and which resource stops more.
 * The arithmetic is that of NVIDIA's CUDA Occupancy Calculator (the spreadsheet shipped with the toolkit,
 * now Nsight Compute's occupancy section); the limits are the CUDA C++ Programming Guide's table
 * "Technical Specifications per Compute Capability" (CUDA 12.x/13.0 editions). */
#include "profiler/profiler.h"

#include <string.h>

/* Per-arch limits. Sources, per column:
 *  - max warps per SM, max blocks per SM, registers per SM/block/thread, shared memory per SM and the
 *    opt-in maximum per block: Programming Guide, compute capability table. cc 8.9 allows 24 resident
 *    blocks per SM there (8.6 allows 16); cc 12.0 allows 32 blocks and 48 warps.
 *  - register allocation unit 256 (registers per warp are rounded up to it), warp allocation
 *    granularity 4, shared memory allocation unit 128 B, and 1 KiB of shared memory reserved by the
 *    runtime per block on cc 8.0 and later: the Occupancy Calculator's "GPU data" sheet.
 * Shared memory per SM is the largest carveout (A100 164 KiB, GA10x/AD10x 100 KiB, H100/B200 228 KiB);
 * a block may use at most that minus the 1 KiB reserve (the opt-in limit). */
/* clang-format off */
static const struct kf_arch_limits arch_table[] = {
	/* arch,   warp, thr/blk, warps/SM, blk/SM, regs/SM, regs/blk, regs/thr, unit, gran, smem/SM, smem/blk, unit, resv */
	{"sm_80",  32, 1024, 64, 32, 65536, 65536, 255, 256, 4, 167936, 166912, 128, 1024},
	{"sm_86",  32, 1024, 48, 16, 65536, 65536, 255, 256, 4, 102400, 101376, 128, 1024},
	{"sm_87",  32, 1024, 48, 16, 65536, 65536, 255, 256, 4, 167936, 166912, 128, 1024},
	{"sm_89",  32, 1024, 48, 24, 65536, 65536, 255, 256, 4, 102400, 101376, 128, 1024},
	{"sm_90",  32, 1024, 64, 32, 65536, 65536, 255, 256, 4, 233472, 232448, 128, 1024},
	{"sm_100", 32, 1024, 64, 32, 65536, 65536, 255, 256, 4, 233472, 232448, 128, 1024},
	{"sm_120", 32, 1024, 48, 32, 65536, 65536, 255, 256, 4, 102400, 101376, 128, 1024},
};
/* clang-format on */

const struct kf_arch_limits *kf_arch_limits_find(const char *arch)
{
	if (!arch)
		return NULL;
	/* "sm_90a" / "sm_100f" use the limits of their base arch: the suffix adds instructions only. */
	char base[16];
	size_t n = strlen(arch);
	if (n >= sizeof(base))
		return NULL;
	memcpy(base, arch, n + 1);
	while (n > 3 && (base[n - 1] < '0' || base[n - 1] > '9'))
		base[--n] = '\0';
	for (size_t i = 0; i < KF_ARRAY_SIZE(arch_table); i++)
		if (strcmp(arch_table[i].arch, base) == 0)
			return &arch_table[i];
	return NULL;
}

static int ceil_to(int x, int unit)
{
	return (x + unit - 1) / unit * unit;
}

enum kf_status kf_occupancy(const char *arch, int block_threads, int regs_per_thread,
			    int smem_bytes_per_block, struct kf_occupancy *out, struct kf_err *err)
{
	memset(out, 0, sizeof(*out));
	const struct kf_arch_limits *L = kf_arch_limits_find(arch);
	if (!L)
		return kf_err_set(err, KF_ERR_INVALID, "no occupancy limits for arch '%s'",
				  arch ? arch : "(null)");
	if (block_threads < 1 || block_threads > L->max_threads_per_block)
		return kf_err_set(err, KF_ERR_INVALID, "block of %d threads is outside 1..%d", block_threads,
				  L->max_threads_per_block);
	if (regs_per_thread < 0 || regs_per_thread > L->max_regs_per_thread)
		return kf_err_set(err, KF_ERR_INVALID, "%d registers per thread is outside 0..%d",
				  regs_per_thread, L->max_regs_per_thread);
	if (smem_bytes_per_block < 0)
		return kf_err_set(err, KF_ERR_INVALID, "negative shared memory (%d bytes)",
				  smem_bytes_per_block);

	int warps_per_block = (block_threads + L->warp_size - 1) / L->warp_size;

	/* Warps: the SM holds max_warps_per_sm resident warps. */
	out->blocks_by_warps = L->max_warps_per_sm / warps_per_block;
	/* Blocks: a hardware slot count, whatever the block size. */
	out->blocks_by_blocks = L->max_blocks_per_sm;

	/* Registers: each warp gets regs x 32 rounded up to the allocation unit; warps are handed out in
	 * groups of warp_alloc_granularity (one per SM sub-partition), so the warp count the register file
	 * holds is rounded down to that granularity. 0 registers means "unknown": not a limit. */
	if (regs_per_thread == 0) {
		out->blocks_by_regs = L->max_blocks_per_sm;
	} else {
		int regs_per_warp = ceil_to(regs_per_thread * L->warp_size, L->reg_alloc_unit);
		int warps_by_regs = L->max_regs_per_block / regs_per_warp;
		warps_by_regs = warps_by_regs / L->warp_alloc_granularity * L->warp_alloc_granularity;
		out->blocks_by_regs =
		    (warps_by_regs / warps_per_block) * (L->regs_per_sm / L->max_regs_per_block);
	}

	/* Shared memory: the block's bytes plus the runtime's reserve, rounded up to the allocation unit. */
	if (smem_bytes_per_block > L->max_smem_per_block_bytes) {
		out->blocks_by_smem = 0;
	} else {
		int per_block = ceil_to(smem_bytes_per_block + L->reserved_smem_per_block_bytes,
					L->smem_alloc_unit_bytes);
		out->blocks_by_smem = L->smem_per_sm_bytes / per_block;
	}

	/* The smallest limit wins; on a tie the hardware limits (warps, then blocks) are named, because
	 * lowering registers or shared memory would not raise occupancy then. */
	struct {
		int blocks;
		const char *name;
	} lim[4] = {
	    {out->blocks_by_warps, "warps"},
	    {out->blocks_by_blocks, "blocks"},
	    {out->blocks_by_regs, "registers"},
	    {out->blocks_by_smem, "shared memory"},
	};
	int best = 0;
	for (int i = 1; i < 4; i++)
		if (lim[i].blocks < lim[best].blocks)
			best = i;
	out->active_blocks = lim[best].blocks;
	out->limiter = lim[best].name;
	out->active_warps = out->active_blocks * warps_per_block;
	out->occupancy = (double)out->active_warps / (double)L->max_warps_per_sm;
	return KF_OK;
}
