/* kforge tasks show TASK: one task in full (dims, shapes, tensors with their distributions and tolerances,
 * the reference's launches, work estimates), as text or --json. TASK is a task.json, a folder holding
 * one, or a task name found under tasks/. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baseline.h"
#include "cli.h"
#include "fs.h"
#include "json.h"
#include "kfile.h"
#include "task.h"

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

static cJSON *shapes_json(const struct kf_shape *s, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, kf_json_shape(&s[i]));
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
	a = cJSON_AddObjectToObject(o, "constraints");
	for (size_t i = 0; a && i < t->n_dims && i < KF_MAX_DIMS; i++) {
		const struct kf_dim_constraint *c = &t->constraints[i];
		cJSON *e;
		if (!c->set || !(e = cJSON_AddObjectToObject(a, t->dims[i])))
			continue;
		kf_json_add_int(e, "multiple_of", c->multiple_of);
		kf_json_add_int(e, "min", c->min);
		kf_json_add_int(e, "max", c->max);
	}
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
	for (size_t i = 0; i < t->n_dims && i < KF_MAX_DIMS; i++) {
		const struct kf_dim_constraint *c = &t->constraints[i];
		if (c->set)
			printf("constraint:  %s multiple of %lld in %lld..%lld\n", t->dims[i],
			       (long long)c->multiple_of, (long long)c->min, (long long)c->max);
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

int kf_cmd_tasks_show(int argc, char **argv)
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

	if (kf_cli_start("tasks",
			 "kforge tasks show TASK [--json]\n\n"
			 "Everything about one task: fields, every shape, tensors, params, the reference's\n"
			 "launches and the tolerances in effect. TASK is a task.json, its folder, or a task\n"
			 "name found under tasks/.\n",
			 argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "'tasks show' needs a TASK", &rc))
		return rc;
	if (resolve_task(pos[0], path, sizeof(path), &err) || kf_task_load(path, 0, &warnings, &t, &err)) {
		kf_cli_error("%s", err.msg);
		kf_buf_release(&warnings);
		return kf_status_exit_code(err.code);
	}
	kf_cli_print_warnings(&warnings);
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
