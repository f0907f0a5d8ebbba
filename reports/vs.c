/* A kernel against its task's baselines in the run report (reports/vs_int.h): the speedup over each
 * baseline (baseline time / kernel time) with its interval and significance, aggregated over the timing
 * shapes and per shape, and what became of a baseline that was not timed (a library call on the cpu
 * backend is unavailable, with the reason). CPU-clock ratios are labelled so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/vs_int.h"

#define VS_MAX_ROWS 512

struct vs_load {
	struct kf_report_vs *out;
	size_t cap;
	bool oom;
};

static char *dup0(const char *s)
{
	return kf_strdup(s ? s : "");
}

static int on_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct vs_load *x = ctx;
	struct kf_report_vs *o = x->out;
	for (size_t i = 0; i < t->n_baselines && o->n_rows < VS_MAX_ROWS; i++) {
		const struct kf_kb_timing_baseline *b = &t->baselines[i];
		struct kf_report_vs_row *r;
		if (o->n_rows == x->cap) {
			size_t cap = x->cap ? 2 * x->cap : 8;
			struct kf_report_vs_row *p = realloc(o->rows, cap * sizeof(*p));
			if (!p) {
				x->oom = true;
				return 1;
			}
			o->rows = p;
			x->cap = cap;
		}
		r = &o->rows[o->n_rows++];
		memset(r, 0, sizeof(*r));
		r->shape = dup0(t->shape);
		r->name = dup0(b->name);
		r->status = dup0(b->status);
		r->reason = dup0(b->reason);
		r->method = dup0(b->method);
		snprintf(r->clock, sizeof(r->clock), "%s", t->clock ? t->clock : "");
		r->library = b->kind && !strcmp(b->kind, "library");
		r->significant = b->significant;
		r->median_ms = b->median_ms;
		r->speedup = b->speedup;
		r->lo = b->speedup_ci_lo;
		r->hi = b->speedup_ci_hi;
		if (!r->shape || !r->name || !r->status || !r->reason || !r->method)
			x->oom = true;
	}
	return x->oom;
}

void kf_report_vs_release(struct kf_report_vs *v)
{
	for (size_t i = 0; i < v->n_rows; i++) {
		free(v->rows[i].shape);
		free(v->rows[i].name);
		free(v->rows[i].status);
		free(v->rows[i].reason);
		free(v->rows[i].method);
	}
	free(v->rows);
	memset(v, 0, sizeof(*v));
	v->best = -1;
}

enum kf_status kf_report_vs_load(struct kf_kb *kb, int64_t cand_id, struct kf_report_vs *out,
				 struct kf_err *err)
{
	struct vs_load x = {out, 0, false};
	enum kf_status st;
	memset(out, 0, sizeof(*out));
	out->best = -1;
	if (cand_id <= 0)
		return KF_OK;
	if ((st = kf_kb_timings_each(kb, 0, cand_id, on_timing, &x, err)) ||
	    (st = kf_kb_candidate_vs(kb, cand_id, out->v, KF_ARRAY_SIZE(out->v), &out->n, err)))
		return st;
	if (x.oom)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory reading the baselines");
	out->best = kf_kb_vs_best(out->v, out->n);
	return KF_OK;
}

const char *kf_report_vs_word(bool library)
{
	return library ? "library" : "baseline";
}

void kf_report_vs_summary(const struct kf_report_vs *v, bool cpu, char *buf, size_t n)
{
	const struct kf_kb_vs *b = v->best >= 0 ? &v->v[v->best] : NULL;
	buf[0] = 0;
	if (!b)
		return;
	snprintf(buf, n, "vs %s (%s): %.3fx (95%% interval %.3f-%.3f), %s%s", kf_report_vs_word(b->library),
		 b->name, b->speedup, b->lo, b->hi,
		 b->significant ? "significantly faster" : "not significantly faster",
		 cpu ? " (CPU clock: not GPU speed)" : "");
}

static const char *how(const char *method)
{
	return !strcmp(method, "chained")       ? "chained through the reference (timed once per run)"
	       : !strcmp(method, "interleaved") ? "timed beside the kernel"
						: "";
}

/* ---- Markdown ---- */

