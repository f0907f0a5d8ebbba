/* Exchange: JSONL export (the format `optimize --provider replay` reads, shared-decisions), import with id
 * remapping and deduplication by content, and merge of several database files into a new one. Export
 * and merge share one path: an exporter emits cJSON records that go to a file or straight to an importer. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kb_int.h"

#define KB_EXPORT_VERSION 1
/* One JSONL line holds one record; a kernel source or a prompt is far below this. */
#define KB_LINE_MAX ((size_t)64 << 20)
/* Integers beyond 2^53 do not survive a JSON double, so they travel as decimal strings (random seeds). */
#define KB_EXACT_INT 9007199254740992.0

typedef enum kf_status (*emit_fn)(void *ctx, cJSON *rec, struct kf_err *err);

/* ---- export ---- */

struct exporter {
	struct kf_kb *kb;
	emit_fn emit;
	void *ctx;
	struct kf_err *err;
	enum kf_status st;
};

static cJSON *rec_new(const char *type, int64_t id)
{
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "type", type);
		cJSON_AddNumberToObject(o, "id", (double)id);
	}
	return o;
}

static void add_int(cJSON *o, const char *k, int64_t v)
{
	if (fabs((double)v) < KB_EXACT_INT) {
		cJSON_AddNumberToObject(o, k, (double)v);
	} else {
		char s[32];
		snprintf(s, sizeof(s), "%lld", (long long)v);
		cJSON_AddStringToObject(o, k, s);
	}
}

