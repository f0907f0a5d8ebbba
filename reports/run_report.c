/* The report of one optimize run, rebuilt from the knowledge base alone (so `kforge report RUN` can redo it
 * at any time, also on a merged database): Markdown for pull requests, a self-contained HTML page with
 * inline SVG charts, and JSON. CPU-backend times are labelled as CPU times, never as GPU speed. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/report.h"
#include "reports/run_report.h"
#include "reports/vs_int.h"

/* A run report is a few hundred KiB; a huge run stops here rather than filling the disk. */
#define RUN_REPORT_MAX ((size_t)64 << 20)

bool kf_report_format_parse(const char *s, enum kf_report_format *out)
{
	if (!s)
		return false;
	if (!strcmp(s, "md") || !strcmp(s, "markdown"))
		*out = KF_REPORT_MD;
	else if (!strcmp(s, "html"))
		*out = KF_REPORT_HTML;
	else if (!strcmp(s, "json"))
		*out = KF_REPORT_JSON;
	else
		return false;
	return true;
}

/* ---- the run, loaded from the knowledge base (strings copied out of the borrowed callback data) ---- */

struct rr_cand {
	int64_t id, parent_id;
	int64_t llm_call_id, node;
	int generation;
	char *edit_kind, *source, *change;
	bool evaluated;
	char verdict[40];
	char *reason;
	double speedup; /* of its last evaluation; 0 when not timed */
};

struct rr_timing {
	char *shape;
	char clock[16];
	int n_samples;
	double median_ms, ref_median_ms, speedup, lo, hi;
	double band; /* its A/A noise band (0: none recorded) */
};

/* What went wrong with the run's LLM calls: one row per (outcome, kind), counted, with the first reason. */
struct rr_problem {
	char outcome[16]; /* "failed" or "unusable" */
	char kind[32];    /* failure kind, or the unusable reply's reason class */
	int64_t n;
	char reason[240];
};
#define RR_MAX_PROBLEMS 16

/* One LLM call: its id and seq (the progress chart's x), and for a failed call or an unusable reply what
 * it was and why. */
struct rr_call {
	int64_t id;
	int seq;
	char outcome[16]; /* "failed", "unusable", or "" for a call that gave something */
	char kind[32];
	char *reason;
};

struct rr {
	bool found;
	int64_t n_calls_seen, n_failed, n_unusable;
	struct rr_problem problems[RR_MAX_PROBLEMS];
	size_t n_problems;
	struct rr_call *calls;
	size_t n_calls, cap_calls;
	struct kf_kb_run run; /* strings below own the run's text */
	char *uid, *strategy, *provider, *model, *backend, *config, *status;
	cJSON *run_json;
	char *task_name, *task_title, *task_category;
	int task_level;
	cJSON *task_json;
	struct rr_cand *c;
	size_t n, cap;
	int64_t best_id;
	double best_speedup;
	struct rr_timing *t; /* timings of the best candidate */
	size_t n_t, cap_t;
	struct kf_report_vs vs; /* the best candidate against the task's baselines */
	bool oom;
};

static char *dup0(const char *s)
{
	return kf_strdup(s ? s : "");
}

static int on_run(void *ctx, const struct kf_kb_run *r)
{
	struct rr *x = ctx;
	x->found = true;
	x->run = *r;
	x->uid = dup0(r->uid);
	x->strategy = dup0(r->strategy);
	x->provider = dup0(r->provider);
	x->model = dup0(r->model);
	x->backend = dup0(r->backend);
	x->config = dup0(r->config);
	x->status = dup0(r->status);
	x->run_json = kf_kb_run_json(r);
	if (!x->uid || !x->strategy || !x->provider || !x->model || !x->backend || !x->config || !x->status ||
	    !x->run_json)
		x->oom = true;
	return 0;
}

static int on_task(void *ctx, const struct kf_kb_task *t)
{
	struct rr *x = ctx;
	x->task_name = dup0(t->name);
	x->task_title = dup0(t->title);
	x->task_category = dup0(t->category);
	x->task_level = t->level;
	x->task_json = kf_kb_task_json(t);
	if (!x->task_name || !x->task_title || !x->task_category || !x->task_json)
		x->oom = true;
	return 0;
}

static int on_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct rr *x = ctx;
	struct rr_cand *p = kf_grow(x->c, x->n, &x->cap, sizeof(*x->c), 32);
	if (!p) {
		x->oom = true;
		return 1;
	}
	x->c = p;
	struct rr_cand *d = &x->c[x->n++];
	memset(d, 0, sizeof(*d));
	d->id = c->id;
	d->parent_id = c->parent_id;
	d->llm_call_id = c->llm_call_id;
	d->node = c->node;
	d->generation = c->generation;
	d->edit_kind = dup0(c->edit_kind);
	d->source = dup0(c->source);
	d->change = dup0(c->change);
	if (!d->edit_kind || !d->source || !d->change)
		x->oom = true;
	return 0;
}

/* The kind of an unusable reply: the recorded reason starts with it ("edits_not_applied: ..."; older
 * records: guessed from the words). */
static const char *unusable_class(const char *reason, char *buf, size_t n)
{
	size_t k = strspn(reason, "abcdefghijklmnopqrstuvwxyz_");
	if (k > 0 && k < n && reason[k] == ':') {
		snprintf(buf, n, "%.*s", (int)k, reason);
		return buf;
	}
	if (strstr(reason, "SEARCH/REPLACE"))
		return "edits_not_applied";
	if (strstr(reason, "token limit") || strstr(reason, "cut off"))
		return "cut_off";
	if (strstr(reason, "strategies"))
		return "no_strategies";
	return "no_kernel";
}

static int on_call(void *ctx, const struct kf_kb_llm_call *c)
{
	struct rr *x = ctx;
	const char *outcome = c->outcome && *c->outcome ? c->outcome : c->error ? "failed" : "";
	struct rr_call *rc;
	x->n_calls_seen++;
	if (x->n_calls == x->cap_calls) {
		size_t cap = x->cap_calls ? x->cap_calls * 2 : 32;
		struct rr_call *p = realloc(x->calls, cap * sizeof(*p));
		if (!p) {
			x->oom = true;
			return 1;
		}
		x->calls = p;
		x->cap_calls = cap;
	}
	rc = &x->calls[x->n_calls++];
	memset(rc, 0, sizeof(*rc));
	rc->id = c->id;
	rc->seq = c->seq;
	if (strcmp(outcome, "failed") && strcmp(outcome, "unusable"))
		return 0;
	const char *why = c->error ? c->error : c->reason ? c->reason : "";
	char kbuf[32];
	const char *kind = !strcmp(outcome, "failed") ? (c->failure && *c->failure ? c->failure : "http")
						      : unusable_class(why, kbuf, sizeof(kbuf));
	snprintf(rc->outcome, sizeof(rc->outcome), "%s", outcome);
	snprintf(rc->kind, sizeof(rc->kind), "%s", kind);
	if (!(rc->reason = dup0(why)))
		x->oom = true;
	if (!strcmp(outcome, "failed"))
		x->n_failed++;
	else
		x->n_unusable++;
	for (size_t i = 0; i < x->n_problems; i++)
		if (!strcmp(x->problems[i].outcome, outcome) && !strcmp(x->problems[i].kind, kind)) {
			x->problems[i].n++;
			return 0;
		}
	if (x->n_problems < RR_MAX_PROBLEMS) {
		struct rr_problem *p = &x->problems[x->n_problems++];
		snprintf(p->outcome, sizeof(p->outcome), "%s", outcome);
		snprintf(p->kind, sizeof(p->kind), "%s", kind);
		snprintf(p->reason, sizeof(p->reason), "%s", why);
		p->n = 1;
	}
	return 0;
}

