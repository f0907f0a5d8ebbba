/* The model clock: the cost pass of the cpu backend (docs/cost-model.md). A candidate and the task's
 * reference each run once, instrumented, at the task's timing shape with the cost counters on (blocks
 * sampled past a budget of accesses, counts extrapolated by blocks); the cost model (costmodel.h) turns
 * the counts and the NVRTC compile's registers and shared memory into a predicted time on a target GPU.
 * Its times are predictions, labelled "model" everywhere; never GPU times, never CPU times. */
#ifndef KF_PROFILER_MODEL_H
#define KF_PROFILER_MODEL_H

#include "kfile.h"
#include "profiler/costmodel.h"
#include "profiler/timing.h"
#include "task.h"

#define KF_MODEL_DEFAULT_BUDGET ((uint64_t)4 << 20)   /* accesses per launch before blocks are sampled */
#define KF_MODEL_BAND_FLOOR 0.05                      /* no predicted win under 5% counts */
#define KF_MODEL_MAX_TENSOR_BYTES ((uint64_t)3 << 30) /* the timing shape's tensors, in all, at most */

struct kf_model_opts {
	const struct kf_cost_target *target; /* NULL: kf_cost_target_default() */
	uint64_t seed;                       /* input values (0: a fixed one) */
	uint64_t sample_seed;                /* where sampled blocks start (0: a secret one) */
	uint64_t access_budget;              /* 0: KF_MODEL_DEFAULT_BUDGET */
	int timeout_ms;                      /* per kernel's instrumented run (0: 120 s) */
	const char *worker_path;
	double deadline_ms; /* absolute kf_now_ms() end (0: none) */
};

void kf_model_opts_init(struct kf_model_opts *o);

/* One kernel file's prediction. */
struct kf_model_kernel {
	struct kf_cost_pred pred;
	size_t n;                                       /* launches of its plan */
	struct kf_rt_cost counts[KF_COST_MAX_LAUNCHES]; /* the instrumented run's, per launch */
	struct kf_launch_res res[KF_COST_MAX_LAUNCHES]; /* the compile's, per launch */
	bool has_res;                                   /* the NVRTC compile gave resources */
	double run_ms;                                  /* the instrumented run, wall time */
	char notes[768]; /* what the counters say to a kernel engineer (sentences; "" when nothing) */
};

struct kf_model_result {
	char clock[8]; /* "model" */
	int version;   /* KF_COST_MODEL_VERSION */
	const struct kf_cost_target *target;
	struct kf_shape shape;
	bool is_timing_shape; /* false: the largest public shape (no timing shape, or one too large) */
	struct kf_model_kernel cand, ref, ref_aa;
	double speedup; /* predicted reference / predicted candidate */
	/* The A/A calibration: the reference predicted a second time with other sampled blocks and other
	 * inputs; a predicted speedup is significant only past 1 + band, band = max(KF_MODEL_BAND_FLOOR,
	 * |aa - 1|) (a model's error is larger than its sampling noise: the floor is the model's). */
	double aa, band;
	bool significant;
	double ms;       /* the whole pass */
	char text[1024]; /* the compact form for a prompt: predicted times, speedup, the binding limit, notes
			  */
};

/* Predicts candidate k (bound to t) and t's reference. KF_ERR_UNAVAILABLE when this machine cannot make
 * the instrumented build (kf_cpu_sanitizer_unavailable), KF_ERR_RUNTIME when either kernel fails its
 * instrumented run (a finding, a fault, a timeout), KF_ERR_INVALID for a plan the model cannot take (a
 * block that does not fit an SM of the target), others from compiles and workers. *out is the caller's
 * (kf_model_result_free). */
enum kf_status kf_model_run(const struct kf_task *t, const struct kf_kfile *k, const struct kf_model_opts *o,
			    struct kf_model_result **out, struct kf_err *err);
void kf_model_result_free(struct kf_model_result *r);

#endif
