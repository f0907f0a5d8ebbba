/* kforge tasks list|show|validate|lint|baselines: finding, printing and validating task files
 * (docs/spec/task-format.md). `validate` exits 0 when every file is valid and 2 when any is not, with the
 * file and the field path or kernel-file line of each error on stderr. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baseline.h"
#include "cli.h"
#include "fs.h"
#include "json.h"
#include "kfile.h"
#include "sandbox/sandbox.h"
#include "task.h"

/* ---- list ---------------------------------------------------------------------------------- */

static int tasks_list(int argc, char **argv)
{
	bool json = false;
	const struct kf_opt opts[] = {{"json", false, NULL, &json}};
	const char *pos[1] = {NULL};
	size_t n_pos;
	struct kf_paths files = {0};
	struct kf_err err = KF_ERR_INIT;
	cJSON *doc = NULL, *arr = NULL, *errs = NULL;
	int rc, bad = 0;

	if (kf_cli_start("tasks",
			 "kforge tasks list [DIR] [--json]\n\n"
			 "Lists every task.json below DIR (default tasks/): name, level, category, path.\n"
			 "Exit 2 when a task file is invalid (it is reported on stderr, the rest listed).\n",
			 argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 0, 1, &n_pos, NULL, &rc))
		return rc;
	if (kf_task_files_find(n_pos ? pos[0] : "tasks", &files, &err)) {
		kf_cli_error("%s", err.msg);
		kf_paths_free(&files);
		return kf_status_exit_code(err.code);
	}
	if (json) {
		doc = cJSON_CreateObject();
		arr = doc ? cJSON_AddArrayToObject(doc, "tasks") : NULL;
		errs = doc ? cJSON_AddArrayToObject(doc, "errors") : NULL;
		if (!arr || !errs) {
			cJSON_Delete(doc);
			kf_paths_free(&files);
			kf_cli_error("out of memory");
			return KF_EXIT_INTERNAL;
		}
	}
	for (size_t i = 0; i < files.n; i++) {
		struct kf_task *t = NULL;
		kf_err_clear(&err);
		if (kf_task_load(files.v[i], 0, NULL, &t, &err)) {
			kf_cli_error("%s", err.msg);
			bad++;
			if (json) {
				cJSON *e = cJSON_CreateObject();
				kf_json_add_string(e, "path", files.v[i]);
				kf_json_add_string(e, "error", err.msg);
				cJSON_AddItemToArray(errs, e);
			}
			continue;
		}
		if (json) {
			cJSON *o = cJSON_CreateObject();
			kf_json_add_string(o, "name", t->name);
			kf_json_add_string(o, "title", t->title);
			kf_json_add_int(o, "level", t->level);
			kf_json_add_string(o, "category", t->category);
			kf_json_add_string(o, "path", t->path);
			kf_json_add_string(o, "hash", t->hash);
			cJSON_AddItemToArray(arr, o);
		} else {
			printf("%-32s L%d  %-14s %s\n", t->name, t->level, t->category, t->path);
		}
		kf_task_free(t);
	}
	if (json) {
		if (kf_json_fput(doc, true, stdout, &err)) {
			kf_cli_error("%s", err.msg);
			bad = -1;
		}
		cJSON_Delete(doc);
	}
	kf_paths_free(&files);
	return bad < 0 ? KF_EXIT_INTERNAL : bad ? KF_EXIT_USAGE : KF_EXIT_OK;
}

/* ---- validate ------------------------------------------------------------------------------- */

/* One kernel file through NVRTC (sm_90, the compile cache, no GPU needed); the error names the file and the
 * first line of the compiler's log. */
