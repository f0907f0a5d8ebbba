/* Retrieval for prompts: the best verified kernels of the same task, then of similar tasks (same category,
 * then FTS5 rank of the task text), each with its speedup and what changed against its parent; and the
 * full-text search behind `kforge kb search`. Orders always end in ids, so a database gives one answer. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

/* How many FTS query words to take from a task's text: enough to find related ops, few enough that the
 * MATCH stays cheap (each word is one posting-list lookup). */
#define KB_QUERY_WORDS 24

struct pick {
	int64_t cand, task;
	double speedup;
	bool same_task;
};

struct picks {
	struct pick *v;
	size_t n, k;
	char **names; /* task names taken, one example per other task */
	size_t n_names;
	const struct kf_kb_example_query *q; /* the hygiene filters (NULL: none) */
	char family[24];                     /* GLOB of the arch family ("sm_9[0-9]*"), "" exact */
};

/* The one place that says what "significantly faster" means for an example: every timed shape's speedup
 * interval lies above 1 + its A/A noise band (docs/spec/verification.md; rows before schema 5 have band 0).
 */
#define KB_SIGNIFICANT_TIMING "t.speedup_ci_lo > 1.0 + t.noise_band"
/* The clock class of a timing row: GPU clocks (CUPTI, CUDA events) are one class; cpu and model others. */
#define KB_CLOCK_CLASS                                                                                       \
	"(CASE WHEN t.clock IN ('cupti', 'cuda_event', 'events', 'gpu') THEN 'gpu' ELSE t.clock END)"

/* A model-clock evaluation keeps its CPU-clock rows as secondary information: they are not its fitness,
 * so neither its class nor its significance is theirs. */
#define KB_SECONDARY_TIMING                                                                                  \
	"(t.clock = 'cpu' AND EXISTS (SELECT 1 FROM timings m WHERE m.evaluation_id = e.id AND m.clock = "   \
	"'model'))"

void kf_kb_arch_family(const char *arch, char *out, size_t n)
{
	size_t len = arch ? strlen(arch) : 0, d = 0;
	if (!n)
		return;
	out[0] = '\0';
	if (!arch || strncmp(arch, "sm_", 3) || len < 5) {
		snprintf(out, n, "%s", arch ? arch : "");
		return;
	}
	while (3 + d < len && isdigit((unsigned char)arch[3 + d]))
		d++;
	/* sm_90, sm_90a, sm_89 -> "sm_9", "sm_9", "sm_8"; sm_100, sm_120 -> "sm_10", "sm_12" */
	snprintf(out, n, "%.*s", (int)(3 + (d > 1 ? d - 1 : d)), arch);
}

/* Does candidate cand pass the query's filters (some evaluation of it does)? */
static bool example_ok(struct kf_kb *kb, const struct picks *p, int64_t cand)
{
	static const char sql[] =
	    "SELECT 1 FROM candidates c JOIN evaluations e ON e.candidate_id = c.id "
	    "WHERE c.id = ?1 AND e.verdict = 'pass' AND e.speedup > 0 "
	    "AND (?2 <= 0 OR c.run_id <> ?2) "
	    "AND (?3 IS NULL OR c.source_hash <> ?3) "
	    "AND (?4 IS NULL OR e.arch = ?4 OR (?5 IS NOT NULL AND e.arch GLOB ?5)) "
	    "AND (?6 IS NULL OR (EXISTS (SELECT 1 FROM timings t WHERE t.evaluation_id = e.id "
	    "AND " KB_CLOCK_CLASS " = ?6) AND NOT EXISTS "
	    "(SELECT 1 FROM timings t WHERE t.evaluation_id = e.id AND " KB_CLOCK_CLASS
	    " <> ?6 AND NOT " KB_SECONDARY_TIMING "))) "
	    "AND (?7 = 0 OR (e.speedup > 1.0 AND EXISTS (SELECT 1 FROM timings t WHERE t.evaluation_id = "
	    "e.id) "
	    "AND NOT EXISTS (SELECT 1 FROM timings t WHERE t.evaluation_id = e.id AND "
	    "NOT " KB_SECONDARY_TIMING " AND NOT (" KB_SIGNIFICANT_TIMING ")))) LIMIT 1";
	const struct kf_kb_example_query *q = p->q;
	sqlite3_stmt *st;
	bool ok;
	if (!q)
		return true;
	if (!(st = kb_stmt(kb, sql, NULL)))
		return false;
	sqlite3_bind_int64(st, 1, cand);
	sqlite3_bind_int64(st, 2, q->exclude_run);
	kb_bind_str_null(st, 3,
			 q->exclude_source_hash && *q->exclude_source_hash ? q->exclude_source_hash : NULL);
	kb_bind_str_null(st, 4, q->arch);
	kb_bind_str_null(st, 5, p->family[0] ? p->family : NULL);
	kb_bind_str_null(st, 6, q->clock);
	sqlite3_bind_int(st, 7, q->significant_only ? 1 : 0);
	ok = sqlite3_step(st) == SQLITE_ROW;
	kb_done(st);
	return ok;
}

