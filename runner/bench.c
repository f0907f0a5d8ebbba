/* The bench modes' per-task steps (runner/runner.h): a kernel generated elsewhere, evaluated through the
 * one pipeline (eval/) and recorded as a "bench" run; the search on one task; and the rows of the report
 * read back from the knowledge base. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "eval/eval.h"
#include "fs.h"
#include "kb/kb.h"
#include "reports/run_report.h"
#include "runner/runner.h"

#define MAX_KERNEL ((size_t)4 << 20)

/* The run's config: {"bench": {mode, kernel, outcome, error}} (fields left out when NULL). */
static char *run_config(const char *mode, const char *kernel, const char *outcome, const char *error)
{
	cJSON *o = cJSON_CreateObject(), *b = cJSON_AddObjectToObject(o, "bench");
	cJSON_AddStringToObject(b, "mode", mode);
	if (kernel)
		cJSON_AddStringToObject(b, "kernel", kernel);
	if (outcome)
		cJSON_AddStringToObject(b, "outcome", outcome);
	if (error)
		cJSON_AddStringToObject(b, "error", error);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

enum kf_status kf_runner_from_dir(void *bench, const struct kf_suite_task *e, int64_t *run_id,
				  struct kf_err *err)
{
	const struct kf_runner_bench *c = bench;
	struct kf_kb *kb = NULL;
	struct kf_task *task = NULL;
	struct kf_eval_outcome *ev = NULL;
	struct kf_buf src = KF_BUF_INIT(MAX_KERNEL);
	char kernel[PATH_MAX * 2];
	char *config = NULL;
	struct kf_err terr = KF_ERR_INIT;
	int64_t task_id = 0;
	double started = kf_wall_s();
	enum kf_status st;

	*run_id = 0;
	snprintf(kernel, sizeof(kernel), "%s/%s.cu", c->from_dir, e->name);
	if ((st = kf_kb_open(c->db_path, 0, &kb, err)) || (st = kf_task_load(e->path, 0, NULL, &task, err)) ||
	    (st = kf_kb_task_put_loaded(kb, task, &task_id, err)))
		goto out;

	const char *outcome = NULL;
	if (access(kernel, F_OK) != 0) {
		outcome = "missing";
	} else if (kf_buf_read_file(&src, kernel, &terr)) {
		outcome = "error";
	} else {
		struct kf_eval_opts eo;
		kf_eval_opts_init(&eo);
		eo.backend = c->backend;
		eo.device = &c->dev;
		eo.seed = c->seed;
		eo.profile = true;
		eo.stop = c->stop;
		if (kf_eval_run(task, kernel, src.data, src.len, &eo, &ev, &terr)) {
			outcome = "error";
		} else if (ev->profile_status && ev->profile_status != KF_ERR_RUNTIME) {
			outcome = "error"; /* verified but not timed: no speedup to report */
			terr = ev->profile_err;
		}
	}

	struct kf_kb_run run = {.task_id = task_id,
				.strategy = "bench",
				.provider = "",
				.model = "",
				.backend = kf_backend_name(c->backend),
				.seed = (int64_t)(ev ? ev->seed : c->seed),
				.started_at = started};
	config =
	    run_config("from-dir", kernel, outcome, outcome && strcmp(outcome, "missing") ? terr.msg : NULL);
	run.config = config;
	if ((st = kf_kb_begin(kb, err)))
		goto out;
	if ((st = kf_kb_run_begin(kb, &run, run_id, err)))
		goto rollback;
	if (!outcome) {
		struct kf_kb_candidate cand = {.run_id = *run_id, .edit_kind = "bench", .source = src.data};
		if ((st = kf_eval_record(kb, task, ev, &cand, NULL, NULL, err)))
			goto rollback;
	}
	if ((st = kf_kb_run_set_status(kb, *run_id, outcome ? "failed" : "done", err)) ||
	    (st = kf_kb_commit(kb, err)))
		goto rollback;
	goto out;
rollback:
	kf_kb_rollback(kb);
	*run_id = 0;
out:
	free(config);
	kf_buf_release(&src);
	kf_eval_outcome_free(ev);
	kf_task_free(task);
	kf_kb_close(kb);
	return st;
}

/* Records a run that could not start (the search failed before recording one) so the report shows why. */
static enum kf_status record_failed(const struct kf_runner_bench *c, const struct kf_suite_task *e,
				    const char *why, int64_t *run_id, struct kf_err *err)
{
	struct kf_kb *kb = NULL;
	struct kf_task *task = NULL;
	int64_t task_id = 0;
	char *config = run_config("optimize", NULL, "error", why);
	enum kf_status st;
	if (!(st = kf_kb_open(c->db_path, 0, &kb, err)) &&
	    !(st = kf_task_load(e->path, 0, NULL, &task, err)) &&
	    !(st = kf_kb_task_put_loaded(kb, task, &task_id, err))) {
		struct kf_kb_run run = {.task_id = task_id,
					.strategy = kf_strategy_name(c->strategy),
					.provider = kf_llm_provider_name(c->llm.provider),
					.model = c->llm.model,
					.backend = kf_backend_name(c->backend),
					.budget_calls = c->budget_calls,
					.config = config};
		if (!(st = kf_kb_run_begin(kb, &run, run_id, err)))
			st = kf_kb_run_set_status(kb, *run_id, "failed", err);
	}
	free(config);
	kf_task_free(task);
	kf_kb_close(kb);
	return st;
}

enum kf_status kf_runner_optimize(void *bench, const struct kf_suite_task *e, int64_t *run_id,
				  struct kf_err *err)
{
	const struct kf_runner_bench *c = bench;
	char out[PATH_MAX];
	struct kf_optimize_opts o;
	struct kf_optimize_result res;
	struct kf_err oerr = KF_ERR_INIT, rerr = KF_ERR_INIT;
	enum kf_status st;

	*run_id = 0;
	snprintf(out, sizeof(out), "%s/tasks/%s", c->out_dir, e->name);
	if ((st = kf_mkdir_p(out, 0777, err)))
		return st;
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	o.task_path = e->path;
	o.strategy = c->strategy;
	o.llm = c->llm;
	o.budget_calls = c->budget_calls;
	o.backend = c->backend;
	o.device = c->backend == KF_BACKEND_CUDA ? &c->dev : NULL;
	o.db_path = c->db_path;
	o.out_dir = out;
	o.seed = c->seed;
	st = kf_optimize(&o, &res, &oerr);
	*run_id = res.run_id;
	/* the task's report, whatever became of the run (a partial run's report says how far it got) */
	if (res.run_id)
		kf_report_run_write(c->db_path, res.run_id, out, NULL, NULL, &rerr);
	if (st == KF_ERR_INTERRUPTED || st == KF_ERR_UNAVAILABLE) {
		*err = oerr;
		return st;
	}
	if (st && !res.run_id)
		return record_failed(c, e, oerr.msg, run_id, err);
	return KF_OK;
}

/* ---- the rows: from the runs just made, or the newest run of each task in the database ---- */

struct pick {
	const char *only; /* strategy filter, or NULL: any but "verify" */
	int64_t id;
	double started;
};

static int on_pick(void *ctx, const struct kf_kb_run *r)
{
	struct pick *p = ctx;
	const char *s = r->strategy ? r->strategy : "";
	if (p->only ? strcmp(s, p->only) != 0 : !strcmp(s, "verify"))
		return 0;
	if (!p->id || r->started_at > p->started || (r->started_at == p->started && r->id > p->id)) {
		p->id = r->id;
		p->started = r->started_at;
	}
	return 0;
}

static void task_missing(const struct kf_suite_task *e, struct kf_bench_task *t, const char *why)
{
	snprintf(t->name, sizeof(t->name), "%s", e->name);
	snprintf(t->category, sizeof(t->category), "%s", e->category);
	t->level = e->level;
	snprintf(t->status, sizeof(t->status), "missing");
	snprintf(t->reason, sizeof(t->reason), "%s", why);
}

enum kf_status kf_runner_rows(const char *db_path, const struct kf_suite *s, const int64_t *run_ids,
			      const char *only, struct kf_bench_task *rows, struct kf_err *err)
{
	struct kf_kb *kb = NULL;
	enum kf_status st = kf_kb_open(db_path, run_ids ? 0 : KF_KB_READONLY | KF_KB_NOCREATE, &kb, err);
	for (size_t i = 0; !st && i < s->n; i++) {
		int64_t id = run_ids ? run_ids[i] : 0;
		if (!run_ids) {
			int64_t task_id = 0;
			struct pick p = {only, 0, 0};
			st = kf_kb_task_find(kb, s->v[i].name, &task_id, err);
			if (st == KF_ERR_NOTFOUND) {
				st = KF_OK;
			} else if (!st) {
				st = kf_kb_runs_each(kb, task_id, on_pick, &p, err);
				id = p.id;
			}
		}
		if (st)
			break;
		task_missing(&s->v[i], &rows[i], "no run of this task was recorded");
		if (id)
			st = kf_bench_task_from_run(kb, id, &rows[i], err);
		rows[i].n_kernel_baselines = s->v[i].n_kernel_baselines;
		rows[i].n_library_baselines = s->v[i].n_library_baselines;
	}
	kf_kb_close(kb);
	return st;
}
