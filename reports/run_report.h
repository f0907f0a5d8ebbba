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

#endif