static bool picked_cand(const struct picks *p, int64_t cand)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].cand == cand)
			return true;
	return false;
}

static bool picked_name(const struct picks *p, const char *name)
{
	for (size_t i = 0; i < p->n_names; i++)
		if (!strcmp(p->names[i], name))
			return true;
	return false;
}

static enum kf_status add_pick(struct picks *p, int64_t cand, int64_t task, const char *name, double sp,
			       bool same, struct kf_err *err)
{
	if (name) {
		char *dup = kf_strdup(name);
		if (!dup)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		p->names[p->n_names++] = dup;
	}
	p->v[p->n++] = (struct pick){cand, task, sp, same};
	return KF_OK;
}

/* Appends the plain words of text (letters, digits, '_'; at least 3 long) to q as FTS5 strings joined by
 * op, lower-cased and without repeats; FTS5 syntax in the text cannot reach the query. */
static enum kf_status fts_words(const char *text, const char *op, size_t max_words, struct kf_buf *q,
				size_t *n_words)
{
	const char *p = text;
	while (p && *p && *n_words < max_words) {
		const char *s;
		size_t n;
		char word[64];
		while (*p && !(isalnum((unsigned char)*p) || *p == '_'))
			p++;
		s = p;
		while (*p && (isalnum((unsigned char)*p) || *p == '_'))
			p++;
		n = (size_t)(p - s);
		if (n < 3 || n >= sizeof(word))
			continue;
		for (size_t i = 0; i < n; i++)
			word[i] = (char)tolower((unsigned char)s[i]);
		word[n] = '\0';
		{
			/* Repeats would only weigh the same posting list twice. */
			char quoted[72];
			snprintf(quoted, sizeof(quoted), "\"%s\"", word);
			if (strstr(q->data, quoted))
				continue;
			if (kf_buf_addf(q, "%s%s", *n_words ? op : "", quoted))
				return KF_ERR_LIMIT;
		}
		(*n_words)++;
	}
	return KF_OK;
}

