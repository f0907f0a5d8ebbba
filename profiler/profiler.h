/* profiler: the parent-side math of timing. Sample statistics (median, type-7 quartiles, bootstrap CI of
 * a speedup), a stopping rule, an occupancy calculator, per-arch peak tables with a roofline floor, and
 * the short text form of all that for the LLM's feedback. Pure C on top of core; no device access. */
#ifndef KF_PROFILER_H
#define KF_PROFILER_H

#include "kf.h"
#include "rng.h"
#include "task.h"

/* ---- sample statistics -------------------------------------------------------------------- */

/* Quantile of an ascending array, Hyndman & Fan type 7 (R's default, numpy's "linear"): with
 * h = (n-1)p, the value x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). p in [0,1], n >= 1. */
double kf_stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Median of x (n >= 1) without changing x; the mean of the two middle values when n is even (the
 * type-7 value at p = 0.5). Uses scratch (n doubles, caller-owned) so hot loops allocate nothing. */
double kf_stats_median_scratch(const double *x, size_t n, double *scratch);

struct kf_stats {
	size_t n;
	double min, max, mean;
	double stddev;              /* sample standard deviation (n - 1 in the denominator); 0 when n == 1 */
	double median, q1, q3, iqr; /* type-7 quantiles at 0.5, 0.25, 0.75; iqr = q3 - q1 */
	double rse; /* relative standard error of the mean: stddev / sqrt(n) / mean (0 when mean == 0) */
};

/* Summary of x[0..n). KF_ERR_INVALID for n == 0 or a non-finite value; KF_ERR_NOMEM. */
enum kf_status kf_stats_compute(const double *x, size_t n, struct kf_stats *out, struct kf_err *err);

/* ---- bootstrap confidence interval of a speedup -------------------------------------------- */

struct kf_boot_opts {
	uint32_t resamples; /* default 10000 when 0 */
	uint64_t seed;      /* the RNG seed: same seed, same interval */
	double level;       /* default 0.95 when 0 */
	bool paired;        /* resample (ref[i], cand[i]) pairs together: samples taken A B A B share drift */
};

struct kf_ci {
	double point;  /* median(ref) / median(cand) on the samples themselves */
	double lo, hi; /* percentile-bootstrap interval at level */
	double level;
	double band; /* the A/A noise band the interval must clear to be significant (0: none measured) */
};

/* Speedup = median(ref) / median(cand) (times: larger means the candidate is faster), with a
 * percentile-bootstrap interval: each resample draws n_ref ref values and n_cand cand values with
 * replacement (paired: n indices drawn once for both; needs n_ref == n_cand) and takes the ratio of
 * medians; lo and hi are the type-7 quantiles (1-level)/2 and (1+level)/2 of those ratios.
 * Every value must be finite and > 0. KF_ERR_INVALID otherwise, KF_ERR_NOMEM. */
enum kf_status kf_boot_speedup(const double *ref, size_t n_ref, const double *cand, size_t n_cand,
			       const struct kf_boot_opts *opts, struct kf_ci *out, struct kf_err *err);

/* The median of x[0..n) (n >= 1, every value finite and > 0) with a percentile-bootstrap interval: each
 * resample draws n values with replacement and takes their median; lo and hi are the type-7 quantiles
 * (1-level)/2 and (1+level)/2 of those medians. opts->paired is ignored; resamples default 4000 here.
 * KF_ERR_INVALID for bad samples, KF_ERR_NOMEM. */
enum kf_status kf_boot_median(const double *x, size_t n, const struct kf_boot_opts *opts, struct kf_ci *out,
			      struct kf_err *err);

/* A ratio measured through an intermediary (profiler/chain.c): median(a_num)/median(a_den) from one
 * session times median(b_num)/median(b_den) from another, e.g. a candidate over a baseline timed once
 * per search: (reference/candidate of the candidate's session) x (baseline/reference of the baselines'
 * session). Each session is resampled on its own (paired: in its pairs, when its two samples have the
 * same length), the resampled ratios multiplied; lo and hi are the type-7 quantiles (1-level)/2 and
 * (1+level)/2 of those products. Every value finite and > 0; KF_ERR_INVALID otherwise, KF_ERR_NOMEM. */
enum kf_status kf_boot_ratio_product(const double *a_num, const double *a_den, size_t n_a, size_t n_a_den,
				     const double *b_num, const double *b_den, size_t n_b, size_t n_b_den,
				     const struct kf_boot_opts *opts, struct kf_ci *out, struct kf_err *err);

