/* The bench reports: JSON (for tools), CSV (one row per task), Markdown (for pull requests) and a
 * self-contained HTML page with inline SVG charts (fast_p curve, per-task speedups with intervals,
 * correctness by category, search progress). Speedups are against each task's reference kernel; CPU-clock
 * results are labelled as such. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/bench.h"
#include "fs.h"
#include "reports/report.h"
#include "reports/vs_int.h"

#define BENCH_REPORT_MAX ((size_t)128 << 20)

#define BASELINE_NOTE                                                                                        \
	"speedup = the task's reference kernel time / the kernel's time (the reference is the baseline); "   \
	"fast_p counts tasks correct AND faster than p over ALL tasks, failures and missing included"
#define MODEL_NOTE                                                                                           \
	"speedups are the GPU cost model's predictions from the cpu backend's instrumented runs "            \
	"(docs/cost-model.md): not measured on a GPU"
#define CPU_NOTE "speedups were measured with CPU times on the cpu backend: they are not GPU speed"

static bool any_cpu(const struct kf_bench_metrics *m, size_t n_m)
{
	for (size_t i = 0; i < n_m; i++)
		if (m[i].cpu_clock)
			return true;
	return false;
}

static bool any_model(const struct kf_bench_metrics *m, size_t n_m)
{
	for (size_t i = 0; i < n_m; i++)
		if (m[i].model_clock)
			return true;
	return false;
}

/* The clock of a set of speedups: "cpu" wins over "model" (the weaker claim is said), then "gpu". */
static const char *clock_of(bool cpu, bool model)
{
	return cpu ? "cpu" : model ? "model" : "gpu";
}

static void level_name(char *b, size_t n, int level)
{
	if (level)
		snprintf(b, n, "level %d", level);
	else
		snprintf(b, n, "all");
}

/* ---- JSON ---- */

static cJSON *metrics_json(const struct kf_bench_metrics *m)
{
	cJSON *o = cJSON_CreateObject(), *f, *fs;
	char k[48];
	if (!o)
		return NULL;
	if (m->level)
		cJSON_AddNumberToObject(o, "level", m->level);
	else
		cJSON_AddStringToObject(o, "level", "all");
	cJSON_AddNumberToObject(o, "tasks", (double)m->n_tasks);
	cJSON_AddNumberToObject(o, "compiled", (double)m->n_compiled);
	cJSON_AddNumberToObject(o, "correct", (double)m->n_correct);
	cJSON_AddNumberToObject(o, "missing", (double)m->n_missing);
	cJSON_AddNumberToObject(o, "compile_rate", m->compile_rate);
	cJSON_AddNumberToObject(o, "correctness_rate", m->correct_rate);
	f = cJSON_AddObjectToObject(o, "fast_p");
	fs = cJSON_AddObjectToObject(o, "fast_p_significant");
	for (size_t i = 0; f && fs && i < m->n_p; i++) {
		snprintf(k, sizeof(k), "%g", m->p[i]);
		cJSON_AddNumberToObject(f, k, m->fast[i]);
		cJSON_AddNumberToObject(fs, k, m->fast_sig[i]);
	}
	cJSON_AddNumberToObject(o, "geomean_speedup", m->geomean);
	cJSON_AddNumberToObject(o, "geomean_tasks", (double)m->n_geomean);
	cJSON_AddNumberToObject(o, "time_s_per_task", m->time_s_per_task);
	cJSON_AddNumberToObject(o, "usd_per_task", m->usd_per_task);
	cJSON_AddNumberToObject(o, "calls_per_task", m->calls_per_task);
	cJSON_AddStringToObject(o, "clock", clock_of(m->cpu_clock, m->model_clock));
	cJSON_AddItemToObject(o, "vs_best_baseline", kf_bench_vs_metrics_json(m));
	return o;
}

