/* Bench metrics (KernelBench definitions, plus a significance-aware fast_p) and the reading of one task's
 * outcome back from the knowledge base, which is where every bench result lives: a merged database of
 * shards and one unsharded run are read the same way, so they give the same numbers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/bench.h"

void kf_bench_tasks_free(struct kf_bench_task *t, size_t n)
{
	if (!t)
		return;
	for (size_t i = 0; i < n; i++)
		free(t[i].progress);
	free(t);
}

double kf_bench_fast_p(const struct kf_bench_task *t, size_t n, double p, bool significant)
{
	size_t k = 0;
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].correct && t[i].speedup > p && (!significant || t[i].lo > p * (1.0 + t[i].band)))
			k++;
	return (double)k / (double)n;
}

bool kf_bench_base_eligible(const struct kf_bench_task *t)
{
	return t->has_base || t->n_kernel_baselines > 0 ||
	       (t->n_library_baselines > 0 && strcmp(t->backend, "cpu") != 0);
}

double kf_bench_fast_p_base(const struct kf_bench_task *t, size_t n, double p, bool significant)
{
	size_t k = 0, of = 0;
	for (size_t i = 0; i < n; i++) {
		if (!kf_bench_base_eligible(&t[i]))
			continue;
		of++;
		if (t[i].correct && t[i].has_base && t[i].base_speedup > p &&
		    (!significant || t[i].base_lo > p))
			k++;
	}
	return of ? (double)k / (double)of : 0;
}

const char *kf_bench_base_word(const struct kf_bench_metrics *m)
{
	return m->n_base_timed && m->n_base_library == m->n_base_timed ? "library" : "baseline";
}

double kf_bench_geomean(const struct kf_bench_task *t, size_t n, size_t *n_used)
{
	double s = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].correct && t[i].speedup > 0 && isfinite(t[i].speedup)) {
			s += log(t[i].speedup);
			k++;
		}
	if (n_used)
		*n_used = k;
	return k ? exp(s / (double)k) : 0;
}

void kf_bench_metrics_compute(const struct kf_bench_task *t, size_t n, const double *p, size_t n_p, int level,
			      struct kf_bench_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->level = level;
	struct kf_bench_task *sel = calloc(n ? n : 1, sizeof(*sel));
	size_t k = 0;
	double time_s = 0, usd = 0, calls = 0;
	if (!sel)
		return;
	for (size_t i = 0; i < n; i++) {
		if (level && t[i].level != level)
			continue;
		sel[k++] = t[i];
		m->n_compiled += t[i].compiled;
		m->n_correct += t[i].correct;
		m->n_missing += !strcmp(t[i].status, "missing");
		time_s += t[i].time_s;
		usd += t[i].usd;
		calls += (double)t[i].calls;
		if (t[i].correct && !strcmp(t[i].clock, "cpu"))
			m->cpu_clock = true;
		if (t[i].correct && !strcmp(t[i].clock, "model"))
			m->model_clock = true;
	}
	m->n_tasks = k;
	if (k) {
		m->compile_rate = (double)m->n_compiled / (double)k;
		m->correct_rate = (double)m->n_correct / (double)k;
		m->time_s_per_task = time_s / (double)k;
		m->usd_per_task = usd / (double)k;
		m->calls_per_task = calls / (double)k;
	}
	m->n_p = n_p < KF_BENCH_MAX_P ? n_p : KF_BENCH_MAX_P;
	for (size_t i = 0; i < m->n_p; i++) {
		m->p[i] = p[i];
		m->fast[i] = kf_bench_fast_p(sel, k, p[i], false);
		m->fast_sig[i] = kf_bench_fast_p(sel, k, p[i], true);
	}
	m->geomean = kf_bench_geomean(sel, k, &m->n_geomean);
	double lb = 0;
	for (size_t i = 0; i < k; i++) {
		m->n_base += kf_bench_base_eligible(&sel[i]);
		if (sel[i].correct && sel[i].has_base && sel[i].base_speedup > 0) {
			m->n_base_timed++;
			m->n_base_library += sel[i].base_library;
			lb += log(sel[i].base_speedup);
		}
	}
	m->geomean_base = m->n_base_timed ? exp(lb / (double)m->n_base_timed) : 0;
	for (size_t i = 0; i < m->n_p; i++) {
		m->fast_base[i] = kf_bench_fast_p_base(sel, k, p[i], false);
		m->fast_base_sig[i] = kf_bench_fast_p_base(sel, k, p[i], true);
	}
	free(sel); /* shallow copies: the progress arrays stay with t */
}

