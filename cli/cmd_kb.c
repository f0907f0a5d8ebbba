/* kforge kb: the knowledge base from the command line: stats, list, show, search, export, import, merge
 * (spec/cli.md). Every subcommand takes --db FILE and --json (one document on stdout). Two hidden ones
 * serve the durability test: _stress records steps in a loop printing each committed id, _check runs the
 * integrity checks and looks for a list of ids. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "kb/kb.h"

static const char kb_help[] =
    "subcommands:\n"
    "  stats                          counts, tokens, spend, schema version\n"
    "  list [runs|candidates|wins|calls]  one line per record (default: runs); --run ID, --task NAME,\n"
    "                                 --limit N; calls: what each LLM call became, failures with reasons\n"
    "  show ID                        a candidate: source, lineage, verdicts, timings, the LLM exchange\n"
    "  show run:ID                    a run: settings, counters, its candidates\n"
    "  search TEXT                    full-text search over tasks and kernel sources/tags; --limit N\n"
    "  examples TASK                  the kernels a prompt for TASK would get; --arch ARCH, --limit K\n"
    "  export [--run ID] FILE         JSONL (what 'optimize --provider replay --replay FILE' reads); '-' "
    "stdout\n"
    "  import FILE                    add an export's records (deduplicated by content)\n"
    "  merge A.db B.db... -o OUT.db   a new database holding all of them; --force replaces OUT\n"
    "\noptions:\n"
    "  --db FILE    the database (default: $KFORGE_DB, then kforge.db)\n"
    "  --json       one JSON document on stdout\n";

struct kb_args {
	const char *db, *run, *task, *limit, *out, *arch;
	bool json, force;
	const char *pos[64];
	size_t n_pos;
};

static int parse_args(int argc, char **argv, struct kb_args *a)
{
	const struct kf_opt opts[] = {
	    {"db", true, &a->db, NULL},      {"run", true, &a->run, NULL},
	    {"task", true, &a->task, NULL},  {"limit", true, &a->limit, NULL},
	    {"out", true, &a->out, NULL},    {"arch", true, &a->arch, NULL},
	    {"json", false, NULL, &a->json}, {"force", false, NULL, &a->force},
	};
	char *args[256];
	int n = 0;
	if (argc > (int)KF_ARRAY_SIZE(args))
		return kf_cli_usage_error("kb", "too many arguments");
	/* "-o OUT" is merge's documented spelling; the shared parser knows long options only. */
	for (int i = 0; i < argc; i++)
		args[n++] = strcmp(argv[i], "-o") ? argv[i] : "--out";
	return kf_cli_parse("kb", n, args, opts, KF_ARRAY_SIZE(opts), a->pos, KF_ARRAY_SIZE(a->pos),
			    &a->n_pos);
}

static bool parse_id(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return false;
	*out = v;
	return true;
}

static int fail(const struct kf_err *err)
{
	kf_cli_error("%s", err->msg);
	return kf_status_exit_code(err->code);
}

static int open_db(const struct kb_args *a, unsigned flags, struct kf_kb **kb)
{
	struct kf_err err = KF_ERR_INIT;
	enum kf_status s = kf_kb_open(kf_cli_db_path(a->db), flags, kb, &err);
	/* A reader meeting an older schema migrates it (forward migrations apply on open) rather than
	 * refusing to show it. */
	if (s == KF_ERR_INVALID && (flags & KF_KB_READONLY))
		s = kf_kb_open(kf_cli_db_path(a->db), (flags & ~KF_KB_READONLY) | KF_KB_NOCREATE, kb, &err);
	if (s)
		return fail(&err);
	return 0;
}