static cJSON *task_json(const struct kf_bench_task *t)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "task", t->name);
	cJSON_AddStringToObject(o, "category", t->category);
	cJSON_AddNumberToObject(o, "level", t->level);
	cJSON_AddStringToObject(o, "status", t->status);
	cJSON_AddBoolToObject(o, "compiled", t->compiled);
	cJSON_AddBoolToObject(o, "correct", t->correct);
	cJSON_AddNumberToObject(o, "speedup", t->speedup);
	cJSON_AddNumberToObject(o, "ci_lo", t->lo);
	cJSON_AddNumberToObject(o, "ci_hi", t->hi);
	cJSON_AddStringToObject(o, "clock", t->clock);
	cJSON_AddNumberToObject(o, "run_id", (double)t->run_id);
	cJSON_AddStringToObject(o, "strategy", t->strategy);
	cJSON_AddNumberToObject(o, "candidates", (double)t->candidates);
	cJSON_AddNumberToObject(o, "time_s", t->time_s);
	cJSON_AddNumberToObject(o, "usd", t->usd);
	cJSON_AddNumberToObject(o, "calls", (double)t->calls);
	cJSON_AddNumberToObject(o, "tokens", (double)t->tokens);
	cJSON_AddStringToObject(o, "reason", t->reason);
	kf_bench_vs_task_json(o, t);
	return o;
}

enum kf_status kf_bench_render_json(struct kf_buf *b, const struct kf_bench_info *info,
				    const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				    size_t n_m)
{
	cJSON *o = cJSON_CreateObject(), *a;
	enum kf_status st = KF_ERR_NOMEM;
	if (!o)
		return st;
	cJSON_AddStringToObject(o, "suite", info->suite ? info->suite : "");
	cJSON_AddStringToObject(o, "mode", info->mode ? info->mode : "");
	cJSON_AddStringToObject(o, "backend", info->backend ? info->backend : "");
	if (info->source)
		cJSON_AddStringToObject(o, "source", info->source);
	if (info->shard)
		cJSON_AddStringToObject(o, "shard", info->shard);
	cJSON_AddStringToObject(o, "baseline", "reference");
	cJSON_AddStringToObject(o, "baseline_note", BASELINE_NOTE);
	cJSON_AddStringToObject(o, "clock", clock_of(any_cpu(m, n_m), any_model(m, n_m)));
	if (any_cpu(m, n_m))
		cJSON_AddStringToObject(o, "clock_note", CPU_NOTE);
	else if (any_model(m, n_m))
		cJSON_AddStringToObject(o, "clock_note", MODEL_NOTE);
	if (n_m)
		cJSON_AddItemToObject(o, "overall", metrics_json(&m[0]));
	a = cJSON_AddArrayToObject(o, "levels");
	for (size_t i = 1; a && i < n_m; i++)
		cJSON_AddItemToArray(a, metrics_json(&m[i]));
	a = cJSON_AddArrayToObject(o, "tasks");
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, task_json(&t[i]));
	char *s = cJSON_Print(o);
	if (s) {
		st = kf_buf_adds(b, s);
		if (!st)
			st = kf_buf_addch(b, '\n');
		free(s);
	}
	cJSON_Delete(o);
	return st;
}

/* ---- CSV ---- */

enum kf_status kf_bench_render_csv(struct kf_buf *b, const struct kf_bench_task *t, size_t n)
{
	enum kf_status st = kf_buf_adds(
	    b, "task,category,level,status,compiled,correct,speedup,ci_lo,ci_hi,clock,"
	       "run_id,strategy,candidates,time_s,usd,calls,tokens,reason" KF_BENCH_VS_CSV_HEADER "\r\n");
	for (size_t i = 0; i < n && !st; i++) {
		st = kf_csv_field(b, t[i].name);
		if (!st)
			st = kf_buf_addch(b, ',');
		if (!st)
			st = kf_csv_field(b, t[i].category);
		if (!st)
			st = kf_buf_addf(b, ",%d,", t[i].level);
		if (!st)
			st = kf_csv_field(b, t[i].status);
		if (!st)
			st = kf_buf_addf(b, ",%d,%d,%.6g,%.6g,%.6g,", t[i].compiled, t[i].correct,
					 t[i].speedup, t[i].lo, t[i].hi);
		if (!st)
			st = kf_csv_field(b, t[i].clock);
		if (!st)
			st = kf_buf_addf(b, ",%lld,", (long long)t[i].run_id);
		if (!st)
			st = kf_csv_field(b, t[i].strategy);
		if (!st)
			st =
			    kf_buf_addf(b, ",%lld,%.3f,%.6f,%lld,%lld,", (long long)t[i].candidates,
					t[i].time_s, t[i].usd, (long long)t[i].calls, (long long)t[i].tokens);
		if (!st)
			st = kf_csv_field(b, t[i].reason);
		if (!st)
			st = kf_bench_vs_csv(b, &t[i]);
		if (!st)
			st = kf_buf_adds(b, "\r\n");
	}
	return st;
}

