/* The GPU cost model (docs/cost-model.md): a predicted time on a target GPU for a launch plan, from the
 * counters the cpu backend's instrumented run collects (sandbox/cpu/shim/kf_rt_abi.h, struct kf_rt_cost)
 * and the compile's registers and shared memory. Its clock is "model": a prediction, never a GPU time.
 * Pure arithmetic on top of core and the occupancy calculator; no device, no worker. */
#ifndef KF_PROFILER_COSTMODEL_H
#define KF_PROFILER_COSTMODEL_H

#include "kf.h"
#include "profiler/profiler.h"
#include "sandbox/cpu/shim/kf_rt_abi.h"

/* Bumped whenever a formula or a constant changes: predictions of different versions are not compared
 * (the knowledge base keys model-clock results by it). */
#define KF_COST_MODEL_VERSION 1
#define KF_COST_MAX_LAUNCHES 16 /* sandbox.h's KF_MAX_LAUNCHES */

/* A target GPU as the model sees it (profiler/costmodel.c cites each figure). */
struct kf_cost_target {
	const char *key;            /* "h100", as kf_peaks_table_find */
	const char *name;           /* "NVIDIA H100 SXM" */
	const char *arch;           /* "sm_90": the occupancy calculator's limits */
	int sm_count;               /* SMs */
	double clock_hz;            /* SM boost clock */
	double dram_bytes_per_s;    /* datasheet DRAM bandwidth */
	double dram_efficiency;     /* the share of it a streaming kernel sustains */
	double l2_bytes;            /* L2 capacity (what the instrumented run's L2 model is sized to) */
	double l2_bytes_per_s;      /* sustained L2 bandwidth (sector traffic) */
	int schedulers_per_sm;      /* warp schedulers: one warp instruction each per clock */
	double lat_l2_clk;          /* load latency of an L2 hit, clocks */
	double lat_dram_clk;        /* of a miss */
	double lat_smem_clk;        /* shared-memory load, one wavefront */
	double lat_barrier_clk;     /* __syncthreads */
	double lat_collective_clk;  /* a shuffle or vote */
	double lat_edge_clk;        /* the dependent ALU work of one basic block */
	double instr_per_edge;      /* issued instructions per basic block executed (the arithmetic proxy) */
	double atomic_same_addr_ns; /* one more atomic on an address another one holds (serialised at L2) */
	double atomics_per_clk;     /* distinct-address atomic throughput, whole GPU, per clock */
	double launch_ns;           /* per kernel launch of the plan */
};

/* "h100", "h200", "a100", "l40s", "rtx4090", "a10", "rtx3090", "b200"; NULL when unknown. */
const struct kf_cost_target *kf_cost_target_find(const char *key);
/* The default target: H100 SXM. */
const struct kf_cost_target *kf_cost_target_default(void);
/* The target for an arch when no product is named ("sm_90" -> h100), NULL when unknown. */
const struct kf_cost_target *kf_cost_target_for_arch(const char *arch);
/* Comma-separated keys, for messages. */
const char *kf_cost_target_keys(void);

/* The limits a launch's predicted time can be bound by. */
enum kf_cost_limit {
	KF_COST_DRAM,    /* DRAM traffic at sustained bandwidth ("memory") */
	KF_COST_L2,      /* sector traffic through L2 */
	KF_COST_SHARED,  /* shared-memory wavefronts (bank conflicts count) */
	KF_COST_ISSUE,   /* warp instructions issued ("compute") */
	KF_COST_LATENCY, /* the per-warp chain of dependent latencies, over the resident warps */
	KF_COST_ATOMIC,  /* atomics: throughput and same-address serialisation */
	KF_COST_LIMIT_COUNT
};
/* "memory", "l2", "shared", "compute", "latency", "atomic". */
const char *kf_cost_limit_name(enum kf_cost_limit l);

/* One launch as the model takes it. */
struct kf_cost_launch_in {
	const struct kf_rt_cost *c; /* the instrumented run's counts */
	int regs;                   /* registers per thread from the compile (<= 0: unknown, 32 assumed) */
	int static_smem_bytes;      /* static shared memory per block from the compile (< 0: unknown, 0) */
	const char *kernel;         /* for messages (may be NULL) */
};

struct kf_cost_launch_pred {
	double ns[KF_COST_LIMIT_COUNT]; /* each limit's time */
	double launch_ns;
	double total_ns; /* max of ns[] + launch_ns */
	enum kf_cost_limit bind;
	double scale; /* blocks_total / blocks_run: the factor every count was extrapolated by */
	/* extrapolated to the whole grid */
	double dram_bytes, l2_bytes, sh_wavefronts, warp_instrs, atomics;
	double sectors_per_load, sectors_per_store; /* per global request (4 = a coalesced f32 warp) */
	double wavefronts_per_shared;               /* per shared request (1 = conflict-free) */
	double cp_clk;                              /* one warp's chain of latencies, clocks (average) */
	/* occupancy */
	int block_threads, regs, smem_bytes; /* as used (assumed values filled in) */
	bool regs_assumed;
	int blocks_per_sm, resident_warps;
	double occupancy;
	const char *occ_limiter;
	double waves; /* blocks_total over the blocks resident at once */
};

struct kf_cost_pred {
	int version;                         /* KF_COST_MODEL_VERSION */
	const struct kf_cost_target *target; /* what it predicts for */
	size_t n;
	struct kf_cost_launch_pred launches[KF_COST_MAX_LAUNCHES];
	double total_ns;         /* the plan: every launch's total */
	enum kf_cost_limit bind; /* of the launch that takes longest */
	bool sampled;            /* some launch ran a sample of its blocks (counts extrapolated) */
};

/* Predicts plan in[0..n) on target t. KF_ERR_INVALID for n 0 or over the maximum, counts that cannot
 * be (no block ran, more blocks run than the grid has, a block size the arch cannot launch), an unknown
 * arch; the message names the launch. */
enum kf_status kf_cost_predict(const struct kf_cost_target *t, const struct kf_cost_launch_in *in, size_t n,
			       struct kf_cost_pred *out, struct kf_err *err);

#endif
