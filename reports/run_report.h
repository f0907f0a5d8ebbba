/* The report of one optimize run, rendered from the knowledge base (so `kforge report RUN` can redo it
 * at any time): the best kernel, its speedup and interval per timing shape, search progress over time,
 * the lineage of the winner, what every attempt became, and the spend. */
#ifndef KF_RUN_REPORT_H
#define KF_RUN_REPORT_H

#include "kb/kb.h"
#include "kf.h"

enum kf_report_format { KF_REPORT_MD, KF_REPORT_HTML, KF_REPORT_JSON };
bool kf_report_format_parse(const char *s, enum kf_report_format *out);

/* Appends the report of run_id in fmt to out. KF_ERR_NOTFOUND for an unknown run. */
enum kf_status kf_report_run(struct kf_kb *kb, int64_t run_id, enum kf_report_format fmt, struct kf_buf *out,
			     struct kf_err *err);

/* Writes DIR/report.md and DIR/report.html of run_id in the database at db_path, each atomically: what a
 * search leaves in its output folder. md and html (PATH_MAX bytes each, may be NULL) get the path of each
 * file written ("" when it was not). Returns the first failure; the other file is still tried. */
enum kf_status kf_report_run_write(const char *db_path, int64_t run_id, const char *dir, char *md, char *html,
				   struct kf_err *err);

/* The search's progress: after each step (an LLM call, numbered from 1; or a candidate, for runs without
 * calls), the best verified speedup so far. A point is one attempt: the step that produced it, whether it
 * passed verification, its speedup. */
struct kf_progress_point {
	int64_t step; /* 1-based; 0: none (left out) */
	bool passed;
	double speedup;
};
/* Writes (k, best after step k) for k = 1..n_steps, from the first step with a verified attempt on, into
 * out_x/out_y (n_steps entries each); returns how many were written. */
size_t kf_report_progress(const struct kf_progress_point *p, size_t n, int64_t n_steps, double *out_x,
			  double *out_y);

/* Compares runs of one task (progress per LLM call, best speedup with its interval, calls, tokens, cost,
 * time) in fmt. KF_ERR_INVALID for fewer than two runs, the same run twice, or runs of different tasks;
 * KF_ERR_NOTFOUND for an unknown run. */
enum kf_status kf_report_compare(struct kf_kb *kb, const int64_t *run_ids, size_t n,
				 enum kf_report_format fmt, struct kf_buf *out, struct kf_err *err);

#endif
