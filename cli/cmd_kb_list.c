/* kforge kb list, search and examples (cli/cmd_kb.h): one line per record, or --json. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_kb.h"

/* ---- list ---- */

struct list_ctx {
	struct kf_kb *kb;
	cJSON *arr;
	int64_t limit, n;
	int64_t task_filter; /* for candidates: only this task (0: any) */
};

static int task_name_cb(void *ctx, const struct kf_kb_task *t)
{
	char **p = ctx;
	snprintf(p[0], (size_t)(uintptr_t)p[1], "%s", t->name);
	return 0;
}

const char *kf_cli_kb_task_name(struct kf_kb *kb, int64_t task_id, char *buf, size_t n)
{
	char *p[2] = {buf, (char *)(uintptr_t)n};
	snprintf(buf, n, "#%" PRId64, task_id);
	kf_kb_task_get(kb, task_id, task_name_cb, p, NULL);
	return buf;
}

static int list_run(void *ctx, const struct kf_kb_run *r)
{
	struct list_ctx *l = ctx;
	char tn[128], started[32];
	if (l->limit && l->n >= l->limit)
		return 1;
	l->n++;
	if (l->arr) {
		cJSON *o = kf_kb_run_json(r);
		cJSON_AddNumberToObject(o, "n_candidates", (double)r->n_candidates);
		cJSON_AddItemToArray(l->arr, o);
		return 0;
	}
	if (l->n == 1)
		printf("%6s  %-24s %-8s %-12s %-20s %-11s %6s %6s %9s  %s\n", "run", "task", "strategy",
		       "provider", "model", "status", "calls", "cands", "spend", "started");
	kf_cli_kb_fmt_time(r->started_at, started, sizeof(started));
	printf("%6" PRId64 "  %-24.24s %-8.8s %-12.12s %-20.20s %-11.11s %6" PRId64 " %6" PRId64
	       " %9.4f  %s\n",
	       r->id, kf_cli_kb_task_name(l->kb, r->task_id, tn, sizeof(tn)), r->strategy, r->provider,
	       r->model, r->status, r->n_calls, r->n_candidates, r->spend_usd, started);
	return 0;
}

static int list_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct list_ctx *l = ctx;
	char tn[128], par[32], sp[32];
	double best = 0;
	if (l->task_filter && c->task_id != l->task_filter)
		return 0;
	if (l->limit && l->n >= l->limit)
		return 1;
	l->n++;
	kf_kb_candidate_best(l->kb, c->id, NULL, &best, NULL);
	if (l->arr) {
		cJSON *o = kf_kb_candidate_json(l->kb, c);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "source");
		cJSON_AddNumberToObject(o, "best_speedup", best);
		cJSON_AddItemToArray(l->arr, o);
		return 0;
	}
	if (l->n == 1)
		printf("%7s  %-24s %5s %7s %4s %-9s %8s  %.12s  %s\n", "cand", "task", "run", "parent", "gen",
		       "edit", "speedup", "hash", "tags");
	snprintf(par, sizeof(par), c->parent_id ? "#%" PRId64 : "-", c->parent_id);
	snprintf(sp, sizeof(sp), best > 0 ? "%.2fx" : "-", best);
	printf("%7" PRId64 "  %-24.24s %5" PRId64 " %7s %4d %-9.9s %8s  %.12s  %s\n", c->id,
	       kf_cli_kb_task_name(l->kb, c->task_id, tn, sizeof(tn)), c->run_id, par, c->generation,
	       c->edit_kind, sp, c->source_hash, *c->tags ? c->tags : "-");
	return 0;
}

static int list_win(void *ctx, const struct kf_kb_win *w)
{
	struct list_ctx *l = ctx;
	char at[32];
	if (l->limit && l->n >= l->limit)
		return 1;
	l->n++;
	if (l->arr) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "task", w->task_name);
		cJSON_AddNumberToObject(o, "task_id", (double)w->task_id);
		cJSON_AddStringToObject(o, "arch", w->arch);
		cJSON_AddStringToObject(o, "dtype", w->dtype);
		cJSON_AddNumberToObject(o, "candidate_id", (double)w->candidate_id);
		cJSON_AddNumberToObject(o, "evaluation_id", (double)w->evaluation_id);
		cJSON_AddNumberToObject(o, "speedup", w->speedup);
		cJSON_AddNumberToObject(o, "updated_at", w->updated_at);
		cJSON_AddItemToArray(l->arr, o);
		return 0;
	}
	if (l->n == 1)
		printf("%-28s %-8s %-6s %7s %8s  %s\n", "task", "arch", "dtype", "cand", "speedup",
		       "updated");
	kf_cli_kb_fmt_time(w->updated_at, at, sizeof(at));
	printf("%-28.28s %-8.8s %-6.6s %7" PRId64 " %7.2fx  %s\n", w->task_name, w->arch, w->dtype,
	       w->candidate_id, w->speedup, at);
	return 0;
}

