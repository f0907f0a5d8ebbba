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

#endif
