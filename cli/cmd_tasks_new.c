/* kforge tasks new NAME (--from KERNEL [--kernel FN] | --template KIND) [--dir DIR]: a new task folder
 * from an existing kernel file or a category template (scaffold/scaffold.h). Prints what was inferred,
 * the fields left marked TODO and the next commands. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "json.h"
#include "scaffold/scaffold.h"

static const char help[] =
    "kforge tasks new NAME (--from KERNEL [--kernel FN] | --template KIND) [--dir DIR] [--json]\n\n"
    "Writes DIR/task.json and DIR/reference.cu (DIR defaults to NAME; it must not exist or be empty).\n\n"
    "  --from KERNEL    a kernel file you have: its __global__ function's pointer parameters become\n"
    "                   tensors (const ones inputs, the others outputs), integer parameters dims, float\n"
    "                   ones params; the launch directive is proposed from the indexing pattern. What\n"
    "                   cannot be inferred (shapes of several dims, a description, param values, an\n"
    "                   unrecognised launch) is a field marked TODO: 'kforge tasks validate' names each.\n"
    "  --kernel FN      which __global__ function, when the file has several\n"
    "  --template KIND  a complete example task to edit: elementwise, reduction (two launches and a\n"
    "                   scratch buffer), rowwise, gemm, conv, scan\n"
    "  --json           print the result as one JSON object\n\n"
    "Next: kforge tasks validate DIR/task.json, then\n"
    "      kforge verify DIR/task.json DIR/reference.cu --backend cpu\n"
    "(tasks/examples/README.md walks through it to a first optimize).\n"
    "exit: 0 written, 2 bad arguments or input, 3 internal error\n";

static const char *kinds(void)
{
	static char s[128];
	size_t used = 0;
	if (!s[0])
		for (int k = 0; k < KF_SCAFFOLD_KIND_COUNT; k++)
			used += (size_t)snprintf(s + used, sizeof(s) - used, "%s%s", k ? ", " : "",
						 kf_scaffold_kind_name((enum kf_scaffold_kind)k));
	return s;
}

enum kf_status kf_cli_tasks_todo_check(const char *path, struct kf_err *err)
{
	struct kf_buf out = KF_BUF_INIT(1 << 20);
	size_t n = 0;
	enum kf_status st = kf_scaffold_todos(path, &out, &n, err);
	for (char *p = out.data, *nl; !st && *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		*nl = '\0';
		kf_cli_error("%s", p);
	}
	kf_buf_release(&out);
	if (!st && n)
		st = kf_err_set(err, KF_ERR_INVALID, "%s: %zu field%s still marked TODO (fill them in)", path,
				n, n == 1 ? "" : "s");
	return st;
}

int kf_cmd_tasks_new(int argc, char **argv)
{
	const char *from = NULL, *kernel = NULL, *tmpl = NULL, *dir = NULL, *pos[1];
	bool json = false;
	const struct kf_opt opts[] = {{"from", true, &from, NULL},
				      {"kernel", true, &kernel, NULL},
				      {"template", true, &tmpl, NULL},
				      {"dir", true, &dir, NULL},
				      {"json", false, NULL, &json}};
	struct kf_scaffold s;
	struct kf_err err = KF_ERR_INIT;
	enum kf_scaffold_kind kind = KF_SCAFFOLD_ELEMENTWISE;
	size_t n_pos;
	enum kf_status st;
	int rc;

	if (kf_cli_start("tasks", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "new needs a task NAME", &rc))
		return rc;
	if (!kf_scaffold_name_ok(pos[0]))
		return kf_cli_usage_error(
		    "tasks", "'%s' is not a task name (lower-case letters, digits and '_')", pos[0]);
	if (!from == !tmpl)
		return kf_cli_usage_error("tasks", "new needs one of --from KERNEL and --template KIND (%s)",
					  kinds());
	if (kernel && !from)
		return kf_cli_usage_error("tasks", "--kernel goes with --from");
	if (tmpl && !kf_scaffold_kind_parse(tmpl, &kind))
		return kf_cli_usage_error("tasks", "unknown template '%s' (there are: %s)", tmpl, kinds());
	if (!dir)
		dir = pos[0];

	kf_scaffold_init(&s);
	if (from) {
		struct kf_buf src = KF_BUF_INIT((size_t)8 << 20);
		st = kf_buf_read_file(&src, from, &err);
		if (!st)
			st = kf_scaffold_from_kernel(pos[0], from, src.data, src.len, kernel, &s, &err);
		kf_buf_release(&src);
	} else {
		st = kf_scaffold_from_template(pos[0], kind, &s, &err);
	}
	if (!st)
		st = kf_scaffold_write(&s, dir, &err);
	if (st) {
		kf_cli_error("%s", err.msg);
		kf_scaffold_release(&s);
		return st == KF_ERR_NOMEM || st == KF_ERR_INTERNAL ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}
	if (json) {
		cJSON *j = cJSON_CreateObject(), *notes = cJSON_AddArrayToObject(j, "notes");
		char path[4200];
		kf_json_add_string(j, "name", pos[0]);
		snprintf(path, sizeof(path), "%s/task.json", dir);
		kf_json_add_string(j, "task", path);
		snprintf(path, sizeof(path), "%s/reference.cu", dir);
		kf_json_add_string(j, "reference", path);
		kf_json_add_string(j, "from", from ? from : kf_scaffold_kind_name(kind));
		kf_json_add_int(j, "todo", (int64_t)s.n_todo);
		for (char *p = s.notes.data; notes && *p;) {
			char *nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			kf_json_add_string(notes, NULL, p);
			p += strlen(p) + (nl ? 1 : 0);
		}
		if (kf_json_fput(j, true, stdout, &err)) {
			kf_cli_error("%s", err.msg);
			rc = KF_EXIT_INTERNAL;
		}
		cJSON_Delete(j);
	} else {
		printf("created %s/task.json and %s/reference.cu\n", dir, dir);
		for (char *p = s.notes.data; *p;) {
			char *nl = strchr(p, '\n');
			printf("  %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
			p = nl ? nl + 1 : p + strlen(p);
		}
		if (s.n_todo)
			printf("%zu field%s marked TODO: 'kforge tasks validate %s/task.json' names each\n",
			       s.n_todo, s.n_todo == 1 ? "" : "s", dir);
		printf("next: kforge tasks validate %s/task.json\n      kforge verify %s/task.json "
		       "%s/reference.cu "
		       "--backend cpu\n",
		       dir, dir, dir);
	}
	kf_scaffold_release(&s);
	return rc;
}