static enum kf_status md_cell(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_adds(b, " ");
	if (!st)
		st = kf_md_escape_cell(b, s);
	if (!st)
		st = kf_buf_adds(b, " |");
	return st;
}

enum kf_status kf_report_vs_md(struct kf_buf *b, const struct kf_report_vs *v, bool cpu)
{
	enum kf_status st = KF_OK;
	char line[400];
	if (!v->n)
		return KF_OK;
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define CELL(s) KF_BUF_APPLY(st, md_cell, b, (s))
	ADD("## Against the task's baselines\n\n");
	kf_report_vs_summary(v, cpu, line, sizeof(line));
	if (line[0])
		ADD("**%s.**\n\n", line);
	ADD("Speedup = the baseline's time / the kernel's (above 1: the kernel is faster); the geometric "
	    "mean "
	    "over the timing shapes, with the widest interval.%s\n\n",
	    cpu ? " These are CPU-clock ratios of the cpu backend, not GPU speed." : "");
	ADD("| baseline | kind | status | speedup | 95%% interval | significant | baseline ms | how |\n"
	    "|---|---|---|---:|---|---|---:|---|\n");
	for (size_t i = 0; i < v->n; i++) {
		const struct kf_kb_vs *x = &v->v[i];
		ADD("|");
		CELL(x->name);
		CELL(x->library ? "library" : "kernel");
		CELL(x->status);
		if (x->n_timed) {
			ADD(" %.3fx | %.3f-%.3f | %s | %.4g |", x->speedup, x->lo, x->hi,
			    x->significant ? "yes" : "no", x->median_ms);
			CELL(how(x->method));
		} else {
			ADD(" - | - | - | - |");
			CELL(x->reason);
		}
		ADD("\n");
	}
	if (v->n_rows > v->n) { /* more than one timing shape: each one's own figures */
		ADD("\n| timing shape | baseline | speedup | 95%% interval | significant | baseline ms | "
		    "clock "
		    "|\n|---|---|---:|---|---|---:|---|\n");
		for (size_t i = 0; i < v->n_rows; i++) {
			const struct kf_report_vs_row *r = &v->rows[i];
			if (strcmp(r->status, "timed"))
				continue;
			ADD("|");
			CELL(r->shape);
			CELL(r->name);
			ADD(" %.3fx | %.3f-%.3f | %s | %.4g |", r->speedup, r->lo, r->hi,
			    r->significant ? "yes" : "no", r->median_ms);
			CELL(r->clock);
			ADD("\n");
		}
	}
	ADD("\n");
#undef ADD
#undef CELL
	return st;
}

/* ---- HTML ---- */