static enum kf_status load_example(struct kf_kb *kb, const struct pick *pk, const char *arch,
				   struct kf_kb_example *ex, struct kf_err *err)
{
	static const char sql[] =
	    "SELECT c.id, c.task_id, coalesce(c.parent_id, 0), t.name, t.category, c.source, c.tags, "
	    "c.edit_kind, "
	    "c.change, coalesce(p.tags, ''), "
	    "coalesce((SELECT max(e.speedup) FROM evaluations e WHERE e.candidate_id = p.id AND e.verdict = "
	    "'pass' "
	    "AND (?2 IS NULL OR e.arch = ?2)), 0) "
	    "FROM candidates c JOIN tasks t ON t.id = c.task_id LEFT JOIN candidates p ON p.id = c.parent_id "
	    "WHERE c.id = ?1";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct kf_buf change = KF_BUF_INIT(4096);
	int rc;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, pk->cand);
	kb_bind_str_null(st, 2, arch);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		kb_done(st);
		return kb_dberr(kb, err, "cannot read an example");
	}
	ex->candidate_id = sqlite3_column_int64(st, 0);
	ex->task_id = sqlite3_column_int64(st, 1);
	ex->parent_id = sqlite3_column_int64(st, 2);
	ex->task_name = kf_strdup(kb_col_str(st, 3));
	ex->category = kf_strdup(kb_col_str(st, 4));
	ex->source = kf_strdup(kb_col_str(st, 5));
	ex->tags = kf_strdup(kb_col_str(st, 6));
	ex->edit_kind = kf_strdup(kb_col_str(st, 7));
	if (*kb_col_str(st, 8)) {
		kf_buf_adds(&change, kb_col_str(st, 8));
	} else if (ex->parent_id) {
		kf_buf_addf(&change, "%s of #%lld: ", kb_col_str(st, 7), (long long)ex->parent_id);
		size_t before = change.len;
		kb_tags_diff(kb_col_str(st, 6), kb_col_str(st, 9), &change);
		if (change.len == before)
			kf_buf_adds(&change, "same techniques");
	} else {
		kf_buf_addf(&change, "%s with no parent", kb_col_str(st, 7));
	}
	ex->parent_speedup = sqlite3_column_double(st, 10);
	kb_done(st);
	ex->change = kf_buf_detach(&change, NULL);
	ex->speedup = pk->speedup;
	ex->same_task = pk->same_task;
	if (!ex->task_name || !ex->category || !ex->source || !ex->tags || !ex->edit_kind || !ex->change)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	return KF_OK;
}

/* Steps a (candidate, speedup, task id, task name) query adding picks of other tasks, one per task name. */
static enum kf_status take_others(struct kf_kb *kb, sqlite3_stmt *st, struct picks *p, struct kf_err *err)
{
	enum kf_status s = KF_OK;
	int rc = SQLITE_DONE;
	while (p->n < p->k && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cand = sqlite3_column_int64(st, 0);
		const char *name = kb_col_str(st, 3);
		if (picked_cand(p, cand) || picked_name(p, name) || !example_ok(kb, p, cand))
			continue;
		if ((s = add_pick(p, cand, sqlite3_column_int64(st, 2), name, sqlite3_column_double(st, 1),
				  false, err)))
			break;
	}
	if (!s && p->n < p->k && rc != SQLITE_DONE)
		s = kb_dberr(kb, err, "cannot read examples");
	kb_done(st);
	return s;
}

struct same_pick {
	int64_t cand;
	double speedup;
	char hash[65];
};

static int cmp_same(const void *a, const void *b)
{
	const struct same_pick *x = a, *y = b;
	if (x->speedup != y->speedup)
		return x->speedup > y->speedup ? -1 : 1;
	return (x->cand > y->cand) - (x->cand < y->cand);
}

/* Adds up to p->k of the same task's verified kernels, best first, one per distinct source. Each version
 * of the task is one index range read in speedup order (evaluations_task_best) that stops after k new
 * sources, so the cost does not grow with the number of candidates; versions are merged here. */
static enum kf_status take_same_task(struct kf_kb *kb, const char *task_name, const char *arch,
				     struct picks *p, struct kf_err *err)
{
	static const char ids_sql[] = "SELECT id FROM tasks WHERE name = ?1 ORDER BY id";
	static const char on_arch[] =
	    "SELECT e.candidate_id, e.speedup, c.source_hash FROM evaluations e CROSS JOIN candidates c "
	    "ON c.id = e.candidate_id WHERE e.task_id = ?1 AND e.arch = ?2 AND e.verdict = 'pass' "
	    "AND e.speedup > 0 ORDER BY e.speedup DESC, e.candidate_id ASC";
	static const char any_arch[] =
	    "SELECT e.candidate_id, e.speedup, c.source_hash FROM evaluations e CROSS JOIN candidates c "
	    "ON c.id = e.candidate_id WHERE e.task_id = ?1 AND e.verdict = 'pass' AND e.speedup > 0 "
	    "ORDER BY e.speedup DESC, e.candidate_id ASC";
	struct same_pick *all = NULL;
	int64_t *ids = NULL;
	size_t n_ids = 0, cap_ids = 0, n_all = 0;
	sqlite3_stmt *st = kb_stmt(kb, ids_sql, err);
	enum kf_status s = KF_OK;
	int rc;

