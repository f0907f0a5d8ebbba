/* eval: the one evaluation pipeline every command shares (docs/architecture.md, "The evaluation pipeline").
 * kf_eval_run takes a candidate kernel (source text and a name) for a task and returns one outcome: verify,
 * then (when timing is asked for and the kernel passed) profile, re-check the outputs of the timed launches,
 * re-verify strictly when the time is implausible, and settle the final verdict, with the per-shape
 * evidence, the timings, the static resources and the feedback a prompt may show. kf_eval_record writes an
 * outcome to the knowledge base with one clock vocabulary, one toolchain id and one shape form. */
#ifndef KF_EVAL_H
#define KF_EVAL_H

#include "kf.h"
#include "profiler/model.h"
#include "profiler/timing.h"
#include "sandbox/sandbox.h"
#include "task.h"
#include "verifier/verifier.h"

struct kf_kb;
struct kf_kb_candidate;

/* The steps of the pipeline, in the order they run. An outcome names the step that settled its verdict. */
enum kf_eval_stage {
	KF_EVAL_STAGE_VERIFY,  /* the verification protocol (docs/spec/verification.md) */
	KF_EVAL_STAGE_PROFILE, /* timing; a kernel that fails while timed is a runtime_error */
	KF_EVAL_STAGE_RECHECK, /* the outputs of the timed launches against the reference's */
	KF_EVAL_STAGE_STRICT,  /* strict re-verification of an implausible time (spec check 10) */
	KF_EVAL_STAGE_COUNT
};
const char *kf_eval_stage_name(enum kf_eval_stage s); /* "verify", "profile", "recheck", "strict" */

struct kf_eval_opts {
	enum kf_backend_kind backend;
	const struct kf_device_info
	    *device;             /* cuda: the probed device (compile arch, peaks); NULL otherwise */
	const char *worker_path; /* NULL: kf_worker_default_path() */
	uint64_t seed;           /* verification and input seed; 0: a secret one (in the outcome) */
	bool profile;            /* time a kernel that passed verification */
	/* verification */
	bool strict;       /* verify strictly from the start (more seeds and edge shapes) */
	bool all_shapes;   /* keep checking after the first failing shape */
	bool no_shuffle;   /* cpu: fibers in program order between barriers */
	bool no_sanitizer; /* cpu: skip the sanitizer pass (memcheck, initcheck, racecheck, warp UB) */
	const char *arch;  /* the arch NVRTC compiles for on every backend (NULL: the device's, else sm_90) */
	int verbose;       /* the verifier's progress lines on stderr */
	int step_timeout_ms; /* per verification step; 0: the verifier's default */
	int deadline_s;      /* the whole verification, compiles included; 0: the verifier's default */
	/* timing */
	struct kf_stop_rule rule; /* zero: the profiler's default for the backend */
	bool all_timing_shapes;   /* cpu: time the task's timing shapes (default: its largest public shape) */
	volatile int *stop;       /* while non-zero, the optional steps (timing, strict re-verification) are
				     skipped: an interrupted search or command still gets its verdict */
	/* The task's baselines timed once for many candidates (kf_eval_baselines_time, at the shapes this
	 * evaluation times; borrowed, it must outlive the outcome's use): the candidate is then timed against
	 * the reference alone and its speedup over each baseline chained through the reference (docs/
	 * baselines.md, "What a search measures"). NULL: every baseline is timed beside the candidate. */
	const struct kf_profile_result *baselines_once;
	/* the model clock (docs/cost-model.md): on the cpu backend, a kernel that passed and was timed is
	 * also predicted on model_target (NULL: H100) by the cost model, and the prediction is its fitness
	 * (speedup, interval, band, fitness_clock "model"); its CPU times stay in the timings */
	bool model;
	const struct kf_cost_target *model_target;
	uint64_t model_budget; /* accesses per launch before blocks are sampled (0: the default) */
};

void kf_eval_opts_init(struct kf_eval_opts *o);

