/* The GPU cost model, version KF_COST_MODEL_VERSION (docs/cost-model.md has the formulas with their
 * reasons and limits). Per launch of the plan, from the instrumented run's counts extrapolated to the
 * whole grid:
 *   DRAM     32 B x (L2-model read misses + write-backs) / (datasheet bandwidth x sustained share); when
 *            every buffer the launch touches fits the L2, at most their total size (each byte once);
 *   L2       32 B x global sectors requested / sustained L2 bandwidth;
 *   shared   wavefronts / (one per clock per SM) over the SMs the grid occupies;
 *   compute  warp instructions (basic blocks x instr_per_edge + memory, collective and barrier
 *            instructions) / (schedulers x clock) over those SMs;
 *   latency  one warp's chain of latencies (every load waits for its data: an L2 hit or a miss in the
 *            proportion the L2 model saw, shared loads, barriers, collectives, basic blocks) x the waves
 *            of blocks the SMs hold at once (the occupancy calculator, from registers and shared memory);
 *   atomic   same-address serialisation (the hottest address) + distinct-address throughput;
 * and the launch's time is the largest of them plus a fixed launch overhead. Every constant is an
 * approximation of the named part; the model ranks kernels by the limits that make GPU kernels fast or
 * slow (coalescing, reuse, bank conflicts, occupancy, divergence) and its numbers are a model's, never a
 * measurement. */
#include "profiler/costmodel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Per target. Sources: SM counts, boost clocks, DRAM bandwidth and L2 size from NVIDIA's datasheets and
 * whitepapers (as profiler/roofline.c's table); sustained DRAM share 0.9 (a copy kernel reaches about
 * 4.3 of the H200's 4.8 TB/s on the machine kforge is validated on, docs/field-notes.md; H100 reports are
 * alike). L2 bandwidth is one 32-byte sector per clock per SM at 85%: about 5.5 TB/s on an H100 PCIe
 * (114 SMs at 1.755 GHz), which is what published microbenchmarks measured there. Latencies are sm_90
 * microbenchmark figures (Luo et al., "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture",
 * 2024: L2 hit about 260 clocks, DRAM about 480 plus queueing under load, shared memory about 30,
 * __syncthreads and a shuffle about 20-25), used for every arch: they differ by tens of percent between
 * generations, less than the effects the model ranks. Four instructions per basic block and eight
 * clocks of dependent ALU latency per block are the proxy for arithmetic (the cpu run does not see
 * instructions, only blocks). A same-address atomic about 1 ns at the L2, 64 distinct-address atomics
 * per clock over the GPU, 2 us per launch (back-to-back launches in one stream). */
#define SECTOR 32.0
#define L2_SECTORS_PER_CLK_PER_SM 1.0
#define L2_EFFICIENCY 0.85
/* clang-format off */
#define CM_TARGET(key, name, arch, sms, ghz, dram_tbs, l2_mib)                                           \
	{key, name, arch, sms, (ghz) * 1e9, (dram_tbs) * 1e12, 0.9, (l2_mib) * 1048576.0,                \
	 (sms) * (ghz) * 1e9 * SECTOR * L2_SECTORS_PER_CLK_PER_SM * L2_EFFICIENCY, 4, 260, 600, 30, 24, 24, \
	 8, 4, 1.0, 64, 2000}
static const struct kf_cost_target targets[] = {
	CM_TARGET("h100", "NVIDIA H100 SXM", "sm_90", 132, 1.98, 3.35, 50),
	CM_TARGET("h200", "NVIDIA H200 SXM", "sm_90", 132, 1.98, 4.8, 50),
	CM_TARGET("a100", "NVIDIA A100 SXM 80GB", "sm_80", 108, 1.41, 2.039, 40),
	CM_TARGET("l40s", "NVIDIA L40S", "sm_89", 142, 2.52, 0.864, 96),
	CM_TARGET("rtx4090", "NVIDIA GeForce RTX 4090", "sm_89", 128, 2.52, 1.008, 72),
	CM_TARGET("a10", "NVIDIA A10", "sm_86", 72, 1.695, 0.600, 6),
	CM_TARGET("rtx3090", "NVIDIA GeForce RTX 3090", "sm_86", 82, 1.695, 0.936, 6),
	CM_TARGET("b200", "NVIDIA B200", "sm_100", 148, 1.965, 8.0, 126),
};
/* clang-format on */