size_t kf_bench_p_default(double *p, size_t max)
{
	static const double def[] = {0, 0.5, 0.8, 1, 1.5, 2};
	size_t n = KF_ARRAY_SIZE(def) < max ? KF_ARRAY_SIZE(def) : max;
	memcpy(p, def, n * sizeof(double));
	return n;
}

bool kf_bench_p_parse(const char *s, double *p, size_t max, size_t *n)
{
	*n = 0;
	if (!s || !*s)
		return false;
	while (*s) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (end == s || errno || !isfinite(v) || v < 0 || *n >= max)
			return false;
		p[(*n)++] = v;
		s = end;
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return false;
		else
			break;
	}
	return *n > 0;
}

/* ---- one task's outcome from its run ---- */

struct ev {
	int64_t cand_id;
	char verdict[32];
	char reason[400];
};

struct from_run {
	struct kf_bench_task *out;
	bool found_run;
	int64_t task_id;
	char config_error[400];
	bool config_missing;
	struct ev *ev; /* last evaluation per candidate, in candidate order */
	size_t n_ev, cap_ev;
	int64_t *cand; /* candidate ids in recording order */
	size_t n_cand, cap_cand;
	bool oom;
	double lo, hi, band;
	bool any_timing;
	bool model; /* a model-clock row was seen: the fitness is the prediction, the CPU rows secondary */
};

static int on_run(void *ctx, const struct kf_kb_run *r)
{
	struct from_run *x = ctx;
	struct kf_bench_task *o = x->out;
	x->found_run = true;
	x->task_id = r->task_id;
	o->run_id = r->id;
	snprintf(o->strategy, sizeof(o->strategy), "%s", r->strategy ? r->strategy : "");
	snprintf(o->backend, sizeof(o->backend), "%s", r->backend ? r->backend : "");
	double end = r->finished_at > 0 ? r->finished_at : r->updated_at;
	o->time_s = end > r->started_at ? end - r->started_at : 0;
	o->usd = r->spend_usd;
	o->calls = r->n_calls;
	o->tokens = r->tokens_in + r->tokens_out;
	/* the bench records why a task has no kernel in the run's config: {"bench":{"outcome":...}} */
	cJSON *c = r->config ? cJSON_Parse(r->config) : NULL;
	cJSON *bj = cJSON_GetObjectItemCaseSensitive(c, "bench");
	cJSON *oc = cJSON_GetObjectItemCaseSensitive(bj, "outcome");
	cJSON *er = cJSON_GetObjectItemCaseSensitive(bj, "error");
	if (cJSON_IsString(oc) && !strcmp(oc->valuestring, "missing"))
		x->config_missing = true;
	if (cJSON_IsString(er))
		snprintf(x->config_error, sizeof(x->config_error), "%s", er->valuestring);
	cJSON_Delete(c);
	return 0;
}

static int on_task(void *ctx, const struct kf_kb_task *t)
{
	struct kf_bench_task *o = ((struct from_run *)ctx)->out;
	snprintf(o->name, sizeof(o->name), "%s", t->name ? t->name : "");
	snprintf(o->category, sizeof(o->category), "%s", t->category ? t->category : "");
	o->level = t->level;
	return 0;
}

static int on_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct from_run *x = ctx;
	if (x->n_cand == x->cap_cand) {
		size_t cap = x->cap_cand ? 2 * x->cap_cand : 16;
		int64_t *p = realloc(x->cand, cap * sizeof(*p));
		if (!p) {
			x->oom = true;
			return 1;
		}
		x->cand = p;
		x->cap_cand = cap;
	}
	x->cand[x->n_cand++] = c->id;
	return 0;
}

