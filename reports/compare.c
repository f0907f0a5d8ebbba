/* kforge report --compare: runs of one task side by side (evo against mcts, one model against another):
 * the best verified speedup after each LLM call, the best speedup with its interval, what the calls
 * became, and the spend; Markdown, HTML with charts, JSON. Read from the knowledge base alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/report.h"
#include "reports/run_report.h"

#define CMP_MAX_RUNS 16

size_t kf_report_progress(const struct kf_progress_point *p, size_t n, int64_t n_steps, double *out_x,
			  double *out_y)
{
	size_t m = 0;
	double best = 0;
	for (int64_t k = 1; k <= n_steps; k++) {
		for (size_t i = 0; i < n; i++)
			if (p[i].step == k && p[i].passed && p[i].speedup > best)
				best = p[i].speedup;
		if (best > 0) {
			out_x[m] = (double)k;
			out_y[m] = best;
			m++;
		}
	}
	return m;
}

/* ---- one run ---- */

struct cmp_cand {
	int64_t id, llm_call_id;
	bool reference, evaluated, passed;
	double speedup;
};

struct cmp_run {
	bool found;
	struct kf_kb_run run;
	char strategy[32], provider[32], model[96], backend[16], status[24], task_hash[65];
	char task_name[128];
	struct cmp_cand *c;
	size_t n, cap;
	int64_t *call_ids;
	int *call_seq;
	size_t n_calls, cap_calls;
	int64_t n_failed, n_unusable, n_verified;
	int64_t best_id;
	double best, lo, hi, band;
	char clock[16];
	int64_t best_call; /* the call number of the best candidate, 0: none */
	double *px, *py;
	size_t n_progress;
	int64_t n_steps; /* calls (or candidates) the progress runs over */
	bool oom;
};

static int on_run(void *ctx, const struct kf_kb_run *r)
{
	struct cmp_run *x = ctx;
	x->found = true;
	x->run = *r;
	snprintf(x->strategy, sizeof(x->strategy), "%s", r->strategy ? r->strategy : "");
	snprintf(x->provider, sizeof(x->provider), "%s", r->provider ? r->provider : "");
	snprintf(x->model, sizeof(x->model), "%s", r->model ? r->model : "");
	snprintf(x->backend, sizeof(x->backend), "%s", r->backend ? r->backend : "");
	snprintf(x->status, sizeof(x->status), "%s", r->status ? r->status : "");
	/* the borrowed strings are gone after the callback */
	x->run.uid = x->run.strategy = x->run.provider = x->run.model = x->run.backend = NULL;
	x->run.config = x->run.status = NULL;
	return 1;
}

static int on_task(void *ctx, const struct kf_kb_task *t)
{
	struct cmp_run *x = ctx;
	snprintf(x->task_name, sizeof(x->task_name), "%s", t->name ? t->name : "");
	snprintf(x->task_hash, sizeof(x->task_hash), "%s", t->hash ? t->hash : "");
	return 1;
}

static int on_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct cmp_run *x = ctx;
	struct cmp_cand *p = kf_grow(x->c, x->n, &x->cap, sizeof(*x->c), 32);
	if (!p) {
		x->oom = true;
		return 1;
	}
	x->c = p;
	x->c[x->n++] = (struct cmp_cand){
	    c->id, c->llm_call_id, c->edit_kind && !strcmp(c->edit_kind, "reference"), false, false, 0};
	return 0;
}

static int on_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct cmp_run *x = ctx;
	for (size_t i = 0; i < x->n; i++)
		if (x->c[i].id == e->candidate_id) {
			/* the last evaluation is the verdict (a plausibility re-check comes after the first)
			 */
			x->c[i].evaluated = true;
			x->c[i].passed = e->verdict && !strcmp(e->verdict, "pass");
			x->c[i].speedup = e->speedup;
		}
	return 0;
}

