/* kforge kb: the knowledge base from the command line: stats, list, show, search, export, import, merge
 * (docs/spec/cli.md). Every subcommand takes --db FILE and --json (one document on stdout). Two hidden ones
 * serve the durability test: _stress records steps in a loop printing each committed id, _check runs the
 * integrity checks and looks for a list of ids. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_kb.h"

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

bool kf_cli_kb_parse_id(const char *s, int64_t *out)
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

int kf_cli_kb_fail(const struct kf_err *err)
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
		return kf_cli_kb_fail(&err);
	return 0;
}

int kf_cli_kb_print_json(cJSON *doc)
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

void kf_cli_kb_fmt_time(double t, char *buf, size_t n)
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
		return kf_cli_kb_fail(&err);
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
		return kf_cli_kb_print_json(o);
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

/* ---- export, import, merge ---- */

static int kb_export(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	int64_t run_id = 0;
	if (a->n_pos != 2)
		return kf_cli_usage_error("kb", "'kb export' needs one FILE ('-' for stdout)");
	if (a->run && !kf_cli_kb_parse_id(a->run, &run_id))
		return kf_cli_usage_error("kb", "--run needs a run id, not '%s'", a->run);
	if (kf_kb_export(kb, run_id, a->pos[1], &err))
		return kf_cli_kb_fail(&err);
	if (a->json && strcmp(a->pos[1], "-")) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "file", a->pos[1]);
		if (run_id)
			cJSON_AddNumberToObject(o, "run", (double)run_id);
		return kf_cli_kb_print_json(o);
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
		return kf_cli_kb_print_json(stats_json(&st));
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
		return kf_cli_kb_print_json(o);
	}
	print_import_stats("merged", &st);
	printf("wrote '%s'\n", a->out);
	return 0;
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
		rc = kf_cli_kb_list(kb, &a);
	else if (!strcmp(sub, "show"))
		rc = kf_cli_kb_show(kb, &a);
	else if (!strcmp(sub, "search"))
		rc = kf_cli_kb_search(kb, &a);
	else if (!strcmp(sub, "examples"))
		rc = kf_cli_kb_examples(kb, &a);
	else if (!strcmp(sub, "export"))
		rc = kb_export(kb, &a);
	else if (!strcmp(sub, "import"))
		rc = kb_import(kb, &a);
	else if (!strcmp(sub, "_stress"))
		rc = kf_cli_kb_stress(kb, &a);
	else
		rc = kf_cli_kb_check(kb, &a);
	kf_kb_close(kb);
	return rc;
}