static int on_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct from_run *x = ctx;
	struct ev *d = NULL;
	for (size_t i = 0; i < x->n_ev; i++)
		if (x->ev[i].cand_id == e->candidate_id)
			d = &x->ev[i];
	if (!d) {
		if (x->n_ev == x->cap_ev) {
			size_t cap = x->cap_ev ? 2 * x->cap_ev : 16;
			struct ev *p = realloc(x->ev, cap * sizeof(*p));
			if (!p) {
				x->oom = true;
				return 1;
			}
			x->ev = p;
			x->cap_ev = cap;
		}
		d = &x->ev[x->n_ev++];
		d->cand_id = e->candidate_id;
	}
	snprintf(d->verdict, sizeof(d->verdict), "%s", e->verdict ? e->verdict : "");
	snprintf(d->reason, sizeof(d->reason), "%s", e->reason ? e->reason : "");
	return 0;
}

static int on_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct from_run *x = ctx;
	bool model = t->clock && !strcmp(t->clock, "model");
	if (x->model && !model)
		return 0;
	if (model && !x->model) {
		x->model = true;
		x->any_timing = false; /* the CPU rows before it are not the fitness */
		x->band = 0;
	}
	if (!x->any_timing || t->speedup_ci_lo < x->lo)
		x->lo = t->speedup_ci_lo;
	if (!x->any_timing || t->speedup_ci_hi > x->hi)
		x->hi = t->speedup_ci_hi;
	if (t->noise_band > x->band)
		x->band = t->noise_band;
	x->any_timing = true;
	snprintf(x->out->clock, sizeof(x->out->clock), "%s", t->clock ? t->clock : "");
	return 0;
}

/* The best candidate against its best baseline; without one timed, a note on what became of them. */
static enum kf_status base_from(struct kf_kb *kb, int64_t cand, struct kf_bench_task *o, struct kf_err *err)
{
	struct kf_kb_vs v[KF_KB_MAX_TIMING_BASELINES];
	size_t n = 0, used = 0;
	enum kf_status st = kf_kb_candidate_vs(kb, cand, v, KF_ARRAY_SIZE(v), &n, err);
	int b;
	if (st)
		return st;
	if ((b = kf_kb_vs_best(v, n)) >= 0) {
		o->has_base = true;
		snprintf(o->base_name, sizeof(o->base_name), "%s", v[b].name);
		o->base_library = v[b].library;
		o->base_speedup = v[b].speedup;
		o->base_lo = v[b].lo;
		o->base_hi = v[b].hi;
		o->base_significant = v[b].significant;
		snprintf(o->base_method, sizeof(o->base_method), "%s", v[b].method);
		return KF_OK;
	}
	for (size_t i = 0; i < n && used + 1 < sizeof(o->base_note); i++)
		used += (size_t)snprintf(o->base_note + used, sizeof(o->base_note) - used, "%s%s: %s: %s",
					 i ? "; " : "", v[i].name, v[i].status, v[i].reason);
	return KF_OK;
}

static const struct ev *ev_of(const struct from_run *x, int64_t cand)
{
	for (size_t i = 0; i < x->n_ev; i++)
		if (x->ev[i].cand_id == cand)
			return &x->ev[i];
	return NULL;
}

static enum kf_status progress_make(struct kf_kb *kb, struct from_run *x, struct kf_err *err)
{
	struct kf_bench_task *o = x->out;
	if (x->n_cand < 2)
		return KF_OK;
	o->progress = calloc(x->n_cand, sizeof(double));
	if (!o->progress)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	double best = 0;
	for (size_t i = 0; i < x->n_cand; i++) {
		const struct ev *e = ev_of(x, x->cand[i]);
		if (e && !strcmp(e->verdict, "pass")) {
			double s = 0;
			enum kf_status st = kf_kb_candidate_best(kb, x->cand[i], NULL, &s, err);
			if (st)
				return st;
			if (s > best)
				best = s;
		}
		o->progress[i] = best;
	}
	o->n_progress = x->n_cand;
	return KF_OK;
}

enum kf_status kf_bench_task_from_run(struct kf_kb *kb, int64_t run_id, struct kf_bench_task *out,
				      struct kf_err *err)
{
	struct from_run x = {.out = out};
	enum kf_status st;
	int64_t best = 0;
	double sp = 0;