static void add_id(cJSON *o, const char *k, int64_t id)
{
	if (id > 0)
		cJSON_AddNumberToObject(o, k, (double)id);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_num(cJSON *o, const char *k, double v)
{
	/* JSON has no NaN/Inf; a value that is not finite was never measured. */
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* Adds stored JSON text as JSON (config, prompt, dims); text that does not parse goes in as a string. */
static void add_json(cJSON *o, const char *k, const char *text)
{
	cJSON *v = cJSON_Parse(text);
	if (v)
		cJSON_AddItemToObject(o, k, v);
	else
		cJSON_AddStringToObject(o, k, text);
}

static int emit(struct exporter *x, cJSON *rec)
{
	if (!rec) {
		x->st = kf_err_set(x->err, KF_ERR_NOMEM, "out of memory");
		return 1;
	}
	x->st = x->emit(x->ctx, rec, x->err);
	cJSON_Delete(rec);
	return x->st != KF_OK;
}

struct cJSON *kf_kb_task_json(const struct kf_kb_task *t)
{
	cJSON *o = rec_new("task", t->id);
	if (o) {
		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "hash", t->hash);
		cJSON_AddStringToObject(o, "category", t->category);
		cJSON_AddNumberToObject(o, "level", t->level);
		cJSON_AddStringToObject(o, "title", t->title);
		cJSON_AddStringToObject(o, "description", t->description);
		add_num(o, "created_at", t->created_at);
	}
	return o;
}

static int ex_task(void *ctx, const struct kf_kb_task *t)
{
	return emit(ctx, kf_kb_task_json(t));
}

struct cJSON *kf_kb_run_json(const struct kf_kb_run *r)
{
	cJSON *o = rec_new("run", r->id);
	if (o) {
		cJSON_AddStringToObject(o, "uid", r->uid);
		add_id(o, "task_id", r->task_id);
		cJSON_AddStringToObject(o, "strategy", r->strategy);
		cJSON_AddStringToObject(o, "provider", r->provider);
		cJSON_AddStringToObject(o, "model", r->model);
		cJSON_AddStringToObject(o, "backend", r->backend);
		add_int(o, "seed", r->seed);
		add_int(o, "budget_calls", r->budget_calls);
		add_int(o, "budget_tokens", r->budget_tokens);
		add_num(o, "budget_usd", r->budget_usd);
		add_num(o, "budget_time_s", r->budget_time_s);
		add_json(o, "config", r->config);
		cJSON_AddStringToObject(o, "status", r->status);
		add_num(o, "started_at", r->started_at);
		add_num(o, "updated_at", r->updated_at);
		add_num(o, "finished_at", r->finished_at);
		add_num(o, "spend_usd", r->spend_usd);
		add_int(o, "n_calls", r->n_calls);
		add_int(o, "tokens_in", r->tokens_in);
		add_int(o, "tokens_out", r->tokens_out);
	}
	return o;
}

static int ex_run(void *ctx, const struct kf_kb_run *r)
{
	return emit(ctx, kf_kb_run_json(r));
}

struct cJSON *kf_kb_llm_call_json(const struct kf_kb_llm_call *c)
{
	cJSON *o = rec_new("llm_call", c->id), *prompt;
	if (o) {
		add_id(o, "run_id", c->run_id);
		cJSON_AddNumberToObject(o, "seq", c->seq);
		cJSON_AddStringToObject(o, "provider", c->provider);
		cJSON_AddStringToObject(o, "model", c->model);
		/* The format promises an array of {role, content}; a prompt stored as plain text becomes one
		 * user message. */
		prompt = cJSON_Parse(c->prompt);
		if (!cJSON_IsArray(prompt)) {
			cJSON *m = cJSON_CreateObject();
			cJSON_Delete(prompt);
			prompt = cJSON_CreateArray();
			cJSON_AddStringToObject(m, "role", "user");
			cJSON_AddStringToObject(m, "content", c->prompt);
			cJSON_AddItemToArray(prompt, m);
		}
		cJSON_AddItemToObject(o, "prompt", prompt);
		cJSON_AddStringToObject(o, "response", c->response);
		cJSON_AddStringToObject(o, "finish_reason", c->finish_reason);
		add_int(o, "tokens_in", c->tokens_in);
		add_int(o, "tokens_out", c->tokens_out);
		add_num(o, "cost_usd", c->cost_usd);
		add_num(o, "latency_ms", c->latency_ms);
		if (c->error)
			cJSON_AddStringToObject(o, "error", c->error);
		else
			cJSON_AddNullToObject(o, "error");
		cJSON_AddStringToObject(o, "request_id", c->request_id);
		add_num(o, "created_at", c->created_at);
		/* schema 3 (an older reader ignores them; an older file lacks them: the defaults) */
		cJSON_AddStringToObject(o, "purpose", c->purpose ? c->purpose : "candidate");
		cJSON_AddStringToObject(o, "outcome", c->outcome ? c->outcome : "");
		cJSON_AddStringToObject(o, "failure", c->failure ? c->failure : "");
		cJSON_AddStringToObject(o, "reason", c->reason ? c->reason : "");
		add_int(o, "tokens_cached", c->tokens_cached);
		add_int(o, "tokens_cache_write", c->tokens_cache_write);
		add_int(o, "tokens_reasoning", c->tokens_reasoning);
		cJSON_AddStringToObject(o, "endpoint", c->endpoint ? c->endpoint : "");
	}
	return o;
}

static int ex_call(void *ctx, const struct kf_kb_llm_call *c)
{
	return emit(ctx, kf_kb_llm_call_json(c));
}

struct cJSON *kf_kb_candidate_json(struct kf_kb *kb, const struct kf_kb_candidate *c)
{
	static const char parent_hash[] = "SELECT source_hash FROM candidates WHERE id = ?1";
	cJSON *o = rec_new("candidate", c->id);
	if (o) {
		add_id(o, "run_id", c->run_id);
		add_id(o, "task_id", c->task_id);
		add_id(o, "parent_id", c->parent_id);
		add_id(o, "parent2_id", c->parent2_id);
		add_id(o, "llm_call_id", c->llm_call_id);
		/* Lets an import of one run re-attach a parent that another run recorded. */
		if (c->parent_id > 0) {
			sqlite3_stmt *st = kb_stmt(kb, parent_hash, NULL);
			if (st) {
				sqlite3_bind_int64(st, 1, c->parent_id);
				if (sqlite3_step(st) == SQLITE_ROW)
					cJSON_AddStringToObject(o, "parent_source_hash", kb_col_str(st, 0));
				kb_done(st);
			}
		}
		cJSON_AddNumberToObject(o, "generation", c->generation);
		cJSON_AddNumberToObject(o, "island", c->island);
		add_int(o, "node", c->node);
		cJSON_AddStringToObject(o, "edit_kind", c->edit_kind);
		cJSON_AddStringToObject(o, "source", c->source);
		cJSON_AddStringToObject(o, "source_hash", c->source_hash);
		cJSON_AddStringToObject(o, "tags", c->tags);
		cJSON_AddStringToObject(o, "change", c->change);
		cJSON_AddNumberToObject(o, "strategy_no", c->strategy_no);
		add_num(o, "created_at", c->created_at);
	}
	return o;
}

static int ex_cand(void *ctx, const struct kf_kb_candidate *c)
{
	struct exporter *x = ctx;
	return emit(x, kf_kb_candidate_json(x->kb, c));
}

struct cJSON *kf_kb_eval_json(const struct kf_kb_eval *e)
{
	cJSON *o = rec_new("evaluation", e->id), *shapes;
	if (o) {
		add_id(o, "candidate_id", e->candidate_id);
		cJSON_AddStringToObject(o, "backend", e->backend);
		cJSON_AddStringToObject(o, "arch", e->arch);
		cJSON_AddStringToObject(o, "toolchain", e->toolchain);
		cJSON_AddStringToObject(o, "device", e->device);
		cJSON_AddStringToObject(o, "dtype", e->dtype);
		cJSON_AddStringToObject(o, "verdict", e->verdict);
		cJSON_AddStringToObject(o, "reason", e->reason);
		add_int(o, "seed", e->seed);
		add_num(o, "speedup", e->speedup);
		add_num(o, "wall_ms", e->wall_ms);
		add_num(o, "created_at", e->created_at);
		shapes = cJSON_AddArrayToObject(o, "shapes");
		for (size_t i = 0; shapes && i < e->n_shapes; i++) {
			cJSON *s = cJSON_CreateObject();
			if (!s)
				break;
			add_json(s, "dims", e->shapes[i].dims);
			cJSON_AddStringToObject(s, "status", e->shapes[i].status);
			add_num(s, "max_abs", e->shapes[i].max_abs);
			add_num(s, "max_rel", e->shapes[i].max_rel);
			cJSON_AddStringToObject(s, "detail", e->shapes[i].detail);
			cJSON_AddItemToArray(shapes, s);
		}
	}
	return o;
}

static int ex_eval(void *ctx, const struct kf_kb_eval *e)
{
	return emit(ctx, kf_kb_eval_json(e));
}

struct cJSON *kf_kb_timing_json(const struct kf_kb_timing *t)
{
	cJSON *o = rec_new("timing", t->id);
	if (o) {
		add_id(o, "candidate_id", t->candidate_id);
		add_id(o, "evaluation_id", t->evaluation_id);
		add_json(o, "shape", t->shape);
		cJSON_AddStringToObject(o, "clock", t->clock);
		cJSON_AddNumberToObject(o, "n_samples", t->n_samples);
		add_num(o, "median_ms", t->median_ms);
		add_num(o, "iqr_ms", t->iqr_ms);
		add_num(o, "ci_lo_ms", t->ci_lo_ms);
		add_num(o, "ci_hi_ms", t->ci_hi_ms);
		add_num(o, "ref_median_ms", t->ref_median_ms);
		add_num(o, "speedup", t->speedup);
		add_num(o, "speedup_ci_lo", t->speedup_ci_lo);
		add_num(o, "speedup_ci_hi", t->speedup_ci_hi);
		add_num(o, "created_at", t->created_at);
		/* schema 5: left out when zero, so older exports read back byte for byte */
		if (t->noise_band > 0)
			add_num(o, "noise_band", t->noise_band);
		if (t->aa_lo > 0 || t->aa_hi > 0) {
			add_num(o, "aa_lo", t->aa_lo);
			add_num(o, "aa_hi", t->aa_hi);
		}
		/* schema 4: left out when there are none, so older exports read back byte for byte */
		cJSON *bl = t->n_baselines ? cJSON_AddArrayToObject(o, "baselines") : NULL;
		for (size_t i = 0; bl && i < t->n_baselines; i++) {
			const struct kf_kb_timing_baseline *b = &t->baselines[i];
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", b->name);
			cJSON_AddStringToObject(e, "kind", b->kind ? b->kind : "kernel");
			cJSON_AddStringToObject(e, "status", b->status);
			cJSON_AddStringToObject(e, "reason", b->reason ? b->reason : "");
			add_num(e, "median_ms", b->median_ms);
			add_num(e, "speedup", b->speedup);
			add_num(e, "speedup_ci_lo", b->speedup_ci_lo);
			add_num(e, "speedup_ci_hi", b->speedup_ci_hi);
			cJSON_AddBoolToObject(e, "significant", b->significant);
			cJSON_AddStringToObject(e, "method", b->method ? b->method : "");
			cJSON_AddItemToArray(bl, e);
		}
	}
	return o;
}

static int ex_timing(void *ctx, const struct kf_kb_timing *t)
{
	return emit(ctx, kf_kb_timing_json(t));
}

static int ex_lesson(void *ctx, const struct kf_kb_lesson *l)
{
	cJSON *o = rec_new("lesson", l->id);
	if (o) {
		add_id(o, "task_id", l->task_id);
		add_id(o, "run_id", l->run_id);
		add_id(o, "candidate_id", l->candidate_id);
		cJSON_AddStringToObject(o, "arch", l->arch);
		cJSON_AddStringToObject(o, "clock", l->clock);
		cJSON_AddStringToObject(o, "verdict", l->verdict);
		cJSON_AddStringToObject(o, "tried", l->tried);
		cJSON_AddStringToObject(o, "outcome", l->outcome);
		add_num(o, "created_at", l->created_at);
	}
	return emit(ctx, o);
}

struct run_task {
	int64_t task_id;
};

static int grab_run_task(void *ctx, const struct kf_kb_run *r)
{
	((struct run_task *)ctx)->task_id = r->task_id;
	return 0;
}

/* Emits every record (or one run's) in dependency order: tasks, runs, llm_calls, candidates,
 * evaluations, timings, each by id; the header line is the caller's. */
static enum kf_status export_records(struct kf_kb *kb, int64_t run_id, emit_fn fn, void *ctx,
				     struct kf_err *err)
{
	struct exporter x = {kb, fn, ctx, err, KF_OK};
	enum kf_status s;

	if (run_id > 0) {
		struct run_task rt = {0};
		if ((s = kf_kb_run_get(kb, run_id, grab_run_task, &rt, err)))
			return s;
		if ((s = kf_kb_task_get(kb, rt.task_id, ex_task, &x, err)) || x.st)
			return x.st ? x.st : s;
		if ((s = kf_kb_run_get(kb, run_id, ex_run, &x, err)) || x.st)
			return x.st ? x.st : s;
	} else {
		if ((s = kf_kb_tasks_each(kb, ex_task, &x, err)) || x.st)
			return x.st ? x.st : s;
		if ((s = kf_kb_runs_each(kb, 0, ex_run, &x, err)) || x.st)
			return x.st ? x.st : s;
	}
	if ((s = kf_kb_llm_calls_each(kb, run_id, ex_call, &x, err)) || x.st)
		return x.st ? x.st : s;
	if ((s = kf_kb_candidates_each(kb, run_id, ex_cand, &x, err)) || x.st)
		return x.st ? x.st : s;
	if ((s = kf_kb_evals_each(kb, run_id, 0, ex_eval, &x, err)) || x.st)
		return x.st ? x.st : s;
	if ((s = kf_kb_timings_each(kb, run_id, 0, ex_timing, &x, err)) || x.st)
		return x.st ? x.st : s;
	if ((s = kf_kb_lessons_each(kb, run_id, ex_lesson, &x, err)) || x.st)
		return x.st ? x.st : s;
	return KF_OK;
}

struct file_sink {
	FILE *f;
	const char *path;
};

static enum kf_status write_line(void *ctx, cJSON *rec, struct kf_err *err)
{
	struct file_sink *fs = ctx;
	char *text = cJSON_PrintUnformatted(rec);
	int bad;
	if (!text)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	bad = fputs(text, fs->f) < 0 || fputc('\n', fs->f) == EOF;
	cJSON_free(text);
	if (bad)
		return kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", fs->path, strerror(errno));
	return KF_OK;
}

enum kf_status kf_kb_export(struct kf_kb *kb, int64_t run_id, const char *path, struct kf_err *err)
{
	struct file_sink fs = {NULL, path};
	char tmp[4096];
	bool to_stdout = !strcmp(path, "-"), own_tx;
	enum kf_status s;
	cJSON *hdr;

	if (to_stdout) {
		fs.f = stdout;
		fs.path = "stdout";
	} else {
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp))
			return kf_err_set(err, KF_ERR_INVALID, "path '%s' is too long", path);
		if (!(fs.f = fopen(tmp, "w")))
			return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
	}
	/* One read transaction for the whole export: a consistent snapshot even while another process
	 * keeps recording. Inside the caller's own transaction that one already is the snapshot. */
	own_tx = sqlite3_get_autocommit(kb->db) != 0;
	if (own_tx)
		sqlite3_exec(kb->db, "BEGIN", NULL, NULL, NULL);
	hdr = cJSON_CreateObject();
	cJSON_AddStringToObject(hdr, "type", "kforge-export");
	cJSON_AddNumberToObject(hdr, "version", KB_EXPORT_VERSION);
	s = write_line(&fs, hdr, err);
	cJSON_Delete(hdr);
	if (!s)
		s = export_records(kb, run_id, write_line, &fs, err);
	if (own_tx)
		sqlite3_exec(kb->db, "COMMIT", NULL, NULL, NULL);
	if (to_stdout) {
		if (!s && fflush(stdout) != 0)
			s = kf_err_set(err, KF_ERR_IO, "cannot write stdout: %s", strerror(errno));
		return s;
	}
	if (!s && (fflush(fs.f) != 0 || fsync(fileno(fs.f)) != 0))
		s = kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
	if (fclose(fs.f) != 0 && !s)
		s = kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
	if (!s && rename(tmp, path) != 0)
		s = kf_err_set(err, KF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
	if (s)
		unlink(tmp);
	return s;
}