/* One timed shape, as the prompt, the reports and the knowledge base see it. */
struct kf_eval_timing {
	struct kf_shape shape;
	bool is_timing_shape; /* false: the cpu backend timed the largest public shape */
	const char *clock;    /* "gpu" or "cpu": cpu times are never GPU speed */
	const char *source;   /* how it was measured, kb.h's vocabulary: "cupti", "cuda_event" or "cpu" */
	size_t n_samples;
	double median_ns, iqr_ns; /* the candidate's */
	struct kf_ci median_ci;   /* 95% bootstrap interval of the candidate's median, in ns */
	double ref_median_ns;     /* the task's reference kernel, timed interleaved */
	struct kf_ci speedup;     /* reference / candidate with its bootstrap interval; .band: the A/A band */
	struct kf_ci aa;          /* the A/A run: reference / its twin (zero: none) */
	bool significant;         /* the interval clears 1 + the band: the candidate is faster */
	size_t n_baselines;       /* the task's baselines verified and timed at this shape: */
	struct kf_eval_baseline_time {
		const char *name;     /* "baseline.cu", "cublas.gemm" (the outcome's copy, see baselines) */
		bool library;         /* a library call (cuBLAS, cuDNN), else a kernel file */
		size_t index;         /* in kf_eval_outcome.baselines */
		double median_ns;     /* its median, on this timing's clock; chained: through the reference,
					 this session's reference median x the baselines' session's base/ref */
		struct kf_ci speedup; /* baseline / candidate */
		bool significant;     /* the candidate is significantly faster than it */
		bool chained;         /* false: timed interleaved with the candidate; true: from
					 kf_eval_opts.baselines_once, through the reference (ref/cand x base/ref) */
	} baselines[KF_PROFILE_MAX_BASELINES];
};

/* What a prompt may show about a candidate (never a hidden or edge shape's dims). Strings are owned by the
 * outcome, bounded, and NULL when there is nothing to say. */
struct kf_eval_feedback {
	char *compile_log; /* compile errors only: the head of the log */
	char *check;       /* a rejected kernel: the failing check's evidence at a public shape, a sentence
			      for a shape it is not shown, or the reason */
	bool has_shape;    /* the failing shape is public: */
	struct kf_shape shape; /* ... this one */
	double max_error;      /* ... with this max |got - want| (-1 unknown) */
	char *profile_text;    /* a correct, timed kernel: the compact timing text */
};

struct kf_eval_outcome {
	enum kf_verdict verdict; /* the final verdict (docs/spec/verification.md's names) */
	char reason[1400];
	enum kf_eval_stage stage; /* the step that settled the verdict (VERIFY for a pass) */
	enum kf_backend_kind backend;
	uint64_t seed; /* of the first verification: replays it */
	char arch[24]; /* the device's arch on cuda, "cpu" on the cpu backend, "model-v1-h100" on the model
			  clock (the cost model's version and target: its results are kept apart) */
	char toolchain[64]; /* kf_compiler_id(backend) */
	char device[128];   /* the device's name ("" on the cpu backend) */
	char clock[8];      /* "gpu" or "cpu" */
	/* the steps' own results (owned; the renderers of each step take them) */
	struct kf_verify_result *verify;   /* the first verification */
	struct kf_verify_result *strict;   /* the strict re-verification, when one ran; else NULL */
	struct kf_profile_result *profile; /* the timing, when it ran and succeeded; else NULL */
	enum kf_status profile_status;     /* KF_OK, or why timing failed (KF_ERR_RUNTIME: the kernel failed
					      while timed, which is its verdict; others: not timed) */
	struct kf_err profile_err;
	/* the timing of a correct kernel (n_timings 0 when it was not timed or was rejected) */
	bool timed;
	size_t n_timings;
	struct kf_eval_timing *timings;
	double speedup; /* geometric mean over the timed shapes; 0 when not timed */
	double speedup_lo,
	    speedup_hi;    /* geometric means of the per-shape interval bounds (an approximation) */
	double noise_band; /* the widest A/A noise band of its timed shapes: speedup_lo must clear 1 + it */
	/* What speedup, speedup_lo/hi and noise_band are measured on: "gpu", "cpu" or "model" (the cost
	 * model's prediction: then the CPU clock's own speedup is cpu_speedup). */
	char fitness_clock[8];
	double cpu_speedup;
	struct kf_model_result *model; /* the cost pass, when it ran and succeeded (owned) */
	enum kf_status model_status;   /* KF_OK, or why there is no model clock (model_err) */
	struct kf_err model_err;
	/* what became of each of the task's baselines (timed, unavailable with the reason, rejected with the
	 * verdict, ...): the candidate's own profile's, or the baselines_once profile's when chained */
	size_t n_baselines;
	struct kf_profile_baseline baselines[KF_PROFILE_MAX_BASELINES];
	bool baselines_chained;
	/* static resources per launch of the candidate's plan (from the timing step's NVRTC compile) */
	size_t n_resources;
	const struct kf_launch_res *resources; /* borrowed from profile */
	struct kf_eval_feedback feedback;
	double verify_ms, profile_ms, strict_ms, model_ms,
	    wall_ms; /* each step's time and the whole pipeline's */
};

