/* kforge export KERNEL --task TASK (--header | --torch) [-o FILE]: the kernel (a file, run:N's best or
 * cand:N from the knowledge base) with a launcher for its launch plan, as a C/C++ header or a PyTorch
 * extension module plus its test script (export/export.h; docs/export.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "export/export.h"
#include "json.h"
#include "kb/kb.h"
#include "kfile.h"
#include "task.h"

static const char help[] =
    "Writes KERNEL with a launcher that applies its launch plan (grid, block and shared-memory\n"
    "expressions over the dims, scratch buffers, the launches in order), so a program can call it.\n\n"
    "KERNEL is a kernel file, run:N (run N's best verified candidate) or cand:N (a candidate that\n"
    "passed verification) from the knowledge base.\n\n"
    "options:\n"
    "  --task TASK   the task.json the kernel was verified for (for run:N and cand:N, default: the\n"
    "                task file the run recorded, when it is still there)\n"
    "  --header      a C/C++ header: the kernel source and kforge_<name>_launch() on the CUDA runtime\n"
    "                API (define KFORGE_<NAME>_IMPLEMENTATION in one .cu file compiled by nvcc)\n"
    "  --torch       a PyTorch extension module (torch.utils.cpp_extension.load_inline) with a function\n"
    "                taking tensors, and test_<module>.py beside it comparing it with the task's\n"
    "                reference; both run on a machine with a GPU, PyTorch and nvcc\n"
    "  -o FILE       the header (default: stdout) or the module (default: ./<name>.py)\n"
    "  --name NAME   the identifier the names are built from (default: the task's name)\n"
    "  --db FILE     the knowledge base for run:N and cand:N (default $KFORGE_DB, then kforge.db)\n"
    "  --json        print what was written as one JSON object\n\n"
    "exit: 0 written, 2 bad arguments, kernel or task, 3 internal error\n";

#define EXPORT_MAX_OUT ((size_t)64 << 20)

static bool file_exists(const char *p)
{
	struct stat sb;
	return p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* "dir/name.py" -> module "name" and test path "dir/test_name.py". */
static int torch_paths(const char *out, char *module, size_t n_module, char *test, size_t n_test)
{
	const char *base = strrchr(out, '/');
	size_t dir_len = base ? (size_t)(base - out + 1) : 0;
	size_t len;
	base = base ? base + 1 : out;
	len = strlen(base);
	if (len < 4 || strcmp(base + len - 3, ".py"))
		return kf_cli_usage_error("export", "-o '%s' must end in .py for --torch", out);
	snprintf(module, n_module, "%.*s", (int)(len - 3), base);
	if (!kf_export_ident_ok(module))
		return kf_cli_usage_error(
		    "export",
		    "'%s' is not a Python module name (letters, digits and '_', at most 48, "
		    "not starting with a digit or 'kf_')",
		    module);
	if (snprintf(test, n_test, "%.*stest_%s", (int)dir_len, out, base) >= (int)n_test)
		return kf_cli_usage_error("export", "-o '%s' is too long", out);
	return 0;
}

static int write_out(const char *path, const struct kf_buf *b)
{
	struct kf_err err = KF_ERR_INIT;
	if (kf_write_file_atomic(path, b->data, b->len, &err)) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_INTERNAL;
	}
	return 0;
}

