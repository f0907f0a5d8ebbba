/* kforge tasks baselines [PATH...]: verifies every baseline of every task (kernel files and library
 * calls, core/baseline.h) against the task's reference with the full protocol, on the chosen backend.
 * Each is `pass`, `rejected` (its verdict; a rejected baseline is never used for a speedup) or
 * `unavailable` (the backend cannot run it: a library call on the cpu backend, no GPU for cuda). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "fs.h"
#include "core/baseline.h"
#include "json.h"
#include "verifier/verifier.h"

static const char help[] =
    "kforge tasks baselines [--backend B] [--seed N] [--json] [PATH...]\n\n"
    "Verifies each baseline of each task (its `baseline` file and `baselines` list: kernel files\n"
    "and library calls such as cublas.gemm) against the task's reference with the whole\n"
    "verification protocol, like a candidate. PATH is a task.json or a folder searched\n"
    "recursively (default tasks/). One line per baseline: pass, rejected (with the verdict) or\n"
    "unavailable (with the reason: library calls need the cuda backend and a GPU).\n\n"
    "exit: 0 none rejected and at least one passed (or there were none), 1 a baseline was rejected,\n"
    "2 bad task file, 3 internal error, 4 every baseline was unavailable\n";

struct tally {
	size_t pass, rejected, unavailable;
};

static void report(cJSON *arr, bool json, const char *task, const struct kf_baseline *b, const char *status,
		   const char *verdict, const char *reason)
{
	if (json) {
		cJSON *e = cJSON_CreateObject();
		kf_json_add_string(e, "task", task);
		kf_json_add_string(e, "baseline", b->name);
		kf_json_add_string(e, "kind", b->kind == KF_BASELINE_KERNEL ? "kernel" : "library");
		if (b->kind == KF_BASELINE_LIBRARY)
			kf_json_add_string(e, "call", b->canon);
		kf_json_add_string(e, "status", status);
		if (verdict)
			kf_json_add_string(e, "verdict", verdict);
		kf_json_add_string(e, "reason", reason);
		cJSON_AddItemToArray(arr, e);
		return;
	}
	printf("%-11s %s %s: %s\n", status, task, b->name, reason);
	fflush(stdout);
}

int kf_cmd_tasks_baselines(int argc, char **argv)
{
	const char *backend = NULL, *seed_s = NULL, *pos[256];
	bool json = false;
	const struct kf_opt opts[] = {
	    {"backend", true, &backend, NULL}, {"seed", true, &seed_s, NULL}, {"json", false, NULL, &json}};
	struct kf_device_info dev = {0};
	struct kf_err perr = KF_ERR_INIT;
	struct kf_paths files = {0};
	struct tally n = {0};
	enum kf_backend_kind b = KF_BACKEND_CPU;
	bool no_gpu = false;
	cJSON *doc = NULL, *arr = NULL;
	size_t n_pos;
	int rc, worst = 0;
	char *end = NULL;
	uint64_t seed = 0;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("tasks", help);
	if ((rc = kf_cli_parse("tasks", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, KF_ARRAY_SIZE(pos),
			       &n_pos)))
		return rc;
	if (seed_s && (!*seed_s || (seed = strtoull(seed_s, &end, 0), *end)))
		return kf_cli_usage_error("tasks", "--seed '%s' is not a number", seed_s);
	if (backend && !strcmp(backend, "cuda")) {
		/* no GPU is a finding per baseline here, not the end of the command */
		b = KF_BACKEND_CUDA;
		if (kf_device_probe(KF_BACKEND_CUDA, NULL, &dev, &perr))
			no_gpu = true;
	} else if ((rc = kf_cli_backend_select("tasks", backend, &b, &dev))) {
		return rc;
	}
	if (!n_pos)
		pos[n_pos++] = "tasks";
	for (size_t i = 0; i < n_pos; i++) {
		struct kf_err err = KF_ERR_INIT;
		if (kf_task_files_find(pos[i], &files, &err)) {
			kf_cli_error("%s", err.msg);
			kf_paths_free(&files);
			return kf_status_exit_code(err.code) == 2 ? KF_EXIT_USAGE : KF_EXIT_INTERNAL;
		}
	}
	if (json) {
		doc = cJSON_CreateObject();
		kf_json_add_string(doc, "backend", kf_backend_name(b));
		arr = cJSON_AddArrayToObject(doc, "baselines");
	}
	for (size_t i = 0; i < files.n; i++) {
		struct kf_task *t = NULL;
		struct kf_err err = KF_ERR_INIT;
		if (kf_task_load(files.v[i], 0, NULL, &t, &err)) {
			kf_cli_error("%s", err.msg);
			worst = 2;
			continue;
		}
		for (size_t k = 0; k < t->n_baselines; k++) {
			const struct kf_baseline *bl = &t->baselines[k];
			struct kf_verify_opts vo;
			struct kf_verify_result *r = NULL;
			enum kf_status st;

			if (no_gpu) {
				n.unavailable++;
				report(arr, json, t->name, bl, "unavailable", NULL, perr.msg);
				continue;
			}
			kf_verify_opts_init(&vo);
			vo.backend = b;
			vo.seed = seed;
			vo.arch =
			    b == KF_BACKEND_CUDA && dev.arch[0] ? dev.arch : NULL; /* compile for this GPU */
			vo.timing_shapes = b == KF_BACKEND_CUDA; /* as kforge verify does for a candidate */
			kf_err_clear(&err);
			st = kf_verify_baseline(t, bl, &vo, &r, &err);
			if (st == KF_ERR_UNAVAILABLE || (!st && r->status == KF_VERDICT_UNSUPPORTED)) {
				n.unavailable++;
				report(arr, json, t->name, bl, "unavailable",
				       r ? kf_verdict_name(r->status) : NULL, st ? err.msg : r->reason);
			} else if (st) {
				kf_cli_error("%s: baseline %s: %s", files.v[i], bl->name, err.msg);
				if (worst < 2)
					worst = kf_status_exit_code(st) == 2 ? 2 : 3;
			} else if (r->status == KF_VERDICT_PASS) {
				n.pass++;
				report(arr, json, t->name, bl, "pass", "pass", r->reason);
			} else {
				n.rejected++;
				report(arr, json, t->name, bl, "rejected", kf_verdict_name(r->status),
				       r->reason);
			}
			kf_verify_result_free(r);
		}
		kf_task_free(t);
	}
	kf_paths_free(&files);
	if (!worst && n.rejected)
		worst = 1;
	if (!worst && n.unavailable && !n.pass)
		worst = KF_EXIT_UNAVAILABLE;
	if (json) {
		kf_json_add_int(doc, "passed", (int64_t)n.pass);
		kf_json_add_int(doc, "rejected", (int64_t)n.rejected);
		kf_json_add_int(doc, "unavailable", (int64_t)n.unavailable);
		if (kf_json_fput(doc, true, stdout, &perr)) {
			kf_cli_error("%s", perr.msg);
			worst = KF_EXIT_INTERNAL;
		}
		cJSON_Delete(doc);
	} else {
		printf("%zu passed, %zu rejected, %zu unavailable\n", n.pass, n.rejected, n.unavailable);
	}
	return worst;
}