/* One LLM call: what it was for, what it became, and why a failed or unusable one was so. */
static int list_call(void *ctx, const struct kf_kb_llm_call *c)
{
	struct list_ctx *l = ctx;
	char why[200];
	if (l->limit && l->n >= l->limit)
		return 1;
	l->n++;
	const char *outcome = c->outcome && *c->outcome ? c->outcome : c->error ? "failed" : "-";
	if (c->error)
		snprintf(why, sizeof(why), "%s%s%s", c->failure && *c->failure ? c->failure : "",
			 c->failure && *c->failure ? ": " : "", c->error);
	else
		snprintf(why, sizeof(why), "%s", c->reason && *c->reason ? c->reason : "");
	if (l->arr) {
		cJSON *o = kf_kb_llm_call_json(c);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "prompt");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "response");
		cJSON_AddItemToArray(l->arr, o);
		return 0;
	}
	if (l->n == 1)
		printf("%6s %4s  %-10s %-10s %-8s %7s %7s %9s %8s  %s\n", "run", "seq", "purpose", "outcome",
		       "finish", "in", "out", "cost", "latency", "reason");
	printf("%6" PRId64 " %4d  %-10.10s %-10.10s %-8.8s %7" PRId64 " %7" PRId64 " %9.5f %7.1fs  %s\n",
	       c->run_id, c->seq, c->purpose && *c->purpose ? c->purpose : "candidate", outcome,
	       c->finish_reason && *c->finish_reason ? c->finish_reason : "-", c->tokens_in, c->tokens_out,
	       c->cost_usd, c->latency_ms / 1000.0, why[0] ? why : "-");
	return 0;
}

enum kf_status kf_cli_kb_run_candidates(struct kf_kb *kb, int64_t run_id, cJSON *arr, int64_t *n,
					struct kf_err *err)
{
	struct list_ctx l = {kb, arr, 0, 0, 0};
	enum kf_status st = kf_kb_candidates_each(kb, run_id, list_cand, &l, err);
	*n = l.n;
	return st;
}

int kf_cli_kb_list(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct list_ctx l = {kb, NULL, 0, 0, 0};
	const char *what = a->n_pos > 1 ? a->pos[1] : "runs";
	int64_t run_id = 0, task_id = 0;
	enum kf_status s;

	if (a->n_pos > 2)
		return kf_cli_usage_error("kb", "'kb list' takes one of runs, candidates, wins, calls");
	if (a->limit && !kf_cli_kb_parse_id(a->limit, &l.limit))
		return kf_cli_usage_error("kb", "--limit needs a positive number, not '%s'", a->limit);
	if (a->run && !kf_cli_kb_parse_id(a->run, &run_id))
		return kf_cli_usage_error("kb", "--run needs a run id, not '%s'", a->run);
	if (a->task && (s = kf_kb_task_find(kb, a->task, &task_id, &err)))
		return kf_cli_kb_fail(&err);
	if (a->json)
		l.arr = cJSON_CreateArray();
	if (!strcmp(what, "runs")) {
		s = kf_kb_runs_each(kb, task_id, list_run, &l, &err);
	} else if (!strcmp(what, "candidates")) {
		l.task_filter = task_id;
		s = kf_kb_candidates_each(kb, run_id, list_cand, &l, &err);
	} else if (!strcmp(what, "wins")) {
		s = kf_kb_wins_each(kb, list_win, &l, &err);
	} else if (!strcmp(what, "calls")) {
		s = kf_kb_llm_calls_each(kb, run_id, list_call, &l, &err);
	} else {
		cJSON_Delete(l.arr);
		return kf_cli_usage_error("kb", "cannot list '%s' (runs, candidates, wins or calls)", what);
	}
	if (s) {
		cJSON_Delete(l.arr);
		return kf_cli_kb_fail(&err);
	}
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "list", what);
		cJSON_AddItemToObject(o, "items", l.arr);
		return kf_cli_kb_print_json(o);
	}
	if (l.n == 0)
		printf("no %s\n", what);
	return 0;
}

/* ---- search, examples ---- */

struct search_ctx {
	cJSON *arr;
	int n;
};