/* ---- Markdown ---- */

static enum kf_status md_metrics(struct kf_buf *b, const struct kf_bench_metrics *m, size_t n_m)
{
	enum kf_status st =
	    kf_buf_adds(b, "| | tasks | compiled | correct | geomean speedup | time/task | USD/task | "
			   "calls/task |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
	char ln[32];
	for (size_t i = 0; i < n_m && !st; i++) {
		level_name(ln, sizeof(ln), m[i].level);
		st = kf_buf_addf(
		    b,
		    "| %s | %zu | %zu (%.1f%%) | %zu (%.1f%%) | %.3fx over %zu | %.1f s | $%.4f | %.1f |\n",
		    ln, m[i].n_tasks, m[i].n_compiled, 100 * m[i].compile_rate, m[i].n_correct,
		    100 * m[i].correct_rate, m[i].geomean, m[i].n_geomean, m[i].time_s_per_task,
		    m[i].usd_per_task, m[i].calls_per_task);
	}
	if (!st && n_m) {
		st = kf_buf_adds(b, "\n| p |");
		for (size_t k = 0; k < m[0].n_p && !st; k++)
			st = kf_buf_addf(b, " %g |", m[0].p[k]);
		if (!st)
			st = kf_buf_adds(b, "\n|---|");
		for (size_t k = 0; k < m[0].n_p && !st; k++)
			st = kf_buf_adds(b, "---:|");
		for (size_t i = 0; i < n_m && !st; i++) {
			level_name(ln, sizeof(ln), m[i].level);
			st = kf_buf_addf(b, "\n| fast_p (%s) |", ln);
			for (size_t k = 0; k < m[i].n_p && !st; k++)
				st = kf_buf_addf(b, " %.3f |", m[i].fast[k]);
			if (!st)
				st = kf_buf_addf(b, "\n| fast_p significant (%s) |", ln);
			for (size_t k = 0; k < m[i].n_p && !st; k++)
				st = kf_buf_addf(b, " %.3f |", m[i].fast_sig[k]);
		}
		if (!st)
			st = kf_buf_adds(b, "\n");
	}
	return st;
}

enum kf_status kf_bench_render_md(struct kf_buf *b, const struct kf_bench_info *info,
				  const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				  size_t n_m)
{
	enum kf_status st = kf_buf_adds(b, "# kforge bench: ");
	if (!st)
		st = kf_md_escape_cell(b, info->suite ? info->suite : "");
	if (!st)
		st = kf_buf_addf(b, "\n\nmode %s, backend %s%s%s\n\n", info->mode ? info->mode : "",
				 info->backend ? info->backend : "", info->shard ? ", shard " : "",
				 info->shard ? info->shard : "");
	if (!st)
		st = kf_buf_adds(b, "Baseline: " BASELINE_NOTE
				    ". The significant variant counts a task only when "
				    "its speedup interval's lower bound is above p.\n\n");
	if (!st && any_cpu(m, n_m))
		st = kf_buf_adds(b, "> **CPU clock:** " CPU_NOTE ".\n\n");
	else if (!st && any_model(m, n_m))
		st = kf_buf_adds(b, "> **Model clock:** " MODEL_NOTE ".\n\n");
	if (!st)
		st = md_metrics(b, m, n_m);
	if (!st)
		st = kf_bench_vs_md(b, t, n, m, n_m);
	if (!st)
		st = kf_buf_adds(
		    b, "\n## Tasks\n\n| task | level | category | status | speedup | 95% interval | clock | "
		       "reason |\n|---|---:|---|---|---:|---|---|---|\n");
	for (size_t i = 0; i < n && !st; i++) {
		char sp[32] = "-", iv[48] = "-";
		if (t[i].correct && t[i].speedup > 0)
			snprintf(sp, sizeof(sp), "%.3fx", t[i].speedup);
		if (t[i].correct && t[i].hi > 0)
			snprintf(iv, sizeof(iv), "%.3f-%.3f", t[i].lo, t[i].hi);
		st = kf_buf_adds(b, "| ");
		if (!st)
			st = kf_md_escape_cell(b, t[i].name);
		if (!st)
			st = kf_buf_addf(b, " | %d | ", t[i].level);
		if (!st)
			st = kf_md_escape_cell(b, t[i].category);
		if (!st)
			st = kf_buf_addf(b, " | %s | %s | %s | %s | ", t[i].status, sp, iv, t[i].clock);
		if (!st) {
			char r[161];
			snprintf(r, sizeof(r), "%s", t[i].reason);
			st = kf_md_escape_cell(b, r);
		}
		if (!st)
			st = kf_buf_adds(b, " |\n");
	}
	return st;
}

/* ---- HTML ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* fast_p is a step function of p: (# tasks correct with speedup > p) / (# all tasks) drops at each correct
 * task's speedup. Drawn exactly from the tasks (the significant variant drops at each interval's lower
 * bound), over p from 0 to past the largest listed p and speedup. */
static enum kf_status chart_fast_p(struct kf_buf *b, const struct kf_bench_metrics *m,
				   const struct kf_bench_task *t, size_t n)
{
	double *v[2], *xs[2], *ys[2], p_max = 0;
	size_t k[2] = {0, 0};
	enum kf_status st = KF_OK;
	for (int c = 0; c < 2; c++) {
		v[c] = calloc(n + 1, sizeof(double));
		xs[c] = calloc(2 * n + 3, sizeof(double));
		ys[c] = calloc(2 * n + 3, sizeof(double));
	}
	if (!v[0] || !v[1] || !xs[0] || !xs[1] || !ys[0] || !ys[1])
		st = KF_ERR_NOMEM;
	for (size_t i = 0; i < m->n_p; i++)
		p_max = fmax(p_max, m->p[i]);
	for (int c = 0; c < 2 && !st; c++) {
		size_t nv = 0, tot = 0;
		for (size_t i = 0; i < n; i++) {
			if (m->level && t[i].level != m->level)
				continue;
			tot++;
			if (t[i].correct && t[i].speedup > 0 && (c ? t[i].lo : t[i].speedup) > 0)
				v[c][nv++] = c ? t[i].lo : t[i].speedup;
		}
		qsort(v[c], nv, sizeof(double), cmp_double);
		for (size_t i = 0; i < nv; i++)
			p_max = fmax(p_max, v[c][i]);
		/* the value at p = 0, then one point at each drop */
		xs[c][k[c]] = 0;
		ys[c][k[c]++] = tot ? (double)nv / (double)tot : 0;
		for (size_t i = 0; i < nv; i++) {
			if (v[c][i] <= 0 || (i + 1 < nv && v[c][i + 1] == v[c][i]))
				continue;
			size_t above = 0;
			for (size_t j = 0; j < nv; j++)
				above += v[c][j] > v[c][i];
			xs[c][k[c]] = v[c][i];
			ys[c][k[c]++] = tot ? (double)above / (double)tot : 0;
		}
	}
	if (!st) {
		for (int c = 0; c < 2; c++) {
			xs[c][k[c]] = p_max * 1.1 + 0.1;
			ys[c][k[c]] = ys[c][k[c] - 1];
			k[c]++;
		}
		struct kf_series s[2] = {{"fast_p", k[0], xs[0], ys[0]},
					 {"significant (interval above p)", k[1], xs[1], ys[1]}};
		struct kf_chart_opts o = {.title = m->cpu_clock     ? "fast_p over p (CPU times)"
						   : m->model_clock ? "fast_p over p (cost model predictions)"
								    : "fast_p over p",
					  .xlabel = "p (speedup threshold)",
					  .ylabel = "fraction of all tasks",
					  .step = true};
		st = kf_svg_line_chart(b, s, 2, &o);
	}
	for (int c = 0; c < 2; c++) {
		free(v[c]);
		free(xs[c]);
		free(ys[c]);
	}
	return st;
}

static enum kf_status chart_tasks(struct kf_buf *b, const struct kf_bench_task *t, size_t n, bool cpu)
{
	struct kf_bar *bars = calloc(n ? n : 1, sizeof(*bars));
	enum kf_status st;
	if (!bars)
		return KF_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		bars[i].label = t[i].name;
		if (t[i].correct && t[i].speedup > 0) {
			bars[i].value = t[i].speedup;
			bars[i].has_interval = t[i].hi > 0;
			bars[i].lo = t[i].lo;
			bars[i].hi = t[i].hi;
			bars[i].status = t[i].lo > 1 + t[i].band                    ? KF_BAR_GOOD
					 : (t[i].hi > 0 && t[i].hi < 1 - t[i].band) ? KF_BAR_BAD
										    : KF_BAR_NORMAL;
		} else {
			bars[i].status = KF_BAR_MISSING;
		}
	}
	static const char *const names[5] = {"not significant", "significantly faster",
					     "significantly slower", "not correct (no speedup)", NULL};
	struct kf_chart_opts o = {.title =
				      cpu ? "Speedup per task over its reference, 95% interval (CPU times)"
					  : "Speedup per task over its reference, 95% interval",
				  .ylabel = "speedup over the reference (log)",
				  .log_y = true,
				  .ref_line = true,
				  .ref_y = 1.0,
				  .ref_label = "reference (1x)",
				  .status_names = names,
				  .value_suffix = "x"};
	st = kf_svg_bar_chart(b, bars, n, &o);
	free(bars);
	return st;
}

