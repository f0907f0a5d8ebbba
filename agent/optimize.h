/* kforge optimize as a library call: the search loop (evolutionary or MCTS) over LLM-written candidates,
 * each evaluated through the pipeline (eval/), everything recorded in the knowledge base. `kforge optimize`
 * and `kforge bench` both call kf_optimize and render the run's report from the knowledge base. */
#ifndef KF_AGENT_OPTIMIZE_H
#define KF_AGENT_OPTIMIZE_H

#include <limits.h>

#include "agent/agent.h"
#include "kb/kb.h"
#include "kf.h"
#include "sandbox/sandbox.h"
#include "verifier/verifier.h"

struct kf_search_params;

enum kf_strategy { KF_STRATEGY_EVO = 0, KF_STRATEGY_MCTS = 1, KF_STRATEGY_SCHEDULE = 2 };
const char *kf_strategy_name(enum kf_strategy s); /* "evo", "mcts", "schedule" */
bool kf_strategy_parse(const char *s, enum kf_strategy *out);

/* Progress events for a live display (a terminal line) or a log. */
struct kf_optimize_progress {
	int64_t run_id;
	int64_t calls, candidates;
	int64_t calls_failed;                     /* calls that failed (after retries): no reply */
	int64_t replies_unusable;                 /* replies that gave nothing to evaluate */
	int64_t by_verdict[KF_VERDICT_COUNT + 1]; /* last slot: parse_error */
	double best_speedup, best_lo, best_hi;    /* 0 when nothing verified is faster yet */
	double spend_usd, elapsed_s;
	const char *event;   /* one line about what just happened */
	const char *warning; /* a warning for the user (unknown price, a clamped setting), or NULL */
};

/* A count per kind ("rate_limit", "edits_not_applied", ...). */
struct kf_optimize_count {
	char kind[24];
	int64_t n;
};
#define KF_OPTIMIZE_MAX_KINDS 16
typedef void (*kf_optimize_progress_fn)(void *ctx, const struct kf_optimize_progress *p);

struct kf_cost_target;

#define KF_OPTIMIZE_BUDGET_CALLS 20 /* the default call budget */

struct kf_optimize_opts {
	const char *task_path; /* required */
	enum kf_strategy strategy;
	const struct kf_search_params
	    *search;              /* the strategies' knobs (agent/search.h), checked by the
				     caller; NULL: the defaults. A resume searches with the run's */
	struct kf_llm_config llm; /* provider, model, base_url, concurrency, replay_path ... */
	int64_t budget_calls;     /* 0: KF_OPTIMIZE_BUDGET_CALLS */
	double budget_usd;        /* 0: none */
	double time_limit_s;      /* 0: none */
	enum kf_backend_kind backend;
	const struct kf_device_info *device; /* cuda: the probed device; NULL on cpu */
	const char *db_path;                 /* required */
	const char *out_dir; /* required: best.cu (the caller adds the run's reports, kf_report_run_write) */
	uint64_t seed;       /* 0: random (recorded) */
	int64_t resume_run;  /* > 0: continue this run from the knowledge base */
	bool no_strategies;  /* skip the strategy call (it is made when the budget is >= 8) */
	bool no_preflight;   /* skip the model check before the first request */
	bool keep_best;      /* write best.cu for the best verified candidate even when it is not
				significantly faster than the reference (default: only a significant win) */
	kf_optimize_progress_fn progress; /* may be NULL */
	void *progress_ctx;
	const char *worker_path; /* NULL: default */
	/* the cpu backend's fitness (docs/cost-model.md): false (default) ranks by the cost model's
	 * predicted speedup on model_target (NULL: H100) when this machine can make the instrumented build,
	 * else by the CPU clock; true: by the CPU clock (the record says which) */
	bool cpu_fitness;
	const struct kf_cost_target *model_target;
};

struct kf_optimize_result {
	int64_t run_id;
	char status[16];           /* "done", "budget", "interrupted", "failed" (as recorded) */
	bool improved;             /* a verified candidate is significantly faster than the reference */
	bool significant;          /* its speedup interval's lower bound is above 1 + its A/A band */
	double best_band;          /* that band */
	int64_t best_candidate_id; /* 0: none verified */
	double best_speedup, best_lo, best_hi;
	char clock[8]; /* "gpu", "cpu" or "model": what the speedup was measured (or predicted) with */
	int64_t calls, candidates, verified;
	int64_t by_verdict[KF_VERDICT_COUNT + 1];
	double spend_usd, elapsed_s;
	int64_t tokens_in, tokens_out;
	int64_t tokens_cached, tokens_reasoning;
	/* what went wrong with the calls: failed calls (by failure kind) and unusable replies (by reason) */
	int64_t calls_failed, replies_unusable;
	size_t n_failures, n_unusable;
	struct kf_optimize_count failures[KF_OPTIMIZE_MAX_KINDS], unusable[KF_OPTIMIZE_MAX_KINDS];
	int n_strategies;      /* strategies proposed by the strategy call (0: none asked or none usable) */
	char stop_reason[512]; /* why the search stopped: "budget of 20 calls", "no significant improvement
				  in 8 attempts", the API's message of a fatal error, ... */
	char warning[256];     /* e.g. the model has no price (cost reported as $0) */
	char best_path[PATH_MAX]; /* DIR/best.cu ("" when nothing verified) */
	/* the best candidate against each of the task's baselines (from its recorded timings: kb.h's
	 * kf_kb_vs, the speedup baseline/candidate over the timing shapes, chained through the reference
	 * in a search); n_baselines 0 when nothing was verified or the task has none */
	size_t n_baselines;
	struct kf_kb_vs baselines[8];
	int best_baseline; /* the one the candidate is least faster than (kf_kb_vs_best); -1 none timed */
};

/* Runs (or resumes) a search. Returns KF_OK when the run completed (improved or not — see result),
 * KF_ERR_INTERRUPTED when the cancellation token (core/cancel.h: SIGINT, SIGTERM) stopped it (the run is
 * recorded as interrupted and can be resumed), KF_ERR_UNAVAILABLE (no API key, no GPU; and the API itself: a
 * bad key, an unknown model, no quota found by the pre-flight check or a call, 3 failed calls or 3 refusals
 * in a row: err holds the API's message, the run is recorded as failed), KF_ERR_INVALID/PARSE/NOTFOUND (bad
 * task, broken reference, bad replay file, --budget-usd for a model without a price), others internal. */
enum kf_status kf_optimize(const struct kf_optimize_opts *o, struct kf_optimize_result *res,
			   struct kf_err *err);

#endif