	if (!st)
		return KF_ERR_DB;
	kb_bind_str(st, 1, task_name);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n_ids == cap_ids) {
			int64_t *n2 = realloc(ids, (cap_ids = cap_ids ? 2 * cap_ids : 4) * sizeof(*ids));
			if (!n2) {
				kb_done(st);
				free(ids);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			ids = n2;
		}
		ids[n_ids++] = sqlite3_column_int64(st, 0);
	}
	kb_done(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return kb_dberr(kb, err, "cannot read examples");
	}
	if (n_ids && !(all = calloc(n_ids * p->k, sizeof(*all)))) {
		free(ids);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t t = 0; t < n_ids && !s; t++) {
		size_t got = 0, first = n_all;
		if (!(st = kb_stmt(kb, arch ? on_arch : any_arch, err))) {
			s = KF_ERR_DB;
			break;
		}
		sqlite3_bind_int64(st, 1, ids[t]);
		if (arch)
			kb_bind_str(st, 2, arch);
		while (got < p->k && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *hash = kb_col_str(st, 2);
			bool seen = false;
			/* Rows come best first, so a source seen already had its best speedup taken. */
			for (size_t i = first; i < n_all && !seen; i++)
				seen = !strcmp(all[i].hash, hash);
			if (seen || !example_ok(kb, p, sqlite3_column_int64(st, 0)))
				continue;
			all[n_all].cand = sqlite3_column_int64(st, 0);
			all[n_all].speedup = sqlite3_column_double(st, 1);
			snprintf(all[n_all].hash, sizeof(all[n_all].hash), "%s", hash);
			n_all++;
			got++;
		}
		if (got < p->k && rc != SQLITE_DONE)
			s = kb_dberr(kb, err, "cannot read examples");
		kb_done(st);
	}
	if (!s) {
		if (n_all) /* all is NULL when empty, and qsort's base must not be */
			qsort(all, n_all, sizeof(*all), cmp_same);
		for (size_t i = 0; i < n_all && p->n < p->k; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = !strcmp(all[j].hash, all[i].hash);
			if (!seen)
				add_pick(p, all[i].cand, 0, NULL, all[i].speedup, true, err);
		}
	}
	free(all);
	free(ids);
	return s;
}

static enum kf_status examples(struct kf_kb *kb, const char *task_name, const char *arch, size_t k,
			       const struct kf_kb_example_query *q, struct kf_kb_example **out, size_t *n,
			       struct kf_err *err)
{
	static const char task_sql[] =
	    "SELECT id, category, name || ' ' || category || ' ' || description FROM tasks WHERE name = ?1 "
	    "ORDER BY id DESC LIMIT 1";
	static const char cat_sql[] =
	    "SELECT w.candidate_id, w.speedup, t.id, t.name FROM tasks t JOIN wins w ON w.task_id = t.id "
	    "WHERE t.category = ?1 AND t.category <> '' AND t.name <> ?2 AND (?3 IS NULL OR w.arch = ?3) "
	    "ORDER BY w.speedup DESC, t.name, w.candidate_id";
	static const char fts_sql[] =
	    "SELECT w.candidate_id, w.speedup, t.id, t.name, bm25(task_fts) AS r FROM task_fts "
	    "JOIN tasks t ON t.id = task_fts.rowid JOIN wins w ON w.task_id = t.id "
	    "WHERE task_fts MATCH ?1 AND t.name <> ?2 AND (?3 IS NULL OR w.arch = ?3) "
	    "ORDER BY r, w.speedup DESC, t.name, w.candidate_id LIMIT 200";
	struct picks p = {0};
	struct kf_kb_example *ex = NULL;
	struct kf_buf query = KF_BUF_INIT(8192);
	char *category = NULL, *text = NULL;
	sqlite3_stmt *st;
	enum kf_status s = KF_OK;
	int rc;