static struct rr_cand *cand_find(struct rr *x, int64_t id)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->c[i].id == id)
			return &x->c[i];
	return NULL;
}

/* The last evaluation of a candidate is its verdict (a plausibility re-verification comes after the first).
 */
static int on_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct rr *x = ctx;
	struct rr_cand *c = cand_find(x, e->candidate_id);
	if (!c)
		return 0;
	c->evaluated = true;
	snprintf(c->verdict, sizeof(c->verdict), "%s", e->verdict ? e->verdict : "");
	free(c->reason);
	c->reason = dup0(e->reason);
	if (!c->reason)
		x->oom = true;
	c->speedup = e->speedup;
	return 0;
}

static int on_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct rr *x = ctx;
	if (x->n_t == x->cap_t) {
		size_t cap = x->cap_t ? x->cap_t * 2 : 8;
		struct rr_timing *p = realloc(x->t, cap * sizeof(*p));
		if (!p) {
			x->oom = true;
			return 1;
		}
		x->t = p;
		x->cap_t = cap;
	}
	struct rr_timing *d = &x->t[x->n_t++];
	memset(d, 0, sizeof(*d));
	d->shape = dup0(t->shape);
	if (!d->shape)
		x->oom = true;
	snprintf(d->clock, sizeof(d->clock), "%s", t->clock ? t->clock : "");
	d->n_samples = t->n_samples;
	d->median_ms = t->median_ms;
	d->ref_median_ms = t->ref_median_ms;
	d->speedup = t->speedup;
	d->lo = t->speedup_ci_lo;
	d->hi = t->speedup_ci_hi;
	d->band = t->noise_band;
	return 0;
}

static void rr_release(struct rr *x)
{
	free(x->uid);
	free(x->strategy);
	free(x->provider);
	free(x->model);
	free(x->backend);
	free(x->config);
	free(x->status);
	cJSON_Delete(x->run_json);
	free(x->task_name);
	free(x->task_title);
	free(x->task_category);
	cJSON_Delete(x->task_json);
	for (size_t i = 0; i < x->n; i++) {
		free(x->c[i].edit_kind);
		free(x->c[i].source);
		free(x->c[i].change);
		free(x->c[i].reason);
	}
	free(x->c);
	for (size_t i = 0; i < x->n_calls; i++)
		free(x->calls[i].reason);
	free(x->calls);
	for (size_t i = 0; i < x->n_t; i++)
		free(x->t[i].shape);
	free(x->t);
	kf_report_vs_release(&x->vs);
}

static enum kf_status rr_load(struct kf_kb *kb, int64_t run_id, struct rr *x, struct kf_err *err)
{
	enum kf_status st;
	memset(x, 0, sizeof(*x));
	if ((st = kf_kb_run_get(kb, run_id, on_run, x, err)))
		return st;
	if (!x->found)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no run '%lld' in the knowledge base",
				  (long long)run_id);
	if ((st = kf_kb_task_get(kb, x->run.task_id, on_task, x, err)) ||
	    (st = kf_kb_candidates_each(kb, run_id, on_cand, x, err)) ||
	    (st = kf_kb_evals_each(kb, run_id, 0, on_eval, x, err)) ||
	    (st = kf_kb_llm_calls_each(kb, run_id, on_call, x, err)) ||
	    (st = kf_kb_run_best(kb, run_id, NULL, &x->best_id, &x->best_speedup, err)))
		return st;
	if (x->best_id && (st = kf_kb_timings_each(kb, 0, x->best_id, on_timing, x, err)))
		return st;
	if ((st = kf_report_vs_load(kb, x->best_id, &x->vs, err)))
		return st;
	if (x->oom)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory loading run '%lld'", (long long)run_id);
	return KF_OK;
}

/* ---- facts derived once for every format ---- */

static const char *verdict_text(const struct rr_cand *c)
{
	if (c->evaluated)
		return c->verdict;
	return !strcmp(c->edit_kind, "reference") ? "reference (the baseline)" : "not evaluated";
}

struct rr_facts {
	bool model_clock;  /* the best was ranked by the cost model's prediction (its CPU rows beside) */
	bool cpu_clock;    /* any timing of the best was a CPU time (and none a model prediction) */
	const char *clock; /* "cpu", "cupti", "cuda_event", or "" */
	bool improved;     /* a verified candidate is faster than the reference */
	bool significant;  /* ... with every timing shape's interval above 1 + its A/A noise band */
	double lo, hi;     /* over the timing shapes: lowest lower bound, highest upper bound */
	double band;       /* the widest A/A noise band of those shapes */
	int64_t n_verified;
	int64_t n_attempts; /* candidates the search made: the reference (its root) not counted */
	double elapsed_s;
	size_t verdict_n[32];
	const char *verdict_name[32];
	size_t n_verdicts;
};

static void facts_make(const struct rr *x, struct rr_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->clock = "";
	f->lo = INFINITY;
	f->hi = 0;
	for (size_t i = 0; i < x->n_t; i++)
		if (!strcmp(x->t[i].clock, "model"))
			f->model_clock = true;
	for (size_t i = 0; i < x->n_t; i++) {
		/* a model-clock run's fitness is the prediction: its CPU rows are secondary */
		if (f->model_clock && strcmp(x->t[i].clock, "model"))
			continue;
		if (!strcmp(x->t[i].clock, "cpu"))
			f->cpu_clock = true;
		if (!f->clock[0])
			f->clock = x->t[i].clock;
		if (x->t[i].lo < f->lo)
			f->lo = x->t[i].lo;
		if (x->t[i].hi > f->hi)
			f->hi = x->t[i].hi;
		if (x->t[i].band > f->band)
			f->band = x->t[i].band;
	}
	if (!x->n_t)
		f->lo = f->hi = 0;
	if (!f->clock[0] && !strcmp(x->backend, "cpu"))
		f->clock = "cpu", f->cpu_clock = true;
	f->improved = x->best_id && x->best_speedup > 1.0;
	f->significant = f->improved && x->n_t > 0 && f->lo > 1.0 + f->band;
	for (size_t i = 0; i < x->n; i++) {
		const char *v = verdict_text(&x->c[i]);
		if (!x->c[i].evaluated && !strcmp(x->c[i].edit_kind, "reference"))
			continue; /* the search's root: the task's reference, the yardstick, not an attempt */
		f->n_attempts++;
		if (x->c[i].evaluated && !strcmp(v, "pass"))
			f->n_verified++;
		size_t k = 0;
		while (k < f->n_verdicts && strcmp(f->verdict_name[k], v))
			k++;
		if (k == f->n_verdicts) {
			if (k == KF_ARRAY_SIZE(f->verdict_n))
				continue;
			f->verdict_name[f->n_verdicts++] = v;
		}
		f->verdict_n[k]++;
	}
	double end = x->run.finished_at > 0 ? x->run.finished_at : x->run.updated_at;
	f->elapsed_s = end > x->run.started_at ? end - x->run.started_at : 0;
}