static int print_json(cJSON *doc)
{
	char *text = doc ? cJSON_Print(doc) : NULL;
	cJSON_Delete(doc);
	if (!text) {
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	puts(text);
	cJSON_free(text);
	return 0;
}

static void fmt_time(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;
	if (t <= 0 || !gmtime_r(&s, &tm)) {
		snprintf(buf, n, "-");
		return;
	}
	strftime(buf, n, "%Y-%m-%d %H:%M:%SZ", &tm);
}

/* ---- stats ---- */

static int kb_stats(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_kb_stats s;
	struct kf_err err = KF_ERR_INIT;
	if (kf_kb_stats_get(kb, &s, &err))
		return fail(&err);
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "db", kf_cli_db_path(a->db));
		cJSON_AddNumberToObject(o, "schema_version", s.schema_version);
		cJSON_AddNumberToObject(o, "tasks", (double)s.n_tasks);
		cJSON_AddNumberToObject(o, "runs", (double)s.n_runs);
		cJSON_AddNumberToObject(o, "candidates", (double)s.n_candidates);
		cJSON_AddNumberToObject(o, "verified_candidates", (double)s.n_verified);
		cJSON_AddNumberToObject(o, "llm_calls", (double)s.n_llm_calls);
		cJSON_AddNumberToObject(o, "evaluations", (double)s.n_evaluations);
		cJSON_AddNumberToObject(o, "timings", (double)s.n_timings);
		cJSON_AddNumberToObject(o, "wins", (double)s.n_wins);
		cJSON_AddNumberToObject(o, "tokens_in", (double)s.tokens_in);
		cJSON_AddNumberToObject(o, "tokens_out", (double)s.tokens_out);
		cJSON_AddNumberToObject(o, "spend_usd", s.spend_usd);
		cJSON_AddNumberToObject(o, "file_bytes", (double)s.file_bytes);
		return print_json(o);
	}
	printf("database        %s (schema %d, %" PRId64 " bytes)\n", kf_cli_db_path(a->db), s.schema_version,
	       s.file_bytes);
	printf("tasks           %" PRId64 "\n", s.n_tasks);
	printf("runs            %" PRId64 "\n", s.n_runs);
	printf("candidates      %" PRId64 " (%" PRId64 " verified)\n", s.n_candidates, s.n_verified);
	printf("evaluations     %" PRId64 "\n", s.n_evaluations);
	printf("timings         %" PRId64 "\n", s.n_timings);
	printf("wins            %" PRId64 "\n", s.n_wins);
	printf("llm calls       %" PRId64 " (%" PRId64 " tokens in, %" PRId64 " out)\n", s.n_llm_calls,
	       s.tokens_in, s.tokens_out);
	printf("spend           $%.4f\n", s.spend_usd);
	return 0;
}

/* ---- list ---- */

struct list_ctx {
	struct kf_kb *kb;
	cJSON *arr;
	int64_t limit, n;
	int64_t task_filter; /* for candidates: only this task (0: any) */
};

static const char *task_name_of(struct kf_kb *kb, int64_t task_id, char *buf, size_t n);

static int task_name_cb(void *ctx, const struct kf_kb_task *t)
{
	char **p = ctx;
	snprintf(p[0], (size_t)(uintptr_t)p[1], "%s", t->name);
	return 0;
}

static const char *task_name_of(struct kf_kb *kb, int64_t task_id, char *buf, size_t n)
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
	fmt_time(r->started_at, started, sizeof(started));
	printf("%6" PRId64 "  %-24.24s %-8.8s %-12.12s %-20.20s %-11.11s %6" PRId64 " %6" PRId64
	       " %9.4f  %s\n",
	       r->id, task_name_of(l->kb, r->task_id, tn, sizeof(tn)), r->strategy, r->provider, r->model,
	       r->status, r->n_calls, r->n_candidates, r->spend_usd, started);
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
	       task_name_of(l->kb, c->task_id, tn, sizeof(tn)), c->run_id, par, c->generation, c->edit_kind,
	       sp, c->source_hash, *c->tags ? c->tags : "-");
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
	fmt_time(w->updated_at, at, sizeof(at));
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