/* ---- import ---- */

enum { MAP_TASK = 1, MAP_RUN, MAP_CALL, MAP_CAND, MAP_EVAL };

struct importer {
	struct kf_kb *kb;
	struct kf_kb_import_stats *stats;
	int64_t base_cand; /* candidates up to this id existed before this source: dedupe against them only */
	const char *where; /* file name or database, for messages */
	long line;
};

static enum kf_status map_put(struct importer *im, int kind, int64_t old_id, int64_t new_id, bool skip,
			      struct kf_err *err)
{
	static const char sql[] =
	    "INSERT OR REPLACE INTO temp.kb_idmap (kind, old, new, skip) VALUES (?1, ?2, ?3, ?4)";
	sqlite3_stmt *st = kb_stmt(im->kb, sql, err);
	int rc;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int(st, 1, kind);
	sqlite3_bind_int64(st, 2, old_id);
	sqlite3_bind_int64(st, 3, new_id);
	sqlite3_bind_int(st, 4, skip);
	rc = sqlite3_step(st);
	kb_done(st);
	return rc == SQLITE_DONE ? KF_OK : kb_dberr(im->kb, err, "cannot map ids");
}

/* The new id for old_id (0 when unmapped); *skip tells whether its records were already present. */
static int64_t map_get(struct importer *im, int kind, int64_t old_id, bool *skip)
{
	static const char sql[] = "SELECT new, skip FROM temp.kb_idmap WHERE kind = ?1 AND old = ?2";
	sqlite3_stmt *st = kb_stmt(im->kb, sql, NULL);
	int64_t v = 0;
	if (skip)
		*skip = false;
	if (!st || old_id <= 0)
		return 0;
	sqlite3_bind_int(st, 1, kind);
	sqlite3_bind_int64(st, 2, old_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		v = sqlite3_column_int64(st, 0);
		if (skip)
			*skip = sqlite3_column_int(st, 1) != 0;
	}
	kb_done(st);
	return v;
}

