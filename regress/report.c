/* kforge regress's outputs (regress/regress.h): the checks as JUnit XML (one test case per kernel and check,
 * the kernel's name as class name) and as one JSON document. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "regress/regress.h"

static const char *const status_json[] = {"pass", "fail", "error", "skip"};

const char *kf_regress_check_kind_name(enum kf_regress_check_kind k)
{
	static const char *const names[] = {"compile", "verify", "timing"};
	return (unsigned)k < KF_ARRAY_SIZE(names) ? names[k] : "unknown";
}

enum kf_status kf_regress_junit_write(const struct kf_regress_run *r, const char *path, struct kf_err *err)
{
	struct kf_junit_case *cases = calloc(r->n_checks + 1, sizeof(*cases));
	struct kf_buf b = KF_BUF_INIT(64u << 20);
	enum kf_status st;

	if (!cases)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < r->n_checks; i++) {
		const struct kf_regress_check *c = &r->checks[i];
		cases[i] = (struct kf_junit_case){
		    .classname = r->m->entries[c->entry].name,
		    .name = c->name,
		    .time_s = c->time_s,
		    .status = c->status,
		    .message = c->message,
		    .detail = c->detail.len ? c->detail.data : NULL,
		};
	}
	st = kf_junit_render(&b, "kforge regress", cases, r->n_checks);
	if (!st)
		st = kf_write_file_atomic(path, b.data, b.len, err);
	else
		kf_err_set(err, st, "cannot render the JUnit report");
	free(cases);
	kf_buf_release(&b);
	return st;
}

cJSON *kf_regress_json(const struct kf_regress_run *r, const char *manifest, int rc)
{
	cJSON *o = cJSON_CreateObject(), *ks = cJSON_CreateArray(), *sum = cJSON_CreateObject();
	const size_t *counts = r->counts;
	cJSON_AddStringToObject(o, "manifest", manifest);
	cJSON_AddStringToObject(o, "backend", kf_backend_name(r->backend));
	if (r->backend == KF_BACKEND_CUDA) {
		cJSON_AddStringToObject(o, "device", r->dev.name);
		cJSON_AddStringToObject(o, "arch", r->dev.arch);
	}
	cJSON_AddStringToObject(o, "toolchain", r->toolchain);
	kf_json_add_number(o, "threshold_pct", r->threshold * 100);
	cJSON_AddBoolToObject(o, "update_baselines", r->update);
	for (size_t i = 0; i < r->m->n_entries; i++) {
		const struct kf_regress_entry *e = &r->m->entries[i];
		cJSON *k = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		size_t n_by[4] = {0};
		const char *status;
		cJSON_AddStringToObject(k, "name", e->name);
		cJSON_AddStringToObject(k, "task", e->task_path);
		cJSON_AddStringToObject(k, "kernel", e->kernel_path);
		for (size_t j = 0; j < r->n_checks; j++) {
			const struct kf_regress_check *c = &r->checks[j];
			cJSON *cj;
			if (c->entry != i)
				continue;
			n_by[c->status]++;
			cj = cJSON_Duplicate(c->extra, true);
			cJSON_AddStringToObject(cj, "check", kf_regress_check_kind_name(c->kind));
			cJSON_AddStringToObject(cj, "name", c->name);
			cJSON_AddStringToObject(cj, "status", status_json[c->status]);
			cJSON_AddStringToObject(cj, "message", c->message);
			if (c->detail.len)
				cJSON_AddStringToObject(cj, "detail", c->detail.data);
			kf_json_add_number(cj, "time_s", c->time_s);
			cJSON_AddItemToArray(checks, cj);
		}
		/* fail over error over pass; "skip" only when nothing was checked at all */
		status = n_by[KF_JUNIT_FAIL]    ? "fail"
			 : n_by[KF_JUNIT_ERROR] ? "error"
			 : n_by[KF_JUNIT_PASS]  ? "pass"
						: "skip";
		cJSON_AddStringToObject(k, "status", status);
		cJSON_AddItemToObject(k, "checks", checks);
		cJSON_AddItemToArray(ks, k);
	}
	cJSON_AddItemToObject(o, "kernels", ks);
	kf_json_add_int(sum, "kernels", (int64_t)r->m->n_entries);
	kf_json_add_int(sum, "checks", (int64_t)r->n_checks);
	kf_json_add_int(sum, "passed", (int64_t)counts[KF_JUNIT_PASS]);
	kf_json_add_int(sum, "failed", (int64_t)counts[KF_JUNIT_FAIL]);
	kf_json_add_int(sum, "errors", (int64_t)counts[KF_JUNIT_ERROR]);
	kf_json_add_int(sum, "skipped", (int64_t)counts[KF_JUNIT_SKIP]);
	if (r->update)
		kf_json_add_int(sum, "baselines_updated", (int64_t)r->n_updated);
	cJSON_AddItemToObject(o, "summary", sum);
	kf_json_add_int(o, "exit_code", rc);
	return o;
}