/* True when the interval says the candidate is faster: its lower bound is above 1 + band, the noise band an
 * A/A run measured for this task, backend and shape (docs/spec/verification.md, "When a speedup is
 * significant"). */
bool kf_ci_significant(const struct kf_ci *ci);

/* ---- stopping rule for a timing loop ------------------------------------------------------ */

struct kf_stop_rule {
	uint32_t min_samples; /* never stop before this many (e.g. 10) */
	double min_total_ns;  /* ... nor before this much measured time (e.g. 1e8 = 100 ms) */
	double rse_target; /* once both minimums hold, stop when the RSE of the mean is below (e.g. 0.001) */
	uint32_t max_samples; /* hard cap on samples (0: none) */
	double max_total_ns;  /* hard cap on measured time (0: none) */
};

enum kf_stop_reason {
	KF_STOP_CONTINUE = 0, /* take another sample */
	KF_STOP_CONVERGED,    /* minimums met and RSE below target */
	KF_STOP_MAX_SAMPLES,  /* hit max_samples */
	KF_STOP_MAX_TIME,     /* hit max_total_ns */
};

/* Decides after each sample; x holds the n samples so far (ns) and total_ns their sum (or the loop's own
 * measured time). Caps win over minimums, so a loop always ends when a cap is set. */
enum kf_stop_reason kf_stop_rule_check(const struct kf_stop_rule *r, const double *x, size_t n,
				       double total_ns);
const char *
kf_stop_reason_name(enum kf_stop_reason why); /* "continue", "converged", "max-samples", "max-time" */

/* ---- occupancy ---------------------------------------------------------------------------- */

/* Per-SM limits of one architecture (profiler/occupancy.c cites its sources). */
struct kf_arch_limits {
	const char *arch;          /* "sm_90" */
	int warp_size;             /* 32 */
	int max_threads_per_block; /* 1024 */
	int max_warps_per_sm;      /* 64 on sm_80/90/100, 48 on sm_86/89/120 */
	int max_blocks_per_sm;
	int regs_per_sm;            /* 65536 32-bit registers */
	int max_regs_per_block;     /* 65536 */
	int max_regs_per_thread;    /* 255 */
	int reg_alloc_unit;         /* registers are given to a warp in units of 256 */
	int warp_alloc_granularity; /* warps are given registers in groups of 4 (one per SM sub-partition) */
	int smem_per_sm_bytes;      /* the largest shared-memory carveout */
	int max_smem_per_block_bytes;      /* opt-in maximum for one block (cuFuncSetAttribute) */
	int smem_alloc_unit_bytes;         /* 128 */
	int reserved_smem_per_block_bytes; /* 1024 on sm_80 and later: the runtime's own per-block use */
};

/* Limits for "sm_90" (a suffix such as "sm_90a" maps to "sm_90"), or NULL when unknown. */
const struct kf_arch_limits *kf_arch_limits_find(const char *arch);

struct kf_occupancy {
	int active_blocks;   /* resident blocks per SM */
	int active_warps;    /* resident warps per SM */
	double occupancy;    /* active_warps / max_warps_per_sm, 0..1 */
	const char *limiter; /* "warps", "blocks", "registers" or "shared memory" (static strings) */
	int blocks_by_warps, blocks_by_blocks, blocks_by_regs, blocks_by_smem; /* each resource's own limit */
};

/* The CUDA Occupancy Calculator's arithmetic for one kernel: block_threads threads per block,
 * regs_per_thread registers per thread (0: unknown, not limiting), smem_bytes_per_block static + dynamic
 * shared memory. A kernel that cannot fit one block (registers or shared memory) gives 0 blocks with
 * that resource as the limiter. Errors (KF_ERR_INVALID): unknown arch, block_threads outside
 * 1..max_threads_per_block, regs_per_thread above max_regs_per_thread, negative smem. */
enum kf_status kf_occupancy(const char *arch, int block_threads, int regs_per_thread,
			    int smem_bytes_per_block, struct kf_occupancy *out, struct kf_err *err);

/* ---- peaks and the roofline --------------------------------------------------------------- */

/* Peak throughput classes. A tensor class is what a kernel of that dtype can reach at best. */
enum kf_peak_kind {
	KF_PEAK_F64,     /* FP64 on the CUDA cores (non-tensor) */
	KF_PEAK_F32,     /* FP32 on the CUDA cores (non-tensor) */
	KF_PEAK_TF32_TC, /* TF32 tensor cores, dense */
	KF_PEAK_F16_TC,  /* FP16/BF16 tensor cores, dense, FP32 accumulate */
	KF_PEAK_KIND_COUNT
};