/* Runs a one-id query binding ?1 = a, ?2 = b, ?3 = c (a query that does not use one leaves it unbound:
 * binding an absent parameter is a no-op error that is ignored here). 0 when no row. */
static int64_t query_id(struct importer *im, const char *sql, int64_t a, const char *b, int64_t c)
{
	sqlite3_stmt *st = kb_stmt(im->kb, sql, NULL);
	int64_t v = 0;
	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, a);
	kb_bind_str(st, 2, b);
	sqlite3_bind_int64(st, 3, c);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	kb_done(st);
	return v;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double jnum(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double jnum0(const cJSON *o, const char *k)
{
	double v = jnum(o, k);
	return isfinite(v) ? v : 0;
}

static int64_t jint(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsString(v))
		return strtoll(v->valuestring, NULL, 10);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

/* JSON-valued fields back to stored text (the unformatted print is what export parses again). */
static char *jtext(const cJSON *o, const char *k, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!v || cJSON_IsNull(v))
		return kf_strdup(dflt);
	if (cJSON_IsString(v))
		return kf_strdup(v->valuestring);
	return cJSON_PrintUnformatted(v);
}

static enum kf_status bad_rec(struct importer *im, struct kf_err *err, const char *what)
{
	if (im->line > 0)
		return kf_err_set(err, KF_ERR_INVALID, "%s:%ld: %s", im->where, im->line, what);
	return kf_err_set(err, KF_ERR_INVALID, "%s: %s", im->where, what);
}

static enum kf_status imp_task(struct importer *im, const cJSON *o, struct kf_err *err)
{
	static const char find[] = "SELECT id FROM tasks WHERE name = ?1 AND hash = ?2";
	struct kf_kb_task t = {0};
	int64_t id, before;
	enum kf_status s;
	t.name = jstr(o, "name");
	t.hash = jstr(o, "hash");
	if (!t.name || !t.hash)
		return bad_rec(im, err, "a task needs 'name' and 'hash'");
	t.category = jstr(o, "category");
	t.level = (int)jint(o, "level");
	t.title = jstr(o, "title");
	t.description = jstr(o, "description");
	t.created_at = jnum0(o, "created_at");
	{
		/* Content dedupe: the same task file under the same name is one task. */
		sqlite3_stmt *st = kb_stmt(im->kb, find, err);
		if (!st)
			return KF_ERR_DB;
		kb_bind_str(st, 1, t.name);
		kb_bind_str(st, 2, t.hash);
		before = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		kb_done(st);
	}
	if (before) {
		id = before;
		im->stats->dup_tasks++;
	} else {
		if ((s = kf_kb_task_put(im->kb, &t, &id, err)))
			return s;
		im->stats->tasks++;
	}
	return map_put(im, MAP_TASK, jint(o, "id"), id, false, err);
}

static enum kf_status imp_run(struct importer *im, const cJSON *o, struct kf_err *err)
{
	static const char find[] = "SELECT id FROM runs WHERE uid = ?2";
	struct kf_kb_run r = {0};
	char *config;
	int64_t id, existing;
	enum kf_status s;

