/* kforge tasks lint: finding degenerate tasks needs the verifier (it runs the reference); until that
 * implementation lands here the subcommand says so and exits 3 (spec/cli.md: environment error). */
#include "cli.h"

int kf_cmd_tasks_lint(int argc, char **argv)
{
	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("tasks", "kforge tasks lint: finds degenerate tasks (not available in this build yet)\n");
	kf_cli_error("'kforge tasks lint' needs the verifier, which this build does not include yet");
	return KF_EXIT_INTERNAL;
}