/* The lineage of the winner, winner first, then its parent, ... (bounded against a cycle in a bad file). */
static size_t lineage(const struct rr *x, const struct rr_cand **out, size_t max)
{
	size_t n = 0;
	int64_t id = x->best_id;
	while (id && n < max) {
		const struct rr_cand *c = cand_find((struct rr *)x, id);
		if (!c)
			break;
		out[n++] = c;
		id = c->parent_id;
	}
	return n;
}

/* One line of at most max bytes from s (first line, whitespace collapsed), for table cells. */
static void excerpt(char *dst, size_t max, const char *s)
{
	size_t j = 0;
	bool space = false;
	for (size_t i = 0; s && s[i] && j + 4 < max; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
			space = j > 0;
			continue;
		}
		if (space)
			dst[j++] = ' ';
		space = false;
		dst[j++] = (char)ch;
		if (j + 4 >= max && s[i + 1]) {
			memcpy(dst + j, "...", 3);
			j += 3;
			break;
		}
	}
	dst[j] = 0;
}

static const char *clock_label(const struct rr_facts *f)
{
	if (f->model_clock)
		return "model: the GPU cost model's predictions (cpu backend), not measured; CPU times "
		       "beside";
	if (f->cpu_clock)
		return "CPU times (cpu backend): not GPU speed";
	if (!strcmp(f->clock, "cupti"))
		return "GPU times (CUPTI kernel activity)";
	if (!strcmp(f->clock, "cuda_event"))
		return "GPU times (CUDA events)";
	return "not timed";
}

static void provider_model(const struct rr *x, char *b, size_t n)
{
	if (!x->provider[0] && !x->model[0])
		snprintf(b, n, "none (no LLM: kernels evaluated as given)");
	else
		snprintf(b, n, "%s / %s", x->provider, x->model);
}

static void fmt_speedup(char *b, size_t n, double s)
{
	if (s > 0)
		snprintf(b, n, "%.3fx", s);
	else
		snprintf(b, n, "-");
}

static const char *summary_line(const struct rr *x, const struct rr_facts *f, char *b, size_t n)
{
	if (!x->best_id && !f->n_verified)
		snprintf(b, n, "No verified improvement: no candidate passed verification (%lld attempted).",
			 (long long)f->n_attempts);
	else if (!x->best_id)
		snprintf(
		    b, n,
		    "No verified improvement: %lld of %lld candidates passed verification, none faster than "
		    "the reference.",
		    (long long)f->n_verified, (long long)f->n_attempts);
	else if (!f->improved)
		snprintf(
		    b, n,
		    "No verified improvement: the best verified kernel (candidate %lld) runs at %.3fx of the "
		    "reference.",
		    (long long)x->best_id, x->best_speedup);
	else if (!f->significant)
		snprintf(b, n,
			 "Best verified kernel: candidate %lld at %.3fx the reference, but its interval "
			 "(%.3f-%.3f) does not clear 1 + the A/A noise band (%.1f%%): not a significant "
			 "improvement.",
			 (long long)x->best_id, x->best_speedup, f->lo, f->hi, f->band * 100.0);
	else
		snprintf(
		    b, n,
		    "Best verified kernel: candidate %lld at %.3fx the reference (95%% interval %.3f-%.3f).",
		    (long long)x->best_id, x->best_speedup, f->lo, f->hi);
	return b;
}

/* ---- Markdown ---- */

static const char *fence_for(const char *src)
{
	return strstr(src, "```") ? "~~~~" : "```";
}

static enum kf_status md_cell(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_adds(b, " ");
	if (!st)
		st = kf_md_escape_cell(b, s);
	if (!st)
		st = kf_buf_adds(b, " |");
	return st;
}

static enum kf_status render_md(const struct rr *x, const struct rr_facts *f, struct kf_buf *b)
{
	enum kf_status st = KF_OK;
	char line[600], s1[32], tmp[400];
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define CELL(s) KF_BUF_APPLY(st, md_cell, b, (s))
	ADD("# kforge run %lld: %s\n\n", (long long)x->run.id, x->task_name);
	ADD("**%s**\n\n", summary_line(x, f, line, sizeof(line)));
	kf_report_vs_summary(&x->vs, f->cpu_clock || f->model_clock, line, sizeof(line));
	if (line[0])
		ADD("**Best kernel %s.**\n\n", line);
	ADD("| | |\n|---|---|\n");
	ADD("| task |");
	CELL(x->task_name);
	ADD("\n| title |");
	CELL(x->task_title);
	ADD("\n| category / level |");
	snprintf(tmp, sizeof(tmp), "%s / %d", x->task_category, x->task_level);
	CELL(tmp);
	ADD("\n| status |");
	CELL(x->status);
	ADD("\n| strategy |");
	CELL(x->strategy);
	ADD("\n| provider / model |");
	provider_model(x, tmp, sizeof(tmp));
	CELL(tmp);
	ADD("\n| backend |");
	CELL(x->backend);
	ADD("\n| clock |");
	CELL(clock_label(f));
	ADD("\n| seed | %llu |\n", (unsigned long long)(uint64_t)x->run.seed);
	ADD("| budgets | calls %lld, tokens %lld, USD %.2f, time %.0f s (0: none) |\n",
	    (long long)x->run.budget_calls, (long long)x->run.budget_tokens, x->run.budget_usd,
	    x->run.budget_time_s);
	ADD("| spend | %lld calls, %lld tokens in, %lld tokens out, $%.4f, %.1f s |\n",
	    (long long)x->run.n_calls, (long long)x->run.tokens_in, (long long)x->run.tokens_out,
	    x->run.spend_usd, f->elapsed_s);
	ADD("| candidates | %lld (%lld verified; the reference not counted) |\n", (long long)f->n_attempts,
	    (long long)f->n_verified);
	ADD("| LLM calls | %lld: %lld failed, %lld unusable replies |\n\n", (long long)x->n_calls_seen,
	    (long long)x->n_failed, (long long)x->n_unusable);
	if (x->n_problems) {
		ADD("## LLM calls that gave nothing\n\n| what | kind | calls | reason (first seen) "
		    "|\n|---|---|---:|---|\n");
		for (size_t i = 0; i < x->n_problems; i++) {
			ADD("|");
			CELL(x->problems[i].outcome);
			CELL(x->problems[i].kind);
			ADD(" %lld |", (long long)x->problems[i].n);
			excerpt(tmp, 200, x->problems[i].reason);
			CELL(tmp);
			ADD("\n");
		}
		ADD("\n");
	}