	r.uid = jstr(o, "uid");
	r.task_id = map_get(im, MAP_TASK, jint(o, "task_id"), NULL);
	if (!r.uid || !*r.uid)
		return bad_rec(im, err, "a run needs a 'uid'");
	if (!r.task_id)
		return bad_rec(im, err, "a run refers to a task that is not in the file");
	existing = query_id(im, find, 0, r.uid, 0);
	if (existing) {
		/* The same run arrived through an earlier import or merge: it adds nothing twice. */
		im->stats->dup_runs++;
		return map_put(im, MAP_RUN, jint(o, "id"), existing, true, err);
	}
	r.strategy = jstr(o, "strategy");
	r.provider = jstr(o, "provider");
	r.model = jstr(o, "model");
	r.backend = jstr(o, "backend");
	r.seed = jint(o, "seed");
	r.budget_calls = jint(o, "budget_calls");
	r.budget_tokens = jint(o, "budget_tokens");
	r.budget_usd = jnum0(o, "budget_usd");
	r.budget_time_s = jnum0(o, "budget_time_s");
	r.status = jstr(o, "status");
	r.started_at = jnum0(o, "started_at");
	r.updated_at = jnum0(o, "updated_at");
	r.finished_at = jnum0(o, "finished_at");
	r.spend_usd = jnum0(o, "spend_usd");
	r.n_calls = jint(o, "n_calls");
	r.tokens_in = jint(o, "tokens_in");
	r.tokens_out = jint(o, "tokens_out");
	if (!(config = jtext(o, "config", "{}")))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	r.config = config;
	s = kf_kb_run_begin(im->kb, &r, &id, err);
	free(config);
	if (s)
		return s;
	im->stats->runs++;
	return map_put(im, MAP_RUN, jint(o, "id"), id, false, err);
}

static enum kf_status imp_call(struct importer *im, const cJSON *o, struct kf_err *err)
{
	static const char find[] = "SELECT id FROM llm_calls WHERE run_id = ?1 AND seq = ?3";
	static const char ins[] =
	    "INSERT INTO llm_calls (run_id, seq, provider, model, prompt, response, "
	    "finish_reason, tokens_in, "
	    "tokens_out, cost_usd, latency_ms, error, request_id, created_at, purpose, outcome, "
	    "failure, reason, tokens_cached, tokens_cache_write, tokens_reasoning, endpoint) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
	    "?17, ?18, ?19, ?20, ?21, ?22)";
	bool skip;
	int64_t run = map_get(im, MAP_RUN, jint(o, "run_id"), &skip), seq = jint(o, "seq");
	sqlite3_stmt *st;
	char *prompt;
	int rc;

	if (!run)
		return bad_rec(im, err, "an llm_call refers to a run that is not in the file");
	if (skip)
		return map_put(im, MAP_CALL, jint(o, "id"), query_id(im, find, run, "", seq), true, err);
	if (!(prompt = jtext(o, "prompt", "[]")))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (kb_has_secret(prompt) || kb_has_secret(jstr(o, "error")) ||
	    kb_has_secret(jstr(o, "request_id"))) {
		free(prompt);
		return bad_rec(im, err,
			       "an llm_call holds what looks like an API key; keys are never stored");
	}
	/* A raw insert: the run's counters came with the run record and must not count the call twice. */
	if (!(st = kb_stmt(im->kb, ins, err))) {
		free(prompt);
		return KF_ERR_DB;
	}
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, seq);
	kb_bind_str(st, 3, jstr(o, "provider"));
	kb_bind_str(st, 4, jstr(o, "model"));
	kb_bind_str(st, 5, prompt);
	kb_bind_str(st, 6, jstr(o, "response"));
	kb_bind_str(st, 7, jstr(o, "finish_reason"));
	sqlite3_bind_int64(st, 8, jint(o, "tokens_in"));
	sqlite3_bind_int64(st, 9, jint(o, "tokens_out"));
	sqlite3_bind_double(st, 10, jnum0(o, "cost_usd"));
	sqlite3_bind_double(st, 11, jnum0(o, "latency_ms"));
	kb_bind_str_null(st, 12, jstr(o, "error"));
	kb_bind_str(st, 13, jstr(o, "request_id"));
	sqlite3_bind_double(st, 14, jnum0(o, "created_at"));
	kb_bind_str(st, 15, jstr(o, "purpose") && *jstr(o, "purpose") ? jstr(o, "purpose") : "candidate");
	kb_bind_str(st, 16,
		    cJSON_GetObjectItemCaseSensitive(o, "outcome") ? jstr(o, "outcome")
		    : jstr(o, "error")                             ? "failed"
								   : "");
	kb_bind_str(st, 17, jstr(o, "failure"));
	kb_bind_str(st, 18, jstr(o, "reason"));
	sqlite3_bind_int64(st, 19, jint(o, "tokens_cached"));
	sqlite3_bind_int64(st, 20, jint(o, "tokens_cache_write"));
	sqlite3_bind_int64(st, 21, jint(o, "tokens_reasoning"));
	kb_bind_str(st, 22, jstr(o, "endpoint"));
	rc = sqlite3_step(st);
	kb_done(st);
	free(prompt);
	if (rc != SQLITE_DONE)
		return kb_dberr(im->kb, err, "cannot import an llm call");
	im->stats->llm_calls++;
	return map_put(im, MAP_CALL, jint(o, "id"), sqlite3_last_insert_rowid(im->kb->db), false, err);
}

static enum kf_status imp_cand(struct importer *im, const cJSON *o, struct kf_err *err)
{
	static const char run_task[] = "SELECT task_id FROM runs WHERE id = ?1";
	static const char dedupe[] = "SELECT id FROM candidates WHERE task_id = ?1 AND source_hash = ?2 AND "
				     "id <= ?3 ORDER BY id LIMIT 1";
	static const char by_hash[] =
	    "SELECT id FROM candidates WHERE task_id = ?1 AND source_hash = ?2 ORDER BY id LIMIT 1";
	struct kf_kb_candidate c = {0};
	char hash[65];
	bool skip;
	int64_t old = jint(o, "id"), id, dup, parent_old;
	enum kf_status s;