static int on_call(void *ctx, const struct kf_kb_llm_call *c)
{
	struct cmp_run *x = ctx;
	const char *outcome = c->outcome && *c->outcome ? c->outcome : c->error ? "failed" : "";
	if (x->n_calls == x->cap_calls) {
		size_t cap = x->cap_calls ? x->cap_calls * 2 : 32;
		int64_t *ids = realloc(x->call_ids, cap * sizeof(*ids));
		int *seq;
		if (!ids) {
			x->oom = true;
			return 1;
		}
		x->call_ids = ids;
		seq = realloc(x->call_seq, cap * sizeof(*seq));
		if (!seq) {
			x->oom = true;
			return 1;
		}
		x->call_seq = seq;
		x->cap_calls = cap;
	}
	x->call_ids[x->n_calls] = c->id;
	x->call_seq[x->n_calls++] = c->seq;
	x->n_failed += !strcmp(outcome, "failed");
	x->n_unusable += !strcmp(outcome, "unusable");
	return 0;
}

static int on_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct cmp_run *x = ctx;
	if (!x->clock[0] || !strcmp(t->clock ? t->clock : "", "cpu"))
		snprintf(x->clock, sizeof(x->clock), "%s", t->clock ? t->clock : "");
	if (t->speedup_ci_lo < x->lo)
		x->lo = t->speedup_ci_lo;
	if (t->speedup_ci_hi > x->hi)
		x->hi = t->speedup_ci_hi;
	if (t->noise_band > x->band)
		x->band = t->noise_band;
	return 0;
}

static void run_release(struct cmp_run *x)
{
	free(x->c);
	free(x->call_ids);
	free(x->call_seq);
	free(x->px);
	free(x->py);
}

static int64_t call_number(const struct cmp_run *x, int64_t call_id)
{
	for (size_t i = 0; call_id && i < x->n_calls; i++)
		if (x->call_ids[i] == call_id)
			return (int64_t)x->call_seq[i] + 1;
	return 0;
}

static enum kf_status run_load(struct kf_kb *kb, int64_t id, struct cmp_run *x, struct kf_err *err)
{
	enum kf_status st;
	struct kf_progress_point *p;
	int64_t steps;
	size_t np = 0;
	bool per_call;

	memset(x, 0, sizeof(*x));
	x->lo = INFINITY;
	if ((st = kf_kb_run_get(kb, id, on_run, x, err)))
		return st;
	if (!x->found)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no run '%lld' in the knowledge base", (long long)id);
	if ((st = kf_kb_task_get(kb, x->run.task_id, on_task, x, err)) ||
	    (st = kf_kb_candidates_each(kb, id, on_cand, x, err)) ||
	    (st = kf_kb_evals_each(kb, id, 0, on_eval, x, err)) ||
	    (st = kf_kb_llm_calls_each(kb, id, on_call, x, err)) ||
	    (st = kf_kb_run_best(kb, id, NULL, &x->best_id, &x->best, err)))
		return st;
	if (x->best_id && (st = kf_kb_timings_each(kb, 0, x->best_id, on_timing, x, err)))
		return st;
	if (!isfinite(x->lo))
		x->lo = x->hi = 0;
	if (!x->clock[0] && !strcmp(x->backend, "cpu"))
		snprintf(x->clock, sizeof(x->clock), "cpu");
	if (x->oom)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory loading run '%lld'", (long long)id);
	/* progress per call (per candidate for a run whose candidates came from no call) */
	per_call = false;
	for (size_t i = 0; i < x->n && !per_call; i++)
		per_call = call_number(x, x->c[i].llm_call_id) > 0;
	steps = per_call ? (int64_t)x->n_calls : (int64_t)x->n;
	p = calloc(x->n ? x->n : 1, sizeof(*p));
	if (!p)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < x->n; i++) {
		const struct cmp_cand *c = &x->c[i];
		if (c->reference)
			continue;
		x->n_verified += c->passed;
		p[np].step = per_call ? call_number(x, c->llm_call_id) : (int64_t)i + 1;
		p[np].passed = c->passed;
		p[np].speedup = c->speedup;
		if (p[np].step > steps)
			steps = p[np].step;
		if (c->id == x->best_id)
			x->best_call = p[np].step;
		np++;
	}
	x->px = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double));
	x->py = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double));
	if (!x->px || !x->py) {
		free(p);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	x->n_progress = kf_report_progress(p, np, steps, x->px, x->py);
	x->n_steps = steps;
	free(p);
	return KF_OK;
}

/* ---- rendering ---- */