/* Runs the pipeline for the candidate source[0..len) named name (used in messages and diagnostics) on task
 * t. Returns KF_OK with *out holding the outcome, whatever the verdict. Errors are problems of the task or
 * the harness, as kf_verify_source reports them: KF_ERR_INVALID/PARSE/NOTFOUND (bad task, broken
 * reference), KF_ERR_UNAVAILABLE (backend not usable), others internal; *out is then NULL. A timing
 * failure is part of the outcome (profile_status), never an error here. */
enum kf_status kf_eval_run(const struct kf_task *t, const char *name, const char *source, size_t len,
			   const struct kf_eval_opts *o, struct kf_eval_outcome **out, struct kf_err *err);
/* kf_eval_run on the file at path (named by its path); a file that cannot be read is KF_ERR_NOTFOUND. */
enum kf_status kf_eval_file(const struct kf_task *t, const char *path, const struct kf_eval_opts *o,
			    struct kf_eval_outcome **out, struct kf_err *err);
void kf_eval_outcome_free(struct kf_eval_outcome *o);

/* Times the task's reference as a candidate beside every baseline, once, at the shapes kf_eval_run with
 * the same options times (o->all_timing_shapes, backend, device, seed), with three times the samples of
 * o->rule (when set; the profiler's default rule otherwise): what kf_eval_opts.baselines_once takes. Each
 * baseline is verified first, as always (a cached verdict). Returns the profiler's errors; *out is the
 * caller's (kf_profile_result_free). */
enum kf_status kf_eval_baselines_time(const struct kf_task *t, const struct kf_eval_opts *o,
				      struct kf_profile_result **out, struct kf_err *err);

/* The verification whose shapes stand: the strict one when it rejected the kernel, else the first. */
const struct kf_verify_result *kf_eval_verification(const struct kf_eval_outcome *o);

/* kb.h's clock vocabulary for a timing source reported by a worker ("cupti", "events", "cpu-wall") on a
 * backend: "cupti", "cuda_event" or "cpu". */
const char *kf_eval_clock_source(enum kf_backend_kind b, const char *timing_source);

/* The dtype a task's results are keyed by in the knowledge base: its first output's ("f32"). */
const char *kf_eval_task_dtype(const struct kf_task *t);

/* Records cand (the caller's lineage: run, parent, llm call, edit kind, source) with outcome o of task t as
 * one step (the candidate, its evaluation with the standing verification's shape rows, its timings), in
 * one transaction that joins the caller's when one is open. cand_id and eval_id may be NULL. */
enum kf_status kf_eval_record(struct kf_kb *kb, const struct kf_task *t, const struct kf_eval_outcome *o,
			      const struct kf_kb_candidate *cand, int64_t *cand_id, int64_t *eval_id,
			      struct kf_err *err);

#endif