static int kb_list(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct list_ctx l = {kb, NULL, 0, 0, 0};
	const char *what = a->n_pos > 1 ? a->pos[1] : "runs";
	int64_t run_id = 0, task_id = 0;
	enum kf_status s;

	if (a->n_pos > 2)
		return kf_cli_usage_error("kb", "'kb list' takes one of runs, candidates, wins, calls");
	if (a->limit && !parse_id(a->limit, &l.limit))
		return kf_cli_usage_error("kb", "--limit needs a positive number, not '%s'", a->limit);
	if (a->run && !parse_id(a->run, &run_id))
		return kf_cli_usage_error("kb", "--run needs a run id, not '%s'", a->run);
	if (a->task && (s = kf_kb_task_find(kb, a->task, &task_id, &err)))
		return fail(&err);
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
		return fail(&err);
	}
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "list", what);
		cJSON_AddItemToObject(o, "items", l.arr);
		return print_json(o);
	}
	if (l.n == 0)
		printf("no %s\n", what);
	return 0;
}

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
	printf("task       %s (#%" PRId64 ")\n", task_name_of(s->kb, c->task_id, tn, sizeof(tn)), c->task_id);
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
		return fail(&err);
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
		return print_json(s.doc);
	}
	free(s.source);
	return 0;
err:
	free(s.source);
	cJSON_Delete(s.doc);
	return fail(&err);
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
	fmt_time(r->started_at, t0, sizeof(t0));
	fmt_time(r->finished_at, t1, sizeof(t1));
	printf("run        %" PRId64 " (%s)\n", r->id, r->uid);
	printf("task       %s (#%" PRId64 ")\n", task_name_of(s->kb, r->task_id, tn, sizeof(tn)), r->task_id);
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
	struct list_ctx l = {kb, NULL, 0, 0, 0};
	s.kb = kb;
	s.json = a->json;
	if (a->json)
		s.doc = cJSON_CreateObject();
	if (kf_kb_run_get(kb, id, show_run_cb, &s, &err)) {
		cJSON_Delete(s.doc);
		return fail(&err);
	}
	if (a->json)
		l.arr = cJSON_AddArrayToObject(s.doc, "candidates");
	if (kf_kb_candidates_each(kb, id, list_cand, &l, &err)) {
		cJSON_Delete(s.doc);
		return fail(&err);
	}
	if (a->json)
		return print_json(s.doc);
	if (!l.n)
		printf("no candidates\n");
	return 0;
}

static int kb_show(struct kf_kb *kb, const struct kb_args *a)
{
	const char *arg = a->n_pos == 2 ? a->pos[1] : NULL;
	int64_t id;
	if (!arg)
		return kf_cli_usage_error("kb", "'kb show' needs one candidate id (or run:ID)");
	if (!strncmp(arg, "run:", 4)) {
		if (!parse_id(arg + 4, &id))
			return kf_cli_usage_error("kb", "'%s' is not a run id", arg);
		return show_run(kb, id, a);
	}
	if (!parse_id(arg, &id))
		return kf_cli_usage_error("kb", "'%s' is not a candidate id", arg);
	return show_candidate(kb, id, a);
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

static int kb_search(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct search_ctx s = {0};
	struct kf_buf text = KF_BUF_INIT(4096);
	int64_t limit = 10;
	if (a->n_pos < 2)
		return kf_cli_usage_error("kb", "'kb search' needs TEXT");
	if (a->limit && !parse_id(a->limit, &limit))
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
		return fail(&err);
	}
	if (a->json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "query", text.data);
		cJSON_AddItemToObject(o, "hits", s.arr);
		kf_buf_release(&text);
		return print_json(o);
	}
	if (!s.n)
		printf("no matches for '%s'\n", text.data);
	kf_buf_release(&text);
	return 0;
}

