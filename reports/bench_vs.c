/* The bench's comparison with what a user would otherwise run (reports/vs_int.h): beside fast_p against
 * each task's reference, fast_p and the geometric-mean speedup against each task's best baseline (the
 * tuned kernel or library call the best candidate is least faster than), over the tasks that have a
 * baseline their backend can run. Worded "vs library" when every such baseline is a library call. */
#include <stdio.h>
#include <string.h>

#include "reports/bench.h"
#include "reports/report.h"
#include "reports/vs_int.h"

#define VS_NOTE                                                                                              \
	"speedup = the best baseline's time / the kernel's (the best baseline is the one the kernel is "     \
	"least "                                                                                             \
	"faster than); fast_p counts tasks correct AND faster than p over the tasks with a baseline their "  \
	"backend can run (a library call is unavailable on the cpu backend), failures and missing included"

static void level_name(char *b, size_t n, int level)
{
	if (level)
		snprintf(b, n, "level %d", level);
	else
		snprintf(b, n, "all");
}

cJSON *kf_bench_vs_metrics_json(const struct kf_bench_metrics *m)
{
	cJSON *o = cJSON_CreateObject(), *f, *fs;
	char k[48];
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "word", kf_bench_base_word(m));
	cJSON_AddNumberToObject(o, "tasks", (double)m->n_base);
	cJSON_AddNumberToObject(o, "timed", (double)m->n_base_timed);
	cJSON_AddNumberToObject(o, "library", (double)m->n_base_library);
	f = cJSON_AddObjectToObject(o, "fast_p");
	fs = cJSON_AddObjectToObject(o, "fast_p_significant");
	for (size_t i = 0; f && fs && i < m->n_p; i++) {
		snprintf(k, sizeof(k), "%g", m->p[i]);
		cJSON_AddNumberToObject(f, k, m->fast_base[i]);
		cJSON_AddNumberToObject(fs, k, m->fast_base_sig[i]);
	}
	cJSON_AddNumberToObject(o, "geomean_speedup", m->geomean_base);
	cJSON_AddStringToObject(o, "note", VS_NOTE);
	return o;
}

void kf_bench_vs_task_json(cJSON *o, const struct kf_bench_task *t)
{
	if (t->has_base) {
		cJSON *j = cJSON_AddObjectToObject(o, "best_baseline");
		cJSON_AddStringToObject(j, "name", t->base_name);
		cJSON_AddStringToObject(j, "kind", t->base_library ? "library" : "kernel");
		cJSON_AddNumberToObject(j, "speedup", t->base_speedup);
		cJSON_AddNumberToObject(j, "ci_lo", t->base_lo);
		cJSON_AddNumberToObject(j, "ci_hi", t->base_hi);
		cJSON_AddBoolToObject(j, "significant", t->base_significant);
		cJSON_AddStringToObject(j, "method", t->base_method);
	} else {
		cJSON_AddNullToObject(o, "best_baseline");
		if (t->base_note[0])
			cJSON_AddStringToObject(o, "baseline_note", t->base_note);
	}
}

enum kf_status kf_bench_vs_csv(struct kf_buf *b, const struct kf_bench_task *t)
{
	enum kf_status st = kf_buf_addch(b, ',');
	if (!st)
		st = kf_csv_field(b, t->has_base ? t->base_name : "");
	if (!st && t->has_base)
		st = kf_buf_addf(b, ",%s,%.6g,%.6g,%.6g", t->base_library ? "library" : "kernel",
				 t->base_speedup, t->base_lo, t->base_hi);
	else if (!st)
		st = kf_buf_adds(b, ",,,,");
	return st;
}