	*out = NULL;
	*n = 0;
	if (k == 0)
		return KF_OK;
	if (k > 1000)
		return kf_err_set(err, KF_ERR_RANGE, "at most 1000 examples at once");
	if (!(st = kb_stmt(kb, task_sql, err)))
		return KF_ERR_DB;
	kb_bind_str(st, 1, task_name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		category = kf_strdup(kb_col_str(st, 1));
		text = kf_strdup(kb_col_str(st, 2));
	}
	kb_done(st);
	if (rc == SQLITE_DONE)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no task named '%s' in the knowledge base",
				  task_name);
	if (rc != SQLITE_ROW)
		return kb_dberr(kb, err, "cannot look up a task");
	p.k = k;
	p.q = q;
	if (q && q->arch_family && q->arch) {
		char fam[16];
		kf_kb_arch_family(q->arch, fam, sizeof(fam));
		if (strcmp(fam, q->arch)) /* "sm_9" -> "sm_9[0-9]*"; "cpu" is its own family */
			snprintf(p.family, sizeof(p.family), "%s[0-9]*", fam);
	}
	p.v = calloc(k, sizeof(*p.v));
	p.names = calloc(k, sizeof(*p.names));
	if (!category || !text || !p.v || !p.names) {
		s = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}

	if ((s = take_same_task(kb, task_name, arch, &p, err)))
		goto done;

	if (p.n < k && *category) {
		if (!(st = kb_stmt(kb, cat_sql, err))) {
			s = KF_ERR_DB;
			goto done;
		}
		kb_bind_str(st, 1, category);
		kb_bind_str(st, 2, task_name);
		kb_bind_str_null(st, 3, arch);
		if ((s = take_others(kb, st, &p, err)))
			goto done;
	}

	if (p.n < k) {
		size_t words = 0;
		fts_words(text, " OR ", KB_QUERY_WORDS, &query, &words);
		if (words) {
			if (!(st = kb_stmt(kb, fts_sql, err))) {
				s = KF_ERR_DB;
				goto done;
			}
			kb_bind_str(st, 1, query.data);
			kb_bind_str(st, 2, task_name);
			kb_bind_str_null(st, 3, arch);
			if ((s = take_others(kb, st, &p, err)))
				goto done;
		}
	}

	if (p.n) {
		ex = calloc(p.n, sizeof(*ex));
		if (!ex) {
			s = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < p.n; i++) {
			if ((s = load_example(kb, &p.v[i], arch, &ex[i], err))) {
				kf_kb_examples_free(ex, p.n);
				ex = NULL;
				goto done;
			}
		}
		*out = ex;
		*n = p.n;
	}
done:
	for (size_t i = 0; i < p.n_names; i++)
		free(p.names[i]);
	free(p.names);
	free(p.v);
	free(category);
	free(text);
	kf_buf_release(&query);
	return s;
}

enum kf_status kf_kb_examples_for(struct kf_kb *kb, const char *task_name, const char *arch, size_t k,
				  struct kf_kb_example **out, size_t *n, struct kf_err *err)
{
	return examples(kb, task_name, arch, k, NULL, out, n, err);
}

enum kf_status kf_kb_examples_query(struct kf_kb *kb, const struct kf_kb_example_query *q,
				    struct kf_kb_example **out, size_t *n, struct kf_err *err)
{
	/* by family: the SQL takes every arch and example_ok keeps the family's */
	return examples(kb, q->task_name, q->arch_family ? NULL : q->arch, q->k, q, out, n, err);
}

void kf_kb_examples_free(struct kf_kb_example *ex, size_t n)
{
	if (!ex)
		return;
	for (size_t i = 0; i < n; i++) {
		free(ex[i].task_name);
		free(ex[i].category);
		free(ex[i].source);
		free(ex[i].tags);
		free(ex[i].edit_kind);
		free(ex[i].change);
	}
	free(ex);
}