static int kb_examples(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_example *ex;
	size_t n;
	int64_t k = 5;
	if (a->n_pos != 2)
		return kf_cli_usage_error("kb", "'kb examples' needs one task name");
	if (a->limit && !parse_id(a->limit, &k))
		return kf_cli_usage_error("kb", "--limit needs a positive number, not '%s'", a->limit);
	if (kf_kb_examples_for(kb, a->pos[1], a->arch, (size_t)k, &ex, &n, &err))
		return fail(&err);
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
		return print_json(o);
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

/* ---- export, import, merge ---- */

static int kb_export(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	int64_t run_id = 0;
	if (a->n_pos != 2)
		return kf_cli_usage_error("kb", "'kb export' needs one FILE ('-' for stdout)");
	if (a->run && !parse_id(a->run, &run_id))
		return kf_cli_usage_error("kb", "--run needs a run id, not '%s'", a->run);
	if (kf_kb_export(kb, run_id, a->pos[1], &err))
		return fail(&err);
	if (a->json && strcmp(a->pos[1], "-")) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "file", a->pos[1]);
		if (run_id)
			cJSON_AddNumberToObject(o, "run", (double)run_id);
		return print_json(o);
	}
	if (strcmp(a->pos[1], "-"))
		fprintf(stderr, "exported to '%s'\n", a->pos[1]);
	return 0;
}

static cJSON *stats_json(const struct kf_kb_import_stats *s)
{
	cJSON *o = cJSON_CreateObject(), *d;
	cJSON_AddNumberToObject(o, "tasks", (double)s->tasks);
	cJSON_AddNumberToObject(o, "runs", (double)s->runs);
	cJSON_AddNumberToObject(o, "candidates", (double)s->candidates);
	cJSON_AddNumberToObject(o, "llm_calls", (double)s->llm_calls);
	cJSON_AddNumberToObject(o, "evaluations", (double)s->evaluations);
	cJSON_AddNumberToObject(o, "timings", (double)s->timings);
	d = cJSON_AddObjectToObject(o, "duplicates");
	cJSON_AddNumberToObject(d, "tasks", (double)s->dup_tasks);
	cJSON_AddNumberToObject(d, "runs", (double)s->dup_runs);
	cJSON_AddNumberToObject(d, "candidates", (double)s->dup_candidates);
	return o;
}

static void print_import_stats(const char *verb, const struct kf_kb_import_stats *s)
{
	printf("%s %" PRId64 " tasks, %" PRId64 " runs, %" PRId64 " candidates, %" PRId64
	       " llm calls, %" PRId64 " evaluations, %" PRId64 " timings\n",
	       verb, s->tasks, s->runs, s->candidates, s->llm_calls, s->evaluations, s->timings);
	printf("already present: %" PRId64 " tasks, %" PRId64 " runs, %" PRId64 " candidates\n", s->dup_tasks,
	       s->dup_runs, s->dup_candidates);
}

static int kb_import(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_import_stats st;
	if (a->n_pos != 2)
		return kf_cli_usage_error("kb", "'kb import' needs one FILE");
	if (kf_kb_import(kb, a->pos[1], &st, &err)) {
		kf_cli_error("%s", err.msg);
		/* A malformed file is bad input (2), not an internal error. */
		return err.code == KF_ERR_INVALID || err.code == KF_ERR_PARSE || err.code == KF_ERR_LIMIT
			   ? KF_EXIT_USAGE
			   : kf_status_exit_code(err.code);
	}
	if (a->json)
		return print_json(stats_json(&st));
	print_import_stats("imported", &st);
	return 0;
}

static int kb_merge(const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_import_stats st;
	if (!a->out)
		return kf_cli_usage_error("kb", "'kb merge' needs -o OUT.db");
	if (a->n_pos < 2)
		return kf_cli_usage_error("kb", "'kb merge' needs at least one database to read");
	if (kf_kb_merge(a->pos + 1, a->n_pos - 1, a->out, a->force, &st, &err)) {
		kf_cli_error("%s", err.msg);
		return err.code == KF_ERR_INVALID || err.code == KF_ERR_NOTFOUND
			   ? KF_EXIT_USAGE
			   : kf_status_exit_code(err.code);
	}
	if (a->json) {
		cJSON *o = stats_json(&st);
		cJSON_AddStringToObject(o, "out", a->out);
		return print_json(o);
	}
	print_import_stats("merged", &st);
	printf("wrote '%s'\n", a->out);
	return 0;
}

