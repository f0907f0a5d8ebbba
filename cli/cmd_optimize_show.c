/* kforge optimize's rendering (cli/cmd_optimize.h): the live status line and the final summary of a run,
 * as text or one JSON document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd_optimize.h"

void kf_cli_optimize_progress(void *ctx, const struct kf_optimize_progress *p)
{
	struct kf_cli_live *l = ctx;
	if (p->warning) {
		/* a warning is a diagnostic: stderr, whatever the terminal */
		fprintf(stderr, "%swarning: %s\n", l->shown ? "\r\033[K" : "", p->warning);
	}
	if (!l->tty)
		return;
	int64_t failed = 0;
	for (int i = 1; i <= KF_VERDICT_COUNT; i++)
		failed += p->by_verdict[i];
	char best[96];
	if (p->best_speedup > 0)
		snprintf(best, sizeof(best), "best %.2fx [%.2f, %.2f] (%s)", p->best_speedup, p->best_lo,
			 p->best_hi, l->clock);
	else
		snprintf(best, sizeof(best), "no improvement yet");
	char trouble[64] = "";
	if (p->calls_failed || p->replies_unusable)
		snprintf(trouble, sizeof(trouble), " (%lld failed, %lld unusable)",
			 (long long)p->calls_failed, (long long)p->replies_unusable);
	fprintf(
	    stderr,
	    "\r\033[Krun %lld: %lld calls%s, %lld candidates (%lld pass, %lld rejected), %s, $%.4f, %.0f s",
	    (long long)p->run_id, (long long)p->calls, trouble, (long long)p->candidates,
	    (long long)p->by_verdict[KF_VERDICT_PASS], (long long)failed, best, p->spend_usd, p->elapsed_s);
	l->shown = true;
}

/* The best candidate against each of the task's baselines, as JSON and as text lines. */
static cJSON *vs_json(const struct kf_optimize_result *r)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < r->n_baselines; i++) {
		const struct kf_kb_vs *v = &r->baselines[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", v->name);
		cJSON_AddStringToObject(j, "kind", v->library ? "library" : "kernel");
		cJSON_AddStringToObject(j, "status", v->status);
		cJSON_AddStringToObject(j, "reason", v->reason);
		if (v->n_timed) {
			cJSON_AddNumberToObject(j, "speedup", v->speedup);
			cJSON_AddNumberToObject(j, "speedup_lo", v->lo);
			cJSON_AddNumberToObject(j, "speedup_hi", v->hi);
			cJSON_AddBoolToObject(j, "significant", v->significant);
			cJSON_AddStringToObject(j, "method", v->method);
			cJSON_AddNumberToObject(j, "median_ms", v->median_ms);
		}
		cJSON_AddItemToArray(a, j);
	}
	return a;
}

static void vs_print(const struct kf_optimize_result *r)
{
	for (size_t i = 0; i < r->n_baselines; i++) {
		const struct kf_kb_vs *v = &r->baselines[i];
		if (v->n_timed)
			printf("vs %s (%s): %.3fx (95%% CI %.3f-%.3f, %s clock%s%s)\n", v->name,
			       v->library ? "library" : "kernel", v->speedup, v->lo, v->hi, r->clock,
			       v->significant ? ", significant" : ", not significant",
			       strcmp(v->method, "chained") ? "" : "; chained through the reference's time");
		else
			printf("vs %s (%s): %s: %s\n", v->name, v->library ? "library" : "kernel", v->status,
			       v->reason);
	}
}