	if (x->best_id) {
		const struct rr_cand *best = cand_find((struct rr *)x, x->best_id);
		ADD("## Best verified kernel (candidate %lld)\n\n", (long long)x->best_id);
		if (f->model_clock)
			ADD("> Ranked by the GPU cost model (clock `model`: a prediction for the target GPU "
			    "from "
			    "an instrumented run, not a measurement); the `cpu` rows are CPU times of the "
			    "cpu "
			    "backend, shown beside, not GPU speed.\n\n");
		else if (f->cpu_clock)
			ADD("> These are CPU times of the cpu backend (the CUDA source run on the CPU), not "
			    "GPU speed.\n\n");
		if (x->n_t) {
			ADD("| timing shape | candidate ms | reference ms | speedup | 95%% interval | "
			    "samples | clock |\n"
			    "|---|---:|---:|---:|---|---:|---|\n");
			for (size_t i = 0; i < x->n_t; i++) {
				const struct rr_timing *t = &x->t[i];
				char shape[256];
				kf_report_shape_label(t->shape, shape, sizeof(shape));
				ADD("|");
				CELL(shape);
				ADD(" %.4g | %.4g | %.3fx | %.3f-%.3f | %d | %s |\n", t->median_ms,
				    t->ref_median_ms, t->speedup, t->lo, t->hi, t->n_samples, t->clock);
			}
			ADD("\n");
		}
		if (!st)
			st = kf_report_vs_md(b, &x->vs, f->cpu_clock || f->model_clock);
		if (best) {
			const char *fence = fence_for(best->source);
			ADD("%scuda\n%s%s%s\n\n", fence, best->source,
			    best->source[0] && best->source[strlen(best->source) - 1] == '\n' ? "" : "\n",
			    fence);
		}
		const struct rr_cand *chain[64];
		size_t n = lineage(x, chain, KF_ARRAY_SIZE(chain));
		ADD("## Lineage of the winner\n\n| candidate | parent | edit | speedup | change "
		    "|\n|---:|---:|---|---:|---|\n");
		for (size_t i = 0; i < n; i++) {
			fmt_speedup(s1, sizeof(s1), chain[i]->speedup);
			ADD("| %lld | %lld |", (long long)chain[i]->id, (long long)chain[i]->parent_id);
			CELL(chain[i]->edit_kind);
			ADD(" %s |", s1);
			excerpt(tmp, 200, chain[i]->change);
			CELL(tmp);
			ADD("\n");
		}
		ADD("\n");
	}

	ADD("## Verdicts\n\n| verdict | candidates |\n|---|---:|\n");
	for (size_t i = 0; i < f->n_verdicts; i++) {
		ADD("|");
		CELL(f->verdict_name[i]);
		ADD(" %zu |\n", f->verdict_n[i]);
	}
	ADD("\n## Attempts\n\n| candidate | parent | edit | verdict | speedup | reason "
	    "|\n|---:|---:|---|---|---:|---|\n");
	for (size_t i = 0; i < x->n; i++) {
		const struct rr_cand *c = &x->c[i];
		fmt_speedup(s1, sizeof(s1), c->speedup);
		ADD("| %lld | %lld |", (long long)c->id, (long long)c->parent_id);
		CELL(c->edit_kind);
		CELL(verdict_text(c));
		ADD(" %s |", s1);
		excerpt(tmp, 160, c->reason);
		CELL(tmp);
		ADD("\n");
	}
	if (!x->n)
		ADD("\n_No candidates were recorded._\n");
#undef ADD
#undef CELL
	return st;
}

/* ---- HTML ---- */

static enum kf_status h_text(struct kf_buf *b, const char *tag, const char *s)
{
	enum kf_status st = kf_buf_addf(b, "<%s>", tag);
	if (!st)
		st = kf_html_escape(b, s);
	if (!st)
		st = kf_buf_addf(b, "</%s>", tag);
	return st;
}

static enum kf_status h_row(struct kf_buf *b, const char *k, const char *v)
{
	enum kf_status st = kf_buf_adds(b, "<tr>");
	if (!st)
		st = h_text(b, "th", k);
	if (!st)
		st = h_text(b, "td", v);
	if (!st)
		st = kf_buf_adds(b, "</tr>\n");
	return st;
}

/* The 1-based number of the LLM call that produced a candidate (its seq + 1), 0 when none did. */
static int64_t call_number(const struct rr *x, const struct rr_cand *c)
{
	for (size_t i = 0; c->llm_call_id && i < x->n_calls; i++)
		if (x->calls[i].id == c->llm_call_id)
			return (int64_t)x->calls[i].seq + 1;
	return 0;
}

/* The search's progress for kf_report_progress: per LLM call when the run made calls, else per candidate
 * in recording order (kforge bench --from-dir evaluates files, no LLM). *per_call says which. */
static struct kf_progress_point *progress_points(const struct rr *x, size_t *n, int64_t *n_steps,
						 bool *per_call)
{
	struct kf_progress_point *p = calloc(x->n ? x->n : 1, sizeof(*p));
	*n = 0;
	/* per call when the candidates say which call made them */
	*per_call = false;
	for (size_t i = 0; i < x->n && !*per_call; i++)
		*per_call = call_number(x, &x->c[i]) > 0;
	*n_steps = *per_call ? (int64_t)x->n_calls : (int64_t)x->n;
	if (!p)
		return NULL;
	for (size_t i = 0; i < x->n; i++) {
		const struct rr_cand *c = &x->c[i];
		if (!strcmp(c->edit_kind, "reference"))
			continue;
		p[*n].step = *per_call ? call_number(x, c) : (int64_t)i + 1;
		p[*n].passed = c->evaluated && !strcmp(c->verdict, "pass");
		p[*n].speedup = c->speedup;
		(*n)++;
	}
	for (size_t i = 0; i < *n; i++)
		if (p[i].step > *n_steps)
			*n_steps = p[i].step;
	return p;
}

static const char *const speedup_status_names[5] = {"not significant", "significantly faster",
						    "significantly slower", NULL, NULL};

