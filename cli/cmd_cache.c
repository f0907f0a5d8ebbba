/* kforge cache stats|prune: what the compile and reference-output caches hold, and least-recently-used
 * eviction down to a size (the same bounds kforge applies by itself as it stores). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "sandbox/sandbox.h"

static const char help[] =
    "subcommands:\n"
    "  stats [--json]\n"
    "      Entries and bytes of the compile cache, the reference-output cache and the other sealed\n"
    "      blobs (the cpu runtime object), with the bounds kforge keeps them under\n"
    "      ($KFORGE_CACHE_MAX_MB, default 2048; $KFORGE_REFCACHE_MAX_MB, default 1024).\n"
    "  prune [--max-mb N] [--ref-max-mb N] [--all] [--json]\n"
    "      Evicts the least recently used entries down to the bounds (or the sizes given);\n"
    "      --all empties the caches. The cache key (.mac-key) stays.\n"
    "The cache folder: $KFORGE_CACHE, else ~/.cache/kforge. Every entry is sealed with an HMAC\n"
    "under that key; an entry that fails it is ignored, reported and removed when it is read.\n";

static const char *const kind_names[] = {"compile", "ref", "other"};

static int print_stats(const struct kf_cache_stats *st, bool json, const char *what)
{
	if (json) {
		cJSON *j = cJSON_CreateObject();
		kf_json_add_string(j, "dir", st->dir);
		for (int k = 0; k < 3; k++) {
			cJSON *o = cJSON_AddObjectToObject(j, kind_names[k]);
			kf_json_add_int(o, "entries", (int64_t)st->n[k]);
			kf_json_add_int(o, "bytes", (int64_t)st->bytes[k]);
		}
		kf_json_add_int(j, "max_compile_bytes", (int64_t)st->max_compile_bytes);
		kf_json_add_int(j, "max_ref_bytes", (int64_t)st->max_ref_bytes);
		char *s = cJSON_Print(j);
		puts(s ? s : "{}");
		free(s);
		cJSON_Delete(j);
		return KF_EXIT_OK;
	}
	printf("%scache %s\n", what, st->dir);
	printf("  compile results    %6zu entries  %9.1f MiB  (bound %.0f MiB)\n", st->n[0],
	       (double)st->bytes[0] / 1048576.0, (double)st->max_compile_bytes / 1048576.0);
	printf("  reference outputs  %6zu entries  %9.1f MiB  (bound %.0f MiB)\n", st->n[1],
	       (double)st->bytes[1] / 1048576.0, (double)st->max_ref_bytes / 1048576.0);
	printf("  other (runtime)    %6zu entries  %9.1f MiB\n", st->n[2], (double)st->bytes[2] / 1048576.0);
	return KF_EXIT_OK;
}

int cmd_cache(int argc, char **argv)
{
	const char *max_s = NULL, *ref_s = NULL, *pos[1];
	bool json = false, all = false;
	const struct kf_opt opts[] = {{"json", false, NULL, &json},
				      {"all", false, NULL, &all},
				      {"max-mb", true, &max_s, NULL},
				      {"ref-max-mb", true, &ref_s, NULL}};
	struct kf_cache_stats st;
	struct kf_err err = KF_ERR_INIT;
	size_t n_pos;
	int rc;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("cache", help);
	if (argc < 2)
		return kf_cli_usage_error("cache", "expected 'stats' or 'prune'");
	if ((rc = kf_cli_parse("cache", argc - 1, argv + 1, opts, KF_ARRAY_SIZE(opts), pos, 0, &n_pos)))
		return rc;
	if (!strcmp(argv[1], "stats")) {
		if (max_s || ref_s || all)
			return kf_cli_usage_error("cache", "stats takes only --json");
		if (kf_cache_stats(NULL, &st, &err)) {
			kf_cli_error("%s", err.msg);
			return KF_EXIT_INTERNAL;
		}
		return print_stats(&st, json, "");
	}
	if (!strcmp(argv[1], "prune")) {
		uint64_t max, ref;
		if (kf_cache_stats(NULL, &st, &err)) {
			kf_cli_error("%s", err.msg);
			return KF_EXIT_INTERNAL;
		}
		max = st.max_compile_bytes;
		ref = st.max_ref_bytes;
		if (max_s && !kf_parse_u64(max_s, &max))
			return kf_cli_usage_error("cache", "--max-mb needs a number, not '%s'", max_s);
		if (ref_s && !kf_parse_u64(ref_s, &ref))
			return kf_cli_usage_error("cache", "--ref-max-mb needs a number, not '%s'", ref_s);
		if (max_s)
			max <<= 20;
		if (ref_s)
			ref <<= 20;
		if (all)
			max = ref = 0;
		if (kf_cache_prune(NULL, max, ref, &err) || kf_cache_stats(NULL, &st, &err)) {
			kf_cli_error("%s", err.msg);
			return KF_EXIT_INTERNAL;
		}
		return print_stats(&st, json, "pruned: ");
	}
	return kf_cli_usage_error("cache", "unknown subcommand '%s'", argv[1]);
}