void kf_cli_optimize_summary(const struct kf_optimize_result *r, const char *md, const char *html, bool json)
{
	if (json) {
		cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "run_id", (double)r->run_id);
		cJSON_AddStringToObject(o, "status", r->status);
		cJSON_AddBoolToObject(o, "improved", r->improved);
		cJSON_AddBoolToObject(o, "significant", r->significant);
		cJSON_AddStringToObject(o, "clock", r->clock);
		if (r->best_candidate_id) {
			cJSON_AddNumberToObject(o, "best_candidate_id", (double)r->best_candidate_id);
			cJSON_AddNumberToObject(o, "best_speedup", r->best_speedup);
			cJSON_AddNumberToObject(o, "best_speedup_lo", r->best_lo);
			cJSON_AddNumberToObject(o, "best_speedup_hi", r->best_hi);
			cJSON_AddNumberToObject(o, "noise_band", r->best_band);
		} else {
			cJSON_AddNullToObject(o, "best_candidate_id");
		}
		cJSON_AddItemToObject(o, "baselines", vs_json(r));
		if (r->best_baseline >= 0)
			cJSON_AddStringToObject(o, "best_baseline", r->baselines[r->best_baseline].name);
		else
			cJSON_AddNullToObject(o, "best_baseline");
		cJSON_AddNumberToObject(o, "calls", (double)r->calls);
		cJSON_AddNumberToObject(o, "calls_failed", (double)r->calls_failed);
		cJSON_AddNumberToObject(o, "replies_unusable", (double)r->replies_unusable);
		cJSON *fk = cJSON_AddObjectToObject(o, "failures"),
		      *uk = cJSON_AddObjectToObject(o, "unusable");
		for (size_t i = 0; i < r->n_failures; i++)
			cJSON_AddNumberToObject(fk, r->failures[i].kind, (double)r->failures[i].n);
		for (size_t i = 0; i < r->n_unusable; i++)
			cJSON_AddNumberToObject(uk, r->unusable[i].kind, (double)r->unusable[i].n);
		cJSON_AddNumberToObject(o, "strategies", r->n_strategies);
		cJSON_AddStringToObject(o, "stop_reason", r->stop_reason);
		if (r->warning[0])
			cJSON_AddStringToObject(o, "warning", r->warning);
		cJSON_AddNumberToObject(o, "candidates", (double)r->candidates);
		cJSON_AddNumberToObject(o, "verified", (double)r->verified);
		for (int i = 0; i < KF_VERDICT_COUNT; i++)
			cJSON_AddNumberToObject(v, kf_verdict_name((enum kf_verdict)i),
						(double)r->by_verdict[i]);
		cJSON_AddNumberToObject(v, "parse_error", (double)r->by_verdict[KF_VERDICT_COUNT]);
		cJSON_AddItemToObject(o, "by_verdict", v);
		cJSON_AddNumberToObject(o, "spend_usd", r->spend_usd);
		cJSON_AddNumberToObject(o, "tokens_in", (double)r->tokens_in);
		cJSON_AddNumberToObject(o, "tokens_out", (double)r->tokens_out);
		cJSON_AddNumberToObject(o, "tokens_cached", (double)r->tokens_cached);
		cJSON_AddNumberToObject(o, "tokens_reasoning", (double)r->tokens_reasoning);
		cJSON_AddNumberToObject(o, "elapsed_s", r->elapsed_s);
		cJSON_AddStringToObject(o, "best_path", r->best_path);
		cJSON_AddStringToObject(o, "report_md", md);
		cJSON_AddStringToObject(o, "report_html", html);
		char *s = cJSON_Print(o);
		puts(s);
		free(s);
		cJSON_Delete(o);
		return;
	}
	printf("run %lld: %s; %lld calls, %lld candidates (the reference not counted), %lld verified, $%.4f, "
	       "%.1f s\n",
	       (long long)r->run_id, r->status, (long long)r->calls, (long long)r->candidates,
	       (long long)r->verified, r->spend_usd, r->elapsed_s);
	if (r->calls_failed || r->replies_unusable) {
		printf("trouble: %lld failed calls", (long long)r->calls_failed);
		for (size_t i = 0; i < r->n_failures; i++)
			printf("%s%lld %s", i ? ", " : " (", (long long)r->failures[i].n,
			       r->failures[i].kind);
		printf("%s; %lld unusable replies", r->n_failures ? ")" : "", (long long)r->replies_unusable);
		for (size_t i = 0; i < r->n_unusable; i++)
			printf("%s%lld %s", i ? ", " : " (", (long long)r->unusable[i].n,
			       r->unusable[i].kind);
		printf("%s\n", r->n_unusable ? ")" : "");
	}
	if (r->stop_reason[0])
		printf("stopped: %s\n", r->stop_reason);
	if (r->improved)
		printf("improved: best candidate %lld is %.3fx faster than the reference (95%% CI %.3f-%.3f, "
		       "%s clock%s)\n",
		       (long long)r->best_candidate_id, r->best_speedup, r->best_lo, r->best_hi, r->clock,
		       r->significant ? ", significant" : ", not significant");
	else if (r->best_candidate_id && r->best_speedup > 1.0)
		printf(
		    "no significant improvement: the best verified candidate (%lld) is %.3fx the reference "
		    "(95%% CI %.3f-%.3f, %s clock), inside the A/A noise band of +-%.1f%%; best.cu %s\n",
		    (long long)r->best_candidate_id, r->best_speedup, r->best_lo, r->best_hi, r->clock,
		    r->best_band * 100.0,
		    r->best_path[0] ? "written (--keep-best)" : "not written (--keep-best writes it)");
	else if (r->best_candidate_id)
		printf("no verified improvement: the best verified candidate (%lld) is %.3fx the reference "
		       "(%s clock)\n",
		       (long long)r->best_candidate_id, r->best_speedup, r->clock);
	else if (r->verified)
		printf(
		    "no verified improvement: %lld of %lld candidates passed verification, none faster than "
		    "the reference\n",
		    (long long)r->verified, (long long)r->candidates);
	else
		printf("no verified improvement: no candidate passed verification\n");
	if (!strcmp(r->clock, "model"))
		printf("clock: model (the GPU cost model's predictions from instrumented cpu runs, not "
		       "measured on "
		       "a GPU; CPU times are in the report, labelled)\n");
	else if (!strcmp(r->clock, "cpu"))
		printf("clock: cpu (CPU times of the cpu backend, not GPU speed)\n");
	vs_print(r);
	if (r->best_path[0])
		printf("best kernel: %s\n", r->best_path);
	if (md[0])
		printf("report: %s\n", md);
	if (html[0])
		printf("report: %s\n", html);
}