const struct kf_cost_target *kf_cost_target_find(const char *key)
{
	for (size_t i = 0; key && i < KF_ARRAY_SIZE(targets); i++)
		if (!strcmp(targets[i].key, key))
			return &targets[i];
	return NULL;
}

const struct kf_cost_target *kf_cost_target_default(void)
{
	return &targets[0];
}

const struct kf_cost_target *kf_cost_target_for_arch(const char *arch)
{
	if (!arch)
		return NULL;
	for (size_t i = 0; i < KF_ARRAY_SIZE(targets); i++) {
		size_t n = strlen(targets[i].arch);
		/* "sm_90a" is sm_90's part; "sm_900" is not */
		if (!strncmp(targets[i].arch, arch, n) && (arch[n] < '0' || arch[n] > '9'))
			return &targets[i];
	}
	return NULL;
}

const char *kf_cost_target_keys(void)
{
	return "h100, h200, a100, l40s, rtx4090, a10, rtx3090, b200";
}

const char *kf_cost_limit_name(enum kf_cost_limit l)
{
	static const char *const names[KF_COST_LIMIT_COUNT] = {"memory",  "l2",      "shared",
							       "compute", "latency", "atomic"};
	return (unsigned)l < KF_COST_LIMIT_COUNT ? names[l] : "?";
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static enum kf_status predict_launch(const struct kf_cost_target *t, const struct kf_cost_launch_in *in,
				     size_t i, struct kf_cost_launch_pred *p, struct kf_err *err)
{
	const struct kf_rt_cost *c = in->c;
	const char *kn = in->kernel ? in->kernel : "?";
	memset(p, 0, sizeof(*p));
	uint64_t bt = (uint64_t)c->block[0] * c->block[1] * c->block[2];
	uint64_t grid = (uint64_t)c->grid[0] * c->grid[1] * c->grid[2];
	if (!bt || !grid || grid != c->blocks_total)
		return kf_err_set(err, KF_ERR_INVALID,
				  "launch %zu ('%s'): grid (%u,%u,%u) has %llu blocks, the "
				  "counts say %llu",
				  i + 1, kn, c->grid[0], c->grid[1], c->grid[2], (unsigned long long)grid,
				  (unsigned long long)c->blocks_total);
	if (!c->blocks_run || c->blocks_run > c->blocks_total || !c->warps_run)
		return kf_err_set(err, KF_ERR_INVALID, "launch %zu ('%s'): %llu of %llu blocks ran", i + 1,
				  kn, (unsigned long long)c->blocks_run, (unsigned long long)c->blocks_total);
	p->scale = (double)c->blocks_total / (double)c->blocks_run;
	p->block_threads = (int)bt;
	p->regs_assumed = in->regs <= 0;
	p->regs = in->regs > 0 ? in->regs : 32;
	p->smem_bytes = (in->static_smem_bytes > 0 ? in->static_smem_bytes : 0) + (int)c->smem_bytes;

	struct kf_occupancy occ;
	struct kf_err e2 = KF_ERR_INIT;
	if (bt > 1024 || kf_occupancy(t->arch, (int)bt, p->regs, p->smem_bytes, &occ, &e2) != KF_OK)
		return kf_err_set(err, KF_ERR_INVALID, "launch %zu ('%s'): %s", i + 1, kn,
				  bt > 1024 ? "more than 1024 threads per block" : e2.msg);
	if (occ.active_blocks <= 0)
		return kf_err_set(
		    err, KF_ERR_INVALID,
		    "launch %zu ('%s'): one block of %llu threads, %d registers each and %d B of "
		    "shared memory does not fit an SM of %s (%s)",
		    i + 1, kn, (unsigned long long)bt, p->regs, p->smem_bytes, t->name, occ.limiter);
	p->blocks_per_sm = occ.active_blocks;
	p->resident_warps = occ.active_warps;
	p->occupancy = occ.occupancy;
	p->occ_limiter = occ.limiter;
	double sms =
	    (double)t->sm_count < (double)c->blocks_total ? (double)t->sm_count : (double)c->blocks_total;
	p->waves = ceil((double)c->blocks_total / ((double)t->sm_count * occ.active_blocks));

	const double s = p->scale;
	/* traffic */
	p->l2_bytes = SECTOR * (double)(c->gld_sectors + c->gst_sectors) * s;
	p->dram_bytes = SECTOR * (double)(c->l2_read_misses + c->l2_writebacks) * s;
	if ((double)c->touched_bytes <= t->l2_bytes && p->dram_bytes > (double)c->touched_bytes)
		p->dram_bytes = (double)c->touched_bytes; /* it all stays in L2 after its first touch */
	p->sh_wavefronts = (double)c->sh_wavefronts * s;
	p->atomics = (double)c->atom_lanes * s;
	p->warp_instrs = ((double)c->warp_edges * t->instr_per_edge + (double)c->gld_requests +
			  (double)c->gst_requests + (double)c->sh_requests + (double)c->atom_requests +
			  (double)c->collectives + (double)c->barriers) *
			 s;
	p->sectors_per_load = ratio(c->gld_sectors, c->gld_requests);
	p->sectors_per_store = ratio(c->gst_sectors, c->gst_requests);
	p->wavefronts_per_shared = ratio(c->sh_wavefronts, c->sh_requests);

	p->ns[KF_COST_DRAM] = p->dram_bytes / (t->dram_bytes_per_s * t->dram_efficiency) * 1e9;
	p->ns[KF_COST_L2] = p->l2_bytes / t->l2_bytes_per_s * 1e9;
	p->ns[KF_COST_SHARED] = p->sh_wavefronts / (sms * t->clock_hz) * 1e9;
	p->ns[KF_COST_ISSUE] = p->warp_instrs / (sms * t->schedulers_per_sm * t->clock_hz) * 1e9;

	/* one warp's chain: loads wait for their data (the L2 model's miss share of the sectors goes to
	 * DRAM); a conflicted shared access replays once per extra wavefront */
	double miss = c->gld_sectors ? ratio(c->l2_read_misses, c->gld_sectors) : 0.0;
	if (miss > 1.0)
		miss = 1.0;
	double lat_load = t->lat_l2_clk + miss * (t->lat_dram_clk - t->lat_l2_clk);
	double chain = (double)c->gld_requests * lat_load + (double)c->sh_requests * t->lat_smem_clk +
		       (double)(c->sh_wavefronts > c->sh_requests ? c->sh_wavefronts - c->sh_requests : 0) +
		       (double)c->atom_requests * t->lat_dram_clk + (double)c->barriers * t->lat_barrier_clk +
		       (double)c->collectives * t->lat_collective_clk +
		       (double)c->warp_edges * t->lat_edge_clk;
	p->cp_clk = chain / (double)c->warps_run;
	p->ns[KF_COST_LATENCY] = p->waves * p->cp_clk / t->clock_hz * 1e9;

	p->ns[KF_COST_ATOMIC] = (double)c->atom_hot * s * t->atomic_same_addr_ns +
				p->atomics / (t->atomics_per_clk * t->clock_hz) * 1e9;

	p->bind = KF_COST_DRAM;
	for (int l = 1; l < KF_COST_LIMIT_COUNT; l++)
		if (p->ns[l] > p->ns[p->bind])
			p->bind = (enum kf_cost_limit)l;
	p->launch_ns = t->launch_ns;
	p->total_ns = p->ns[p->bind] + p->launch_ns;
	return KF_OK;
}

enum kf_status kf_cost_predict(const struct kf_cost_target *t, const struct kf_cost_launch_in *in, size_t n,
			       struct kf_cost_pred *out, struct kf_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!t || !kf_arch_limits_find(t->arch))
		return kf_err_set(err, KF_ERR_INVALID, "the cost model has no target (%s)",
				  t ? t->arch : "none");
	if (!n || n > KF_COST_MAX_LAUNCHES)
		return kf_err_set(err, KF_ERR_INVALID, "a plan of %zu launches (1 to %d)", n,
				  KF_COST_MAX_LAUNCHES);
	out->version = KF_COST_MODEL_VERSION;
	out->target = t;
	out->n = n;
	double worst = -1;
	for (size_t i = 0; i < n; i++) {
		enum kf_status st = predict_launch(t, &in[i], i, &out->launches[i], err);
		if (st)
			return st;
		const struct kf_cost_launch_pred *p = &out->launches[i];
		out->total_ns += p->total_ns;
		out->sampled |= p->scale > 1.0;
		if (p->total_ns > worst) {
			worst = p->total_ns;
			out->bind = p->bind;
		}
	}
	return KF_OK;
}
