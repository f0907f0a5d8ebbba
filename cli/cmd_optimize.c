/* kforge optimize: until its module lands, the command says so and exits 3 (spec/cli.md). */
#include "cli.h"

int cmd_optimize(int argc, char **argv)
{
	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("optimize", "this command is not available in this build yet\n");
	kf_cli_error("'kforge optimize' is not available in this build yet");
	return KF_EXIT_INTERNAL;
}