/* ---- hidden: durability test helpers ---- */

static int last_cand(void *ctx, const struct kf_kb_candidate *c)
{
	*(int64_t *)ctx = c->id;
	return 0;
}

/* Records candidate+evaluation steps and llm calls in a loop, printing each committed candidate id on
 * stdout (flushed) only after its commit returned: an id printed is an acknowledged record. With --run it
 * resumes that run; --limit bounds the steps (default: until killed). */
static int kb_stress(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_task t = {0};
	struct kf_kb_run r = {0};
	int64_t task_id, run_id = 0, limit = 0, parent = 0;
	char src[512];

	if (a->limit && !parse_id(a->limit, &limit))
		return kf_cli_usage_error("kb", "--limit needs a positive number");
	if (a->run) {
		if (!parse_id(a->run, &run_id))
			return kf_cli_usage_error("kb", "--run needs a run id");
		if (kf_kb_run_set_status(kb, run_id, "running", &err))
			return fail(&err);
		/* Resume: the state to rebuild is the last recorded candidate, the parent of the next one. */
		if (kf_kb_candidates_each(kb, run_id, last_cand, &parent, &err))
			return fail(&err);
		printf("run %" PRId64 " resumed after candidate %" PRId64 "\n", run_id, parent);
		fflush(stdout);
	} else {
		t.name = "stress";
		t.hash = "0000000000000000000000000000000000000000000000000000000000000000";
		t.category = "test";
		t.description = "records written in a loop by the durability test";
		if (kf_kb_task_put(kb, &t, &task_id, &err))
			return fail(&err);
		r.task_id = task_id;
		r.strategy = "stress";
		if (kf_kb_run_begin(kb, &r, &run_id, &err))
			return fail(&err);
		printf("run %" PRId64 "\n", run_id);
		fflush(stdout);
	}
	for (int64_t i = 0; !limit || i < limit; i++) {
		struct kf_kb_llm_call call = {0};
		struct kf_kb_candidate c = {0};
		struct kf_kb_eval e = {0};
		struct kf_kb_timing tm = {0};
		int64_t call_id, cid;
		if (kf_cli_interrupted)
			break;
		call.run_id = run_id;
		call.seq = -1;
		call.provider = "stress";
		call.prompt = "[{\"role\":\"user\",\"content\":\"make it faster\"}]";
		call.response = "```cuda\n__global__ void k(float *x) {}\n```";
		call.tokens_in = 100;
		call.tokens_out = 50;
		call.cost_usd = 0.001;
		if (kf_kb_record_llm_call(kb, &call, &call_id, NULL, &err))
			return fail(&err);
		snprintf(src, sizeof(src),
			 "// step %" PRId64 " at %.6f\n__global__ void k(float *x, int n) {\n"
			 "  __shared__ float t[32][33];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
			 "  if (i < n) x[i] = __expf(x[i]) + %" PRId64 ";\n}\n",
			 i, kf_now_ms(), i);
		c.run_id = run_id;
		c.parent_id = parent;
		c.llm_call_id = call_id;
		c.generation = (int)(i / 8);
		c.edit_kind = parent ? "diff" : "seed";
		c.source = src;
		e.backend = "cpu";
		e.arch = "cpu";
		e.dtype = "f32";
		e.toolchain = "stress";
		e.verdict = (i % 3) ? "pass" : "wrong_output";
		e.speedup = (i % 3) ? 1.0 + (double)(i % 97) / 10.0 : 0;
		tm.shape = "{\"N\":1024}";
		tm.clock = "cpu";
		tm.median_ms = 1.0;
		tm.speedup = e.speedup;
		if (kf_kb_record_step(kb, &c, &e, &tm, 1, &cid, NULL, &err))
			return fail(&err);
		printf("%" PRId64 "\n", cid);
		fflush(stdout);
		parent = cid;
	}
	if (kf_kb_run_set_status(kb, run_id, kf_cli_interrupted ? "interrupted" : "done", &err))
		return fail(&err);
	return kf_cli_interrupted ? KF_EXIT_INTERRUPTED : 0;
}