static enum kf_status chart_categories(struct kf_buf *b, const struct kf_bench_task *t, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	size_t *tot = calloc(n ? n : 1, sizeof(size_t)), *ok = calloc(n ? n : 1, sizeof(size_t)), k = 0;
	struct kf_bar *bars = calloc(n ? n : 1, sizeof(*bars));
	enum kf_status st = KF_ERR_NOMEM;
	if (names && tot && ok && bars) {
		for (size_t i = 0; i < n; i++) {
			const char *c = t[i].category[0] ? t[i].category : "(none)";
			size_t j = 0;
			while (j < k && strcmp(names[j], c))
				j++;
			if (j == k)
				names[k++] = c;
			tot[j]++;
			ok[j] += t[i].correct;
		}
		for (size_t j = 0; j < k; j++)
			bars[j] = (struct kf_bar){names[j], (double)ok[j] / (double)tot[j],     false, 0,
						  0,        ok[j] == tot[j] ? 1 : ok[j] ? 0 : 2};
		static const char *const legend[5] = {"some correct", "all correct", "none correct", NULL,
						      NULL};
		struct kf_chart_opts o = {.title = "Correctness rate by category",
					  .ylabel = "correct fraction",
					  .status_names = legend,
					  .value_suffix = ""};
		st = kf_svg_bar_chart(b, bars, k, &o);
	}
	free(names);
	free(tot);
	free(ok);
	free(bars);
	return st;
}