/* Best verified speedup after each LLM call (or candidate), on a log axis with integer call numbers. */
static enum kf_status chart_progress(const struct rr *x, const struct rr_facts *f, struct kf_buf *b)
{
	size_t n = 0, m;
	int64_t steps = 0;
	bool per_call;
	struct kf_progress_point *p = progress_points(x, &n, &steps, &per_call);
	double *px = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double)),
	       *py = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double));
	enum kf_status st = KF_OK;
	if (!p || !px || !py) {
		free(p);
		free(px);
		free(py);
		return KF_ERR_NOMEM;
	}
	m = kf_report_progress(p, n, steps, px, py);
	if (m) {
		struct kf_series s = {"best verified so far", m, px, py};
		struct kf_chart_opts o = {
		    .title = f->cpu_clock ? "Search progress: best verified speedup so far (CPU times)"
					  : "Search progress: best verified speedup so far",
		    .xlabel = per_call ? "LLM call" : "candidate, in recording order",
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
		    .x_max = (double)steps};
		st = kf_svg_line_chart(b, &s, 1, &o);
	} else {
		st = kf_buf_adds(b, "<p class=\"note\">No verified candidate: nothing to chart.</p>\n");
	}
	free(p);
	free(px);
	free(py);
	return st;
}

/* The colour of a candidate: the reference neutral, a pass green, a failure red, not evaluated grey. */
static int cand_status(const struct rr_cand *c)
{
	if (!c->evaluated)
		return !strcmp(c->edit_kind, "reference") ? KF_BAR_NEUTRAL : KF_BAR_MISSING;
	return !strcmp(c->verdict, "pass") ? KF_BAR_GOOD : KF_BAR_BAD;
}

static const char *cand_class(const struct rr_cand *c)
{
	static const char *const cls[5] = {"", "pass", "fail", "note", "ref"};
	return cls[cand_status(c)];
}

/* The search tree: every candidate under its parent (the reference at the root). */
static enum kf_status tree_view(const struct rr *x, struct kf_buf *b)
{
	struct kf_tree_node *nodes = calloc(x->n ? x->n : 1, sizeof(*nodes));
	char(*labels)[48] = calloc(x->n ? x->n : 1, sizeof(*labels));
	char(*titles)[200] = calloc(x->n ? x->n : 1, sizeof(*titles));
	bool mcts = !strcmp(x->strategy, "mcts");
	enum kf_status st;
	if (!nodes || !labels || !titles) {
		free(nodes);
		free(labels);
		free(titles);
		return KF_ERR_NOMEM;
	}
	for (size_t i = 0; i < x->n; i++) {
		const struct rr_cand *c = &x->c[i];
		if (!strcmp(c->edit_kind, "reference"))
			snprintf(labels[i], sizeof(labels[i]), "reference");
		else if (c->evaluated && !strcmp(c->verdict, "pass"))
			snprintf(labels[i], sizeof(labels[i]), "%.3gx", c->speedup);
		else
			snprintf(labels[i], sizeof(labels[i]), "%.40s",
				 c->evaluated ? c->verdict : "not evaluated");
		if (mcts && c->node)
			snprintf(titles[i], sizeof(titles[i]), "candidate %lld (MCTS node %lld): %s, %s",
				 (long long)c->id, (long long)c->node, c->edit_kind, labels[i]);
		else
			snprintf(titles[i], sizeof(titles[i]), "candidate %lld: %s, %s", (long long)c->id,
				 c->edit_kind, labels[i]);
		nodes[i] = (struct kf_tree_node){c->id,     c->parent_id,   labels[i],
						 titles[i], cand_status(c), c->id == x->best_id};
	}
	st = kf_svg_tree(b, nodes, x->n,
			 mcts ? "MCTS tree: each kernel under the one it refined (numbers are candidate ids)"
			      : "Search tree: each kernel under its parent (numbers are candidate ids)",
			 400);
	free(nodes);
	free(labels);
	free(titles);
	return st;
}

/* Every candidate, collapsed: its rationale, verdict, source and the diff against its parent. */
static enum kf_status candidate_details(const struct rr *x, struct kf_buf *b)
{
	enum kf_status st = KF_OK;
	char s1[32];
	for (size_t i = 0; i < x->n && !st; i++) {
		const struct rr_cand *c = &x->c[i];
		const struct rr_cand *par = c->parent_id ? cand_find((struct rr *)x, c->parent_id) : NULL;
		int64_t call = call_number(x, c);
		fmt_speedup(s1, sizeof(s1), c->speedup);
		/* the winner opens with the page */
		st = kf_buf_addf(b, "<details id=\"cand-%lld\" class=\"cand\"%s><summary>candidate %lld",
				 (long long)c->id, c->id == x->best_id ? " open" : "", (long long)c->id);
		if (!st && c->parent_id)
			st = kf_buf_addf(b, " &larr; %lld", (long long)c->parent_id);
		if (!st)
			st = kf_buf_adds(b, " <span class=\"kind\">");
		if (!st)
			st = kf_html_escape(b, c->edit_kind);
		if (!st)
			st = kf_buf_addf(b, "</span> <span class=\"%s\">", cand_class(c));
		if (!st)
			st = kf_html_escape(b, verdict_text(c));
		if (!st)
			st = kf_buf_addf(b, "</span> %s", c->speedup > 0 ? s1 : "");
		if (!st && c->change[0]) {
			char ex[200];
			excerpt(ex, sizeof(ex), c->change);
			st = kf_buf_adds(b, " &mdash; ");
			if (!st)
				st = kf_html_escape(b, ex);
		}
		if (!st)
			st = kf_buf_adds(b, "</summary>\n<div class=\"body\">");
		if (!st && call && c->node && !strcmp(x->strategy, "mcts"))
			st = kf_buf_addf(b, "<p>from LLM call %lld, MCTS node %lld</p>\n", (long long)call,
					 (long long)c->node);
		else if (!st && call)
			st = kf_buf_addf(b, "<p>from LLM call %lld</p>\n", (long long)call);
		if (!st && c->change[0]) {
			st = kf_buf_adds(b, "<p><strong>change:</strong> ");
			if (!st)
				st = kf_html_escape(b, c->change);
			if (!st)
				st = kf_buf_adds(b, "</p>\n");
		}
		if (!st && c->reason && c->reason[0]) {
			st = kf_buf_adds(b, "<p><strong>verdict:</strong> ");
			if (!st)
				st = kf_html_escape(b, c->reason);
			if (!st)
				st = kf_buf_adds(b, "</p>\n");
		}
		if (!st && par && strcmp(par->source, c->source)) {
			st = kf_buf_addf(
			    b,
			    "<details class=\"diff\" open><summary>diff against candidate %lld</summary><pre "
			    "class=\"diff\">",
			    (long long)par->id);
			if (!st)
				st = kf_text_diff(b, par->source, c->source, 3, true);
			if (!st)
				st = kf_buf_adds(b, "</pre></details>\n");
		} else if (!st && par) {
			st = kf_buf_addf(b, "<p class=\"note\">the same source as candidate %lld</p>\n",
					 (long long)par->id);
		}
		if (!st)
			st = kf_buf_adds(b, "<details class=\"src\"><summary>source</summary><pre><code>");
		if (!st)
			st = kf_html_escape(b, c->source);
		if (!st)
			st = kf_buf_adds(b, "</code></pre></details></div></details>\n");
	}
	return st;
}