static void run_label(const struct cmp_run *x, char *b, size_t n)
{
	if (x->model[0])
		snprintf(b, n, "run %lld: %s, %s", (long long)x->run.id, x->strategy, x->model);
	else
		snprintf(b, n, "run %lld: %s", (long long)x->run.id, x->strategy);
}

static double elapsed(const struct cmp_run *x)
{
	double end = x->run.finished_at > 0 ? x->run.finished_at : x->run.updated_at;
	return end > x->run.started_at ? end - x->run.started_at : 0;
}

struct cmp_facts {
	bool clocks_differ, cpu_clock, hashes_differ;
	size_t best; /* index of the run with the highest best speedup */
};

static void facts(const struct cmp_run *r, size_t n, struct cmp_facts *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].clock, r[0].clock) || strcmp(r[i].backend, r[0].backend))
			f->clocks_differ = true;
		if (!strcmp(r[i].clock, "cpu"))
			f->cpu_clock = true;
		if (strcmp(r[i].task_hash, r[0].task_hash))
			f->hashes_differ = true;
		if (r[i].best > r[f->best].best)
			f->best = i;
	}
}

static const char *const notes_cpu = "Speedups are CPU-clock ratios of the cpu backend, not GPU speed.";
static const char *const notes_clock =
    "These runs were timed on different backends or clocks: their speedups are not comparable.";
static const char *const notes_hash =
    "The task file changed between these runs (its hash differs): they were verified against different "
    "versions.";

static enum kf_status render_md(const struct cmp_run *r, size_t n, const struct cmp_facts *f,
				struct kf_buf *b)
{
	enum kf_status st = KF_OK;
	char lbl[200];
	KF_BUF_ADDF(st, b, "# kforge compare: %s\n\n", r[0].task_name);
	if (f->cpu_clock)
		KF_BUF_ADDF(st, b, "> %s\n\n", notes_cpu);
	if (f->clocks_differ)
		KF_BUF_ADDF(st, b, "> %s\n\n", notes_clock);
	if (f->hashes_differ)
		KF_BUF_ADDF(st, b, "> %s\n\n", notes_hash);
	KF_BUF_ADDF(
	    st, b,
	    "| run | strategy | provider / model | backend | status | calls | failed / unusable | "
	    "candidates (verified) | best speedup | 95%% interval | at call | tokens in / out | USD | "
	    "time s |\n|---:|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n && !st; i++) {
		const struct cmp_run *x = &r[i];
		size_t nc = 0;
		for (size_t k = 0; k < x->n; k++)
			nc += !x->c[k].reference;
		snprintf(lbl, sizeof(lbl), "%s / %s", x->provider[0] ? x->provider : "-",
			 x->model[0] ? x->model : "-");
		KF_BUF_ADDF(st, b, "| %lld | ", (long long)x->run.id);
		KF_BUF_APPLY(st, kf_md_escape_cell, b, x->strategy);
		KF_BUF_ADDF(st, b, " | ");
		KF_BUF_APPLY(st, kf_md_escape_cell, b, lbl);
		KF_BUF_ADDF(st, b, " | %s | %s | %lld | %lld / %lld | %zu (%lld) | ", x->backend, x->status,
			    (long long)x->run.n_calls, (long long)x->n_failed, (long long)x->n_unusable, nc,
			    (long long)x->n_verified);
		if (x->best_id)
			KF_BUF_ADDF(st, b, "%.3fx%s | %.3f-%.3f | %lld", x->best,
				    i == f->best && n > 1 ? " **best**" : "", x->lo, x->hi,
				    (long long)x->best_call);
		else
			KF_BUF_ADDF(st, b, "none verified | - | -");
		KF_BUF_ADDF(st, b, " | %lld / %lld | %.4f | %.1f |\n", (long long)x->run.tokens_in,
			    (long long)x->run.tokens_out, x->run.spend_usd, elapsed(x));
	}
	KF_BUF_ADDF(st, b, "\n## Best verified speedup after each LLM call\n\n| call |");
	for (size_t i = 0; i < n; i++)
		KF_BUF_ADDF(st, b, " run %lld |", (long long)r[i].run.id);
	KF_BUF_ADDF(st, b, "\n|---:|");
	for (size_t i = 0; i < n; i++)
		KF_BUF_ADDF(st, b, "---:|");
	KF_BUF_ADDF(st, b, "\n");
	{
		int64_t steps = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < r[i].n_progress; k++)
				if ((int64_t)r[i].px[k] > steps)
					steps = (int64_t)r[i].px[k];
		for (int64_t k = 1; k <= steps && k <= 500 && !st; k++) {
			KF_BUF_ADDF(st, b, "| %lld |", (long long)k);
			for (size_t i = 0; i < n; i++) {
				double v = 0;
				for (size_t q = 0; q < r[i].n_progress; q++)
					if ((int64_t)r[i].px[q] == k)
						v = r[i].py[q];
				if (v > 0)
					KF_BUF_ADDF(st, b, " %.3fx |", v);
				else
					KF_BUF_ADDF(st, b, " - |");
			}
			KF_BUF_ADDF(st, b, "\n");
		}
	}
	return st;
}