static enum kf_status nvrtc_one(const char *task_file, const char *what, const char *path,
				const struct kf_task *t, struct kf_err *err)
{
	struct kf_compile_opts co = {0};
	struct kf_kfile *k = NULL;
	struct kf_compiled *c = NULL;
	struct kf_err e = KF_ERR_INIT;
	enum kf_status st;

	co.backend = KF_BACKEND_CUDA;
	co.arch = "sm_90";
	st = kf_kfile_load(path, &k, &e);
	if (!st)
		st = kf_kfile_bind(k, t, &e);
	if (!st)
		st = kf_compile(k, &co, &c, &e);
	kf_compiled_free(c);
	kf_kfile_free(k);
	if (st == KF_ERR_UNAVAILABLE)
		return KF_OK; /* no NVRTC here: the other checks stand, `kforge doctor` says why */
	if (st)
		return kf_err_set(err, KF_ERR_INVALID,
				  "%s: %s: '%s' does not compile with NVRTC (sm_90): %.300s", task_file, what,
				  path, e.msg);
	return KF_OK;
}

static enum kf_status nvrtc_check(const char *task_file, const struct kf_task *t, struct kf_err *err)
{
	enum kf_status st = nvrtc_one(task_file, "reference", t->reference, t, err);
	for (size_t b = 0; !st && b < t->n_baselines; b++)
		if (t->baselines[b].kind == KF_BASELINE_KERNEL)
			st = nvrtc_one(task_file, "baselines", t->baselines[b].kernel, t, err);
	return st;
}

static int tasks_validate(int argc, char **argv)
{
	bool json = false, strict = false;
	const struct kf_opt opts[] = {{"json", false, NULL, &json}, {"strict", false, NULL, &strict}};
	const char *pos[256];
	struct kf_paths files = {0};
	struct kf_err err = KF_ERR_INIT;
	cJSON *doc = NULL, *results = NULL;
	size_t n_pos, n_ok = 0, n_bad = 0;
	char **names;
	int rc;

	if (kf_cli_start(
		"tasks",
		"kforge tasks validate [--strict] [--json] [PATH...]\n\n"
		"Validates task files: every field, every shape, and the reference and baseline\n"
		"kernel files (directives, kernels, arguments, launch limits at every declared\n"
		"shape). PATH is a task.json or a folder searched recursively (default tasks/).\n"
		"--strict makes unknown fields errors and compiles the reference and kernel baselines\n"
		"with NVRTC (sm_90, no GPU needed). Prints 'ok NAME' per valid file; errors go\n"
		"to stderr naming the file and the field or line. Exit 0 if all are valid, else 2.\n",
		argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 0, KF_ARRAY_SIZE(pos), &n_pos, NULL, &rc))
		return rc;
	if (!n_pos)
		pos[n_pos++] = "tasks";
	if (json) {
		doc = cJSON_CreateObject();
		results = doc ? cJSON_AddArrayToObject(doc, "results") : NULL;
		if (!results) {
			cJSON_Delete(doc);
			kf_cli_error("out of memory");
			return KF_EXIT_INTERNAL;
		}
	}
	for (size_t i = 0; i < n_pos; i++) {
		kf_err_clear(&err);
		if (kf_task_files_find(pos[i], &files, &err)) {
			if (err.code == KF_ERR_NOMEM || err.code == KF_ERR_LIMIT) {
				kf_cli_error("%s", err.msg);
				kf_paths_free(&files);
				cJSON_Delete(doc);
				return KF_EXIT_INTERNAL;
			}
			kf_cli_error("%s", err.msg);
			n_bad++;
			if (json) {
				cJSON *e = cJSON_CreateObject();
				kf_json_add_string(e, "path", pos[i]);
				kf_json_add_bool(e, "ok", false);
				kf_json_add_string(e, "error", err.msg);
				cJSON_AddItemToArray(results, e);
			}
		}
	}
	names = calloc(files.n ? files.n : 1, sizeof(char *));
	if (!names) {
		kf_cli_error("out of memory");
		kf_paths_free(&files);
		cJSON_Delete(doc);
		return KF_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < files.n; i++) {
		struct kf_buf warnings = KF_BUF_INIT(1 << 16);
		struct kf_task *t = NULL;
		enum kf_status st;
		cJSON *e = json ? cJSON_CreateObject() : NULL;

		kf_err_clear(&err);
		/* fields a scaffold (kforge tasks new) left to fill in are named first, one by one */
		st = kf_cli_tasks_todo_check(files.v[i], &err);
		if (!st)
			st = kf_task_load(files.v[i], strict ? KF_TASK_STRICT : 0, &warnings, &t, &err);
		if (!st) {
			/* names are unique within a suite: the knowledge base and reports key on them */
			for (size_t j = 0; j < i; j++) {
				if (names[j] && !strcmp(names[j], t->name)) {
					st = kf_err_set(&err, KF_ERR_INVALID,
							"%s: name: duplicate task name '%s' (also in '%s')",
							files.v[i], t->name, files.v[j]);
					break;
				}
			}
		}
		/* --strict: the reference and every kernel baseline must also compile with NVRTC (a GPU's
		 * compiler, no GPU needed): a task whose reference only the cpu backend takes is not valid */
		if (!st && strict)
			st = nvrtc_check(files.v[i], t, &err);
		kf_cli_print_warnings(&warnings);
		if (e)
			kf_json_add_string(e, "path", files.v[i]);
		if (st) {
			kf_cli_error("%s", err.msg);
			n_bad++;
			if (e) {
				kf_json_add_bool(e, "ok", false);
				kf_json_add_string(e, "error", err.msg);
			}
		} else {
			names[i] = kf_strdup(t->name);
			n_ok++;
			if (!json)
				printf("ok %s\n", t->name);
			if (e) {
				kf_json_add_bool(e, "ok", true);
				kf_json_add_string(e, "name", t->name);
			}
		}
		if (e) {
			cJSON *w = cJSON_AddArrayToObject(e, "warnings");
			char *p = warnings.data;
			while (w && *p) {
				char *nl = strchr(p, '\n');
				if (nl)
					*nl = '\0';
				kf_json_add_string(w, NULL, p);
				p += strlen(p) + (nl ? 1 : 0);
			}
			cJSON_AddItemToArray(results, e);
		}
		kf_task_free(t);
		kf_buf_release(&warnings);
	}
	for (size_t i = 0; i < files.n; i++)
		free(names[i]);
	free(names);
	kf_paths_free(&files);
	if (json) {
		kf_json_add_int(doc, "valid", (int64_t)n_ok);
		kf_json_add_int(doc, "invalid", (int64_t)n_bad);
		kf_json_add_bool(doc, "strict", strict);
		if (kf_json_fput(doc, true, stdout, &err)) {
			kf_cli_error("%s", err.msg);
			cJSON_Delete(doc);
			return KF_EXIT_INTERNAL;
		}
		cJSON_Delete(doc);
	} else if (n_bad) {
		fprintf(stderr, "%zu valid, %zu invalid\n", n_ok, n_bad);
	}
	return n_bad ? KF_EXIT_USAGE : KF_EXIT_OK;
}

