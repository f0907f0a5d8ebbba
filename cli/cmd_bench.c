/* kforge bench: until its module lands, the command says so and exits 3 (spec/cli.md). */
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("bench", "this command is not available in this build yet\n");
	kf_cli_error("'kforge bench' is not available in this build yet");
	return KF_EXIT_INTERNAL;
}