static enum kf_status chart_progress(struct kf_buf *b, const struct kf_bench_task *t, size_t n)
{
	size_t k = 0, total = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].n_progress) {
			k++;
			total += t[i].n_progress;
		}
	if (!k)
		return KF_OK;
	struct kf_series *s = calloc(k, sizeof(*s));
	double *xs = calloc(total, sizeof(double)), *ys = calloc(total, sizeof(double));
	enum kf_status st = KF_ERR_NOMEM;
	if (s && xs && ys) {
		size_t j = 0, off = 0;
		for (size_t i = 0; i < n; i++) {
			if (!t[i].n_progress)
				continue;
			/* a task's curve starts at its first verified candidate (nothing to plot before) */
			size_t m = 0;
			for (size_t c = 0; c < t[i].n_progress; c++)
				if (t[i].progress[c] > 0) {
					xs[off + m] = (double)(c + 1);
					ys[off + m] = t[i].progress[c];
					m++;
				}
			s[j++] = (struct kf_series){t[i].name, m, xs + off, ys + off};
			off += m;
		}
		struct kf_chart_opts o = {.title = "Search progress: best verified speedup so far",
					  .xlabel = "candidate, in recording order",
					  .ylabel = "speedup over the reference (log)",
					  .log_y = true,
					  .ref_line = true,
					  .ref_y = 1.0,
					  .step = true,
					  .x_integer = true,
					  .ref_label = "reference (1x)",
					  .value_suffix = "x"};
		st = kf_buf_adds(b, "<h2>Search progress</h2>\n");
		if (!st)
			st = kf_svg_line_chart(b, s, j, &o);
	}
	free(s);
	free(xs);
	free(ys);
	return st;
}

