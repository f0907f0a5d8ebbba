/* kforge kb show (cli/cmd_kb.h): a candidate with its source, lineage, verdicts, timings and LLM exchange,
 * or a run with its settings, counters and candidates. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_kb.h"

/* ---- show ---- */

struct show_ctx {
	struct kf_kb *kb;
	bool json;
	cJSON *doc, *arr;
	int64_t parent, llm_call, task_id, run_id, found;
	int n;
	char *source; /* text mode prints it after the verdicts */
};

static int show_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct show_ctx *s = ctx;
	if (s->json) {
		cJSON_AddItemToArray(s->arr, kf_kb_eval_json(e));
		return 0;
	}
	printf("  eval %-5" PRId64 " %-5s %-8s %-22.22s %-16s seed %-10" PRId64, e->id, e->backend, e->arch,
	       e->toolchain, e->verdict, e->seed);
	if (e->speedup > 0)
		printf(" speedup %.2fx", e->speedup);
	printf("\n");
	if (*e->reason)
		printf("        %s\n", e->reason);
	for (size_t i = 0; i < e->n_shapes; i++) {
		printf("        %-32.32s %-14s", e->shapes[i].dims, e->shapes[i].status);
		if (isfinite(e->shapes[i].max_abs))
			printf(" max_abs %.3g", e->shapes[i].max_abs);
		if (isfinite(e->shapes[i].max_rel))
			printf(" max_rel %.3g", e->shapes[i].max_rel);
		if (*e->shapes[i].detail)
			printf("  %s", e->shapes[i].detail);
		printf("\n");
	}
	return 0;
}

static int show_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct show_ctx *s = ctx;
	if (s->json) {
		cJSON_AddItemToArray(s->arr, kf_kb_timing_json(t));
		return 0;
	}
	printf("  %-32.32s %-10s n=%-4d median %.4g ms (IQR %.3g)  ref %.4g ms  speedup %.2fx [%.2f, %.2f]\n",
	       t->shape, t->clock, t->n_samples, t->median_ms, t->iqr_ms, t->ref_median_ms, t->speedup,
	       t->speedup_ci_lo, t->speedup_ci_hi);
	for (size_t i = 0; i < t->n_baselines; i++) {
		const struct kf_kb_timing_baseline *b = &t->baselines[i];
		if (!strcmp(b->status, "timed"))
			printf("    vs %s (%s): %.2fx [%.2f, %.2f]%s, %s; baseline %.4g ms\n", b->name,
			       b->kind, b->speedup, b->speedup_ci_lo, b->speedup_ci_hi,
			       b->significant ? " significant" : " not significant", b->method, b->median_ms);
		else
			printf("    vs %s (%s): %s: %.200s\n", b->name, b->kind, b->status, b->reason);
	}
	return 0;
}

static int show_call(void *ctx, const struct kf_kb_llm_call *c)
{
	struct show_ctx *s = ctx;
	cJSON *prompt, *m;
	if (s->json) {
		cJSON_AddItemToObject(s->doc, "llm_call", kf_kb_llm_call_json(c));
		return 0;
	}
	printf("\nllm call %" PRId64 " (run %" PRId64 " seq %d): %s %s, %" PRId64 " tokens in, %" PRId64
	       " out, $%.4f, %.0f ms, finish '%s'%s%s\n",
	       c->id, c->run_id, c->seq, c->provider, c->model, c->tokens_in, c->tokens_out, c->cost_usd,
	       c->latency_ms, c->finish_reason, c->error ? ", error: " : "", c->error ? c->error : "");
	prompt = cJSON_Parse(c->prompt);
	if (cJSON_IsArray(prompt)) {
		cJSON_ArrayForEach(m, prompt)
		{
			const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
			const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
			printf("--- %s\n%s\n", cJSON_IsString(role) ? role->valuestring : "?",
			       cJSON_IsString(content) ? content->valuestring : "");
		}
	} else {
		printf("--- prompt\n%s\n", c->prompt);
	}
	cJSON_Delete(prompt);
	printf("--- response\n%s\n", c->response);
	return 0;
}

static int parent_of(void *ctx, const struct kf_kb_candidate *c)
{
	((struct show_ctx *)ctx)->parent = c->parent_id;
	return 0;
}

static int show_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct show_ctx *s = ctx;
	char tn[128];
	s->found = c->id;
	s->parent = c->parent_id;
	s->llm_call = c->llm_call_id;
	s->task_id = c->task_id;
	if (s->json) {
		cJSON_AddItemToObject(s->doc, "candidate", kf_kb_candidate_json(s->kb, c));
		return 0;
	}
	printf("candidate  %" PRId64 "\n", c->id);
	printf("task       %s (#%" PRId64 ")\n", kf_cli_kb_task_name(s->kb, c->task_id, tn, sizeof(tn)),
	       c->task_id);
	printf("run        %" PRId64 "   generation %d   island %d   node %" PRId64 "   edit %s\n", c->run_id,
	       c->generation, c->island, c->node, c->edit_kind);
	printf("hash       %s\n", c->source_hash);
	printf("tags       %s\n", *c->tags ? c->tags : "-");
	if (*c->change)
		printf("change     %s\n", c->change);
	if (c->parent2_id)
		printf("parent 2   #%" PRId64 "\n", c->parent2_id);
	s->source = kf_strdup(c->source);
	return 0;
}