enum kf_status kf_report_vs_html(struct kf_buf *b, const struct kf_report_vs *v, bool cpu)
{
	enum kf_status st = KF_OK;
	char line[400];
	struct kf_bar bars[64];
	size_t n_bars = 0;
	if (!v->n)
		return KF_OK;
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define ESC(s) KF_BUF_APPLY(st, kf_html_escape, b, (s))
	ADD("<h2>Against the task's baselines</h2>\n");
	kf_report_vs_summary(v, cpu, line, sizeof(line));
	if (line[0]) {
		ADD("<p class=\"%s\"><strong>", v->v[v->best].significant ? "pass" : "fail");
		ESC(line);
		ADD("</strong></p>\n");
	}
	ADD("<p class=\"note\">Speedup = the baseline's time / the kernel's (above 1: the kernel is "
	    "faster).%s</p>\n",
	    cpu ? " CPU-clock ratios of the cpu backend, not GPU speed." : "");
	for (size_t i = 0; i < v->n && n_bars < KF_ARRAY_SIZE(bars); i++)
		if (v->v[i].n_timed)
			bars[n_bars++] = (struct kf_bar){
			    v->v[i].name, v->v[i].speedup, true,
			    v->v[i].lo,   v->v[i].hi,      v->v[i].significant ? 1 : v->v[i].hi < 1 ? 2 : 0};
	if (n_bars) {
		struct kf_chart_opts o = {.title = cpu ? "Speedup over each baseline (CPU times)"
						       : "Speedup over each baseline",
					  .ylabel = "speedup (x)",
					  .ref_line = true,
					  .ref_y = 1.0};
		if (!st)
			st = kf_svg_bar_chart(b, bars, n_bars, &o);
	}
	ADD("<table><tr><th>baseline</th><th>kind</th><th>status</th><th>speedup</th><th>95%% "
	    "interval</th><th>significant</th><th>baseline ms</th><th>how / why not</th></tr>\n");
	for (size_t i = 0; i < v->n; i++) {
		const struct kf_kb_vs *x = &v->v[i];
		ADD("<tr><td>");
		ESC(x->name);
		ADD("</td><td>%s</td><td class=\"%s\">", x->library ? "library" : "kernel",
		    x->n_timed ? "pass" : "fail");
		ESC(x->status);
		if (x->n_timed)
			ADD("</td><td class=\"num\">%.3fx</td><td>%.3f-%.3f</td><td>%s</td><td "
			    "class=\"num\">%.4g</td><td>%s",
			    x->speedup, x->lo, x->hi, x->significant ? "yes" : "no", x->median_ms,
			    how(x->method));
		else {
			ADD("</td><td>-</td><td>-</td><td>-</td><td>-</td><td>");
			ESC(x->reason);
		}
		ADD("</td></tr>\n");
	}
	ADD("</table>\n");
#undef ADD
#undef ESC
	return st;
}

/* ---- JSON ---- */

cJSON *kf_report_vs_json(const struct kf_report_vs *v)
{
	cJSON *o = cJSON_CreateObject(), *a, *s;
	if (!o)
		return NULL;
	if (v->best >= 0) {
		cJSON_AddStringToObject(o, "best", v->v[v->best].name);
		cJSON_AddStringToObject(o, "word", kf_report_vs_word(v->v[v->best].library));
	} else {
		cJSON_AddNullToObject(o, "best");
	}
	a = cJSON_AddArrayToObject(o, "baselines");
	for (size_t i = 0; a && i < v->n; i++) {
		const struct kf_kb_vs *x = &v->v[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", x->name);
		cJSON_AddStringToObject(j, "kind", x->library ? "library" : "kernel");
		cJSON_AddStringToObject(j, "status", x->status);
		cJSON_AddStringToObject(j, "reason", x->reason);
		if (x->n_timed) {
			cJSON_AddNumberToObject(j, "speedup", x->speedup);
			cJSON_AddNumberToObject(j, "ci_lo", x->lo);
			cJSON_AddNumberToObject(j, "ci_hi", x->hi);
			cJSON_AddBoolToObject(j, "significant", x->significant);
			cJSON_AddNumberToObject(j, "median_ms", x->median_ms);
			cJSON_AddStringToObject(j, "method", x->method);
			cJSON_AddNumberToObject(j, "shapes", (double)x->n_timed);
		}
		cJSON_AddItemToArray(a, j);
	}
	s = cJSON_AddArrayToObject(o, "shapes");
	for (size_t i = 0; s && i < v->n_rows; i++) {
		const struct kf_report_vs_row *r = &v->rows[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "shape", r->shape);
		cJSON_AddStringToObject(j, "name", r->name);
		cJSON_AddStringToObject(j, "status", r->status);
		cJSON_AddStringToObject(j, "clock", r->clock);
		if (!strcmp(r->status, "timed")) {
			cJSON_AddNumberToObject(j, "speedup", r->speedup);
			cJSON_AddNumberToObject(j, "ci_lo", r->lo);
			cJSON_AddNumberToObject(j, "ci_hi", r->hi);
			cJSON_AddBoolToObject(j, "significant", r->significant);
			cJSON_AddNumberToObject(j, "median_ms", r->median_ms);
			cJSON_AddStringToObject(j, "method", r->method);
		} else {
			cJSON_AddStringToObject(j, "reason", r->reason);
		}
		cJSON_AddItemToArray(s, j);
	}
	return o;
}