enum kf_status kf_bench_render_html(struct kf_buf *b, const struct kf_bench_info *info,
				    const struct kf_bench_task *t, size_t n, const struct kf_bench_metrics *m,
				    size_t n_m)
{
	char title[600], ln[32];
	bool cpu = any_cpu(m, n_m);
	snprintf(title, sizeof(title), "kforge bench: %s", info->suite ? info->suite : "");
	enum kf_status st = kf_html_begin(b, title);
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define ESC(s) KF_BUF_APPLY(st, kf_html_escape, b, (s))
	ADD("<h1>");
	ESC(title);
	ADD("</h1>\n<p>mode ");
	ESC(info->mode ? info->mode : "");
	ADD(", backend ");
	ESC(info->backend ? info->backend : "");
	if (info->shard) {
		ADD(", shard ");
		ESC(info->shard);
	}
	ADD("</p>\n<p class=\"note\">Baseline: ");
	ESC(BASELINE_NOTE);
	ADD(". The significant variant counts a task only when its speedup interval's lower bound is above "
	    "p.</p>\n");
	if (cpu)
		ADD("<p class=\"note\"><strong>CPU clock:</strong> " CPU_NOTE ".</p>\n");
	else if (any_model(m, n_m))
		ADD("<p class=\"note\"><strong>Model clock:</strong> " MODEL_NOTE ".</p>\n");
	ADD("<h2>Summary</h2>\n<table><tr><th></th><th>tasks</th><th>compiled</th><th>correct</th>"
	    "<th>geomean speedup</th><th>time/task</th><th>USD/task</th><th>calls/task</th></tr>\n");
	for (size_t i = 0; i < n_m; i++) {
		level_name(ln, sizeof(ln), m[i].level);
		ADD("<tr><th>%s</th><td class=\"num\">%zu</td><td class=\"num\">%zu (%.1f%%)</td>"
		    "<td class=\"num\">%zu (%.1f%%)</td><td class=\"num\">%.3fx over %zu</td><td "
		    "class=\"num\">%.1f s</td>"
		    "<td class=\"num\">$%.4f</td><td class=\"num\">%.1f</td></tr>\n",
		    ln, m[i].n_tasks, m[i].n_compiled, 100 * m[i].compile_rate, m[i].n_correct,
		    100 * m[i].correct_rate, m[i].geomean, m[i].n_geomean, m[i].time_s_per_task,
		    m[i].usd_per_task, m[i].calls_per_task);
	}
	ADD("</table>\n");
	if (n_m) {
		ADD("<table><tr><th>p</th>");
		for (size_t k = 0; k < m[0].n_p; k++)
			ADD("<th>%g</th>", m[0].p[k]);
		ADD("</tr>\n");
		for (size_t i = 0; i < n_m; i++) {
			level_name(ln, sizeof(ln), m[i].level);
			ADD("<tr><th>fast_p (%s)</th>", ln);
			for (size_t k = 0; k < m[i].n_p; k++)
				ADD("<td class=\"num\">%.3f</td>", m[i].fast[k]);
			ADD("</tr>\n<tr><th>significant (%s)</th>", ln);
			for (size_t k = 0; k < m[i].n_p; k++)
				ADD("<td class=\"num\">%.3f</td>", m[i].fast_sig[k]);
			ADD("</tr>\n");
		}
		ADD("</table>\n<h2>fast_p curve</h2>\n");
		if (!st)
			st = chart_fast_p(b, &m[0], t, n);
	}
	if (!st)
		st = kf_bench_vs_html(b, t, n, m, n_m);
	ADD("<h2>Speedup per task</h2>\n");
	if (!st)
		st = chart_tasks(b, t, n, cpu);
	ADD("<h2>Correctness by category</h2>\n");
	if (!st)
		st = chart_categories(b, t, n);
	if (!st)
		st = chart_progress(b, t, n);
	ADD("<h2>Tasks</h2>\n<table><tr><th>task</th><th>level</th><th>category</th><th>status</"
	    "th><th>speedup</th>"
	    "<th>95%% interval</th><th>clock</th><th>run</th><th>reason</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		ADD("<tr><td>");
		ESC(t[i].name);
		ADD("</td><td class=\"num\">%d</td><td>", t[i].level);
		ESC(t[i].category);
		ADD("</td><td class=\"%s\">", t[i].correct ? "pass" : "fail");
		ESC(t[i].status);
		if (t[i].correct && t[i].speedup > 0)
			ADD("</td><td class=\"num\">%.3fx</td><td>%.3f-%.3f</td><td>", t[i].speedup, t[i].lo,
			    t[i].hi);
		else
			ADD("</td><td class=\"num\">-</td><td>-</td><td>");
		ESC(t[i].clock);
		ADD("</td><td class=\"num\">%lld</td><td>", (long long)t[i].run_id);
		ESC(t[i].reason);
		ADD("</td></tr>\n");
	}
	ADD("</table>\n");
#undef ADD
#undef ESC
	if (!st)
		st = kf_html_end(b);
	return st;
}

