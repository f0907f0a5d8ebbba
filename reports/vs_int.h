/* Private to reports/: a kernel against its task's baselines (reports/vs.c), read from the knowledge base
 * (schema 4) and rendered as a section of the run report in Markdown, HTML and JSON. The words: "vs
 * library" where the baseline is a library call (cuBLAS, cuDNN), "vs baseline" for a kernel file. */
#ifndef KF_REPORTS_VS_INT_H
#define KF_REPORTS_VS_INT_H

#include <cjson/cJSON.h>

#include "kb/kb.h"
#include "kf.h"

/* One baseline at one timing shape (strings owned). */
struct kf_report_vs_row {
	char *shape, *name, *status, *reason, *method;
	char clock[16];
	bool library, significant;
	double median_ms, speedup, lo, hi;
};

struct kf_report_vs {
	size_t n_rows;
	struct kf_report_vs_row *rows; /* by timing shape, then the task's order */
	size_t n;
	struct kf_kb_vs v[KF_KB_MAX_TIMING_BASELINES]; /* over all timing shapes */
	int best;                                      /* kf_kb_vs_best, -1: none timed */
};

/* The candidate's standing against each baseline (cand_id 0: nothing, an empty set). */
enum kf_status kf_report_vs_load(struct kf_kb *kb, int64_t cand_id, struct kf_report_vs *out,
				 struct kf_err *err);
void kf_report_vs_release(struct kf_report_vs *v);

/* "library" or "baseline": what the report calls a comparison with this kind of baseline. */
const char *kf_report_vs_word(bool library);
/* One sentence on the best baseline ("vs library (cublas.gemm): 0.81x (95% interval 0.80-0.83), not
 * significantly faster"), "" when none was timed, into buf. */
void kf_report_vs_summary(const struct kf_report_vs *v, bool cpu, char *buf, size_t n);

/* The section (a heading, the aggregates, the per-shape rows; nothing when the task has no baselines). */
enum kf_status kf_report_vs_md(struct kf_buf *b, const struct kf_report_vs *v, bool cpu);
enum kf_status kf_report_vs_html(struct kf_buf *b, const struct kf_report_vs *v, bool cpu);
/* {"best": NAME|null, "word": ..., "baselines": [...aggregates], "shapes": [...rows]} */
cJSON *kf_report_vs_json(const struct kf_report_vs *v);

/* ---- the bench's comparison with each task's best baseline (reports/bench_vs.c) ---- */
struct kf_bench_task;
struct kf_bench_metrics;
/* {"word", "tasks", "timed", "library", "fast_p": {p: v}, "fast_p_significant": {...}, "geomean_speedup"} */
cJSON *kf_bench_vs_metrics_json(const struct kf_bench_metrics *m);
/* {"name", "kind", "speedup", "ci_lo", "ci_hi", "significant", "method"} or, with none timed, null (and the
 * task's "baseline_note" says why) */
void kf_bench_vs_task_json(cJSON *o, const struct kf_bench_task *t);
/* The CSV columns after the existing ones: a header suffix and one row's fields (each with a leading ','). */
#define KF_BENCH_VS_CSV_HEADER ",best_baseline,baseline_kind,speedup_vs_baseline,vs_ci_lo,vs_ci_hi"
enum kf_status kf_bench_vs_csv(struct kf_buf *b, const struct kf_bench_task *t);
/* The sections: fast_p and geomean vs the best baseline per level, then each task's best baseline. */
enum kf_status kf_bench_vs_md(struct kf_buf *b, const struct kf_bench_task *t, size_t n,
			      const struct kf_bench_metrics *m, size_t n_m);
enum kf_status kf_bench_vs_html(struct kf_buf *b, const struct kf_bench_task *t, size_t n,
				const struct kf_bench_metrics *m, size_t n_m);

#endif