enum kf_status kf_bench_vs_md(struct kf_buf *b, const struct kf_bench_task *t, size_t n,
			      const struct kf_bench_metrics *m, size_t n_m)
{
	enum kf_status st = KF_OK;
	char ln[32];
	if (!n_m || !m[0].n_base)
		return KF_OK;
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
	ADD("\n## vs %s: each task's best baseline\n\n", kf_bench_base_word(&m[0]));
	ADD("Baseline: " VS_NOTE ".\n\n");
	ADD("| | tasks with a baseline | timed | of them library calls | geomean speedup vs %s |\n"
	    "|---|---:|---:|---:|---:|\n",
	    kf_bench_base_word(&m[0]));
	for (size_t i = 0; i < n_m; i++) {
		level_name(ln, sizeof(ln), m[i].level);
		ADD("| %s | %zu | %zu | %zu | %.3fx over %zu |\n", ln, m[i].n_base, m[i].n_base_timed,
		    m[i].n_base_library, m[i].geomean_base, m[i].n_base_timed);
	}
	ADD("\n| p |");
	for (size_t k = 0; k < m[0].n_p; k++)
		ADD(" %g |", m[0].p[k]);
	ADD("\n|---|");
	for (size_t k = 0; k < m[0].n_p; k++)
		ADD("---:|");
	for (size_t i = 0; i < n_m; i++) {
		level_name(ln, sizeof(ln), m[i].level);
		ADD("\n| fast_p vs %s (%s) |", kf_bench_base_word(&m[i]), ln);
		for (size_t k = 0; k < m[i].n_p; k++)
			ADD(" %.3f |", m[i].fast_base[k]);
		ADD("\n| fast_p vs %s significant (%s) |", kf_bench_base_word(&m[i]), ln);
		for (size_t k = 0; k < m[i].n_p; k++)
			ADD(" %.3f |", m[i].fast_base_sig[k]);
	}
	ADD("\n\n| task | best baseline | kind | speedup vs it | 95%% interval | significant | how |\n"
	    "|---|---|---|---:|---|---|---|\n");
	for (size_t i = 0; i < n && !st; i++) {
		if (!kf_bench_base_eligible(&t[i]) && !t[i].base_note[0])
			continue;
		ADD("| ");
		KF_BUF_APPLY(st, kf_md_escape_cell, b, t[i].name);
		if (t[i].has_base) {
			ADD(" | ");
			KF_BUF_APPLY(st, kf_md_escape_cell, b, t[i].base_name);
			ADD(" | %s | %.3fx | %.3f-%.3f | %s | %s |\n",
			    t[i].base_library ? "library" : "kernel", t[i].base_speedup, t[i].base_lo,
			    t[i].base_hi, t[i].base_significant ? "yes" : "no",
			    !strcmp(t[i].base_method, "chained") ? "chained through the reference"
								 : "timed beside");
		} else {
			char note[161];
			snprintf(note, sizeof(note), "%s",
				 t[i].base_note[0] ? t[i].base_note
				 : t[i].correct    ? "no baseline timed"
						   : "not correct: not compared");
			ADD(" | - | - | - | - | - | ");
			KF_BUF_APPLY(st, kf_md_escape_cell, b, note);
			ADD(" |\n");
		}
	}
#undef ADD
	return st;
}

enum kf_status kf_bench_vs_html(struct kf_buf *b, const struct kf_bench_task *t, size_t n,
				const struct kf_bench_metrics *m, size_t n_m)
{
	enum kf_status st = KF_OK;
	char ln[32];
	if (!n_m || !m[0].n_base)
		return KF_OK;
#define ADD(...) KF_BUF_ADDF(st, b, __VA_ARGS__)
#define ESC(s) KF_BUF_APPLY(st, kf_html_escape, b, (s))
	ADD("<h2>vs %s: each task's best baseline</h2>\n<p class=\"note\">", kf_bench_base_word(&m[0]));
	ESC(VS_NOTE);
	ADD(".</p>\n<table><tr><th></th><th>tasks with a baseline</th><th>timed</th><th>library "
	    "calls</th><th>geomean speedup vs %s</th>",
	    kf_bench_base_word(&m[0]));
	for (size_t k = 0; k < m[0].n_p; k++)
		ADD("<th>fast_%g</th>", m[0].p[k]);
	ADD("</tr>\n");
	for (size_t i = 0; i < n_m; i++) {
		level_name(ln, sizeof(ln), m[i].level);
		ADD("<tr><th>vs %s (%s)</th><td class=\"num\">%zu</td><td class=\"num\">%zu</td><td "
		    "class=\"num\">%zu</td><td class=\"num\">%.3fx</td>",
		    kf_bench_base_word(&m[i]), ln, m[i].n_base, m[i].n_base_timed, m[i].n_base_library,
		    m[i].geomean_base);
		for (size_t k = 0; k < m[i].n_p; k++)
			ADD("<td class=\"num\">%.3f (%.3f significant)</td>", m[i].fast_base[k],
			    m[i].fast_base_sig[k]);
		ADD("</tr>\n");
	}
	ADD("</table>\n<table><tr><th>task</th><th>best baseline</th><th>kind</th><th>speedup vs "
	    "it</th><th>95%% interval</th><th>significant</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		if (!kf_bench_base_eligible(&t[i]) && !t[i].base_note[0])
			continue;
		ADD("<tr><td>");
		ESC(t[i].name);
		ADD("</td><td>");
		if (t[i].has_base) {
			ESC(t[i].base_name);
			ADD("</td><td>%s</td><td class=\"num\">%.3fx</td><td>%.3f-%.3f</td><td "
			    "class=\"%s\">%s</td>",
			    t[i].base_library ? "library" : "kernel", t[i].base_speedup, t[i].base_lo,
			    t[i].base_hi, t[i].base_significant ? "pass" : "fail",
			    t[i].base_significant ? "yes" : "no");
		} else {
			ADD("-</td><td colspan=\"4\">");
			ESC(t[i].base_note[0] ? t[i].base_note
			    : t[i].correct    ? "no baseline timed"
					      : "not correct: not compared");
			ADD("</td>");
		}
		ADD("</tr>\n");
	}
	ADD("</table>\n");
#undef ADD
#undef ESC
	return st;
}