enum kf_status kf_bench_reports_write(const char *out_dir, const struct kf_bench_info *info,
				      const struct kf_bench_task *t, size_t n,
				      const struct kf_bench_metrics *m, size_t n_m, struct kf_buf *json,
				      struct kf_err *err)
{
	static const char *const names[] = {"bench.json", "bench.md", "bench.csv", "bench.html"};
	enum kf_status st = kf_mkdir_p(out_dir, 0777, err);
	for (size_t i = 0; i < KF_ARRAY_SIZE(names) && !st; i++) {
		struct kf_buf b = KF_BUF_INIT(BENCH_REPORT_MAX);
		char path[PATH_MAX];
		if (i == 0)
			st = kf_bench_render_json(&b, info, t, n, m, n_m);
		else if (i == 1)
			st = kf_bench_render_md(&b, info, t, n, m, n_m);
		else if (i == 2)
			st = kf_bench_render_csv(&b, t, n);
		else
			st = kf_bench_render_html(&b, info, t, n, m, n_m);
		if (st) {
			kf_err_set(err, st, "cannot render '%s': %s", names[i], kf_status_name(st));
		} else {
			snprintf(path, sizeof(path), "%s/%s", out_dir, names[i]);
			st = kf_write_file_atomic(path, b.data, b.len, err);
		}
		if (!st && i == 0 && json)
			st = kf_buf_add(json, b.data, b.len);
		kf_buf_release(&b);
	}
	return st;
}