struct check_ctx {
	int64_t found;
};

static int found_cb(void *ctx, const struct kf_kb_candidate *c)
{
	((struct check_ctx *)ctx)->found = c->id;
	return 0;
}

/* Integrity and foreign-key checks, then (FILE given) every candidate id listed in FILE must exist.
 * Exit 0 when all hold, 1 otherwise. */
static int kb_check(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	int64_t n = 0, missing = 0;
	if (kf_kb_check(kb, &err)) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_FAILED;
	}
	if (a->n_pos > 1) {
		FILE *f = fopen(a->pos[1], "r");
		char line[128];
		if (!f) {
			kf_cli_error("cannot open '%s': %s", a->pos[1], strerror(errno));
			return KF_EXIT_USAGE;
		}
		while (fgets(line, sizeof(line), f)) {
			struct check_ctx c = {0};
			int64_t id;
			line[strcspn(line, "\r\n")] = '\0';
			if (!parse_id(line, &id))
				continue;
			n++;
			kf_kb_candidate_get(kb, id, found_cb, &c, NULL);
			if (c.found != id) {
				missing++;
				kf_cli_error("acknowledged candidate %" PRId64 " is missing", id);
			}
		}
		fclose(f);
	}
	printf("ok: integrity and foreign keys hold, %" PRId64 " acknowledged ids checked, %" PRId64
	       " missing\n",
	       n, missing);
	return missing ? KF_EXIT_FAILED : 0;
}

int cmd_kb(int argc, char **argv)
{
	struct kb_args a = {0};
	struct kf_kb *kb = NULL;
	const char *sub;
	unsigned flags = 0;
	int rc;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("kb", kb_help);
	if ((rc = parse_args(argc, argv, &a)))
		return rc;
	if (a.n_pos == 0)
		return kf_cli_usage_error("kb", "a subcommand is needed");
	sub = a.pos[0];
	if (!strcmp(sub, "merge"))
		return kb_merge(&a);
	if (a.out)
		return kf_cli_usage_error("kb", "-o/--out is for 'kb merge'");
	/* Readers never create a database or take the write lock; stats on a missing file is an error. */
	if (!strcmp(sub, "stats") || !strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "search") ||
	    !strcmp(sub, "examples") || !strcmp(sub, "export") || !strcmp(sub, "_check"))
		flags = KF_KB_READONLY;
	else if (strcmp(sub, "import") && strcmp(sub, "_stress"))
		return kf_cli_usage_error("kb", "unknown subcommand '%s'", sub);
	if ((rc = open_db(&a, flags, &kb)))
		return rc;
	if (!strcmp(sub, "stats"))
		rc = kb_stats(kb, &a);
	else if (!strcmp(sub, "list"))
		rc = kb_list(kb, &a);
	else if (!strcmp(sub, "show"))
		rc = kb_show(kb, &a);
	else if (!strcmp(sub, "search"))
		rc = kb_search(kb, &a);
	else if (!strcmp(sub, "examples"))
		rc = kb_examples(kb, &a);
	else if (!strcmp(sub, "export"))
		rc = kb_export(kb, &a);
	else if (!strcmp(sub, "import"))
		rc = kb_import(kb, &a);
	else if (!strcmp(sub, "_stress"))
		rc = kb_stress(kb, &a);
	else
		rc = kb_check(kb, &a);
	kf_kb_close(kb);
	return rc;
}