struct kf_peaks {
	char name[64];                    /* "NVIDIA H100 SXM (table)" or "NVIDIA H200 (device facts)" */
	char arch[16];                    /* "sm_90" */
	double flops[KF_PEAK_KIND_COUNT]; /* FLOP/s */
	double dram_bytes_per_s;          /* B/s */
	int sm_count;    /* table entries (datasheets); 0 from device facts (ask the device) */
	double l2_bytes; /* table entries; 0 from device facts */
};

/* Built-in table (datasheet figures, cited in profiler/roofline.c) by product key: "h100", "h200",
 * "a100", "l40s", "rtx4090", "a10", "rtx3090", "b200". NULL when unknown. */
const struct kf_peaks *kf_peaks_table_find(const char *key);
/* The table entry a device most likely is, from its name and arch ("NVIDIA H200" -> h200); falls
 * back to the arch's representative part; NULL for an unknown arch. */
const struct kf_peaks *kf_peaks_table_guess(const char *device_name, const char *arch);

/* Peaks scaled from device facts: FLOP/s = SMs x SM clock x FLOP/clock/SM of the arch; bandwidth =
 * 2 (double data rate) x memory clock x bus width / 8. KF_ERR_INVALID for an unknown arch or a zero
 * fact (the caller then uses the table). */
enum kf_status kf_peaks_from_device(const char *name, const char *arch, int sm_count, int sm_clock_khz,
				    int mem_clock_khz, int mem_bus_width_bits, struct kf_peaks *out,
				    struct kf_err *err);

/* The peak class the roofline uses for a tensor dtype: f64 -> F64, f32 -> F32, f16/bf16 -> F16_TC;
 * integers -> F32 (CUDA cores). */
enum kf_peak_kind kf_peak_kind_for_dtype(enum kf_dtype dt);

/* Speed-of-light time in ns: max(flops / peak FLOP/s, bytes / peak B/s). 0 when both are 0. */
double kf_roofline_floor_ns(double flops, double bytes, enum kf_dtype dtype, const struct kf_peaks *peaks);

struct kf_roofline {
	double floor_ns; /* speed-of-light time */
	double compute_ns, memory_ns;
	const char *bound;           /* "compute" or "memory": the larger of the two */
	double achieved_flops;       /* FLOP/s at time_ns (0 when flops unknown) */
	double achieved_bytes_per_s; /* B/s at time_ns */
	double fraction;             /* floor_ns / time_ns: 1.0 = at the roofline; > 1 is impossible */
};

/* Evaluates a measured time against the roofline. flops or bytes may be 0 (unknown). KF_ERR_INVALID for
 * time_ns <= 0 or negative work. */
enum kf_status kf_roofline_eval(double flops, double bytes, enum kf_dtype dtype, const struct kf_peaks *peaks,
				double time_ns, struct kf_roofline *out, struct kf_err *err);

/* ---- compact text for the LLM's feedback -------------------------------------------------- */

/* What is known about one timed candidate; fields with their has_ flag false are left out. */
struct kf_perf_summary {
	double time_ns; /* candidate median */
	double iqr_ns;
	size_t n_samples;
	const char *timing_source; /* "cupti", "events", "cpu-wall" (cpu times are labelled so) */
	bool has_ref;
	double ref_time_ns; /* reference median */
	bool has_speedup;
	struct kf_ci speedup;
	bool has_roofline;
	struct kf_roofline roof;
	bool has_occupancy;
	struct kf_occupancy occ;
	int registers;   /* per thread; < 0 unknown */
	int spill_bytes; /* spill stores + loads; < 0 unknown */
	int smem_bytes;  /* static + dynamic per block; < 0 unknown */
};

/* Appends a few short lines (each ending in '\n') describing s to out, e.g.
 *   time 41.7 us (median of 200, IQR 0.8 us, cupti); reference 95.2 us
 *   speedup 2.28x (95% CI 2.25-2.31, significant)
 *   roofline: 71% of the memory-bound floor; 3.12 TB/s, 0.41 TFLOP/s achieved
 *   occupancy 50% (4 blocks/SM, limited by registers); 64 regs/thread, 0 B spilled, 12.0 KiB smem/block
 * Returns KF_ERR_LIMIT when out's maximum is reached. */
enum kf_status kf_perf_text(const struct kf_perf_summary *s, struct kf_buf *out);

/* "41.7 us", "1.23 ms", "850 ns": a duration for people, into buf. */
void kf_format_ns(double ns, char *buf, size_t n);

#endif
