/* The bench runner's results: one row per task read back from the knowledge base (so a merged database of
 * Slurm shards gives the same numbers as one run), KernelBench metrics over them (correctness and compile
 * rates, fast_p and its significance-aware variant, geometric-mean speedup, spend per task), and the HTML,
 * Markdown, JSON and CSV reports. Speedups are against each task's reference kernel. */
#ifndef KF_REPORTS_BENCH_H
#define KF_REPORTS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kb/kb.h"
#include "kf.h"

#define KF_BENCH_MAX_P 16

/* One task's outcome. */
struct kf_bench_task {
	char name[128];
	char category[64];
	int level;
	char status[32]; /* a verdict name ("pass", "wrong_output", ...), "missing" (no kernel, no run) or
			    "error" (the harness could not evaluate it) */
	char reason[400];
	bool compiled;  /* its kernel compiled (KernelBench's compile rate) */
	bool correct;   /* verified: status "pass" */
	double speedup; /* reference time / kernel time (geomean of timing shapes); 0 when not correct */
	double lo, hi;  /* the speedup interval: lowest lower bound, highest upper bound over timing shapes */
	double band;    /* the widest A/A noise band of those shapes (0: none recorded): lo must clear it */
	char clock[16]; /* "cpu", "cupti", "cuda_event"; "" when not timed */
	int64_t run_id; /* 0: no run recorded */
	char strategy[16]; /* "bench" for --from-dir evaluations, else the search's */
	int64_t candidates;
	double time_s, usd;
	int64_t calls, tokens;
	/* Best verified speedup so far per candidate (search runs with more than one candidate); owned. */
	double *progress;
	size_t n_progress;
	/* Against the task's baselines (docs/baselines.md): the best candidate's speedup over its best
	 * baseline, the one it is least faster than (kf_kb_vs_best), from its timings. */
	char backend[8];                             /* the run's, "" unknown */
	int n_kernel_baselines, n_library_baselines; /* the task declares (kf_runner_rows; 0 unknown) */
	bool has_base;                               /* a baseline was timed for the best candidate: */
	char base_name[128];
	bool base_library;
	double base_speedup, base_lo,
	    base_hi;           /* baseline / kernel: geomean and widest interval over shapes */
	bool base_significant; /* significantly faster at every timing shape */
	char base_method[16];  /* "interleaved" or "chained" */
	char base_note[300];   /* no baseline timed: what became of them */
};

/* True when task t can be compared with a baseline: one was timed, or it declares a kernel baseline, or a
 * library call and its run is not on the cpu backend (where library calls are unavailable). */
bool kf_bench_base_eligible(const struct kf_bench_task *t);
/* fast_p against the best baseline: (# correct AND base_speedup > p, with significant also base_lo > p)
 * over the tasks that can be compared (kf_bench_base_eligible); 0 when none. */
double kf_bench_fast_p_base(const struct kf_bench_task *t, size_t n, double p, bool significant);

void kf_bench_tasks_free(struct kf_bench_task *t, size_t n);

/* Fills *out from run run_id (status from its candidates' last evaluations; the best verified candidate's
 * speedup and interval from its timings). A run with no candidate is "missing", or "error" when its config
 * records one. Does not touch name/category/level when the run's task is unknown. */
enum kf_status kf_bench_task_from_run(struct kf_kb *kb, int64_t run_id, struct kf_bench_task *out,
				      struct kf_err *err);

/* ---- metrics (KernelBench definitions) ---- */

/* fast_p: (# tasks correct AND speedup > p) / (# ALL tasks, failures and missing included). With
 * significant, a task counts only when its speedup interval's lower bound is above p. 0 when n == 0. */
double kf_bench_fast_p(const struct kf_bench_task *t, size_t n, double p, bool significant);
/* Geometric mean of the speedups of the correct tasks (speedup > 0); 0 when none. *n_used may be NULL. */
double kf_bench_geomean(const struct kf_bench_task *t, size_t n, size_t *n_used);

struct kf_bench_metrics {
	int level; /* 0: all levels */
	size_t n_tasks, n_compiled, n_correct, n_missing;
	double compile_rate, correct_rate;
	size_t n_p;
	double p[KF_BENCH_MAX_P], fast[KF_BENCH_MAX_P], fast_sig[KF_BENCH_MAX_P];
	double geomean; /* over correct tasks; 0 when none */
	size_t n_geomean;
	double time_s_per_task, usd_per_task, calls_per_task;
	bool cpu_clock;   /* some speedup was measured with CPU times */
	bool model_clock; /* some speedup is the GPU cost model's prediction (clock "model") */
	/* against the best baseline of each task */
	size_t n_base;         /* tasks that can be compared (kf_bench_base_eligible) */
	size_t n_base_timed;   /* correct ones with a baseline timed */
	size_t n_base_library; /* ... whose best baseline is a library call */
	double fast_base[KF_BENCH_MAX_P], fast_base_sig[KF_BENCH_MAX_P];
	double geomean_base; /* over the n_base_timed tasks; 0 when none */
};
/* The report's word for m's comparison: "library" when every task's best baseline is a library call,
 * else "baseline" (as in "fast_p vs library"). */
const char *kf_bench_base_word(const struct kf_bench_metrics *m);

/* Metrics over the tasks of one level (0: all). */
void kf_bench_metrics_compute(const struct kf_bench_task *t, size_t n, const double *p, size_t n_p, int level,
			      struct kf_bench_metrics *m);
/* The overall metrics in m[0], then one per level present in t in ascending order (at most max in all);
 * returns how many. */
size_t kf_bench_metrics_all(const struct kf_bench_task *t, size_t n, const double *p, size_t n_p,
			    struct kf_bench_metrics *m, size_t max);
/* Parses "0,0.5,1" into p (at most max, each finite and >= 0); false on garbage. */
bool kf_bench_p_parse(const char *s, double *p, size_t max, size_t *n);
/* The default p list {0, 0.5, 0.8, 1, 1.5, 2}. */
size_t kf_bench_p_default(double *p, size_t max);

/* ---- reports ---- */

struct kf_bench_info {
	const char *suite; /* as given */
	const char *mode;  /* "from-dir", "optimize", "collect" */
	const char *backend;
	const char *db_path;
	const char *source; /* the --from-dir folder, or the provider/model */
	const char *shard;  /* "I/N" or NULL */
};

/* Each appends a whole document. The metrics arrays hold the overall metrics first, then one per level. */
enum kf_status kf_bench_render_json(struct kf_buf *b, const struct kf_bench_info *info,
				    const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				    size_t n_m);
enum kf_status kf_bench_render_md(struct kf_buf *b, const struct kf_bench_info *info,
				  const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				  size_t n_m);
enum kf_status kf_bench_render_csv(struct kf_buf *b, const struct kf_bench_task *t, size_t n);
enum kf_status kf_bench_render_html(struct kf_buf *b, const struct kf_bench_info *info,
				    const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				    size_t n_m);
/* Writes OUT/bench.json, bench.md, bench.csv and bench.html (OUT is created; each file atomically); json
 * (may be NULL) also gets bench.json's text. */
enum kf_status kf_bench_reports_write(const char *out_dir, const struct kf_bench_info *info,
				      const struct kf_bench_task *t, size_t n,
				      const struct kf_bench_metrics *m, size_t n_m, struct kf_buf *json,
				      struct kf_err *err);

#endif