static enum kf_status render_html(const struct cmp_run *r, size_t n, const struct cmp_facts *f,
				  struct kf_buf *b)
{
	enum kf_status st;
	char title[300], lbl[CMP_MAX_RUNS][200];
	struct kf_series s[CMP_MAX_RUNS];
	struct kf_bar bars[CMP_MAX_RUNS];
	double calls = 1;
	static const char *const names[5] = {"not significant", "significantly faster",
					     "significantly slower", "none verified", NULL};

	snprintf(title, sizeof(title), "kforge compare: %s", r[0].task_name);
	st = kf_html_begin(b, title);
	KF_BUF_ADDF(st, b, "<h1>");
	KF_BUF_APPLY(st, kf_html_escape, b, title);
	KF_BUF_ADDF(st, b, "</h1>\n");
	if (f->cpu_clock)
		KF_BUF_ADDF(st, b, "<p class=\"note\">%s</p>\n", notes_cpu);
	if (f->clocks_differ)
		KF_BUF_ADDF(st, b, "<p class=\"fail\">%s</p>\n", notes_clock);
	if (f->hashes_differ)
		KF_BUF_ADDF(st, b, "<p class=\"fail\">%s</p>\n", notes_hash);
	KF_BUF_ADDF(
	    st, b,
	    "<table><tr><th>run</th><th>strategy</th><th>provider / model</th><th>backend</th><th>status</th>"
	    "<th>calls</th><th>failed / unusable</th><th>candidates (verified)</th><th>best speedup</th>"
	    "<th>95%% interval</th><th>at call</th><th>tokens in / out</th><th>USD</th><th>time "
	    "s</th></tr>\n");
	for (size_t i = 0; i < n && !st; i++) {
		const struct cmp_run *x = &r[i];
		size_t nc = 0;
		for (size_t k = 0; k < x->n; k++)
			nc += !x->c[k].reference;
		run_label(x, lbl[i], sizeof(lbl[i]));
		KF_BUF_ADDF(st, b, "<tr><td class=\"num\">%lld</td><td>", (long long)x->run.id);
		KF_BUF_APPLY(st, kf_html_escape, b, x->strategy);
		KF_BUF_ADDF(st, b, "</td><td>");
		KF_BUF_APPLY(st, kf_html_escape, b, x->provider[0] ? x->provider : "-");
		KF_BUF_ADDF(st, b, " / ");
		KF_BUF_APPLY(st, kf_html_escape, b, x->model[0] ? x->model : "-");
		KF_BUF_ADDF(st, b, "</td><td>");
		KF_BUF_APPLY(st, kf_html_escape, b, x->backend);
		KF_BUF_ADDF(st, b, "</td><td>");
		KF_BUF_APPLY(st, kf_html_escape, b, x->status);
		KF_BUF_ADDF(
		    st, b,
		    "</td><td class=\"num\">%lld</td><td class=\"num\">%lld / %lld</td><td class=\"num\">%zu "
		    "(%lld)</td>",
		    (long long)x->run.n_calls, (long long)x->n_failed, (long long)x->n_unusable, nc,
		    (long long)x->n_verified);
		if (x->best_id)
			KF_BUF_ADDF(
			    st, b,
			    "<td class=\"num%s\">%.3fx</td><td>%.3f-%.3f</td><td class=\"num\">%lld</td>",
			    i == f->best && n > 1 ? " pass" : "", x->best, x->lo, x->hi,
			    (long long)x->best_call);
		else
			KF_BUF_ADDF(st, b, "<td class=\"fail\">none verified</td><td>-</td><td>-</td>");
		KF_BUF_ADDF(st, b,
			    "<td class=\"num\">%lld / %lld</td><td class=\"num\">%.4f</td><td "
			    "class=\"num\">%.1f</td></tr>\n",
			    (long long)x->run.tokens_in, (long long)x->run.tokens_out, x->run.spend_usd,
			    elapsed(x));
		s[i] = (struct kf_series){lbl[i], x->n_progress, x->px, x->py};
		calls = fmax(calls, (double)x->n_steps);
		bars[i] = (struct kf_bar){lbl[i],
					  x->best,
					  x->best_id && x->hi > 0,
					  x->lo,
					  x->hi,
					  !x->best_id                        ? KF_BAR_MISSING
					  : x->lo > 1 + x->band              ? KF_BAR_GOOD
					  : x->hi > 0 && x->hi < 1 - x->band ? KF_BAR_BAD
									     : KF_BAR_NORMAL};
	}
	KF_BUF_ADDF(st, b, "</table>\n<h2>Progress per LLM call</h2>\n");
	{
		struct kf_chart_opts o = {.title = f->cpu_clock
						       ? "Best verified speedup after each call (CPU times)"
						       : "Best verified speedup after each call",
					  .xlabel = "LLM call",
					  .ylabel = "speedup over the reference (log)",
					  .log_y = true,
					  .ref_line = true,
					  .ref_y = 1.0,
					  .step = true,
					  .x_integer = true,
					  .ref_label = "reference (1x)",
					  .value_suffix = "x",
					  .x_range = true,
					  .x_min = 1,
					  .x_max = calls};
		if (!st)
			st = kf_svg_line_chart(b, s, n, &o);
	}
	KF_BUF_ADDF(st, b, "<h2>Best speedup</h2>\n");
	{
		struct kf_chart_opts o = {.title = "Best verified speedup per run, 95% interval",
					  .ylabel = "speedup over the reference (log)",
					  .log_y = true,
					  .ref_line = true,
					  .ref_y = 1.0,
					  .ref_label = "reference (1x)",
					  .status_names = names,
					  .value_suffix = "x"};
		if (!st)
			st = kf_svg_bar_chart(b, bars, n, &o);
	}
	KF_BUF_ADDF(st, b, "<h2>Cost</h2>\n");
	{
		struct kf_bar cost[CMP_MAX_RUNS];
		bool usd = false;
		for (size_t i = 0; i < n; i++)
			usd |= r[i].run.spend_usd > 0;
		for (size_t i = 0; i < n; i++)
			cost[i] = (struct kf_bar){lbl[i], usd ? r[i].run.spend_usd : (double)r[i].run.n_calls,
						  false,  0,
						  0,      KF_BAR_NORMAL};
		struct kf_chart_opts o = {.title = usd ? "Spend per run (USD)"
						       : "LLM calls per run (no spend recorded)",
					  .ylabel = usd ? "USD" : "calls",
					  .y_integer = !usd,
					  .value_suffix = ""};
		if (!st)
			st = kf_svg_bar_chart(b, cost, n, &o);
	}
	if (!st)
		st = kf_html_end(b);
	return st;
}

