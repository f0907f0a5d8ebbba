/* kforge optimize's rendering (cli/cmd_optimize_show.c): the live status line on a terminal and the final
 * summary, as text or --json. Private to the cli. */
#ifndef KF_CLI_CMD_OPTIMIZE_H
#define KF_CLI_CMD_OPTIMIZE_H

#include <stdbool.h>

#include "agent/config.h"
#include "agent/optimize.h"

struct kf_cli_live {
	bool tty;
	bool shown;
	const char *clock; /* "cpu" or "gpu": what the speedups were measured with */
};

/* The progress callback (kf_optimize_progress_fn) with a struct kf_cli_live as ctx: warnings on stderr,
 * and on a terminal one status line rewritten in place. */
void kf_cli_optimize_progress(void *ctx, const struct kf_optimize_progress *p);
/* The run's summary on stdout, with the report files written (md, html; "" when not). */
void kf_cli_optimize_summary(const struct kf_optimize_result *r, const char *md, const char *html, bool json);

/* The options `--resume RUN` may fill in (NULL: given neither on the command line nor in the config file). */
struct kf_cli_optimize_args {
	const char *task, *strategy, *provider, *model, *base_url, *backend;
	const char *budget_calls, *budget_usd, *time_limit, *concurrency, *out;
	const struct kf_config *cfg; /* the config file in force (its search parameters); may be NULL */
	uint32_t from_file;          /* bit k (enum kf_config_key): that value came from the file */
};
/* What the run recorded, kept while the command runs (the caller's storage: nothing to free). */
struct kf_cli_resumed {
	char kept[12][4096];
	size_t n_kept;
};
/* Fills in a from the knowledge base's record of run_id (cli/cmd_optimize_resume.c) and says on stderr what
 * the run continues with and which flags (or config file values) override it. 0, or an exit code (2: no
 * such run, not an optimize run, a flag or a file's strategy or search parameter that cannot continue it). */
int kf_cli_optimize_resume(const char *db_path, int64_t run_id, struct kf_cli_optimize_args *a,
			   struct kf_cli_resumed *r);

/* `kforge optimize --print-config` (cli/cmd_optimize_config.c): the configuration in force on stdout as
 * JSON, each key with its value and source (src: per enum kf_config_key; have_provider false when none is
 * configured; backend and prompts: the values in force, NULL for the defaults). Returns the exit code. */
int kf_cli_optimize_print_config(const struct kf_optimize_opts *o, const struct kf_config *cfg,
				 const enum kf_config_source *src, bool have_provider, const char *backend,
				 const char *prompts);

#endif