int cmd_tasks(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub || !strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		if (!sub)
			return kf_cli_usage_error("tasks", "missing subcommand");
		return kf_cli_help(
		    "tasks",
		    "subcommands:\n"
		    "  list [DIR] [--json]                    every task below DIR (default tasks/)\n"
		    "  new NAME (--from KERNEL|--template K)  scaffold a task from a kernel file or a "
		    "template\n"
		    "  show TASK [--json]                     everything about one task\n"
		    "  validate [--strict] [--json] [PATH...] check task files (exit 2 if any is invalid)\n"
		    "  lint [options] [PATH...]               find degenerate tasks\n"
		    "  baselines [options] [PATH...]          verify every baseline (kernel files, library "
		    "calls)\n"
		    "\n'kforge tasks <subcommand> --help' shows its options.\n");
	}
	if (!strcmp(sub, "list"))
		return tasks_list(argc - 1, argv + 1);
	if (!strcmp(sub, "show"))
		return kf_cmd_tasks_show(argc - 1, argv + 1);
	if (!strcmp(sub, "validate"))
		return tasks_validate(argc - 1, argv + 1);
	if (!strcmp(sub, "lint"))
		return kf_cmd_tasks_lint(argc - 1, argv + 1);
	if (!strcmp(sub, "baselines"))
		return kf_cmd_tasks_baselines(argc - 1, argv + 1);
	if (!strcmp(sub, "new"))
		return kf_cmd_tasks_new(argc - 1, argv + 1);
	return kf_cli_usage_error("tasks", "unknown subcommand '%s'", sub);
}