static cJSON *render_json(const struct cmp_run *r, size_t n, const struct cmp_facts *f)
{
	cJSON *o = cJSON_CreateObject(), *a;
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "task", r[0].task_name);
	cJSON_AddBoolToObject(o, "comparable_clocks", !f->clocks_differ);
	cJSON_AddBoolToObject(o, "cpu_clock", f->cpu_clock);
	cJSON_AddBoolToObject(o, "task_changed", f->hashes_differ);
	cJSON_AddNumberToObject(o, "best_run", (double)r[f->best].run.id);
	a = cJSON_AddArrayToObject(o, "runs");
	for (size_t i = 0; a && i < n; i++) {
		const struct cmp_run *x = &r[i];
		cJSON *j = cJSON_CreateObject(), *p;
		size_t nc = 0;
		for (size_t k = 0; k < x->n; k++)
			nc += !x->c[k].reference;
		cJSON_AddNumberToObject(j, "run_id", (double)x->run.id);
		cJSON_AddStringToObject(j, "strategy", x->strategy);
		cJSON_AddStringToObject(j, "provider", x->provider);
		cJSON_AddStringToObject(j, "model", x->model);
		cJSON_AddStringToObject(j, "backend", x->backend);
		cJSON_AddStringToObject(j, "status", x->status);
		cJSON_AddStringToObject(j, "clock", x->clock);
		cJSON_AddNumberToObject(j, "calls", (double)x->run.n_calls);
		cJSON_AddNumberToObject(j, "failed_calls", (double)x->n_failed);
		cJSON_AddNumberToObject(j, "unusable_replies", (double)x->n_unusable);
		cJSON_AddNumberToObject(j, "candidates", (double)nc);
		cJSON_AddNumberToObject(j, "verified", (double)x->n_verified);
		if (x->best_id) {
			cJSON *bj = cJSON_AddObjectToObject(j, "best");
			cJSON_AddNumberToObject(bj, "candidate_id", (double)x->best_id);
			cJSON_AddNumberToObject(bj, "speedup", x->best);
			cJSON_AddNumberToObject(bj, "ci_lo", x->lo);
			cJSON_AddNumberToObject(bj, "ci_hi", x->hi);
			cJSON_AddNumberToObject(bj, "at_call", (double)x->best_call);
		} else {
			cJSON_AddNullToObject(j, "best");
		}
		cJSON_AddNumberToObject(j, "tokens_in", (double)x->run.tokens_in);
		cJSON_AddNumberToObject(j, "tokens_out", (double)x->run.tokens_out);
		cJSON_AddNumberToObject(j, "usd", x->run.spend_usd);
		cJSON_AddNumberToObject(j, "time_s", elapsed(x));
		p = cJSON_AddArrayToObject(j, "progress");
		for (size_t k = 0; p && k < x->n_progress; k++) {
			cJSON *pt = cJSON_CreateArray();
			cJSON_AddItemToArray(pt, cJSON_CreateNumber(x->px[k]));
			cJSON_AddItemToArray(pt, cJSON_CreateNumber(x->py[k]));
			cJSON_AddItemToArray(p, pt);
		}
		cJSON_AddItemToArray(a, j);
	}
	return o;
}

