/* Where an exported kernel comes from: a kernel file, or the knowledge base ("run:N" is run N's best
 * verified candidate, "cand:N" one candidate, which must have passed verification). The run's recorded
 * task file and task hash come along so the command can find and check the task. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "export/export.h"
#include "kb/kb.h"

#define EXPORT_MAX_SOURCE ((size_t)4 << 20) /* a kernel file is kilobytes; this bounds a stray path */

void kf_export_kernel_release(struct kf_export_kernel *k)
{
	if (!k)
		return;
	free(k->source);
	free(k->origin);
	free(k->path);
	free(k->task_path);
	memset(k, 0, sizeof(*k));
}

bool kf_export_spec_is_kb(const char *spec)
{
	return spec && (!strncmp(spec, "run:", 4) || !strncmp(spec, "cand:", 5));
}

enum kf_status kf_export_kernel_from_file(const char *path, struct kf_export_kernel *out, struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(EXPORT_MAX_SOURCE);
	enum kf_status st;

	memset(out, 0, sizeof(*out));
	if ((st = kf_buf_read_file(&b, path, err)))
		return st;
	out->len = b.len;
	out->source = kf_buf_detach(&b, NULL);
	out->origin = kf_strdup(path);
	out->path = kf_strdup(path);
	if (!out->source || !out->origin || !out->path) {
		kf_export_kernel_release(out);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	return KF_OK;
}

/* A positive decimal id that fits int64 ("cand:010" is 10, not octal 8: no base prefixes). */
static bool parse_id(const char *s, int64_t *out)
{
	int64_t v = 0;
	if (!s || !*s)
		return false;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9' || __builtin_mul_overflow(v, (int64_t)10, &v) ||
		    __builtin_add_overflow(v, (int64_t)(*p - '0'), &v))
			return false;
	if (!v)
		return false;
	*out = v;
	return true;
}

struct kb_ctx {
	bool found, oom;
	int64_t run_id, task_id;
	char *source, *config;
	char verdict[40];
	bool passed;
	char task_hash[65];
};

static int on_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct kb_ctx *x = ctx;
	x->found = true;
	x->run_id = c->run_id;
	x->task_id = c->task_id;
	free(x->source);
	x->source = kf_strdup(c->source ? c->source : "");
	if (!x->source)
		x->oom = true;
	return 1;
}

static int on_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct kb_ctx *x = ctx;
	snprintf(x->verdict, sizeof(x->verdict), "%s", e->verdict ? e->verdict : "");
	if (e->verdict && !strcmp(e->verdict, "pass"))
		x->passed = true;
	return 0;
}

static int on_run(void *ctx, const struct kf_kb_run *r)
{
	struct kb_ctx *x = ctx;
	x->found = true;
	x->task_id = r->task_id;
	free(x->config);
	x->config = kf_strdup(r->config ? r->config : "");
	if (!x->config)
		x->oom = true;
	return 1;
}

static int on_task(void *ctx, const struct kf_kb_task *t)
{
	struct kb_ctx *x = ctx;
	snprintf(x->task_hash, sizeof(x->task_hash), "%s", t->hash ? t->hash : "");
	return 1;
}

enum kf_status kf_export_kernel_from_kb(struct kf_kb *kb, const char *spec, struct kf_export_kernel *out,
					struct kf_err *err)
{
	struct kb_ctx x;
	int64_t id = 0, cand_id = 0, run_id = 0;
	double speedup = 0;
	bool is_run = spec && !strncmp(spec, "run:", 4);
	enum kf_status st;
	char origin[160], path[64];

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	if (!kf_export_spec_is_kb(spec) || !parse_id(spec + (is_run ? 4 : 5), &id))
		return kf_err_set(err, KF_ERR_INVALID, "'%.80s' names no kernel: use a file, run:N or cand:N",
				  spec ? spec : "");
	if (is_run) {
		run_id = id;
		if ((st = kf_kb_run_get(kb, run_id, on_run, &x, err)))
			goto done;
		if (!x.found) {
			st = kf_err_set(err, KF_ERR_NOTFOUND, "no run %lld in the knowledge base",
					(long long)run_id);
			goto done;
		}
		if ((st = kf_kb_run_best(kb, run_id, NULL, &cand_id, &speedup, err)))
			goto done;
		if (!cand_id) {
			st = kf_err_set(err, KF_ERR_INVALID, "run %lld has no verified candidate to export",
					(long long)run_id);
			goto done;
		}
		x.found = false;
		if ((st = kf_kb_candidate_get(kb, cand_id, on_cand, &x, err)))
			goto done;
		snprintf(origin, sizeof(origin), "candidate %lld (run %lld's best verified, %.3fx)",
			 (long long)cand_id, (long long)run_id, speedup);
	} else {
		cand_id = id;
		if ((st = kf_kb_candidate_get(kb, cand_id, on_cand, &x, err)))
			goto done;
		if (!x.found) {
			st = kf_err_set(err, KF_ERR_NOTFOUND, "no candidate %lld in the knowledge base",
					(long long)cand_id);
			goto done;
		}
		run_id = x.run_id;
		if ((st = kf_kb_evals_each(kb, 0, cand_id, on_eval, &x, err)))
			goto done;
		if (!x.passed) {
			st = kf_err_set(
			    err, KF_ERR_INVALID,
			    "candidate %lld never passed verification (%s): export verified kernels only",
			    (long long)cand_id, x.verdict[0] ? x.verdict : "not evaluated");
			goto done;
		}
		if ((st = kf_kb_run_get(kb, run_id, on_run, &x, err)))
			goto done;
		snprintf(origin, sizeof(origin), "candidate %lld of run %lld", (long long)cand_id,
			 (long long)run_id);
	}
	if (x.oom || !x.source) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (x.task_id && (st = kf_kb_task_get(kb, x.task_id, on_task, &x, err)))
		goto done;
	if (x.config && *x.config) {
		cJSON *c = cJSON_Parse(x.config);
		const cJSON *tp = c ? cJSON_GetObjectItemCaseSensitive(c, "task_path") : NULL;
		if (tp && cJSON_IsString(tp) && tp->valuestring && tp->valuestring[0])
			out->task_path = kf_strdup(tp->valuestring);
		cJSON_Delete(c);
	}
	snprintf(path, sizeof(path), "cand-%lld.cu", (long long)cand_id);
	out->len = strlen(x.source);
	out->source = x.source;
	x.source = NULL;
	out->origin = kf_strdup(origin);
	out->path = kf_strdup(path);
	out->run_id = run_id;
	out->cand_id = cand_id;
	snprintf(out->task_hash, sizeof(out->task_hash), "%s", x.task_hash);
	if (!out->origin || !out->path) {
		kf_export_kernel_release(out);
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
done:
	free(x.source);
	free(x.config);
	return st;
}
