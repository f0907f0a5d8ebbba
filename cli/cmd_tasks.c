/* kforge tasks list|show|validate|lint|baselines: finding, printing and validating task files
 * (spec/task-format.md). `validate` exits 0 when every file is valid and 2 when any is not, with the
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

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help(
		    "tasks",
		    "kforge tasks list [DIR] [--json]\n\n"
		    "Lists every task.json below DIR (default tasks/): name, level, category, path.\n"
		    "Exit 2 when a task file is invalid (it is reported on stderr, the rest listed).\n");
	if ((rc = kf_cli_parse("tasks", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, &n_pos)))
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

/* ---- show ---------------------------------------------------------------------------------- */

static const char *dist_name(enum kf_dist d)
{
	switch (d) {
	case KF_DIST_NORMAL:
		return "normal";
	case KF_DIST_UNIFORM:
		return "uniform";
	case KF_DIST_RANDINT:
		return "randint";
	default:
		return "default";
	}
}

static cJSON *shape_json(const struct kf_shape *s)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < s->n; i++)
		kf_json_add_int(o, s->names[i], s->values[i]);
	return o;
}

static cJSON *shapes_json(const struct kf_shape *s, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, shape_json(&s[i]));
	return a;
}

/* The dtypes a task's buffers use: the tolerances that are actually in effect. */
static void used_dtypes(const struct kf_task *t, bool used[KF_DTYPE_COUNT])
{
	memset(used, 0, KF_DTYPE_COUNT * sizeof(bool));
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT)
			used[t->tensors[i].dtype] = true;
}

