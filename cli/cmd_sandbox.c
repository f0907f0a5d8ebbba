/* kforge sandbox test-module FILE.so: loads any shared object into the cpu worker exactly as a candidate
 * module is loaded (its constructors run inside the sandbox), calls its entry, and reports what the
 * sandbox refused. kforge sandbox layers: the layers (as kforge doctor shows them). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "sandbox/sandbox.h"

static const char help[] =
    "subcommands:\n"
    "  test-module FILE.so [--entry NAME] [--timeout-ms MS] [--json]\n"
    "      Loads FILE.so (built from any host C: cc -shared -fPIC) into a cpu worker through the\n"
    "      path a candidate kernel takes and under the same sandbox, so its constructors run in\n"
    "      there; then calls `int NAME(void)` (default kforge_test_entry) in one step. Prints the\n"
    "      layers, whether it loaded, what the entry returned, every syscall the sandbox refused and\n"
    "      the worker's log. $KFORGE_SANDBOX_LAYERS selects layers (e.g. 'landlock' alone).\n"
    "      exit: 0 it loaded, the entry returned 0 and nothing was refused; 1 otherwise;\n"
    "      4 the cpu backend is unavailable or refuses to run here\n"
    "  layers [--json]\n"
    "      The sandbox layers, as 'kforge doctor' lists them.\n";

static void layer_list(unsigned layers, char *out, size_t n)
{
	size_t k = 0;
	out[0] = '\0';
	for (unsigned b = 0; b < KF_LAYER_COUNT; b++)
		if (layers & (1u << b))
			k += (size_t)snprintf(out + k, k < n ? n - k : 0, "%s%s", k ? " " : "",
					      kf_layer_name(b));
	if (!layers)
		snprintf(out, n, "none");
}

static int test_module(int argc, char **argv)
{
	const char *entry = NULL, *timeout_s = NULL, *pos[1];
	bool json = false;
	const struct kf_opt opts[] = {{"entry", true, &entry, NULL},
				      {"timeout-ms", true, &timeout_s, NULL},
				      {"json", false, NULL, &json}};
	struct kf_test_module_report rep;
	struct kf_err err = KF_ERR_INIT;
	size_t n_pos;
	uint64_t ms = 20000;
	char layers[256];
	int rc;

	if ((rc = kf_cli_parse("sandbox", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, &n_pos)))
		return rc;
	if (n_pos != 1)
		return kf_cli_usage_error("sandbox", "test-module needs FILE.so");
	if (timeout_s && (!kf_parse_u64(timeout_s, &ms) || ms < 100 || ms > 3600000))
		return kf_cli_usage_error("sandbox", "--timeout-ms needs 100..3600000, not '%s'", timeout_s);
	enum kf_status st = kf_sandbox_test_module(pos[0], entry, (int)ms, &rep, &err);
	if (st) {
		kf_cli_error("%s", err.msg);
		return st == KF_ERR_UNAVAILABLE                   ? KF_EXIT_UNAVAILABLE
		       : st == KF_ERR_NOTFOUND || st == KF_ERR_IO ? KF_EXIT_USAGE
								  : KF_EXIT_INTERNAL;
	}
	layer_list(rep.layers, layers, sizeof(layers));
	rc = rep.loaded && rep.entry_ran && rep.entry_code == 0 && rep.n_refused == 0 ? 0 : 1;
	if (json) {
		cJSON *j = cJSON_CreateObject(), *ref = cJSON_CreateArray();
		kf_json_add_string(j, "module", pos[0]);
		kf_json_add_string(j, "layers", layers);
		kf_json_add_bool(j, "loaded", rep.loaded);
		kf_json_add_bool(j, "entry_ran", rep.entry_ran);
		kf_json_add_int(j, "entry_code", rep.entry_code);
		kf_json_add_string(j, "status", kf_status_name(rep.status));
		kf_json_add_string(j, "message", rep.msg);
		for (size_t i = 0; i < rep.n_refused; i++)
			cJSON_AddItemToArray(ref, cJSON_CreateString(rep.refused[i]));
		cJSON_AddItemToObject(j, "refused", ref);
		kf_json_add_string(j, "log", rep.log);
		char *s = cJSON_Print(j);
		puts(s ? s : "{}");
		free(s);
		cJSON_Delete(j);
	} else {
		printf("module       %s\n", pos[0]);
		printf("sandbox      %s\n", layers);
		printf("constructors %s\n", rep.loaded ? "ran, module loaded" : "did not finish: see below");
		if (rep.entry_ran)
			printf("entry        returned %d\n", rep.entry_code);
		else
			printf("entry        %s\n", rep.loaded ? "did not return: see below" : "not called");
		if (rep.status || (!rep.entry_ran && rep.msg[0]))
			printf("ended        %s: %s\n", kf_status_name(rep.status), rep.msg);
		printf("refused      %s\n", rep.n_refused ? "" : "nothing");
		for (size_t i = 0; i < rep.n_refused; i++)
			printf("  %s\n", rep.refused[i]);
		if (rep.log[0])
			printf("worker log:\n%s%s", rep.log,
			       rep.log[strlen(rep.log) - 1] == '\n' ? "" : "\n");
	}
	free(rep.log);
	return rc;
}

int cmd_sandbox(int argc, char **argv)
{
	if (kf_cli_wants_help(argc, argv) || argc < 2)
		return argc < 2 ? kf_cli_usage_error("sandbox", "expected a subcommand")
				: kf_cli_help("sandbox", help);
	if (!strcmp(argv[1], "test-module"))
		return test_module(argc - 1, argv + 1);
	if (!strcmp(argv[1], "layers")) {
		char *sub[] = {"doctor", NULL, NULL};
		int n = 1;
		for (int i = 2; i < argc; i++)
			if (!strcmp(argv[i], "--json"))
				sub[n++] = "--json";
		return kf_cli_sandbox_layers(n, sub);
	}
	return kf_cli_usage_error("sandbox", "unknown subcommand '%s'", argv[1]);
}