/* Each failed call and unusable reply, by call number, with its reason. */
static enum kf_status call_problems(const struct rr *x, struct kf_buf *b)
{
	enum kf_status st = KF_OK;
	size_t n = 0;
	for (size_t i = 0; i < x->n_calls; i++)
		n += x->calls[i].outcome[0] != '\0';
	if (!n)
		return KF_OK;
	st = kf_buf_addf(
	    b,
	    "<details><summary>every failed call and unusable reply (%zu)</summary>\n<table><tr><th>call</th>"
	    "<th>what</th><th>kind</th><th>reason</th></tr>\n",
	    n);
	for (size_t i = 0; i < x->n_calls && !st; i++) {
		const struct rr_call *c = &x->calls[i];
		if (!c->outcome[0])
			continue;
		st = kf_buf_addf(b, "<tr><td class=\"num\">%d</td><td class=\"fail\">", c->seq + 1);
		if (!st)
			st = kf_html_escape(b, c->outcome);
		if (!st)
			st = kf_buf_adds(b, "</td><td>");
		if (!st)
			st = kf_html_escape(b, c->kind);
		if (!st)
			st = kf_buf_adds(b, "</td><td>");
		if (!st)
			st = kf_html_escape(b, c->reason);
		if (!st)
			st = kf_buf_adds(b, "</td></tr>\n");
	}
	return st ? st : kf_buf_adds(b, "</table></details>\n");
}

static enum kf_status render_html(const struct rr *x, const struct rr_facts *f, struct kf_buf *b)
{
	enum kf_status st;
	char line[600], tmp[400], s1[32];
	snprintf(tmp, sizeof(tmp), "kforge run %lld: %s", (long long)x->run.id, x->task_name);
	st = kf_html_begin(b, tmp);
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define ESC(s) KF_BUF_APPLY(st, kf_html_escape, b, (s))
	if (!st)
		st = h_text(b, "h1", tmp);
	ADD("<p class=\"%s\"><strong>", f->improved && f->significant ? "pass" : "fail");
	ESC(summary_line(x, f, line, sizeof(line)));
	ADD("</strong></p>\n");
	kf_report_vs_summary(&x->vs, f->cpu_clock || f->model_clock, line, sizeof(line));
	if (line[0]) {
		ADD("<p><strong>Best kernel ");
		ESC(line);
		ADD(".</strong></p>\n");
	}
	if (f->cpu_clock)
		ADD("<p class=\"note\">Times were measured on the cpu backend (the CUDA source run on the "
		    "CPU): "
		    "they are CPU times, not GPU speed.</p>\n");
	ADD("<h2>Run</h2>\n<table>\n");
	if (!st)
		st = h_row(b, "task", x->task_name);
	if (!st)
		st = h_row(b, "title", x->task_title);
	snprintf(tmp, sizeof(tmp), "%s / %d", x->task_category, x->task_level);
	if (!st)
		st = h_row(b, "category / level", tmp);
	if (!st)
		st = h_row(b, "status", x->status);
	if (!st)
		st = h_row(b, "strategy", x->strategy);
	provider_model(x, tmp, sizeof(tmp));
	if (!st)
		st = h_row(b, "provider / model", tmp);
	if (!st)
		st = h_row(b, "backend", x->backend);
	if (!st)
		st = h_row(b, "clock", clock_label(f));
	snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)(uint64_t)x->run.seed);
	if (!st)
		st = h_row(b, "seed", tmp);
	snprintf(tmp, sizeof(tmp), "calls %lld, tokens %lld, USD %.2f, time %.0f s (0: none)",
		 (long long)x->run.budget_calls, (long long)x->run.budget_tokens, x->run.budget_usd,
		 x->run.budget_time_s);
	if (!st)
		st = h_row(b, "budgets", tmp);
	snprintf(tmp, sizeof(tmp), "%lld calls, %lld tokens in, %lld tokens out, $%.4f, %.1f s",
		 (long long)x->run.n_calls, (long long)x->run.tokens_in, (long long)x->run.tokens_out,
		 x->run.spend_usd, f->elapsed_s);
	if (!st)
		st = h_row(b, "spend", tmp);
	snprintf(tmp, sizeof(tmp), "%lld (%lld verified; the reference not counted)",
		 (long long)f->n_attempts, (long long)f->n_verified);
	if (!st)
		st = h_row(b, "candidates", tmp);
	ADD("</table>\n<h2>Search progress</h2>\n");
	if (!st)
		st = chart_progress(x, f, b);

	if (x->best_id) {
		const struct rr_cand *best = cand_find((struct rr *)x, x->best_id);
		ADD("<h2>Best verified kernel (candidate %lld)</h2>\n", (long long)x->best_id);
		if (x->n_t) {
			struct kf_bar bars[64];
			char labels[64][96];
			size_t n = x->n_t < KF_ARRAY_SIZE(bars) ? x->n_t : KF_ARRAY_SIZE(bars);
			for (size_t i = 0; i < n; i++) {
				kf_report_shape_label(x->t[i].shape, labels[i], sizeof(labels[i]));
				bars[i] = (struct kf_bar){labels[i],
							  x->t[i].speedup,
							  true,
							  x->t[i].lo,
							  x->t[i].hi,
							  x->t[i].lo > 1 + x->t[i].band   ? KF_BAR_GOOD
							  : x->t[i].hi < 1 - x->t[i].band ? KF_BAR_BAD
											  : KF_BAR_NORMAL};
			}
			struct kf_chart_opts o = {
			    .title = f->cpu_clock ? "Speedup per timing shape, 95% interval (CPU times)"
						  : "Speedup per timing shape, 95% interval",
			    .ylabel = "speedup over the reference (log)",
			    .log_y = true,
			    .ref_line = true,
			    .ref_y = 1.0,
			    .ref_label = "reference (1x)",
			    .status_names = speedup_status_names,
			    .value_suffix = "x"};
			if (!st)
				st = kf_svg_bar_chart(b, bars, n, &o);
			ADD("<table><tr><th>timing shape</th><th>candidate ms</th><th>reference "
			    "ms</th><th>speedup</th>"
			    "<th>95%% interval</th><th>samples</th><th>clock</th></tr>\n");
			for (size_t i = 0; i < x->n_t; i++) {
				const struct rr_timing *t = &x->t[i];
				char shape[256];
				kf_report_shape_label(t->shape, shape, sizeof(shape));
				ADD("<tr><td>");
				ESC(shape);
				ADD("</td><td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td "
				    "class=\"num\">%.3fx</td>"
				    "<td>%.3f-%.3f</td><td class=\"num\">%d</td><td>",
				    t->median_ms, t->ref_median_ms, t->speedup, t->lo, t->hi, t->n_samples);
				ESC(t->clock);
				ADD("</td></tr>\n");
			}
			ADD("</table>\n");
		}
		if (!st)
			st = kf_report_vs_html(b, &x->vs, f->cpu_clock);
		if (best) {
			ADD("<pre><code>");
			ESC(best->source);
			ADD("</code></pre>\n");
		}
		const struct rr_cand *chain[64];
		size_t n = lineage(x, chain, KF_ARRAY_SIZE(chain));
		ADD("<h2>Lineage of the "
		    "winner</h2>\n<table><tr><th>candidate</th><th>parent</th><th>edit</th>"
		    "<th>speedup</th><th>change</th></tr>\n");
		for (size_t i = 0; i < n; i++) {
			fmt_speedup(s1, sizeof(s1), chain[i]->speedup);
			ADD("<tr><td class=\"num\"><a href=\"#cand-%lld\">%lld</a></td><td "
			    "class=\"num\">%lld</td><td>",
			    (long long)chain[i]->id, (long long)chain[i]->id, (long long)chain[i]->parent_id);
			ESC(chain[i]->edit_kind);
			ADD("</td><td class=\"num\">%s</td><td>", s1);
			excerpt(tmp, 300, chain[i]->change);
			ESC(tmp);
			ADD("</td></tr>\n");
		}
		ADD("</table>\n");
	}

	ADD("<h2>Verdicts</h2>\n");
	if (f->n_verdicts) {
		static const char *const names[5] = {NULL, "verified (pass)", "rejected", "not evaluated",
						     NULL};
		struct kf_bar bars[32];
		for (size_t i = 0; i < f->n_verdicts; i++)
			bars[i] =
			    (struct kf_bar){f->verdict_name[i],
					    (double)f->verdict_n[i],
					    false,
					    0,
					    0,
					    !strcmp(f->verdict_name[i], "pass")            ? KF_BAR_GOOD
					    : !strcmp(f->verdict_name[i], "not evaluated") ? KF_BAR_NEUTRAL
											   : KF_BAR_BAD};
		struct kf_chart_opts o = {.title = "Candidates by verdict (the reference not counted)",
					  .ylabel = "candidates",
					  .y_integer = true,
					  .status_names = names,
					  .value_suffix = ""};
		if (!st)
			st = kf_svg_bar_chart(b, bars, f->n_verdicts, &o);
	} else {
		ADD("<p class=\"note\">No candidates were recorded.</p>\n");
	}
	ADD("<h2>LLM calls</h2>\n<p>%lld calls: %lld failed, %lld unusable replies.</p>\n",
	    (long long)x->n_calls_seen, (long long)x->n_failed, (long long)x->n_unusable);
	if (x->n_problems) {
		ADD("<table><tr><th>what</th><th>kind</th><th>calls</th><th>reason (first seen)</th></tr>\n");
		for (size_t i = 0; i < x->n_problems; i++) {
			ADD("<tr><td class=\"fail\">");
			ESC(x->problems[i].outcome);
			ADD("</td><td>");
			ESC(x->problems[i].kind);
			ADD("</td><td class=\"num\">%lld</td><td>", (long long)x->problems[i].n);
			excerpt(tmp, 240, x->problems[i].reason);
			ESC(tmp);
			ADD("</td></tr>\n");
		}
		ADD("</table>\n");
	}
	if (!st)
		st = call_problems(x, b);
	ADD("<h2>Attempts</h2>\n<table><tr><th>candidate</th><th>parent</th><th>edit</th><th>verdict</th>"
	    "<th>speedup</th><th>reason</th></tr>\n");
	for (size_t i = 0; i < x->n; i++) {
		const struct rr_cand *c = &x->c[i];
		bool pass = c->evaluated && !strcmp(c->verdict, "pass");
		fmt_speedup(s1, sizeof(s1), c->speedup);
		(void)pass;
		ADD("<tr><td class=\"num\"><a href=\"#cand-%lld\">%lld</a></td><td "
		    "class=\"num\">%lld</td><td>",
		    (long long)c->id, (long long)c->id, (long long)c->parent_id);
		ESC(c->edit_kind);
		ADD("</td><td class=\"%s\">", cand_class(c));
		ESC(verdict_text(c));
		ADD("</td><td class=\"num\">%s</td><td>", s1);
		excerpt(tmp, 200, c->reason);
		ESC(tmp);
		ADD("</td></tr>\n");
	}
	ADD("</table>\n");
	if (x->n) {
		ADD("<h2>%s</h2>\n", !strcmp(x->strategy, "mcts") ? "MCTS tree" : "Search tree");
		if (!st)
			st = tree_view(x, b);
		ADD("<h2>Candidates</h2>\n<p class=\"note\">Each candidate with the model's rationale, its "
		    "verdict, "
		    "the diff against its parent and its source (click to open).</p>\n");
		if (!st)
			st = candidate_details(x, b);
	}