static cJSON *task_json(const struct kf_task *t, const struct kf_kfile *ref)
{
	cJSON *o = cJSON_CreateObject(), *a, *sh, *tol;
	bool used[KF_DTYPE_COUNT];
	double v;

	if (!o)
		return NULL;
	kf_json_add_string(o, "name", t->name);
	kf_json_add_string(o, "title", t->title);
	kf_json_add_string(o, "category", t->category);
	kf_json_add_int(o, "level", t->level);
	kf_json_add_string(o, "description", t->description);
	kf_json_add_string(o, "path", t->path);
	kf_json_add_string(o, "hash", t->hash);
	a = cJSON_AddArrayToObject(o, "dims");
	for (size_t i = 0; a && i < t->n_dims; i++)
		kf_json_add_string(a, NULL, t->dims[i]);
	a = cJSON_AddArrayToObject(o, "fixed_dims");
	for (size_t i = 0; a && i < t->n_fixed; i++)
		kf_json_add_string(a, NULL, t->fixed_dims[i]);
	sh = cJSON_AddObjectToObject(o, "shapes");
	if (sh) {
		cJSON_AddItemToObject(sh, "public", shapes_json(t->shapes_public, t->n_public));
		cJSON_AddItemToObject(sh, "hidden", shapes_json(t->shapes_hidden, t->n_hidden));
		cJSON_AddItemToObject(sh, "timing", shapes_json(t->shapes_timing, t->n_timing));
	}
	a = cJSON_AddArrayToObject(o, "tensors");
	for (size_t i = 0; a && i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		cJSON *e = cJSON_CreateObject(), *s;
		if (!e)
			break;
		kf_json_add_string(e, "name", x->name);
		kf_json_add_string(e, "role", kf_role_name(x->role));
		kf_json_add_string(e, "dtype", kf_dtype_name(x->dtype));
		s = cJSON_AddArrayToObject(e, "shape");
		for (size_t d = 0; s && d < x->rank; d++)
			kf_json_add_string(s, NULL, x->shape[d]);
		if (x->init.dist != KF_DIST_DEFAULT) {
			cJSON *in = cJSON_AddObjectToObject(e, "init");
			kf_json_add_string(in, "dist", dist_name(x->init.dist));
			kf_json_add_number(in, x->init.dist == KF_DIST_NORMAL ? "mean" : "lo", x->init.a);
			kf_json_add_number(in, x->init.dist == KF_DIST_NORMAL ? "std" : "hi", x->init.b);
		}
		if (x->has_domain) {
			cJSON *dm = cJSON_AddObjectToObject(e, "domain");
			kf_json_add_number(dm, "lo", x->domain_lo);
			kf_json_add_number(dm, "hi", x->domain_hi);
		}
		cJSON_AddItemToArray(a, e);
	}
	a = cJSON_AddArrayToObject(o, "params");
	for (size_t i = 0; a && i < t->n_params; i++) {
		const struct kf_param *q = &t->params[i];
		cJSON *e = cJSON_CreateObject();
		kf_json_add_string(e, "name", q->name);
		kf_json_add_string(e, "dtype", kf_dtype_name(q->dtype));
		if (kf_dtype_is_float(q->dtype))
			kf_json_add_number(e, "value", q->value);
		else
			kf_json_add_int(e, "value", q->ivalue);
		cJSON_AddItemToArray(a, e);
	}
	kf_json_add_string(o, "reference", t->reference);
	kf_json_add_string(o, "baseline", t->baseline);
	{
		cJSON *bl = cJSON_AddArrayToObject(o, "baselines");
		for (size_t i = 0; bl && i < t->n_baselines; i++) {
			const struct kf_baseline *b = &t->baselines[i];
			cJSON *e = cJSON_CreateObject();
			kf_json_add_string(e, "kind", b->kind == KF_BASELINE_KERNEL ? "kernel" : "library");
			kf_json_add_string(e, "name", b->name);
			if (b->kind == KF_BASELINE_KERNEL)
				kf_json_add_string(e, "path", b->kernel);
			else
				kf_json_add_string(e, "call", b->canon);
			cJSON_AddItemToArray(bl, e);
		}
	}
	if (ref) {
		a = cJSON_AddArrayToObject(o, "reference_launches");
		for (size_t i = 0; a && i < ref->n_launches; i++) {
			cJSON *e = cJSON_CreateObject();
			kf_json_add_string(e, "kernel", ref->launches[i].kernel);
			kf_json_add_int(e, "line", ref->launches[i].line);
			cJSON_AddItemToArray(a, e);
		}
	}
	tol = cJSON_AddObjectToObject(o, "tolerance");
	used_dtypes(t, used);
	for (int d = 0; tol && d < KF_DTYPE_COUNT; d++) {
		struct kf_tol tl;
		cJSON *e;
		if (!used[d])
			continue;
		tl = kf_task_tolerance(t, (enum kf_dtype)d);
		e = cJSON_AddObjectToObject(tol, kf_dtype_name((enum kf_dtype)d));
		kf_json_add_number(e, "atol", tl.atol);
		kf_json_add_number(e, "rtol", tl.rtol);
		kf_json_add_number(e, "max_nmse", tl.max_nmse);
		kf_json_add_string(e, "source", t->tol_set[d] ? "task" : "default");
	}
	kf_json_add_string(o, "flops", t->flops);
	kf_json_add_string(o, "bytes", t->bytes);
	if (t->n_timing) {
		cJSON *w = cJSON_AddObjectToObject(o, "at_timing_shape");
		if (kf_task_flops(t, &t->shapes_timing[0], &v))
			kf_json_add_number(w, "flops", v);
		if (kf_task_bytes(t, &t->shapes_timing[0], &v))
			kf_json_add_number(w, "bytes", v);
	}
	return o;
}

static void print_shapes(const char *label, const struct kf_shape *s, size_t n)
{
	char buf[512];
	for (size_t i = 0; i < n; i++) {
		kf_shape_format(&s[i], buf, sizeof(buf));
		printf("  %-7s %s\n", i ? "" : label, buf);
	}
	if (!n)
		printf("  %-7s -\n", label);
}