static int search_hit(void *ctx, const struct kf_kb_hit *h)
{
	struct search_ctx *s = ctx;
	s->n++;
	if (s->arr) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "kind", h->kind);
		cJSON_AddNumberToObject(o, "id", (double)h->id);
		cJSON_AddStringToObject(o, "title", h->title);
		cJSON_AddStringToObject(o, "snippet", h->snippet);
		cJSON_AddNumberToObject(o, "rank", h->rank);
		cJSON_AddItemToArray(s->arr, o);
		return 0;
	}
	{
		/* One line per hit: newlines in a source snippet would break the columns. */
		char snip[256];
		size_t i;
		for (i = 0; i < sizeof(snip) - 1 && h->snippet[i]; i++)
			snip[i] = (h->snippet[i] == '\n' || h->snippet[i] == '\t') ? ' ' : h->snippet[i];
		snip[i] = '\0';
		printf("%-9s %7" PRId64 "  %-28.28s  %s\n", h->kind, h->id, h->title, snip);
	}
	return 0;
}

int kf_cli_kb_search(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct search_ctx s = {0};
	struct kf_buf text = KF_BUF_INIT(4096);
	int64_t limit = 10;
	if (a->n_pos < 2)
		return kf_cli_usage_error("kb", "'kb search' needs TEXT");
	if (a->limit && !kf_cli_kb_parse_id(a->limit, &limit))
		return kf_cli_usage_error("kb", "--limit needs a positive number, not '%s'", a->limit);
	for (size_t i = 1; i < a->n_pos; i++)
		if (kf_buf_addf(&text, "%s%s", i > 1 ? " " : "", a->pos[i])) {
			kf_buf_release(&text);
			return kf_cli_usage_error("kb", "search text too long");
		}
	if (a->json)
		s.arr = cJSON_CreateArray();
	if (kf_kb_search(kb, text.data, (size_t)limit, search_hit, &s, &err)) {
		kf_buf_release(&text);
		cJSON_Delete(s.arr);
		if (err.code == KF_ERR_INVALID)
			return kf_cli_usage_error("kb", "%s", err.msg);
		return kf_cli_kb_fail(&err);
	}
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "query", text.data);
		cJSON_AddItemToObject(o, "hits", s.arr);
		kf_buf_release(&text);
		return kf_cli_kb_print_json(o);
	}
	if (!s.n)
		printf("no matches for '%s'\n", text.data);
	kf_buf_release(&text);
	return 0;
}

int kf_cli_kb_examples(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_example *ex;
	size_t n;
	int64_t k = 5;
	if (a->n_pos != 2)
		return kf_cli_usage_error("kb", "'kb examples' needs one task name");
	if (a->limit && !kf_cli_kb_parse_id(a->limit, &k))
		return kf_cli_usage_error("kb", "--limit needs a positive number, not '%s'", a->limit);
	if (kf_kb_examples_for(kb, a->pos[1], a->arch, (size_t)k, &ex, &n, &err))
		return kf_cli_kb_fail(&err);
	if (a->json) {
		cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "examples");
		cJSON_AddStringToObject(o, "task", a->pos[1]);
		for (size_t i = 0; i < n; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "candidate_id", (double)ex[i].candidate_id);
			cJSON_AddStringToObject(e, "task", ex[i].task_name);
			cJSON_AddStringToObject(e, "category", ex[i].category);
			cJSON_AddBoolToObject(e, "same_task", ex[i].same_task);
			cJSON_AddNumberToObject(e, "speedup", ex[i].speedup);
			if (ex[i].parent_id)
				cJSON_AddNumberToObject(e, "parent_id", (double)ex[i].parent_id);
			else
				cJSON_AddNullToObject(e, "parent_id");
			cJSON_AddNumberToObject(e, "parent_speedup", ex[i].parent_speedup);
			cJSON_AddStringToObject(e, "tags", ex[i].tags);
			cJSON_AddStringToObject(e, "change", ex[i].change);
			cJSON_AddItemToArray(arr, e);
		}
		kf_kb_examples_free(ex, n);
		return kf_cli_kb_print_json(o);
	}
	if (!n)
		printf("no verified kernels to show for '%s'\n", a->pos[1]);
	else
		printf("%-3s %7s  %-24s %-14s %8s  %s\n", "#", "cand", "task", "category", "speedup",
		       "change");
	for (size_t i = 0; i < n; i++)
		printf("%-3zu %7" PRId64 "  %-24.24s %-14.14s %7.2fx  %s\n", i + 1, ex[i].candidate_id,
		       ex[i].task_name, ex[i].category, ex[i].speedup, ex[i].change);
	kf_kb_examples_free(ex, n);
	return 0;
}