	c.run_id = map_get(im, MAP_RUN, jint(o, "run_id"), &skip);
	c.source = jstr(o, "source");
	c.source_hash = jstr(o, "source_hash");
	if (!c.run_id)
		return bad_rec(im, err, "a candidate refers to a run that is not in the file");
	if (!c.source)
		return bad_rec(im, err, "a candidate needs a 'source'");
	kf_kb_hash_hex(c.source, strlen(c.source), hash);
	if (c.source_hash && strcmp(c.source_hash, hash))
		return bad_rec(im, err, "a candidate's source does not match its 'source_hash'");
	c.source_hash = hash;
	c.task_id = map_get(im, MAP_TASK, jint(o, "task_id"), NULL);
	if (!c.task_id)
		c.task_id = query_id(im, run_task, c.run_id, "", 0);
	if (skip) {
		id = query_id(im, by_hash, c.task_id, hash, 0);
		if (id) {
			im->stats->dup_candidates++;
			return map_put(im, MAP_CAND, old, id, true, err);
		}
		skip = false;
	}
	if (im->base_cand > 0 && (dup = query_id(im, dedupe, c.task_id, hash, im->base_cand))) {
		/* The same kernel for the same task is one candidate; this file's evaluations of it still
		 * count (another GPU, another seed), so they attach to the existing row. */
		im->stats->dup_candidates++;
		return map_put(im, MAP_CAND, old, dup, false, err);
	}
	parent_old = jint(o, "parent_id");
	c.parent_id = map_get(im, MAP_CAND, parent_old, NULL);
	if (!c.parent_id && parent_old > 0 && jstr(o, "parent_source_hash"))
		c.parent_id = query_id(im, by_hash, c.task_id, jstr(o, "parent_source_hash"), 0);
	c.parent2_id = map_get(im, MAP_CAND, jint(o, "parent2_id"), NULL);
	c.llm_call_id = map_get(im, MAP_CALL, jint(o, "llm_call_id"), NULL);
	c.generation = (int)jint(o, "generation");
	c.island = (int)jint(o, "island");
	c.node = jint(o, "node");
	c.edit_kind = jstr(o, "edit_kind");
	c.tags = jstr(o, "tags");
	c.change = jstr(o, "change");
	c.strategy_no = (int)jint(o, "strategy_no");
	c.created_at = jnum0(o, "created_at");
	if ((s = kb_insert_candidate(im->kb, &c, &id, err)))
		return s;
	im->stats->candidates++;
	return map_put(im, MAP_CAND, old, id, false, err);
}

static enum kf_status imp_eval(struct importer *im, const cJSON *o, struct kf_err *err)
{
	struct kf_kb_eval e = {0};
	struct kf_kb_shape_row *rows = NULL;
	char **dims = NULL;
	const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(o, "shapes"), *sh;
	bool skip;
	int64_t id;
	size_t n = 0;
	enum kf_status s;

	e.candidate_id = map_get(im, MAP_CAND, jint(o, "candidate_id"), &skip);
	if (!e.candidate_id)
		return bad_rec(im, err, "an evaluation refers to a candidate that is not in the file");
	if (skip)
		return map_put(im, MAP_EVAL, jint(o, "id"), 0, true, err);
	e.verdict = jstr(o, "verdict");
	if (!e.verdict)
		return bad_rec(im, err, "an evaluation needs a 'verdict'");
	e.backend = jstr(o, "backend");
	e.arch = jstr(o, "arch");
	e.toolchain = jstr(o, "toolchain");
	e.device = jstr(o, "device");
	e.dtype = jstr(o, "dtype");
	e.reason = jstr(o, "reason");
	e.seed = jint(o, "seed");
	e.speedup = jnum0(o, "speedup");
	e.wall_ms = jnum0(o, "wall_ms");
	e.created_at = jnum0(o, "created_at");
	if (cJSON_IsArray(shapes) && cJSON_GetArraySize(shapes) > 0) {
		size_t cap = (size_t)cJSON_GetArraySize(shapes);
		rows = calloc(cap, sizeof(*rows));
		dims = calloc(cap, sizeof(*dims));
		if (!rows || !dims) {
			free(rows);
			free(dims);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		cJSON_ArrayForEach(sh, shapes)
		{
			dims[n] = jtext(sh, "dims", "{}");
			rows[n].dims = dims[n];
			rows[n].status = jstr(sh, "status");
			rows[n].max_abs = jnum(sh, "max_abs");
			rows[n].max_rel = jnum(sh, "max_rel");
			rows[n].detail = jstr(sh, "detail");
			n++;
		}
	}
	e.shapes = rows;
	e.n_shapes = n;
	s = kb_insert_eval(im->kb, &e, NULL, 0, &id, err);
	for (size_t i = 0; i < n; i++)
		free(dims[i]);
	free(dims);
	free(rows);
	if (s)
		return s;
	im->stats->evaluations++;
	return map_put(im, MAP_EVAL, jint(o, "id"), id, false, err);
}

/* A timing's "baselines" array (schema 4; absent in older exports). */
static enum kf_status imp_timing_baselines(struct importer *im, const cJSON *o, int64_t timing_id,
					   struct kf_err *err)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "baselines"), *e;
	struct kf_kb_timing_baseline v[KF_KB_MAX_TIMING_BASELINES];
	size_t n = 0;
	enum kf_status s;
	if (!a || cJSON_IsNull(a))
		return KF_OK;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > KF_KB_MAX_TIMING_BASELINES)
		return bad_rec(im, err, "a timing's baselines must be an array of at most 8 objects");
	cJSON_ArrayForEach(e, a)
	{
		const cJSON *sig = cJSON_GetObjectItemCaseSensitive(e, "significant");
		if (!cJSON_IsObject(e))
			return bad_rec(im, err, "a timing's baseline must be an object");
		v[n++] = (struct kf_kb_timing_baseline){jstr(e, "name"),           jstr(e, "kind"),
							jstr(e, "status"),         jstr(e, "reason"),
							jnum0(e, "median_ms"),     jnum0(e, "speedup"),
							jnum0(e, "speedup_ci_lo"), jnum0(e, "speedup_ci_hi"),
							cJSON_IsTrue(sig),         jstr(e, "method")};
	}
	if ((s = kb_insert_timing_baselines(im->kb, timing_id, v, n, err)) == KF_ERR_INVALID) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg); /* bad_rec writes err->msg */
		return bad_rec(im, err, why);
	}
	return s;
}

