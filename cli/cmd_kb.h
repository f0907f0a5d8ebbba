/* kforge kb's subcommands, spread over cli/cmd_kb.c (the command, stats, export, import, merge),
 * cmd_kb_list.c (list, search, examples), cmd_kb_show.c (show) and cmd_kb_stress.c (the durability test's
 * hidden _stress and _check). Private to the cli. */
#ifndef KF_CLI_CMD_KB_H
#define KF_CLI_CMD_KB_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "kb/kb.h"

struct kb_args {
	const char *db, *run, *task, *limit, *out, *arch;
	bool json, force;
	const char *pos[64];
	size_t n_pos;
};

/* A positive decimal id; false on anything else. */
bool kf_cli_kb_parse_id(const char *s, int64_t *out);
/* Prints err and returns its exit code. */
int kf_cli_kb_fail(const struct kf_err *err);
/* Prints doc (pretty) on stdout and frees it; 3 when out of memory. */
int kf_cli_kb_print_json(cJSON *doc);
/* A Unix time as "2026-11-29 18:00:00Z", "-" for none. */
void kf_cli_kb_fmt_time(double t, char *buf, size_t n);
/* The task's name, else "#ID", into buf. */
const char *kf_cli_kb_task_name(struct kf_kb *kb, int64_t task_id, char *buf, size_t n);

/* A run's candidates, one line each, or as JSON objects into arr when it is not NULL; *n gets how many. */
enum kf_status kf_cli_kb_run_candidates(struct kf_kb *kb, int64_t run_id, cJSON *arr, int64_t *n,
					struct kf_err *err);

/* The subcommands: each returns the exit code. */
int kf_cli_kb_list(struct kf_kb *kb, const struct kb_args *a);
int kf_cli_kb_search(struct kf_kb *kb, const struct kb_args *a);
int kf_cli_kb_examples(struct kf_kb *kb, const struct kb_args *a);
int kf_cli_kb_show(struct kf_kb *kb, const struct kb_args *a);
int kf_cli_kb_stress(struct kf_kb *kb, const struct kb_args *a);
int kf_cli_kb_check(struct kf_kb *kb, const struct kb_args *a);

#endif