static void print_task(const struct kf_task *t, const struct kf_kfile *ref)
{
	bool used[KF_DTYPE_COUNT];
	double v;

	printf("name:        %s\n", t->name);
	printf("title:       %s\n", t->title);
	printf("category:    %s\n", t->category);
	printf("level:       %d\n", t->level);
	printf("path:        %s\n", t->path);
	printf("sha256:      %s\n", t->hash);
	printf("description: %s\n", t->description);
	printf("dims:       ");
	for (size_t i = 0; i < t->n_dims; i++)
		printf(" %s", t->dims[i]);
	printf("\n");
	if (t->n_fixed) {
		printf("fixed dims: ");
		for (size_t i = 0; i < t->n_fixed; i++)
			printf(" %s", t->fixed_dims[i]);
		printf("\n");
	}
	printf("shapes:\n");
	print_shapes("public", t->shapes_public, t->n_public);
	print_shapes("hidden", t->shapes_hidden, t->n_hidden);
	print_shapes("timing", t->shapes_timing, t->n_timing);
	printf("tensors:\n");
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		printf("  %-10s %-6s %-5s [", x->name, kf_role_name(x->role), kf_dtype_name(x->dtype));
		for (size_t d = 0; d < x->rank; d++)
			printf("%s%s", d ? ", " : "", x->shape[d]);
		printf("]");
		if (x->init.dist == KF_DIST_NORMAL)
			printf("  init normal(mean=%g, std=%g)", x->init.a, x->init.b);
		else if (x->init.dist != KF_DIST_DEFAULT)
			printf("  init %s[%g, %g)", dist_name(x->init.dist), x->init.a, x->init.b);
		if (x->has_domain)
			printf("  domain [%g, %g]", x->domain_lo, x->domain_hi);
		printf("\n");
	}
	if (t->n_params) {
		printf("params:\n");
		for (size_t i = 0; i < t->n_params; i++) {
			const struct kf_param *q = &t->params[i];
			if (kf_dtype_is_float(q->dtype))
				printf("  %-10s %-5s = %.9g\n", q->name, kf_dtype_name(q->dtype), q->value);
			else
				printf("  %-10s %-5s = %lld\n", q->name, kf_dtype_name(q->dtype),
				       (long long)q->ivalue);
		}
	}
	printf("reference:   %s\n", t->reference);
	if (ref)
		for (size_t i = 0; i < ref->n_launches; i++)
			printf("  launch %zu: %s (line %d)\n", i + 1, ref->launches[i].kernel,
			       ref->launches[i].line);
	printf("baselines:%s\n", t->n_baselines ? "" : "   -");
	for (size_t i = 0; i < t->n_baselines; i++)
		printf("  %s\n", t->baselines[i].kind == KF_BASELINE_KERNEL ? t->baselines[i].kernel
									    : t->baselines[i].canon);
	printf("tolerance (|got - ref| <= atol + rtol*|ref|, per output dtype):\n");
	used_dtypes(t, used);
	for (int d = 0; d < KF_DTYPE_COUNT; d++) {
		struct kf_tol tl;
		if (!used[d])
			continue;
		tl = kf_task_tolerance(t, (enum kf_dtype)d);
		printf("  %-5s atol=%g rtol=%g", kf_dtype_name((enum kf_dtype)d), tl.atol, tl.rtol);
		if (tl.max_nmse > 0)
			printf(" max_nmse=%g", tl.max_nmse);
		printf("  (%s)\n", t->tol_set[d] ? "task" : "project default");
	}
	printf("flops:       %s", t->flops ? t->flops : "-");
	if (t->n_timing && kf_task_flops(t, &t->shapes_timing[0], &v))
		printf("  (%.4g at the first timing shape)", v);
	printf("\nbytes:       %s", t->bytes ? t->bytes : "-");
	if (t->n_timing && kf_task_bytes(t, &t->shapes_timing[0], &v))
		printf("  (%.4g at the first timing shape)", v);
	printf("\n");
}