enum kf_status kf_kb_search(struct kf_kb *kb, const char *text, size_t limit, kf_kb_hit_fn fn, void *ctx,
			    struct kf_err *err)
{
	static const char task_sql[] =
	    "SELECT t.id, t.name, snippet(task_fts, -1, '[', ']', '...', 12), bm25(task_fts) AS r "
	    "FROM task_fts JOIN tasks t ON t.id = task_fts.rowid WHERE task_fts MATCH ?1 "
	    "ORDER BY r, t.id LIMIT ?2";
	/* bm25 weights: a tag hit (column 2) counts more than a word somewhere in a long source. */
	static const char kern_sql[] =
	    "SELECT c.id, t.name, snippet(kernel_fts, -1, '[', ']', '...', 12), bm25(kernel_fts, 1.0, 4.0) "
	    "AS r "
	    "FROM kernel_fts JOIN candidates c ON c.id = kernel_fts.rowid JOIN tasks t ON t.id = c.task_id "
	    "WHERE kernel_fts MATCH ?1 ORDER BY r, c.id LIMIT ?2";
	const char *sqls[2] = {task_sql, kern_sql}, *kinds[2] = {"task", "candidate"};
	struct kf_buf query = KF_BUF_INIT(8192);
	size_t words = 0;
	enum kf_status s = KF_OK;

	fts_words(text, " ", 64, &query, &words);
	if (!words) {
		kf_buf_release(&query);
		return kf_err_set(err, KF_ERR_INVALID, "search text '%s' has no word of 3 or more letters",
				  text);
	}
	for (int k = 0; k < 2 && !s; k++) {
		sqlite3_stmt *st = kb_stmt(kb, sqls[k], err);
		int rc, stop = 0;
		if (!st) {
			s = KF_ERR_DB;
			break;
		}
		kb_bind_str(st, 1, query.data);
		sqlite3_bind_int64(st, 2, (int64_t)limit);
		while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct kf_kb_hit h;
			char title[512];
			h.kind = kinds[k];
			h.id = sqlite3_column_int64(st, 0);
			if (k == 0)
				snprintf(title, sizeof(title), "%s", kb_col_str(st, 1));
			else
				snprintf(title, sizeof(title), "%s #%lld", kb_col_str(st, 1),
					 (long long)h.id);
			h.title = title;
			h.snippet = kb_col_str(st, 2);
			h.rank = sqlite3_column_double(st, 3);
			stop = fn(ctx, &h);
		}
		if (!stop && rc != SQLITE_DONE)
			s = kb_dberr(kb, err, "cannot search");
		kb_done(st);
		if (stop)
			break;
	}
	kf_buf_release(&query);
	return s;
}

/* ---- lessons -------------------------------------------------------------------------------------- */

#define LESSON_TEXT_MAX 300

enum kf_status kf_kb_record_lesson(struct kf_kb *kb, const struct kf_kb_lesson *l, int64_t *id,
				   struct kf_err *err)
{
	static const char ins[] =
	    "INSERT INTO lessons (task_id, run_id, candidate_id, arch, clock, verdict, tried, "
	    "outcome, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, substr(?7, 1, 300), "
	    "substr(?8, 1, 300), ?9)";
	sqlite3_stmt *st;
	int rc;
	if (l->task_id <= 0 || l->run_id <= 0)
		return kf_err_set(err, KF_ERR_INVALID, "a lesson needs a task and a run");
	if (!(st = kb_stmt(kb, ins, err)))
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, l->task_id);
	sqlite3_bind_int64(st, 2, l->run_id);
	kb_bind_id(st, 3, l->candidate_id);
	kb_bind_str(st, 4, l->arch);
	kb_bind_str(st, 5, l->clock);
	kb_bind_str(st, 6, l->verdict);
	kb_bind_str(st, 7, l->tried);
	kb_bind_str(st, 8, l->outcome);
	sqlite3_bind_double(st, 9, l->created_at > 0 ? l->created_at : kf_wall_s());
	rc = sqlite3_step(st);
	kb_done(st);
	if (rc != SQLITE_DONE)
		return kb_dberr(kb, err, "cannot record a lesson");
	if (id)
		*id = sqlite3_last_insert_rowid(kb->db);
	return KF_OK;
}

#define LESSON_COLS                                                                                          \
	"l.id, l.task_id, l.run_id, coalesce(l.candidate_id, 0), l.arch, l.clock, l.verdict, l.tried, "      \
	"l.outcome, l.created_at, t.name"