#undef ADD
#undef ESC
	if (!st)
		st = kf_html_end(b);
	return st;
}

/* ---- JSON ---- */

static cJSON *render_json(const struct rr *x, const struct rr_facts *f)
{
	cJSON *o = cJSON_CreateObject(), *a, *j;
	char line[600], tmp[400];
	if (!o)
		return NULL;
	cJSON_AddItemReferenceToObject(o, "run", x->run_json);
	cJSON_AddItemReferenceToObject(o, "task", x->task_json);
	cJSON_AddStringToObject(o, "status", x->status);
	cJSON_AddStringToObject(o, "clock", f->cpu_clock ? "cpu" : f->clock);
	cJSON_AddStringToObject(o, "clock_note", clock_label(f));
	cJSON_AddBoolToObject(o, "improved", f->improved);
	cJSON_AddBoolToObject(o, "significant", f->significant);
	cJSON_AddStringToObject(o, "summary", summary_line(x, f, line, sizeof(line)));
	if (x->best_id) {
		const struct rr_cand *best = cand_find((struct rr *)x, x->best_id);
		j = cJSON_AddObjectToObject(o, "best");
		cJSON_AddNumberToObject(j, "candidate_id", (double)x->best_id);
		cJSON_AddNumberToObject(j, "speedup", x->best_speedup);
		cJSON_AddNumberToObject(j, "ci_lo", f->lo);
		cJSON_AddNumberToObject(j, "ci_hi", f->hi);
		if (best)
			cJSON_AddStringToObject(j, "source", best->source);
		a = cJSON_AddArrayToObject(j, "timings");
		for (size_t i = 0; a && i < x->n_t; i++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "shape", x->t[i].shape);
			cJSON_AddStringToObject(t, "clock", x->t[i].clock);
			cJSON_AddNumberToObject(t, "median_ms", x->t[i].median_ms);
			cJSON_AddNumberToObject(t, "ref_median_ms", x->t[i].ref_median_ms);
			cJSON_AddNumberToObject(t, "speedup", x->t[i].speedup);
			cJSON_AddNumberToObject(t, "ci_lo", x->t[i].lo);
			cJSON_AddNumberToObject(t, "ci_hi", x->t[i].hi);
			cJSON_AddNumberToObject(t, "samples", x->t[i].n_samples);
			cJSON_AddItemToArray(a, t);
		}
		cJSON_AddItemToObject(j, "vs", kf_report_vs_json(&x->vs));
		const struct rr_cand *chain[64];
		size_t n = lineage(x, chain, KF_ARRAY_SIZE(chain));
		a = cJSON_AddArrayToObject(o, "lineage");
		for (size_t i = 0; a && i < n; i++) {
			cJSON *c = cJSON_CreateObject();
			cJSON_AddNumberToObject(c, "candidate_id", (double)chain[i]->id);
			cJSON_AddNumberToObject(c, "parent_id", (double)chain[i]->parent_id);
			cJSON_AddStringToObject(c, "edit_kind", chain[i]->edit_kind);
			cJSON_AddNumberToObject(c, "speedup", chain[i]->speedup);
			cJSON_AddStringToObject(c, "change", chain[i]->change);
			cJSON_AddItemToArray(a, c);
		}
	} else {
		cJSON_AddNullToObject(o, "best");
		cJSON_AddArrayToObject(o, "lineage");
	}
	j = cJSON_AddObjectToObject(o, "verdicts");
	for (size_t i = 0; j && i < f->n_verdicts; i++)
		cJSON_AddNumberToObject(j, f->verdict_name[i], (double)f->verdict_n[i]);
	a = cJSON_AddArrayToObject(o, "attempts");
	for (size_t i = 0; a && i < x->n; i++) {
		const struct rr_cand *c = &x->c[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "candidate_id", (double)c->id);
		cJSON_AddNumberToObject(e, "parent_id", (double)c->parent_id);
		cJSON_AddNumberToObject(e, "generation", c->generation);
		cJSON_AddStringToObject(e, "edit_kind", c->edit_kind);
		if (c->evaluated)
			cJSON_AddStringToObject(e, "verdict", c->verdict);
		else
			cJSON_AddNullToObject(e, "verdict");
		excerpt(tmp, 300, c->reason);
		cJSON_AddStringToObject(e, "reason", tmp);
		cJSON_AddNumberToObject(e, "speedup", c->speedup);
		cJSON_AddItemToArray(a, e);
	}
	j = cJSON_AddObjectToObject(o, "calls");
	cJSON_AddNumberToObject(j, "total", (double)x->n_calls_seen);
	cJSON_AddNumberToObject(j, "failed", (double)x->n_failed);
	cJSON_AddNumberToObject(j, "unusable", (double)x->n_unusable);
	a = cJSON_AddArrayToObject(j, "problems");
	for (size_t i = 0; a && i < x->n_problems; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "outcome", x->problems[i].outcome);
		cJSON_AddStringToObject(e, "kind", x->problems[i].kind);
		cJSON_AddNumberToObject(e, "calls", (double)x->problems[i].n);
		cJSON_AddStringToObject(e, "reason", x->problems[i].reason);
		cJSON_AddItemToArray(a, e);
	}
	{
		/* the progress chart's points: [step, best verified speedup after it] */
		size_t np = 0, m = 0;
		int64_t steps = 0;
		bool per_call;
		struct kf_progress_point *p = progress_points(x, &np, &steps, &per_call);
		double *px = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double)),
		       *py = calloc(steps > 0 ? (size_t)steps : 1, sizeof(double));
		if (p && px && py)
			m = kf_report_progress(p, np, steps, px, py);
		j = cJSON_AddObjectToObject(o, "progress");
		cJSON_AddStringToObject(j, "step", per_call ? "llm_call" : "candidate");
		cJSON_AddNumberToObject(j, "steps", (double)steps);
		a = cJSON_AddArrayToObject(j, "best");
		for (size_t i = 0; a && i < m; i++) {
			cJSON *pt = cJSON_CreateArray();
			cJSON_AddItemToArray(pt, cJSON_CreateNumber(px[i]));
			cJSON_AddItemToArray(pt, cJSON_CreateNumber(py[i]));
			cJSON_AddItemToArray(a, pt);
		}
		free(p);
		free(px);
		free(py);
	}
	j = cJSON_AddObjectToObject(o, "spend");
	cJSON_AddNumberToObject(j, "calls", (double)x->run.n_calls);
	cJSON_AddNumberToObject(j, "tokens_in", (double)x->run.tokens_in);
	cJSON_AddNumberToObject(j, "tokens_out", (double)x->run.tokens_out);
	cJSON_AddNumberToObject(j, "usd", x->run.spend_usd);
	cJSON_AddNumberToObject(j, "time_s", f->elapsed_s);
	cJSON_AddNumberToObject(o, "candidates", (double)f->n_attempts); /* the reference not counted */
	cJSON_AddNumberToObject(o, "verified", (double)f->n_verified);
	return o;
}