enum kf_status kf_report_compare(struct kf_kb *kb, const int64_t *run_ids, size_t n,
				 enum kf_report_format fmt, struct kf_buf *out, struct kf_err *err)
{
	struct cmp_run *r;
	struct cmp_facts f;
	enum kf_status st = KF_OK;
	size_t loaded = 0;

	if (n < 2)
		return kf_err_set(err, KF_ERR_INVALID, "--compare needs at least two runs");
	if (n > CMP_MAX_RUNS)
		return kf_err_set(err, KF_ERR_INVALID, "--compare takes at most %d runs", CMP_MAX_RUNS);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (run_ids[i] == run_ids[j])
				return kf_err_set(err, KF_ERR_INVALID, "run %lld is given twice",
						  (long long)run_ids[i]);
	r = calloc(n, sizeof(*r));
	if (!r)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (; loaded < n && !st; loaded++)
		st = run_load(kb, run_ids[loaded], &r[loaded], err);
	for (size_t i = 1; i < n && !st; i++)
		if (strcmp(r[i].task_name, r[0].task_name))
			st = kf_err_set(
			    err, KF_ERR_INVALID,
			    "run %lld is of task '%s', run %lld of '%s': compare runs of one task",
			    (long long)r[i].run.id, r[i].task_name, (long long)r[0].run.id, r[0].task_name);
	if (!st) {
		facts(r, n, &f);
		if (fmt == KF_REPORT_MD) {
			st = render_md(r, n, &f, out);
		} else if (fmt == KF_REPORT_HTML) {
			st = render_html(r, n, &f, out);
		} else {
			cJSON *o = render_json(r, n, &f);
			char *s = o ? cJSON_Print(o) : NULL;
			st = s ? kf_buf_adds(out, s) : KF_ERR_NOMEM;
			if (!st)
				st = kf_buf_addch(out, '\n');
			free(s);
			cJSON_Delete(o);
		}
		if (st)
			kf_err_set(err, st, "cannot render the comparison: %s", kf_status_name(st));
	}
	for (size_t i = 0; i < loaded; i++)
		run_release(&r[i]);
	free(r);
	return st;
}
