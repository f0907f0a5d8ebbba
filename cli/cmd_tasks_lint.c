/* kforge tasks lint PATH...: finds degenerate tasks — outputs all near zero, outputs that ignore the
 * seed, inputs that do not affect the output — because such tasks let a kernel that does nothing pass;
 * and warns where a constraint removes every tail case of a dim. Exit 0 when every task is clean (or has
 * warnings only), 1 when any has findings, 2 on a bad task file. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fs.h"
#include "verifier/verifier.h"

#include <cjson/cJSON.h>

int kf_cmd_tasks_lint(int argc, char **argv)
{
	const char *backend = NULL, *pos[256];
	bool json = false;
	const struct kf_opt opts[] = {{"backend", true, &backend, NULL}, {"json", false, NULL, &json}};
	size_t n_pos;
	enum kf_backend_kind b;
	int rc, worst = 0;
	cJSON *all = cJSON_CreateArray();

	if (kf_cli_start("tasks",
			 "kforge tasks lint [--backend B] [--json] PATH...\n"
			 "  PATH: a task.json or a folder searched for them\n"
			 "  runs each task's reference and flags degenerate tasks:\n"
			 "  near_zero_output  every output value within atol of zero\n"
			 "  seed_independent  outputs identical for two input seeds\n"
			 "  input_ignored     an input that does not change any output\n"
			 "  reference_error   the reference fails to compile or run\n"
			 "  constraint_no_tails (warning) a constraint leaves a dim one residue\n"
			 "                    mod 32, so no tail case of it is checked\n",
			 argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, KF_ARRAY_SIZE(pos), &n_pos,
			 "lint needs at least one PATH", &rc))
		return rc;
	if ((rc = kf_cli_backend_select("tasks", backend, &b, NULL)))
		return rc;
	/* a PATH is a task.json or a folder of them, as for tasks validate */
	struct kf_paths files = {0};
	for (size_t i = 0; i < n_pos; i++) {
		struct kf_err err = KF_ERR_INIT;
		if (kf_task_files_find(pos[i], &files, &err)) {
			kf_cli_error("%s", err.msg);
			worst = 2;
		}
	}
	for (size_t i = 0; i < files.n; i++) {
		struct kf_task *t = NULL;
		struct kf_err err = KF_ERR_INIT;
		struct kf_lint_finding *f = NULL;
		size_t nf = 0;
		enum kf_status st = kf_task_load(files.v[i], 0, NULL, &t, &err);
		if (!st)
			st = kf_task_lint(t, b, &f, &nf, &err);
		if (st) {
			kf_cli_error("%s", err.msg);
			worst = kf_status_exit_code(st) == 2 ? 2 : 3;
			kf_task_free(t);
			continue;
		}
		for (size_t k = 0; k < nf; k++)
			if (!f[k].warning && worst < 1)
				worst = 1;
		cJSON *j = cJSON_CreateObject(), *arr = cJSON_CreateArray();
		cJSON_AddStringToObject(j, "task", t->name);
		cJSON_AddStringToObject(j, "path", files.v[i]);
		for (size_t k = 0; k < nf; k++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "check", f[k].check);
			cJSON_AddStringToObject(e, "detail", f[k].detail);
			cJSON_AddBoolToObject(e, "warning", f[k].warning);
			cJSON_AddItemToArray(arr, e);
			if (!json)
				printf("%s: %s%s: %s\n", files.v[i], f[k].warning ? "warning: " : "",
				       f[k].check, f[k].detail);
		}
		if (!json && !nf)
			printf("ok %s\n", t->name);
		cJSON_AddItemToObject(j, "findings", arr);
		cJSON_AddItemToArray(all, j);
		free(f);
		kf_task_free(t);
	}
	kf_paths_free(&files);
	if (json) {
		char *s = cJSON_Print(all);
		puts(s ? s : "[]");
		free(s);
	}
	cJSON_Delete(all);
	return worst;
}
