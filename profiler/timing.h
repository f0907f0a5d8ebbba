/* The timing protocol of docs/spec/verification.md ("Timing"): candidate, reference and baseline timed in
 * their own workers, interleaved A B (C) A B (C) so drift cancels, L2 flushed before each sample (cuda),
 * inputs rotating between distinct sets at distinct addresses, the outputs of the timed launches re-checked,
 * a stopping rule, medians and a bootstrap interval of the speedup. It uses the verifier's input generation
 * and comparison, so a timed kernel is held to the same standard as a verified one. */
#ifndef KF_PROFILER_TIMING_H
#define KF_PROFILER_TIMING_H

#include "kfile.h"
#include "profiler.h"
#include "sandbox/sandbox.h"
#include "task.h"

#define KF_PROFILE_MAX_SAMPLES 400
#define KF_PROFILE_MAX_BASELINES 8 /* core/baseline.h's KF_BASELINES_MAX */

struct kf_profile_opts {
	enum kf_backend_kind backend;
	const struct kf_device_info *device; /* from the probe (cuda), or NULL */
	uint64_t seed;                       /* input seed (0: random) */
	int n_sets;                          /* distinct input sets rotated during timing (default 4) */
	struct kf_stop_rule rule;            /* zero: defaults per backend */
	int step_timeout_ms;                 /* default 30000 */
	bool all_timing_shapes; /* cpu: time the task's timing shapes too (default: largest public shape) */
	const char *worker_path;
	bool no_baselines; /* time only candidate and reference (the baselines are listed as skipped) */
};

void kf_profile_opts_init(struct kf_profile_opts *o);

struct kf_timed {
	struct kf_stats stats;
	size_t n;
	double samples[KF_PROFILE_MAX_SAMPLES];
	char timing_source[16];
	uint32_t kernels_seen;   /* per run, from CUPTI; 0 when unknown */
	double worker_median_ns; /* candidate, cpu: the worker's own clock, reported beside, never used */
};

struct kf_profile_shape {
	struct kf_shape shape;
	bool is_timing_shape; /* false: the cpu backend timed the largest public shape instead */
	struct kf_timed cand, ref, base;
	struct kf_timed aa; /* the reference's twin, timed in its own worker beside it (the A/A run) */
	bool has_base;
	struct kf_ci speedup; /* reference / candidate; .band is noise_band */
	bool has_aa;
	struct kf_ci aa_ci;        /* reference / its twin: what "no difference" measures here */
	double noise_band;         /* max(floor, |aa_ci.point - 1|): docs/spec/verification.md */
	uint32_t n_checked;        /* timed rounds whose outputs were checked */
	bool retimed;              /* implausible: timed again in fresh workers, order reversed */
	struct kf_ci retime;       /* the other of the two speedups (speedup is the less favourable) */
	struct kf_ci speedup_base; /* baseline / candidate: the first timed baseline (bases[] has them all) */
	enum kf_stop_reason stop;
	bool outputs_ok; /* every checked timed launch matched the reference, and the candidate's worker
			    was quiescent between its steps; false: the verdict stateful (recheck_detail) */
	char recheck_detail[400];
	bool has_roof;
	struct kf_roofline roof;
	bool below_floor; /* faster than the speed of light: something is wrong */
	double flops, bytes;
	/* Every baseline, indexed as kf_profile_result.baselines: timed at this shape or not. */
	bool base_timed[KF_PROFILE_MAX_BASELINES];
	struct kf_timed bases[KF_PROFILE_MAX_BASELINES];
	struct kf_ci speedup_bases[KF_PROFILE_MAX_BASELINES]; /* baseline i / candidate */
};

/* What became of a baseline (core/baseline.h) in a profile. Only TIMED ones have times. */
enum kf_profile_base_status {
	KF_PROFILE_BASE_TIMED,       /* verified against the reference, then timed like the candidate */
	KF_PROFILE_BASE_UNAVAILABLE, /* the backend cannot run it (a library call off cuda, no library) */
	KF_PROFILE_BASE_REJECTED,    /* failed verification, or its timed outputs were wrong: never used */
	KF_PROFILE_BASE_FAILED,      /* the harness could not run it (the reason says why) */
	KF_PROFILE_BASE_SKIPPED,     /* kf_profile_opts.no_baselines */
};
const char *kf_profile_base_status_name(enum kf_profile_base_status s); /* "timed", "unavailable", ... */

struct kf_profile_baseline {
	char name[128];  /* "baseline.cu", "cublas.gemm" */
	char call[1024]; /* the kernel file's path, or the library call in canonical form */
	bool library;
	enum kf_profile_base_status status;
	char verdict[32]; /* the verifier's verdict when it ran ("pass", "wrong_output", ...) */
	char reason[512];
};

struct kf_launch_res {
	char kernel[128];
	int block_threads;
	int regs, smem_bytes, spill_bytes; /* smem_bytes: static + the launch's dynamic */
	int smem_static_bytes;             /* the kernel's static shared memory (-1: unknown) */
	bool has_occ;
	struct kf_occupancy occ;
};

struct kf_profile_result {
	enum kf_backend_kind backend;
	char clock[8]; /* "gpu" or "cpu": cpu times are never GPU speed */
	char arch[16]; /* the arch the resources and occupancy are for */
	bool has_peaks;
	struct kf_peaks peaks;
	size_t n_shapes;
	struct kf_profile_shape *shapes;
	size_t n_launches;
	struct kf_launch_res *launches; /* static resources per launch of the candidate's plan */
	bool implausible;               /* below the roofline floor or > 10x: re-verification is due */
	char flags[512];
	bool timed_outputs_ok;
	char text[1024];    /* the compact form fed back to the LLM */
	size_t n_baselines; /* the task's baselines, in its order */
	struct kf_profile_baseline baselines[KF_PROFILE_MAX_BASELINES];
};

/* Times candidate k (bound to t) against the task's reference and every baseline that passes verification
 * (see kf_profile_result.baselines for what became of each; a baseline's failure never fails the
 * profile). Returns KF_OK with *out;
 * timed outputs that differ from the reference set outputs_ok=false (the caller rejects the kernel).
 * Errors: KF_ERR_INVALID (task/reference problem), KF_ERR_RUNTIME (a kernel failed while timed),
 * KF_ERR_UNAVAILABLE, others internal. */
enum kf_status kf_profile_run(const struct kf_task *t, const struct kf_kfile *k,
			      const struct kf_profile_opts *o, struct kf_profile_result **out,
			      struct kf_err *err);
void kf_profile_result_free(struct kf_profile_result *r);

/* Static resources of k's launches at shape (registers, shared memory, spills, occupancy) from an NVRTC
 * compile for arch (works with no GPU): *out (the caller frees) gets one per launch; returns how many (0,
 * *out NULL, when the compile or the plan fails). */
size_t kf_profile_static_resources(const struct kf_task *t, const struct kf_kfile *k,
				   const struct kf_shape *shape, const char *arch,
				   struct kf_launch_res **out);

#endif