enum kf_status kf_report_run(struct kf_kb *kb, int64_t run_id, enum kf_report_format fmt, struct kf_buf *out,
			     struct kf_err *err)
{
	struct rr x;
	struct rr_facts f;
	enum kf_status st = rr_load(kb, run_id, &x, err);
	if (st) {
		rr_release(&x);
		return st;
	}
	facts_make(&x, &f);
	if (fmt == KF_REPORT_MD) {
		st = render_md(&x, &f, out);
	} else if (fmt == KF_REPORT_HTML) {
		st = render_html(&x, &f, out);
	} else {
		cJSON *o = render_json(&x, &f);
		char *s = o ? cJSON_Print(o) : NULL;
		st = s ? kf_buf_adds(out, s) : KF_ERR_NOMEM;
		if (!st)
			st = kf_buf_addch(out, '\n');
		free(s);
		cJSON_Delete(o);
	}
	rr_release(&x);
	if (st)
		return kf_err_set(err, st, "cannot render the report of run '%lld': %s", (long long)run_id,
				  kf_status_name(st));
	return KF_OK;
}

enum kf_status kf_report_run_write(const char *db_path, int64_t run_id, const char *dir, char *md, char *html,
				   struct kf_err *err)
{
	static const struct {
		enum kf_report_format f;
		const char *name;
	} files[] = {{KF_REPORT_MD, "report.md"}, {KF_REPORT_HTML, "report.html"}};
	struct kf_kb *kb = NULL;
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st = KF_OK;

	if (md)
		md[0] = 0;
	if (html)
		html[0] = 0;
	if ((st = kf_kb_open(db_path, KF_KB_READONLY | KF_KB_NOCREATE, &kb, err)))
		return st;
	for (size_t i = 0; i < KF_ARRAY_SIZE(files); i++) {
		struct kf_buf b = KF_BUF_INIT(RUN_REPORT_MAX);
		char path[PATH_MAX];
		enum kf_status fst;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (!(fst = kf_report_run(kb, run_id, files[i].f, &b, &e2)) &&
		    !(fst = kf_write_file_atomic(path, b.data, b.len, &e2))) {
			char *to = i ? html : md;
			if (to)
				snprintf(to, PATH_MAX, "%s", path);
		} else if (!st) {
			st = kf_err_set(err, fst, "report '%s': %s", path, e2.msg);
		}
		kf_buf_release(&b);
	}
	kf_kb_close(kb);
	return st;
}