static void print_warnings(const struct kf_buf *w)
{
	const char *p = w->data;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(stderr, "warning: %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* TASK: a task.json, a folder holding one, or a task name found under tasks/. */
static enum kf_status resolve_task(const char *arg, char *out, size_t n, struct kf_err *err)
{
	struct stat sb;
	struct kf_paths all = {0};
	enum kf_status st;

	if (stat(arg, &sb) == 0) {
		snprintf(out, n, S_ISDIR(sb.st_mode) ? "%s/task.json" : "%s", arg);
		return KF_OK;
	}
	if (strchr(arg, '/'))
		return kf_err_set(err, KF_ERR_NOTFOUND, "'%s' does not exist", arg);
	st = kf_task_files_find("tasks", &all, err);
	if (st == KF_ERR_NOTFOUND) {
		kf_paths_free(&all);
		return kf_err_set(err, KF_ERR_NOTFOUND, "no task file or task named '%s'", arg);
	}
	for (size_t i = 0; !st && i < all.n; i++) {
		struct kf_task *t = NULL;
		if (kf_task_load(all.v[i], KF_TASK_NO_FILES, NULL, &t, NULL) == KF_OK &&
		    !strcmp(t->name, arg)) {
			snprintf(out, n, "%s", all.v[i]);
			kf_task_free(t);
			kf_paths_free(&all);
			return KF_OK;
		}
		kf_task_free(t);
	}
	kf_paths_free(&all);
	return st ? st
		  : kf_err_set(err, KF_ERR_NOTFOUND, "no task file or task named '%s' under tasks/", arg);
}

static int tasks_show(int argc, char **argv)
{
	bool json = false;
	const struct kf_opt opts[] = {{"json", false, NULL, &json}};
	const char *pos[1] = {NULL};
	struct kf_buf warnings = KF_BUF_INIT(1 << 16);
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	struct kf_kfile *ref = NULL;
	char path[4096];
	size_t n_pos;
	int rc;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help(
		    "tasks",
		    "kforge tasks show TASK [--json]\n\n"
		    "Everything about one task: fields, every shape, tensors, params, the reference's\n"
		    "launches and the tolerances in effect. TASK is a task.json, its folder, or a task\n"
		    "name found under tasks/.\n");
	if ((rc = kf_cli_parse("tasks", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, &n_pos)))
		return rc;
	if (!n_pos)
		return kf_cli_usage_error("tasks", "'tasks show' needs a TASK");
	if (resolve_task(pos[0], path, sizeof(path), &err) || kf_task_load(path, 0, &warnings, &t, &err)) {
		kf_cli_error("%s", err.msg);
		kf_buf_release(&warnings);
		return kf_status_exit_code(err.code);
	}
	print_warnings(&warnings);
	/* the task loaded, so its reference parses; kept for the launch list */
	if (kf_kfile_load(t->reference, &ref, &err) == KF_OK)
		kf_kfile_bind(ref, t, NULL);
	if (json) {
		cJSON *doc = task_json(t, ref);
		if (!doc || kf_json_fput(doc, true, stdout, &err)) {
			kf_cli_error("%s", doc ? err.msg : "out of memory");
			rc = KF_EXIT_INTERNAL;
		}
		cJSON_Delete(doc);
	} else {
		print_task(t, ref);
	}
	kf_kfile_free(ref);
	kf_task_free(t);
	kf_buf_release(&warnings);
	return rc;
}

/* ---- validate ------------------------------------------------------------------------------- */

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

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help(
		    "tasks",
		    "kforge tasks validate [--strict] [--json] [PATH...]\n\n"
		    "Validates task files: every field, every shape, and the reference and baseline\n"
		    "kernel files (directives, kernels, arguments, launch limits at every declared\n"
		    "shape). PATH is a task.json or a folder searched recursively (default tasks/).\n"
		    "--strict makes unknown fields errors. Prints 'ok NAME' per valid file; errors go\n"
		    "to stderr naming the file and the field or line. Exit 0 if all are valid, else 2.\n");
	if ((rc = kf_cli_parse("tasks", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, KF_ARRAY_SIZE(pos),
			       &n_pos)))
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
		print_warnings(&warnings);
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
		return tasks_show(argc - 1, argv + 1);
	if (!strcmp(sub, "validate"))
		return tasks_validate(argc - 1, argv + 1);
	if (!strcmp(sub, "lint"))
		return kf_cmd_tasks_lint(argc - 1, argv + 1);
	if (!strcmp(sub, "baselines"))
		return kf_cmd_tasks_baselines(argc - 1, argv + 1);
	return kf_cli_usage_error("tasks", "unknown subcommand '%s'", sub);
}