static enum kf_status imp_timing(struct importer *im, const cJSON *o, struct kf_err *err)
{
	static const char ins[] =
	    "INSERT INTO timings (candidate_id, evaluation_id, shape, clock, n_samples, median_ms, iqr_ms, "
	    "ci_lo_ms, ci_hi_ms, ref_median_ms, speedup, speedup_ci_lo, speedup_ci_hi, created_at, "
	    "noise_band, aa_lo, aa_hi) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
	bool skip, eskip;
	int64_t cand = map_get(im, MAP_CAND, jint(o, "candidate_id"), &skip);
	int64_t ev = map_get(im, MAP_EVAL, jint(o, "evaluation_id"), &eskip);
	sqlite3_stmt *st;
	char *shape;
	int rc;

	if (!cand)
		return bad_rec(im, err, "a timing refers to a candidate that is not in the file");
	if (skip || eskip)
		return KF_OK;
	if (!(shape = jtext(o, "shape", "{}")))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (!(st = kb_stmt(im->kb, ins, err))) {
		free(shape);
		return KF_ERR_DB;
	}
	sqlite3_bind_int64(st, 1, cand);
	kb_bind_id(st, 2, ev);
	kb_bind_str(st, 3, shape);
	kb_bind_str(st, 4, jstr(o, "clock"));
	sqlite3_bind_int64(st, 5, jint(o, "n_samples"));
	sqlite3_bind_double(st, 6, jnum0(o, "median_ms"));
	sqlite3_bind_double(st, 7, jnum0(o, "iqr_ms"));
	sqlite3_bind_double(st, 8, jnum0(o, "ci_lo_ms"));
	sqlite3_bind_double(st, 9, jnum0(o, "ci_hi_ms"));
	sqlite3_bind_double(st, 10, jnum0(o, "ref_median_ms"));
	sqlite3_bind_double(st, 11, jnum0(o, "speedup"));
	sqlite3_bind_double(st, 12, jnum0(o, "speedup_ci_lo"));
	sqlite3_bind_double(st, 13, jnum0(o, "speedup_ci_hi"));
	sqlite3_bind_double(st, 14, jnum0(o, "created_at"));
	sqlite3_bind_double(st, 15, jnum0(o, "noise_band"));
	sqlite3_bind_double(st, 16, jnum0(o, "aa_lo"));
	sqlite3_bind_double(st, 17, jnum0(o, "aa_hi"));
	rc = sqlite3_step(st);
	kb_done(st);
	free(shape);
	if (rc != SQLITE_DONE)
		return kb_dberr(im->kb, err, "cannot import a timing");
	enum kf_status bs = imp_timing_baselines(im, o, sqlite3_last_insert_rowid(im->kb->db), err);
	if (bs)
		return bs;
	im->stats->timings++;
	return KF_OK;
}

/* A lesson comes with its run: an already present run (skipped) brings nothing new. */
static enum kf_status imp_lesson(struct importer *im, const cJSON *o, struct kf_err *err)
{
	bool skip, cskip;
	struct kf_kb_lesson l = {0};
	l.run_id = map_get(im, MAP_RUN, jint(o, "run_id"), &skip);
	l.task_id = map_get(im, MAP_TASK, jint(o, "task_id"), NULL);
	if (!l.run_id || !l.task_id)
		return bad_rec(im, err, "a lesson refers to a run or task that is not in the file");
	if (skip)
		return KF_OK;
	l.candidate_id = jint(o, "candidate_id") ? map_get(im, MAP_CAND, jint(o, "candidate_id"), &cskip) : 0;
	l.arch = jstr(o, "arch");
	l.clock = jstr(o, "clock");
	l.verdict = jstr(o, "verdict");
	l.tried = jstr(o, "tried");
	l.outcome = jstr(o, "outcome");
	l.created_at = jnum0(o, "created_at");
	if (kb_has_secret(l.tried) || kb_has_secret(l.outcome))
		return bad_rec(im, err, "a lesson holds what looks like an API key; keys are never stored");
	return kf_kb_record_lesson(im->kb, &l, NULL, err);
}

static enum kf_status import_record(void *ctx, cJSON *rec, struct kf_err *err)
{
	struct importer *im = ctx;
	const char *type = jstr(rec, "type");
	if (!type)
		return bad_rec(im, err, "a record without a 'type'");
	if (!strcmp(type, "task"))
		return imp_task(im, rec, err);
	if (!strcmp(type, "run"))
		return imp_run(im, rec, err);
	if (!strcmp(type, "llm_call"))
		return imp_call(im, rec, err);
	if (!strcmp(type, "candidate"))
		return imp_cand(im, rec, err);
	if (!strcmp(type, "evaluation"))
		return imp_eval(im, rec, err);
	if (!strcmp(type, "timing"))
		return imp_timing(im, rec, err);
	if (!strcmp(type, "lesson"))
		return imp_lesson(im, rec, err);
	if (!strcmp(type, "kforge-export"))
		return bad_rec(im, err, "a second 'kforge-export' header");
	/* A newer kforge may add record types; an importer that does not know one skips it. */
	return KF_OK;
}

static enum kf_status importer_start(struct importer *im, struct kf_kb *kb, struct kf_kb_import_stats *stats,
				     const char *where, struct kf_err *err)
{
	static const char max_cand[] = "SELECT coalesce(max(id), 0) FROM candidates";
	sqlite3_stmt *st;
	enum kf_status s;
	memset(im, 0, sizeof(*im));
	im->kb = kb;
	im->stats = stats;
	im->where = where;
	if ((s = kb_exec(kb,
			 "CREATE TEMP TABLE IF NOT EXISTS kb_idmap (kind INTEGER, old INTEGER, new INTEGER, "
			 "skip INTEGER, PRIMARY KEY (kind, old)) WITHOUT ROWID; DELETE FROM temp.kb_idmap",
			 err)))
		return s;
	if (!(st = kb_stmt(kb, max_cand, err)))
		return KF_ERR_DB;
	im->base_cand = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	kb_done(st);
	return KF_OK;
}

