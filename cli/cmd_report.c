/* kforge report RUN: renders an optimize run's report (Markdown, self-contained HTML or JSON) from the
 * knowledge base alone, so a report can be redone at any time, also from a merged database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kb/kb.h"
#include "reports/run_report.h"

static const char help[] =
    "Renders the report of run RUN (an id from 'kforge kb list') from the knowledge base: the best\n"
    "verified kernel with its speedup and interval per timing shape, search progress per LLM call, the\n"
    "lineage of the winner, the search tree, what the LLM calls became, every attempt with its verdict,\n"
    "source and diff against its parent (HTML), and the spend. CPU-backend times are labelled as CPU "
    "times.\n\n"
    "kforge report --compare RUN RUN... compares runs of one task: progress per call, best speedup with\n"
    "its interval, calls, tokens, cost and time.\n\n"
    "options:\n"
    "  --compare    RUN... are two or more runs of one task to compare\n"
    "  --format F   md (default), html or json\n"
    "  --db FILE    the knowledge base (default $KFORGE_DB, then kforge.db)\n"
    "  -o FILE      write to FILE instead of stdout\n"
    "  --json       the same as --format json\n"
    "exit: 0 written, 2 bad arguments or unknown run, 3 internal\n";

#define KF_REPORT_MAX_BYTES ((size_t)256 << 20) /* a run of thousands of candidates stays well below */

int cmd_report(int argc, char **argv)
{
	const char *fmt_s = NULL, *db = NULL, *out_path = NULL, *pos[16];
	bool json = false, compare = false;
	const struct kf_opt opts[] = {{"format", true, &fmt_s, NULL},
				      {"db", true, &db, NULL},
				      {"output", true, &out_path, NULL},
				      {"json", false, NULL, &json},
				      {"compare", false, NULL, &compare}};
	size_t n_pos;
	enum kf_report_format fmt = KF_REPORT_MD;
	uint64_t run_id;
	int64_t ids[16];
	struct kf_kb *kb = NULL;
	struct kf_buf b = KF_BUF_INIT(KF_REPORT_MAX_BYTES);
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st;
	int rc;

	/* "-o FILE" is the one short option; the shared parser knows long ones, so spell it out first */
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-o"))
			argv[i] = "--output";
	if (kf_cli_start("report", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, KF_ARRAY_SIZE(pos),
			 &n_pos, "expected one RUN id", &rc))
		return rc;
	if (!compare && n_pos != 1)
		return kf_cli_usage_error("report", "expected one RUN id (--compare takes several)");
	if (compare && n_pos < 2)
		return kf_cli_usage_error("report", "--compare needs two or more RUN ids");
	for (size_t i = 0; i < n_pos; i++) {
		if (!kf_parse_u64(pos[i], &run_id) || !run_id || run_id > INT64_MAX)
			return kf_cli_usage_error("report", "RUN must be a positive run id, not '%s'",
						  pos[i]);
		ids[i] = (int64_t)run_id;
	}
	if (json)
		fmt = KF_REPORT_JSON;
	if (fmt_s && !kf_report_format_parse(fmt_s, &fmt))
		return kf_cli_usage_error("report", "--format must be md, html or json, not '%s'", fmt_s);
	db = kf_cli_db_path(db);
	if ((st = kf_kb_open(db, KF_KB_READONLY | KF_KB_NOCREATE, &kb, &err))) {
		kf_cli_error("%s", err.msg);
		return st == KF_ERR_NOTFOUND ? KF_EXIT_USAGE : kf_status_exit_code(st);
	}
	st = compare ? kf_report_compare(kb, ids, n_pos, fmt, &b, &err)
		     : kf_report_run(kb, ids[0], fmt, &b, &err);
	kf_kb_close(kb);
	if (st) {
		kf_cli_error("%s", err.msg);
		kf_buf_release(&b);
		return st == KF_ERR_NOTFOUND || st == KF_ERR_INVALID ? KF_EXIT_USAGE : KF_EXIT_INTERNAL;
	}
	if (out_path) {
		st = kf_write_file_atomic(out_path, b.data, b.len, &err);
		if (st)
			kf_cli_error("%s", err.msg);
	} else if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout)) {
		kf_cli_error("cannot write the report to stdout");
		st = KF_ERR_IO;
	}
	kf_buf_release(&b);
	return st ? KF_EXIT_INTERNAL : KF_EXIT_OK;
}
