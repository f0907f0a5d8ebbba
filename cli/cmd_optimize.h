/* kforge optimize's rendering (cli/cmd_optimize_show.c): the live status line on a terminal and the final
 * summary, as text or --json. Private to the cli. */
#ifndef KF_CLI_CMD_OPTIMIZE_H
#define KF_CLI_CMD_OPTIMIZE_H

#include <stdbool.h>

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

#endif