/* Loads and binds a kernel file from memory; prints the error (a bad kernel is bad input). */
static int load_kfile(const char *path, const char *src, size_t len, const struct kf_task *t,
		      struct kf_kfile **k)
{
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = kf_kfile_parse(path, src, len, k, &err);
	if (!st)
		st = kf_kfile_bind(*k, t, &err);
	if (st) {
		kf_cli_error("%s", err.msg);
		kf_kfile_free(*k);
		*k = NULL;
		return st == KF_ERR_NOMEM ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *task_arg = NULL, *out_path = NULL, *name = NULL, *db = NULL, *pos[1];
	bool header = false, torch = false, json = false;
	const struct kf_opt opts[] = {{"task", true, &task_arg, NULL}, {"header", false, NULL, &header},
				      {"torch", false, NULL, &torch},  {"output", true, &out_path, NULL},
				      {"name", true, &name, NULL},     {"db", true, &db, NULL},
				      {"json", false, NULL, &json}};
	struct kf_export_kernel kern;
	struct kf_task *t = NULL;
	struct kf_kfile *k = NULL, *ref = NULL;
	struct kf_buf warnings = KF_BUF_INIT(1 << 16), main_out = KF_BUF_INIT(EXPORT_MAX_OUT),
		      test_out = KF_BUF_INIT(EXPORT_MAX_OUT);
	struct kf_err err = KF_ERR_INIT;
	char module[64] = "", test_path[4096] = "", default_out[128];
	const char *task_path;
	size_t n_pos;
	enum kf_status st;
	int rc;

	memset(&kern, 0, sizeof(kern));
	/* "-o FILE" is the one short option; the shared parser knows long ones, so spell it out first */
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-o"))
			argv[i] = "--output";
	if (kf_cli_start("export", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "expected one KERNEL (a file, run:N or cand:N)", &rc))
		return rc;
	if (header == torch)
		return kf_cli_usage_error("export", "give exactly one of --header and --torch");
	if (name && !kf_export_ident_ok(name))
		return kf_cli_usage_error(
		    "export",
		    "--name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most 48, not "
		    "starting with 'kf_')",
		    name);

	/* the kernel */
	if (kf_export_spec_is_kb(pos[0])) {
		struct kf_kb *kb = NULL;
		const char *dbp = kf_cli_db_path(db);
		if ((st = kf_kb_open(dbp, KF_KB_READONLY | KF_KB_NOCREATE, &kb, &err))) {
			kf_cli_error("%s", err.msg);
			return st == KF_ERR_NOTFOUND ? KF_EXIT_USAGE : kf_status_exit_code(st);
		}
		st = kf_export_kernel_from_kb(kb, pos[0], &kern, &err);
		kf_kb_close(kb);
	} else {
		st = kf_export_kernel_from_file(pos[0], &kern, &err);
	}
	if (st) {
		kf_cli_error("%s", err.msg);
		return st == KF_ERR_NOMEM || st == KF_ERR_DB ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}

	/* the task: given, or the one the run recorded */
	task_path = task_arg;
	if (!task_path && file_exists(kern.task_path)) {
		task_path = kern.task_path;
		fprintf(stderr, "task: %s (recorded by run %lld)\n", task_path, (long long)kern.run_id);
	}
	if (!task_path) {
		if (kern.task_path)
			kf_cli_error("run %lld's task file '%s' is not there: pass --task TASK",
				     (long long)kern.run_id, kern.task_path);
		else
			kf_cli_error("--task TASK is required");
		kf_export_kernel_release(&kern);
		return kf_cli_usage_error("export", NULL);
	}
	rc = KF_EXIT_USAGE;
	if ((st = kf_task_load(task_path, 0, &warnings, &t, &err))) {
		kf_cli_error("%s", err.msg);
		goto done;
	}
	kf_cli_print_warnings(&warnings);
	if (kern.task_hash[0] && strcmp(kern.task_hash, t->hash))
		kf_cli_warn(
		    "'%s' differs from the task file run %lld used (its hash was %.12s, it is now %.12s); "
		    "the kernel was verified against the old one",
		    task_path, (long long)kern.run_id, kern.task_hash, t->hash);
	if ((rc = load_kfile(kern.path, kern.source, kern.len, t, &k)))
		goto done;

	{
		struct kf_export_opts o = {.ident = name, .origin = kern.origin};
		char ident[64];
		if (header) {
			st = kf_export_header(t, k, &o, &main_out, &err);
		} else {
			if (!name)
				kf_export_ident_default(t->name, ident, sizeof(ident));
			if (!out_path) {
				snprintf(default_out, sizeof(default_out), "%s.py", name ? name : ident);
				out_path = default_out;
			}
			if ((rc =
				 torch_paths(out_path, module, sizeof(module), test_path, sizeof(test_path))))
				goto done;
			rc = KF_EXIT_USAGE;
			st = kf_export_torch(t, k, &o, &main_out, &err);
			if (!st) {
				/* the test script runs the task's reference through the same kind of
				 * extension */
				struct kf_err e2 = KF_ERR_INIT;
				if ((st = kf_kfile_load(t->reference, &ref, &e2)) ||
				    (st = kf_kfile_bind(ref, t, &e2))) {
					kf_cli_error("the task's reference: %s", e2.msg);
					goto done;
				}
				st = kf_export_torch_test(t, ref, &o, module, &test_out, &err);
			}
		}
	}
	if (st) {
		kf_cli_error("%s", err.msg);
		rc = st == KF_ERR_NOMEM || st == KF_ERR_LIMIT ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
		goto done;
	}
	rc = 0;
	if (header && !out_path) {
		if (fwrite(main_out.data, 1, main_out.len, stdout) != main_out.len || fflush(stdout)) {
			kf_cli_error("cannot write the header to stdout");
			rc = KF_EXIT_INTERNAL;
		}
		goto done;
	}
	if ((rc = write_out(out_path, &main_out)))
		goto done;
	if (torch && (rc = write_out(test_path, &test_out)))
		goto done;
	if (json) {
		cJSON *j = cJSON_CreateObject(), *files = cJSON_AddArrayToObject(j, "files");
		kf_json_add_string(j, "kind", header ? "header" : "torch");
		kf_json_add_string(j, "task", t->name);
		kf_json_add_string(j, "kernel", kern.origin);
		kf_json_add_string(files, NULL, out_path);
		if (torch)
			kf_json_add_string(files, NULL, test_path);
		if (kf_json_fput(j, true, stdout, &err)) {
			kf_cli_error("%s", err.msg);
			rc = KF_EXIT_INTERNAL;
		}
		cJSON_Delete(j);
	} else {
		printf("wrote %s\n", out_path);
		if (torch)
			printf(
			    "wrote %s (python3 %s on a GPU machine compares it with the task's reference)\n",
			    test_path, test_path);
	}
done:
	kf_kfile_free(k);
	kf_kfile_free(ref);
	kf_task_free(t);
	kf_export_kernel_release(&kern);
	kf_buf_release(&warnings);
	kf_buf_release(&main_out);
	kf_buf_release(&test_out);
	return rc;
}