static void lesson_row(sqlite3_stmt *st, struct kf_kb_lesson *l)
{
	l->id = sqlite3_column_int64(st, 0);
	l->task_id = sqlite3_column_int64(st, 1);
	l->run_id = sqlite3_column_int64(st, 2);
	l->candidate_id = sqlite3_column_int64(st, 3);
	l->arch = kb_col_str(st, 4);
	l->clock = kb_col_str(st, 5);
	l->verdict = kb_col_str(st, 6);
	l->tried = kb_col_str(st, 7);
	l->outcome = kb_col_str(st, 8);
	l->created_at = sqlite3_column_double(st, 9);
	l->task_name = kb_col_str(st, 10);
	l->same_task = false;
}

enum kf_status kf_kb_lessons_each(struct kf_kb *kb, int64_t run_id, kf_kb_lesson_fn fn, void *ctx,
				  struct kf_err *err)
{
	static const char sql[] = "SELECT " LESSON_COLS " FROM lessons l JOIN tasks t ON t.id = l.task_id "
				  "WHERE ?1 <= 0 OR l.run_id = ?1 ORDER BY l.id";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct kf_kb_lesson l;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		lesson_row(st, &l);
		if (fn(ctx, &l))
			break;
	}
	kb_done(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return kb_dberr(kb, err, "cannot read lessons");
	return KF_OK;
}

enum kf_status kf_kb_lessons_for(struct kf_kb *kb, const char *task_name, const char *arch, const char *clock,
				 int64_t exclude_run, size_t k, kf_kb_lesson_fn fn, void *ctx,
				 struct kf_err *err)
{
	/* same task first (pass 0), then the same category (pass 1); newest first in each */
	static const char sql[] =
	    "SELECT " LESSON_COLS ", t.name = ?1 AS same FROM lessons l JOIN tasks t ON t.id = l.task_id "
	    "WHERE (t.name = ?1 OR (t.category <> '' AND t.category = (SELECT category FROM tasks WHERE name "
	    "= ?1 "
	    "ORDER BY id DESC LIMIT 1))) AND (?2 <= 0 OR l.run_id <> ?2) AND (?3 IS NULL OR l.clock = ?3) "
	    "AND (?4 IS NULL OR l.arch = ?4 OR l.arch GLOB ?5) "
	    "ORDER BY same DESC, l.id DESC LIMIT 400";
	char family[32] = "", glob[40];
	char(*seen)[96];
	size_t n_seen = 0;
	sqlite3_stmt *st;
	int rc, stop = 0;

	if (!k)
		return KF_OK;
	if (k > 100)
		return kf_err_set(err, KF_ERR_RANGE, "at most 100 lessons at once");
	kf_kb_arch_family(arch, family, sizeof(family));
	snprintf(glob, sizeof(glob), "%s[0-9]*", family);
	if (!(seen = calloc(k, sizeof(*seen))))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (!(st = kb_stmt(kb, sql, err))) {
		free(seen);
		return KF_ERR_DB;
	}
	kb_bind_str(st, 1, task_name);
	sqlite3_bind_int64(st, 2, exclude_run);
	kb_bind_str_null(st, 3, clock);
	kb_bind_str_null(st, 4, arch);
	kb_bind_str(st, 5, arch && strcmp(family, arch) ? glob : "");
	while (!stop && n_seen < k && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct kf_kb_lesson l;
		char key[96];
		bool dup = false;
		lesson_row(st, &l);
		l.same_task = sqlite3_column_int(st, 11) != 0;
		snprintf(key, sizeof(key), "%s|%.80s", l.verdict, l.tried);
		for (size_t i = 0; i < n_seen && !dup; i++)
			dup = !strcmp(seen[i], key);
		if (dup)
			continue;
		snprintf(seen[n_seen++], sizeof(seen[0]), "%s", key);
		stop = fn(ctx, &l);
	}
	kb_done(st);
	free(seen);
	if (!stop && n_seen < k && rc != SQLITE_DONE)
		return kb_dberr(kb, err, "cannot read lessons");
	return KF_OK;
}