static int show_candidate(struct kf_kb *kb, int64_t id, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct show_ctx s = {0};
	cJSON *lineage = NULL;
	int64_t cur;

	s.kb = kb;
	s.json = a->json;
	if (a->json)
		s.doc = cJSON_CreateObject();
	if (kf_kb_candidate_get(kb, id, show_cand, &s, &err)) {
		cJSON_Delete(s.doc);
		return kf_cli_kb_fail(&err);
	}
	/* Lineage: follow first parents to the root (bounded, in case a merge ever made a cycle). */
	if (a->json)
		lineage = cJSON_AddArrayToObject(s.doc, "lineage");
	else
		printf("lineage    #%" PRId64, id);
	cur = s.parent;
	for (int depth = 0; cur > 0 && depth < 1000; depth++) {
		double best = 0;
		kf_kb_candidate_best(kb, cur, NULL, &best, NULL);
		if (lineage)
			cJSON_AddItemToArray(lineage, cJSON_CreateNumber((double)cur));
		else if (best > 0)
			printf(" <- #%" PRId64 " (%.2fx)", cur, best);
		else
			printf(" <- #%" PRId64, cur);
		s.parent = 0;
		kf_kb_candidate_get(kb, cur, parent_of, &s, NULL);
		cur = s.parent;
	}
	if (!a->json)
		printf("\n\nverdicts\n");
	if (a->json)
		s.arr = cJSON_AddArrayToObject(s.doc, "evaluations");
	if (kf_kb_evals_each(kb, 0, id, show_eval, &s, &err))
		goto err;
	if (!a->json)
		printf("\ntimings\n");
	if (a->json)
		s.arr = cJSON_AddArrayToObject(s.doc, "timings");
	if (kf_kb_timings_each(kb, 0, id, show_timing, &s, &err))
		goto err;
	if (s.source) {
		size_t n = strlen(s.source);
		printf("\n--- source\n%s%s", s.source, n && s.source[n - 1] == '\n' ? "" : "\n");
	}
	if (s.llm_call > 0 && kf_kb_llm_call_get(kb, s.llm_call, show_call, &s, &err))
		goto err;
	if (a->json) {
		if (s.llm_call <= 0)
			cJSON_AddNullToObject(s.doc, "llm_call");
		return kf_cli_kb_print_json(s.doc);
	}
	free(s.source);
	return 0;
err:
	free(s.source);
	cJSON_Delete(s.doc);
	return kf_cli_kb_fail(&err);
}

static int show_run_cb(void *ctx, const struct kf_kb_run *r)
{
	struct show_ctx *s = ctx;
	char tn[128], t0[32], t1[32];
	s->found = r->id;
	if (s->json) {
		cJSON *o = kf_kb_run_json(r);
		cJSON_AddNumberToObject(o, "n_candidates", (double)r->n_candidates);
		cJSON_AddItemToObject(s->doc, "run", o);
		return 0;
	}
	kf_cli_kb_fmt_time(r->started_at, t0, sizeof(t0));
	kf_cli_kb_fmt_time(r->finished_at, t1, sizeof(t1));
	printf("run        %" PRId64 " (%s)\n", r->id, r->uid);
	printf("task       %s (#%" PRId64 ")\n", kf_cli_kb_task_name(s->kb, r->task_id, tn, sizeof(tn)),
	       r->task_id);
	printf("strategy   %s   provider %s   model %s   backend %s   seed %" PRId64 "\n", r->strategy,
	       r->provider, r->model, r->backend, r->seed);
	printf("budgets    calls %" PRId64 "   tokens %" PRId64 "   usd %.2f   time %.0f s   (0: none)\n",
	       r->budget_calls, r->budget_tokens, r->budget_usd, r->budget_time_s);
	printf("status     %s   started %s   finished %s\n", r->status, t0, t1);
	printf("spend      $%.4f in %" PRId64 " calls (%" PRId64 " tokens in, %" PRId64 " out), %" PRId64
	       " candidates\n",
	       r->spend_usd, r->n_calls, r->tokens_in, r->tokens_out, r->n_candidates);
	printf("config     %s\n\n", r->config);
	return 0;
}

static int show_run(struct kf_kb *kb, int64_t id, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct show_ctx s = {0};
	cJSON *arr = NULL;
	int64_t n = 0;
	s.kb = kb;
	s.json = a->json;
	if (a->json)
		s.doc = cJSON_CreateObject();
	if (kf_kb_run_get(kb, id, show_run_cb, &s, &err)) {
		cJSON_Delete(s.doc);
		return kf_cli_kb_fail(&err);
	}
	if (a->json)
		arr = cJSON_AddArrayToObject(s.doc, "candidates");
	if (kf_cli_kb_run_candidates(kb, id, arr, &n, &err)) {
		cJSON_Delete(s.doc);
		return kf_cli_kb_fail(&err);
	}
	if (a->json)
		return kf_cli_kb_print_json(s.doc);
	if (!n)
		printf("no candidates\n");
	return 0;
}

int kf_cli_kb_show(struct kf_kb *kb, const struct kb_args *a)
{
	const char *arg = a->n_pos == 2 ? a->pos[1] : NULL;
	int64_t id;
	if (!arg)
		return kf_cli_usage_error("kb", "'kb show' needs one candidate id (or run:ID)");
	if (!strncmp(arg, "run:", 4)) {
		if (!kf_cli_kb_parse_id(arg + 4, &id))
			return kf_cli_usage_error("kb", "'%s' is not a run id", arg);
		return show_run(kb, id, a);
	}
	if (!kf_cli_kb_parse_id(arg, &id))
		return kf_cli_usage_error("kb", "'%s' is not a candidate id", arg);
	return show_candidate(kb, id, a);
}