	out->run_id = 0;
	out->compiled = out->correct = false;
	out->speedup = out->lo = out->hi = 0;
	out->has_base = out->base_library = out->base_significant = false;
	out->base_speedup = out->base_lo = out->base_hi = 0;
	out->base_name[0] = out->base_method[0] = out->base_note[0] = 0;
	out->clock[0] = out->reason[0] = 0;
	if ((st = kf_kb_run_get(kb, run_id, on_run, &x, err)))
		return st;
	if (!x.found_run)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no run '%lld'", (long long)run_id);
	if ((st = kf_kb_task_get(kb, x.task_id, on_task, &x, err)) ||
	    (st = kf_kb_candidates_each(kb, run_id, on_cand, &x, err)) ||
	    (st = kf_kb_evals_each(kb, run_id, 0, on_eval, &x, err)))
		goto out;
	if (x.oom) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	out->candidates = (int64_t)x.n_cand;
	if (!x.n_cand) {
		snprintf(out->status, sizeof(out->status), "%s",
			 x.config_missing || !x.config_error[0] ? "missing" : "error");
		snprintf(out->reason, sizeof(out->reason), "%s",
			 x.config_error[0] ? x.config_error : "no kernel was produced for this task");
		goto out;
	}
	if ((st = kf_kb_run_best(kb, run_id, NULL, &best, &sp, err)))
		goto out;
	/* compiled: some candidate got past the compiler; the status is the best candidate's verdict, else
	 * the last evaluated candidate's (what a single-kernel bench evaluated) */
	const struct ev *last = NULL, *pass = NULL;
	for (size_t i = 0; i < x.n_cand; i++) {
		const struct ev *e = ev_of(&x, x.cand[i]);
		if (!e)
			continue;
		last = e;
		if (strcmp(e->verdict, "compile_error") && strcmp(e->verdict, "parse_error"))
			out->compiled = true;
		if (!strcmp(e->verdict, "pass") && !pass)
			pass = e;
	}
	if (best) {
		const struct ev *e = ev_of(&x, best);
		out->correct = true;
		out->speedup = sp;
		snprintf(out->status, sizeof(out->status), "pass");
		snprintf(out->reason, sizeof(out->reason), "%s", e ? e->reason : "");
		if ((st = kf_kb_timings_each(kb, 0, best, on_timing, &x, err)))
			goto out;
		out->lo = x.any_timing ? x.lo : 0;
		out->hi = x.any_timing ? x.hi : 0;
		out->band = x.any_timing ? x.band : 0;
		if ((st = base_from(kb, best, out, err)))
			goto out;
	} else if (pass) {
		/* verified but never timed: correct, with no speedup to count in fast_p */
		out->correct = true;
		snprintf(out->status, sizeof(out->status), "pass");
		snprintf(out->reason, sizeof(out->reason), "%s", pass->reason);
	} else if (last) {
		snprintf(out->status, sizeof(out->status), "%s", last->verdict);
		snprintf(out->reason, sizeof(out->reason), "%s", last->reason);
	} else {
		snprintf(out->status, sizeof(out->status), "error");
		snprintf(out->reason, sizeof(out->reason), "%s",
			 x.config_error[0] ? x.config_error : "no candidate was evaluated");
	}
	st = progress_make(kb, &x, err);
out:
	free(x.ev);
	free(x.cand);
	return st;
}

static int level_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

size_t kf_bench_metrics_all(const struct kf_bench_task *t, size_t n, const double *p, size_t n_p,
			    struct kf_bench_metrics *m, size_t max)
{
	int levels[16] = {0};
	size_t nl = 0, k = 0;
	if (!max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < nl && levels[j] != t[i].level)
			j++;
		if (j == nl && nl < KF_ARRAY_SIZE(levels) && t[i].level)
			levels[nl++] = t[i].level;
	}
	qsort(levels, nl, sizeof(int), level_cmp);
	kf_bench_metrics_compute(t, n, p, n_p, 0, &m[k++]);
	for (size_t j = 0; j < nl && k < max; j++)
		kf_bench_metrics_compute(t, n, p, n_p, levels[j], &m[k++]);
	return k;
}