/* Reads one line (without its newline) into line; false at end of file. */
static bool read_line(FILE *f, struct kf_buf *line, enum kf_status *st)
{
	char chunk[65536];
	bool any = false;
	kf_buf_reset(line);
	*st = KF_OK;
	while (fgets(chunk, sizeof(chunk), f)) {
		size_t n = strlen(chunk);
		any = true;
		if (n && chunk[n - 1] == '\n') {
			if ((*st = kf_buf_add(line, chunk, n - 1)))
				return true;
			return true;
		}
		if ((*st = kf_buf_add(line, chunk, n)))
			return true;
	}
	return any;
}

enum kf_status kf_kb_import(struct kf_kb *kb, const char *path, struct kf_kb_import_stats *stats,
			    struct kf_err *err)
{
	struct kf_kb_import_stats local;
	struct importer im;
	struct kf_buf line = KF_BUF_INIT(KB_LINE_MAX);
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	enum kf_status s, ls;
	bool header = false;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (!f)
		return kf_err_set(err, errno == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO, "cannot open '%s': %s",
				  path, strerror(errno));
	if ((s = kb_tx_begin(kb, err)))
		goto out;
	if ((s = importer_start(&im, kb, stats, path, err)))
		goto end;
	while (read_line(f, &line, &ls)) {
		cJSON *rec;
		im.line++;
		if (ls) {
			s = kf_err_set(err, KF_ERR_LIMIT, "%s:%ld: line longer than %zu bytes", path, im.line,
				       KB_LINE_MAX);
			break;
		}
		if (line.len == 0 || strspn(line.data, " \t\r") == line.len)
			continue;
		if (!(rec = cJSON_ParseWithLength(line.data, line.len)) || !cJSON_IsObject(rec)) {
			cJSON_Delete(rec);
			s = kf_err_set(err, KF_ERR_PARSE, "%s:%ld: not a JSON object", path, im.line);
			break;
		}
		if (!header) {
			const char *type = jstr(rec, "type");
			double v = jnum(rec, "version");
			if (!type || strcmp(type, "kforge-export")) {
				s = kf_err_set(err, KF_ERR_PARSE,
					       "%s:%ld: not a kforge export (no 'kforge-export' header)",
					       path, im.line);
			} else if (!(v >= 1 && v <= KB_EXPORT_VERSION)) {
				s = kf_err_set(err, KF_ERR_UNSUPPORTED,
					       "%s: export version %g is not supported (max %d)", path, v,
					       KB_EXPORT_VERSION);
			}
			header = true;
		} else {
			s = import_record(&im, rec, err);
		}
		cJSON_Delete(rec);
		if (s)
			break;
	}
	if (!s && ferror(f))
		s = kf_err_set(err, KF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	if (!s && !header)
		s = kf_err_set(err, KF_ERR_PARSE, "%s: empty file, not a kforge export", path);
end:
	if (s) {
		kb_tx_end(kb, false, NULL);
		memset(stats, 0, sizeof(*stats));
	} else {
		s = kb_tx_end(kb, true, err);
	}
out:
	if (f != stdin)
		fclose(f);
	kf_buf_release(&line);
	return s;
}

enum kf_status kf_kb_merge(const char *const *srcs, size_t n_srcs, const char *out_path, bool force,
			   struct kf_kb_import_stats *stats, struct kf_err *err)
{
	struct kf_kb_import_stats local, part;
	struct kf_kb *out = NULL;
	struct stat sb;
	char tmp[4096], side[4200];
	enum kf_status s = KF_OK;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	if (n_srcs == 0)
		return kf_err_set(err, KF_ERR_INVALID, "nothing to merge");
	if (!force && stat(out_path, &sb) == 0)
		return kf_err_set(err, KF_ERR_INVALID, "'%s' exists; use --force to replace it", out_path);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out_path, (long)getpid()) >= sizeof(tmp))
		return kf_err_set(err, KF_ERR_INVALID, "path '%s' is too long", out_path);
	for (size_t i = 0; i < n_srcs; i++)
		if (!strcmp(srcs[i], out_path))
			return kf_err_set(err, KF_ERR_INVALID, "'%s' is both a source and the output",
					  out_path);
	unlink(tmp);
	if ((s = kf_kb_open(tmp, 0, &out, err)))
		return s;
	if ((s = kb_tx_begin(out, err)))
		goto fail;
	for (size_t i = 0; i < n_srcs && !s; i++) {
		struct kf_kb *src = NULL;
		struct importer im;
		memset(&part, 0, sizeof(part));
		if ((s = kf_kb_open(srcs[i], KF_KB_READONLY, &src, err)))
			break;
		if (!(s = importer_start(&im, out, &part, srcs[i], err))) {
			sqlite3_exec(src->db, "BEGIN", NULL, NULL, NULL);
			s = export_records(src, 0, import_record, &im, err);
			sqlite3_exec(src->db, "COMMIT", NULL, NULL, NULL);
		}
		kf_kb_close(src);
		stats->tasks += part.tasks;
		stats->runs += part.runs;
		stats->candidates += part.candidates;
		stats->llm_calls += part.llm_calls;
		stats->evaluations += part.evaluations;
		stats->timings += part.timings;
		stats->dup_tasks += part.dup_tasks;
		stats->dup_runs += part.dup_runs;
		stats->dup_candidates += part.dup_candidates;
	}
	if (s) {
		kb_tx_end(out, false, NULL);
		goto fail;
	}
	if ((s = kb_tx_end(out, true, err)) || (s = kf_kb_check(out, err)))
		goto fail;
	kf_kb_close(out); /* the last connection: checkpoints the WAL into the file */
	out = NULL;
	/* A stale -wal next to the old output would be replayed into the new file. */
	snprintf(side, sizeof(side), "%s-wal", out_path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", out_path);
	unlink(side);
	if (rename(tmp, out_path) != 0) {
		s = kf_err_set(err, KF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, out_path,
			       strerror(errno));
		goto fail;
	}
	return KF_OK;
fail:
	kf_kb_close(out);
	unlink(tmp);
	snprintf(side, sizeof(side), "%s-wal", tmp);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", tmp);
	unlink(side);
	if (s)
		memset(stats, 0, sizeof(*stats));
	return s;
}
