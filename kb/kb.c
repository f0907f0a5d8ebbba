/* The knowledge base core: opening the SQLite file (WAL, busy timeout, foreign keys), forward migrations
 * from the embedded kb/sql/NNN-*.sql files, one transaction per recorded step, and the readers that
 * reports, resume and the CLI use. */
#define KB_DBERR_IMPL /* defines the real kb_dberr (see kb_int.h) */
#include "kb_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "embed.h"
#include "hash.h"
#include "task.h"

/* The migration files, in order: file i brings the schema from version i to i + 1. */
static const char *const migrations[] = {
    "kb/sql/001-base.sql",          "kb/sql/002-wins-fts.sql",
    "kb/sql/003-calls-lessons.sql", "kb/sql/004-timing-baselines.sql",
    "kb/sql/005-noise-band.sql",
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == KF_KB_SCHEMA_VERSION,
	       "one migration file per schema version");

/* How long a writer waits for another process's write lock before failing (ms). A recorded step takes
 * well under a millisecond, so 10 s only runs out when another process hangs holding the lock. */
#define KB_BUSY_TIMEOUT_MS 10000

void kf_kb_hash_hex(const void *data, size_t n, char out[65])
{
	kf_sha256_hex(data, n, out);
}

enum kf_status kb_dberr(struct kf_kb *kb, struct kf_err *err, const char *what)
{
	return kf_err_set(err, KF_ERR_DB, "%s: %s", what,
			  kb && kb->db ? sqlite3_errmsg(kb->db) : "no database");
}

enum kf_status kb_exec(struct kf_kb *kb, const char *sql, struct kf_err *err)
{
	char *msg = NULL;
	if (sqlite3_exec(kb->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		kf_err_set(err, KF_ERR_DB, "%s", msg ? msg : sqlite3_errmsg(kb->db));
		sqlite3_free(msg);
		return KF_ERR_DB;
	}
	return KF_OK;
}

sqlite3_stmt *kb_stmt(struct kf_kb *kb, const char *sql, struct kf_err *err)
{
	sqlite3_stmt *st;
	for (size_t i = 0; i < kb->n_stmt; i++)
		if (kb->stmt_sql[i] == sql) {
			sqlite3_reset(kb->stmt[i]);
			sqlite3_clear_bindings(kb->stmt[i]);
			return kb->stmt[i];
		}
	if (kb->n_stmt >= KB_STMT_CACHE) {
		kf_err_set(err, KF_ERR_INTERNAL, "kb statement cache is full");
		return NULL;
	}
	if (sqlite3_prepare_v3(kb->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		kf_err_set(err, KF_ERR_DB, "cannot prepare statement: %s", sqlite3_errmsg(kb->db));
		return NULL;
	}
	kb->stmt_sql[kb->n_stmt] = sql;
	kb->stmt[kb->n_stmt++] = st;
	return st;
}

int kb_bind_str(sqlite3_stmt *st, int i, const char *s)
{
	return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

int kb_bind_str_null(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

int kb_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	return id > 0 ? sqlite3_bind_int64(st, i, id) : sqlite3_bind_null(st, i);
}

const char *kb_col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? (const char *)s : "";
}

/* ---- transactions ---- */

enum kf_status kb_tx_begin(struct kf_kb *kb, struct kf_err *err)
{
	if (kb->flags & KF_KB_READONLY)
		return kf_err_set(err, KF_ERR_INVALID, "'%s' is open read-only", kb->path);
	if (kb->tx_depth == 0) {
		/* BEGIN IMMEDIATE takes the write lock now (waiting up to the busy timeout), so two writers
		 * never both hold read locks and deadlock on the upgrade. */
		if (sqlite3_exec(kb->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			return kb_dberr(kb, err, "cannot begin a transaction");
	} else {
		char sql[48];
		snprintf(sql, sizeof(sql), "SAVEPOINT kb%d", kb->tx_depth);
		if (sqlite3_exec(kb->db, sql, NULL, NULL, NULL) != SQLITE_OK)
			return kb_dberr(kb, err, "cannot open a savepoint");
	}
	kb->tx_depth++;
	return KF_OK;
}

enum kf_status kb_tx_end(struct kf_kb *kb, bool ok, struct kf_err *err)
{
	char sql[80];
	if (kb->tx_depth <= 0)
		return kf_err_set(err, KF_ERR_INTERNAL, "no transaction to end");
	kb->tx_depth--;
	if (kb->tx_depth == 0) {
		if (ok && sqlite3_exec(kb->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
			return KF_OK;
		if (ok)
			kb_dberr(kb, err, "cannot commit");
		sqlite3_exec(kb->db, "ROLLBACK", NULL, NULL, NULL);
		return ok ? KF_ERR_DB : KF_OK;
	}
	if (ok) {
		snprintf(sql, sizeof(sql), "RELEASE kb%d", kb->tx_depth);
	} else {
		snprintf(sql, sizeof(sql), "ROLLBACK TO kb%d; RELEASE kb%d", kb->tx_depth, kb->tx_depth);
	}
	if (sqlite3_exec(kb->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return kb_dberr(kb, err, "cannot end a savepoint");
	return KF_OK;
}

enum kf_status kf_kb_begin(struct kf_kb *kb, struct kf_err *err)
{
	return kb_tx_begin(kb, err);
}

enum kf_status kf_kb_commit(struct kf_kb *kb, struct kf_err *err)
{
	return kb_tx_end(kb, true, err);
}

void kf_kb_rollback(struct kf_kb *kb)
{
	if (!kb || kb->tx_depth == 0)
		return;
	kb->tx_depth = 0;
	sqlite3_exec(kb->db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---- open and migrate ---- */

static int read_user_version(struct kf_kb *kb, int *v, struct kf_err *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(kb->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return kb_dberr(kb, err, "cannot read the schema version");
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return kb_dberr(kb, err, "cannot read the schema version");
	}
	*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return KF_OK;
}

/* Applies every migration above the file's version, each in its own transaction together with the new
 * user_version, so a kill between two migrations leaves a consistent older version. The version is
 * re-read under the write lock: another process may have migrated meanwhile. */
static enum kf_status migrate(struct kf_kb *kb, struct kf_err *err)
{
	enum kf_status st;
	int v;
	for (;;) {
		if ((st = read_user_version(kb, &v, err)))
			return st;
		if (v > KF_KB_SCHEMA_VERSION)
			return kf_err_set(err, KF_ERR_UNSUPPORTED,
					  "'%s' has schema version %d, newer than this kforge's %d", kb->path,
					  v, KF_KB_SCHEMA_VERSION);
		kb->schema_version = v;
		if (v == KF_KB_SCHEMA_VERSION)
			return KF_OK;
		if (kb->flags & KF_KB_READONLY)
			return kf_err_set(
			    err, KF_ERR_INVALID,
			    "'%s' has schema version %d and needs an upgrade to %d; open it read-write once",
			    kb->path, v, KF_KB_SCHEMA_VERSION);
		if ((st = kb_tx_begin(kb, err)))
			return st;
		if ((st = read_user_version(kb, &v, err))) {
			kb_tx_end(kb, false, NULL);
			return st;
		}
		if (v < KF_KB_SCHEMA_VERSION) {
			size_t len;
			const char *sql = kf_embed_find(migrations[v], &len);
			char pragma[48];
			if (!sql) {
				kb_tx_end(kb, false, NULL);
				return kf_err_set(err, KF_ERR_INTERNAL, "schema file '%s' is not embedded",
						  migrations[v]);
			}
			snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
			if ((st = kb_exec(kb, sql, err)) || (st = kb_exec(kb, pragma, err))) {
				kb_tx_end(kb, false, NULL);
				return kf_err_prefix(err, "migrating '%s' to schema version %d", kb->path,
						     v + 1);
			}
		}
		if ((st = kb_tx_end(kb, true, err)))
			return st;
	}
}

static bool is_busy(struct kf_kb *kb)
{
	int rc = sqlite3_errcode(kb->db) & 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* The pragmas and migrations of a fresh connection (kf_kb_open retries them while the file is busy). */
static enum kf_status open_setup(struct kf_kb *kb, unsigned flags, struct kf_err *err)
{
	enum kf_status st;
	/* A file that is not a database fails here, on the first read. */
	if ((st = kb_exec(kb, "PRAGMA foreign_keys = ON", err)))
		return st;
	if (!(flags & KF_KB_READONLY)) {
		/* WAL: readers never block the writer and a killed writer leaves the last committed step.
		 * NORMAL syncs at checkpoints only: a process kill loses nothing committed; FULL also syncs
		 * each commit for power loss. */
		if ((st = kb_exec(kb, "PRAGMA journal_mode = WAL", err)))
			return st;
		if ((st = kb_exec(kb,
				  (flags & KF_KB_SYNC_FULL) ? "PRAGMA synchronous = FULL"
							    : "PRAGMA synchronous = NORMAL",
				  err)))
			return st;
	}
	/* Retrieval touches index pages all over a large file: a 64 MiB page cache and reads through mmap
	 * (256 MiB of address space, no copy, no syscall per page) keep a 100k-candidate query in memory. */
	if ((st = kb_exec(kb, "PRAGMA cache_size = -65536; PRAGMA mmap_size = 268435456", err)))
		return st;
	return migrate(kb, err);
}

enum kf_status kf_kb_open(const char *path, unsigned flags, struct kf_kb **out, struct kf_err *err)
{
	struct kf_kb *kb;
	struct stat sb;
	enum kf_status st;
	int oflags;

	*out = NULL;
	if (!path || !*path)
		return kf_err_set(err, KF_ERR_INVALID, "no database path");
	if ((flags & (KF_KB_READONLY | KF_KB_NOCREATE)) && stat(path, &sb) != 0)
		return kf_err_set(err, errno == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO, "cannot open '%s': %s",
				  path, strerror(errno));
	kb = calloc(1, sizeof(*kb));
	if (!kb || !(kb->path = kf_strdup(path))) {
		free(kb);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	kb->flags = flags;
	oflags =
	    SQLITE_OPEN_NOMUTEX |
	    ((flags & KF_KB_READONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	if (sqlite3_open_v2(path, &kb->db, oflags, NULL) != SQLITE_OK) {
		st = kf_err_set(err, KF_ERR_DB, "cannot open '%s': %s", path,
				kb->db ? sqlite3_errmsg(kb->db) : "out of memory");
		goto fail;
	}
	sqlite3_extended_result_codes(kb->db, 1);
	sqlite3_busy_timeout(kb->db, KB_BUSY_TIMEOUT_MS);
	/* Two processes opening a new file at once (bench --jobs) can meet SQLITE_BUSY in the journal-mode
	 * switch or the first migration without the busy handler being called (SQLite does not wait where
	 * waiting could deadlock): those steps are retried here, with a short sleep, up to the same timeout.
	 */
	for (double t0 = kf_now_ms();;) {
		st = open_setup(kb, flags, err);
		if (!st || !is_busy(kb) || kf_now_ms() - t0 > KB_BUSY_TIMEOUT_MS)
			break;
		kf_err_clear(err);
		usleep(20000);
	}
	if (st) {
		if (st == KF_ERR_DB)
			kf_err_prefix(err, "cannot open '%s'", path);
		kf_kb_close(kb);
		return st;
	}
	*out = kb;
	return KF_OK;
fail:
	kf_kb_close(kb);
	return st;
}

void kf_kb_close(struct kf_kb *kb)
{
	if (!kb)
		return;
	if (kb->tx_depth)
		kf_kb_rollback(kb);
	for (size_t i = 0; i < kb->n_stmt; i++)
		sqlite3_finalize(kb->stmt[i]);
	sqlite3_close(kb->db);
	free(kb->path);
	free(kb);
}

int kf_kb_schema_version(struct kf_kb *kb)
{
	return kb->schema_version;
}

enum kf_status kf_kb_check(struct kf_kb *kb, struct kf_err *err)
{
	sqlite3_stmt *st;
	struct kf_buf msg = KF_BUF_INIT(900);
	int rc, n = 0;

	if (sqlite3_prepare_v2(kb->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return kb_dberr(kb, err, "integrity check");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *s = kb_col_str(st, 0);
		if (strcmp(s, "ok")) {
			kf_buf_addf(&msg, "%s%s", n++ ? "; " : "", s);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		kf_buf_release(&msg);
		return kb_dberr(kb, err, "integrity check");
	}
	if (sqlite3_prepare_v2(kb->db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK) {
		kf_buf_release(&msg);
		return kb_dberr(kb, err, "foreign key check");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		kf_buf_addf(&msg, "%sforeign key: %s row %lld -> %s", n++ ? "; " : "", kb_col_str(st, 0),
			    (long long)sqlite3_column_int64(st, 1), kb_col_str(st, 2));
	sqlite3_finalize(st);
	if (n) {
		kf_err_set(err, KF_ERR_DB, "'%s' fails its checks: %s", kb->path, msg.data);
		kf_buf_release(&msg);
		return KF_ERR_DB;
	}
	kf_buf_release(&msg);
	return rc == SQLITE_DONE ? KF_OK : kb_dberr(kb, err, "foreign key check");
}

/* ---- recording ---- */

static enum kf_status need(const void *p, const char *what, struct kf_err *err)
{
	return p ? KF_OK : kf_err_set(err, KF_ERR_INVALID, "a record needs '%s'", what);
}

static enum kf_status step_done(struct kf_kb *kb, sqlite3_stmt *st, const char *what, struct kf_err *err)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return kb_dberr(kb, err, what);
	return KF_OK;
}

enum kf_status kf_kb_task_put(struct kf_kb *kb, const struct kf_kb_task *t, int64_t *id, struct kf_err *err)
{
	static const char ins[] =
	    "INSERT INTO tasks (name, hash, category, level, title, description, created_at) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name, hash) DO NOTHING";
	static const char sel[] = "SELECT id FROM tasks WHERE name = ?1 AND hash = ?2";
	sqlite3_stmt *st;
	enum kf_status s;
	int64_t got = 0;

	if ((s = need(t->name, "name", err)) || (s = need(t->hash, "hash", err)))
		return s;
	if ((s = kb_tx_begin(kb, err)))
		return s;
	if (!(st = kb_stmt(kb, ins, err)))
		goto fail;
	kb_bind_str(st, 1, t->name);
	kb_bind_str(st, 2, t->hash);
	kb_bind_str(st, 3, t->category);
	sqlite3_bind_int(st, 4, t->level);
	kb_bind_str(st, 5, t->title);
	kb_bind_str(st, 6, t->description);
	sqlite3_bind_double(st, 7, t->created_at > 0 ? t->created_at : kf_wall_s());
	if ((s = step_done(kb, st, "cannot record a task", err)))
		goto fail;
	if (!(st = kb_stmt(kb, sel, err)))
		goto fail;
	kb_bind_str(st, 1, t->name);
	kb_bind_str(st, 2, t->hash);
	if (sqlite3_step(st) == SQLITE_ROW)
		got = sqlite3_column_int64(st, 0);
	kb_done(st);
	if (!got) {
		kb_dberr(kb, err, "cannot find the task just recorded");
		goto fail;
	}
	if ((s = kb_tx_end(kb, true, err)))
		return s;
	if (id)
		*id = got;
	return KF_OK;
fail:
	kb_tx_end(kb, false, NULL);
	return err ? err->code : KF_ERR_DB;
}

enum kf_status kf_kb_task_put_loaded(struct kf_kb *kb, const struct kf_task *task, int64_t *id,
				     struct kf_err *err)
{
	struct kf_kb_task t = {0};
	t.name = task->name;
	t.hash = task->hash;
	t.category = task->category;
	t.level = task->level;
	t.title = task->title;
	t.description = task->description;
	return kf_kb_task_put(kb, &t, id, err);
}

enum kf_status kf_kb_task_find(struct kf_kb *kb, const char *name, int64_t *id, struct kf_err *err)
{
	static const char sql[] = "SELECT id FROM tasks WHERE name = ?1 ORDER BY id DESC LIMIT 1";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	int rc;
	if (!st)
		return KF_ERR_DB;
	kb_bind_str(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	kb_done(st);
	if (rc == SQLITE_ROW)
		return KF_OK;
	if (rc == SQLITE_DONE)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no task named '%s' in the knowledge base", name);
	return kb_dberr(kb, err, "cannot look up a task");
}

static void make_uid(char out[33])
{
	unsigned char r[16];
	size_t got = 0;
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(r)) {
		/* No entropy source: time and pid are still unique enough to tell runs apart in a merge. */
		uint64_t a = kf_now_ns(), b = (uint64_t)getpid() ^ ((uint64_t)time(NULL) << 20);
		memcpy(r, &a, 8);
		memcpy(r + 8, &b, 8);
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

enum kf_status kf_kb_run_begin(struct kf_kb *kb, const struct kf_kb_run *r, int64_t *id, struct kf_err *err)
{
	static const char ins[] =
	    "INSERT INTO runs (uid, task_id, strategy, provider, model, backend, seed, budget_calls, "
	    "budget_tokens, budget_usd, budget_time_s, config, status, started_at, updated_at, finished_at, "
	    "spend_usd, n_calls, tokens_in, tokens_out) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
	    "?20)";
	sqlite3_stmt *st;
	enum kf_status s;
	char uid[33];
	double now = kf_wall_s();

	if (r->task_id <= 0)
		return kf_err_set(err, KF_ERR_INVALID, "a run needs a task");
	if (kb_has_secret(r->config))
		return kf_err_set(err, KF_ERR_INVALID,
				  "a run's config holds what looks like an API key; keys are never stored");
	if (!r->uid)
		make_uid(uid);
	if ((s = kb_tx_begin(kb, err)))
		return s;
	if (!(st = kb_stmt(kb, ins, err)))
		goto fail;
	kb_bind_str(st, 1, r->uid ? r->uid : uid);
	sqlite3_bind_int64(st, 2, r->task_id);
	kb_bind_str(st, 3, r->strategy);
	kb_bind_str(st, 4, r->provider);
	kb_bind_str(st, 5, r->model);
	kb_bind_str(st, 6, r->backend);
	sqlite3_bind_int64(st, 7, r->seed);
	sqlite3_bind_int64(st, 8, r->budget_calls);
	sqlite3_bind_int64(st, 9, r->budget_tokens);
	sqlite3_bind_double(st, 10, r->budget_usd);
	sqlite3_bind_double(st, 11, r->budget_time_s);
	kb_bind_str(st, 12, r->config && *r->config ? r->config : "{}");
	kb_bind_str(st, 13, r->status && *r->status ? r->status : "running");
	sqlite3_bind_double(st, 14, r->started_at > 0 ? r->started_at : now);
	sqlite3_bind_double(st, 15, r->updated_at > 0 ? r->updated_at : now);
	sqlite3_bind_double(st, 16, r->finished_at);
	sqlite3_bind_double(st, 17, r->spend_usd);
	sqlite3_bind_int64(st, 18, r->n_calls);
	sqlite3_bind_int64(st, 19, r->tokens_in);
	sqlite3_bind_int64(st, 20, r->tokens_out);
	if ((s = step_done(kb, st, "cannot record a run", err)))
		goto fail;
	if (id)
		*id = sqlite3_last_insert_rowid(kb->db);
	return kb_tx_end(kb, true, err);
fail:
	kb_tx_end(kb, false, NULL);
	return err ? err->code : KF_ERR_DB;
}

enum kf_status kf_kb_run_set_status(struct kf_kb *kb, int64_t run_id, const char *status, struct kf_err *err)
{
	static const char sql[] = "UPDATE runs SET status = ?2, updated_at = ?3, "
				  "finished_at = CASE WHEN ?2 = 'running' THEN 0 ELSE ?3 END WHERE id = ?1";
	sqlite3_stmt *st;
	enum kf_status s;
	int changed;

	if (!status || !*status)
		return kf_err_set(err, KF_ERR_INVALID, "a run status is needed");
	if ((s = kb_tx_begin(kb, err)))
		return s;
	if (!(st = kb_stmt(kb, sql, err))) {
		kb_tx_end(kb, false, NULL);
		return KF_ERR_DB;
	}
	sqlite3_bind_int64(st, 1, run_id);
	kb_bind_str(st, 2, status);
	sqlite3_bind_double(st, 3, kf_wall_s());
	if ((s = step_done(kb, st, "cannot update a run", err))) {
		kb_tx_end(kb, false, NULL);
		return s;
	}
	changed = sqlite3_changes(kb->db);
	if (!changed) {
		kb_tx_end(kb, false, NULL);
		return kf_err_set(err, KF_ERR_NOTFOUND, "no run %lld", (long long)run_id);
	}
	return kb_tx_end(kb, true, err);
}

enum kf_status kf_kb_record_llm_call(struct kf_kb *kb, const struct kf_kb_llm_call *c, int64_t *id,
				     int *seq_out, struct kf_err *err)
{
	static const char next_seq[] = "SELECT coalesce(max(seq) + 1, 0) FROM llm_calls WHERE run_id = ?1";
	static const char ins[] =
	    "INSERT INTO llm_calls (run_id, seq, provider, model, prompt, response, "
	    "finish_reason, tokens_in, "
	    "tokens_out, cost_usd, latency_ms, error, request_id, created_at, purpose, outcome, "
	    "failure, reason, tokens_cached, tokens_cache_write, tokens_reasoning, endpoint) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
	    "?17, ?18, ?19, ?20, ?21, ?22)";
	static const char upd[] = "UPDATE runs SET n_calls = n_calls + 1, tokens_in = tokens_in + ?2, "
				  "tokens_out = tokens_out + ?3, "
				  "spend_usd = spend_usd + ?4, updated_at = ?5 WHERE id = ?1";
	sqlite3_stmt *st;
	enum kf_status s;
	int seq = c->seq;
	double now = kf_wall_s();

	if (c->run_id <= 0)
		return kf_err_set(err, KF_ERR_INVALID, "an llm call needs a run");
	/* The request is stored as messages, never headers; a key pasted into a message is refused too. */
	if (kb_has_secret(c->prompt) || kb_has_secret(c->error) || kb_has_secret(c->request_id))
		return kf_err_set(err, KF_ERR_INVALID,
				  "an llm call holds what looks like an API key; keys are never stored");
	if ((s = kb_tx_begin(kb, err)))
		return s;
	if (seq < 0) {
		if (!(st = kb_stmt(kb, next_seq, err)))
			goto fail;
		sqlite3_bind_int64(st, 1, c->run_id);
		seq = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
		kb_done(st);
	}
	if (!(st = kb_stmt(kb, ins, err)))
		goto fail;
	sqlite3_bind_int64(st, 1, c->run_id);
	sqlite3_bind_int(st, 2, seq);
	kb_bind_str(st, 3, c->provider);
	kb_bind_str(st, 4, c->model);
	kb_bind_str(st, 5, c->prompt && *c->prompt ? c->prompt : "[]");
	kb_bind_str(st, 6, c->response);
	kb_bind_str(st, 7, c->finish_reason);
	sqlite3_bind_int64(st, 8, c->tokens_in);
	sqlite3_bind_int64(st, 9, c->tokens_out);
	sqlite3_bind_double(st, 10, c->cost_usd);
	sqlite3_bind_double(st, 11, c->latency_ms);
	kb_bind_str_null(st, 12, c->error);
	kb_bind_str(st, 13, c->request_id);
	sqlite3_bind_double(st, 14, c->created_at > 0 ? c->created_at : now);
	kb_bind_str(st, 15, c->purpose && *c->purpose ? c->purpose : "candidate");
	kb_bind_str(st, 16, c->outcome ? c->outcome : c->error ? "failed" : "");
	kb_bind_str(st, 17, c->failure);
	kb_bind_str(st, 18, c->reason);
	sqlite3_bind_int64(st, 19, c->tokens_cached);
	sqlite3_bind_int64(st, 20, c->tokens_cache_write);
	sqlite3_bind_int64(st, 21, c->tokens_reasoning);
	kb_bind_str(st, 22, c->endpoint);
	if ((s = step_done(kb, st, "cannot record an llm call", err)))
		goto fail;
	if (id)
		*id = sqlite3_last_insert_rowid(kb->db);
	if (!(st = kb_stmt(kb, upd, err)))
		goto fail;
	sqlite3_bind_int64(st, 1, c->run_id);
	sqlite3_bind_int64(st, 2, c->tokens_in);
	sqlite3_bind_int64(st, 3, c->tokens_out);
	sqlite3_bind_double(st, 4, c->cost_usd);
	sqlite3_bind_double(st, 5, now);
	if ((s = step_done(kb, st, "cannot update the run's counters", err)))
		goto fail;
	if (seq_out)
		*seq_out = seq;
	return kb_tx_end(kb, true, err);
fail:
	kb_tx_end(kb, false, NULL);
	return err ? err->code : KF_ERR_DB;
}

enum kf_status kb_insert_candidate(struct kf_kb *kb, const struct kf_kb_candidate *c, int64_t *id,
				   struct kf_err *err)
{
	static const char run_task[] = "SELECT task_id FROM runs WHERE id = ?1";
	static const char ins[] =
	    "INSERT INTO candidates (run_id, task_id, parent_id, parent2_id, "
	    "llm_call_id, generation, island, "
	    "node, edit_kind, source, source_hash, tags, change, created_at, strategy_no) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
	sqlite3_stmt *st;
	enum kf_status s;
	int64_t task_id = c->task_id;
	char hash[65];
	struct kf_buf tags = KF_BUF_INIT(4096);
	size_t len;

	if ((s = need(c->source, "source", err)))
		return s;
	if (c->run_id <= 0)
		return kf_err_set(err, KF_ERR_INVALID, "a candidate needs a run");
	len = strlen(c->source);
	if (task_id <= 0) {
		if (!(st = kb_stmt(kb, run_task, err)))
			return KF_ERR_DB;
		sqlite3_bind_int64(st, 1, c->run_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			task_id = sqlite3_column_int64(st, 0);
		kb_done(st);
		if (task_id <= 0)
			return kf_err_set(err, KF_ERR_NOTFOUND, "no run %lld", (long long)c->run_id);
	}
	if (!c->source_hash)
		kf_kb_hash_hex(c->source, len, hash);
	if (!c->tags && (s = kf_kb_tags_extract(c->source, len, &tags, err)))
		return s;
	if (!(st = kb_stmt(kb, ins, err))) {
		kf_buf_release(&tags);
		return KF_ERR_DB;
	}
	sqlite3_bind_int64(st, 1, c->run_id);
	sqlite3_bind_int64(st, 2, task_id);
	kb_bind_id(st, 3, c->parent_id);
	kb_bind_id(st, 4, c->parent2_id);
	kb_bind_id(st, 5, c->llm_call_id);
	sqlite3_bind_int(st, 6, c->generation);
	sqlite3_bind_int(st, 7, c->island);
	sqlite3_bind_int64(st, 8, c->node);
	kb_bind_str(st, 9, c->edit_kind && *c->edit_kind ? c->edit_kind : "rewrite");
	sqlite3_bind_text(st, 10, c->source, (int)len, SQLITE_STATIC);
	kb_bind_str(st, 11, c->source_hash ? c->source_hash : hash);
	kb_bind_str(st, 12, c->tags ? c->tags : tags.data);
	kb_bind_str(st, 13, c->change);
	sqlite3_bind_double(st, 14, c->created_at > 0 ? c->created_at : kf_wall_s());
	sqlite3_bind_int(st, 15, c->strategy_no);
	s = step_done(kb, st, "cannot record a candidate", err);
	kf_buf_release(&tags);
	if (!s && id)
		*id = sqlite3_last_insert_rowid(kb->db);
	return s;
}

enum kf_status kf_kb_record_candidate(struct kf_kb *kb, const struct kf_kb_candidate *c, int64_t *id,
				      struct kf_err *err)
{
	enum kf_status s = kb_tx_begin(kb, err);
	if (s)
		return s;
	s = kb_insert_candidate(kb, c, id, err);
	if (s) {
		kb_tx_end(kb, false, NULL);
		return s;
	}
	return kb_tx_end(kb, true, err);
}

enum kf_status kb_insert_eval(struct kf_kb *kb, const struct kf_kb_eval *e,
			      const struct kf_kb_timing *timings, size_t n_timings, int64_t *id,
			      struct kf_err *err)
{
	static const char ins[] = "INSERT INTO evaluations (candidate_id, backend, arch, toolchain, device, "
				  "dtype, verdict, reason, seed, "
				  "speedup, wall_ms, created_at, task_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
				  "?7, ?8, ?9, ?10, ?11, ?12, "
				  "(SELECT task_id FROM candidates WHERE id = ?1))";
	static const char ins_shape[] =
	    "INSERT INTO eval_shapes (evaluation_id, idx, dims, status, max_abs, max_rel, detail) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
	static const char ins_timing[] =
	    "INSERT INTO timings (candidate_id, evaluation_id, shape, clock, n_samples, median_ms, iqr_ms, "
	    "ci_lo_ms, ci_hi_ms, ref_median_ms, speedup, speedup_ci_lo, speedup_ci_hi, created_at, "
	    "noise_band, aa_lo, aa_hi) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
	/* A later evaluation must beat the win strictly, so the first of equals keeps it. */
	static const char win[] =
	    "INSERT INTO wins (task_id, arch, dtype, candidate_id, evaluation_id, speedup, updated_at) "
	    "SELECT task_id, ?2, ?3, id, ?4, ?5, ?6 FROM candidates WHERE id = ?1 "
	    "ON CONFLICT (task_id, arch, dtype) DO UPDATE SET candidate_id = excluded.candidate_id, "
	    "evaluation_id = excluded.evaluation_id, speedup = excluded.speedup, updated_at = "
	    "excluded.updated_at "
	    "WHERE excluded.speedup > wins.speedup";
	sqlite3_stmt *st;
	enum kf_status s;
	int64_t eid;
	double now = kf_wall_s(), at = e->created_at > 0 ? e->created_at : now;

	if ((s = need(e->verdict, "verdict", err)))
		return s;
	if (e->candidate_id <= 0)
		return kf_err_set(err, KF_ERR_INVALID, "an evaluation needs a candidate");
	if (!isfinite(e->speedup) || e->speedup < 0)
		return kf_err_set(err, KF_ERR_INVALID, "an evaluation's speedup must be finite and >= 0");
	if (!(st = kb_stmt(kb, ins, err)))
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, e->candidate_id);
	kb_bind_str(st, 2, e->backend);
	kb_bind_str(st, 3, e->arch);
	kb_bind_str(st, 4, e->toolchain);
	kb_bind_str(st, 5, e->device);
	kb_bind_str(st, 6, e->dtype);
	kb_bind_str(st, 7, e->verdict);
	kb_bind_str(st, 8, e->reason);
	sqlite3_bind_int64(st, 9, e->seed);
	sqlite3_bind_double(st, 10, e->speedup);
	sqlite3_bind_double(st, 11, e->wall_ms);
	sqlite3_bind_double(st, 12, at);
	if ((s = step_done(kb, st, "cannot record an evaluation", err)))
		return s;
	eid = sqlite3_last_insert_rowid(kb->db);
	for (size_t i = 0; i < e->n_shapes; i++) {
		const struct kf_kb_shape_row *r = &e->shapes[i];
		if (!(st = kb_stmt(kb, ins_shape, err)))
			return KF_ERR_DB;
		sqlite3_bind_int64(st, 1, eid);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		kb_bind_str(st, 3, r->dims && *r->dims ? r->dims : "{}");
		kb_bind_str(st, 4, r->status);
		if (isfinite(r->max_abs))
			sqlite3_bind_double(st, 5, r->max_abs);
		if (isfinite(r->max_rel))
			sqlite3_bind_double(st, 6, r->max_rel);
		kb_bind_str(st, 7, r->detail);
		if ((s = step_done(kb, st, "cannot record a shape row", err)))
			return s;
	}
	for (size_t i = 0; i < n_timings; i++) {
		const struct kf_kb_timing *t = &timings[i];
		if (!(st = kb_stmt(kb, ins_timing, err)))
			return KF_ERR_DB;
		sqlite3_bind_int64(st, 1, e->candidate_id);
		sqlite3_bind_int64(st, 2, eid);
		kb_bind_str(st, 3, t->shape && *t->shape ? t->shape : "{}");
		kb_bind_str(st, 4, t->clock);
		sqlite3_bind_int(st, 5, t->n_samples);
		sqlite3_bind_double(st, 6, t->median_ms);
		sqlite3_bind_double(st, 7, t->iqr_ms);
		sqlite3_bind_double(st, 8, t->ci_lo_ms);
		sqlite3_bind_double(st, 9, t->ci_hi_ms);
		sqlite3_bind_double(st, 10, t->ref_median_ms);
		sqlite3_bind_double(st, 11, t->speedup);
		sqlite3_bind_double(st, 12, t->speedup_ci_lo);
		sqlite3_bind_double(st, 13, t->speedup_ci_hi);
		sqlite3_bind_double(st, 14, t->created_at > 0 ? t->created_at : at);
		sqlite3_bind_double(st, 15, isfinite(t->noise_band) && t->noise_band > 0 ? t->noise_band : 0);
		sqlite3_bind_double(st, 16, isfinite(t->aa_lo) ? t->aa_lo : 0);
		sqlite3_bind_double(st, 17, isfinite(t->aa_hi) ? t->aa_hi : 0);
		if ((s = step_done(kb, st, "cannot record a timing", err)))
			return s;
		if (t->n_baselines && (s = kb_insert_timing_baselines(kb, sqlite3_last_insert_rowid(kb->db),
								      t->baselines, t->n_baselines, err)))
			return s;
	}
	if (!strcmp(e->verdict, "pass") && e->speedup > 0) {
		if (!(st = kb_stmt(kb, win, err)))
			return KF_ERR_DB;
		sqlite3_bind_int64(st, 1, e->candidate_id);
		kb_bind_str(st, 2, e->arch);
		kb_bind_str(st, 3, e->dtype);
		sqlite3_bind_int64(st, 4, eid);
		sqlite3_bind_double(st, 5, e->speedup);
		sqlite3_bind_double(st, 6, at);
		if ((s = step_done(kb, st, "cannot update the wins", err)))
			return s;
	}
	if (id)
		*id = eid;
	return KF_OK;
}

enum kf_status kf_kb_record_eval(struct kf_kb *kb, const struct kf_kb_eval *e,
				 const struct kf_kb_timing *timings, size_t n_timings, int64_t *id,
				 struct kf_err *err)
{
	enum kf_status s = kb_tx_begin(kb, err);
	if (s)
		return s;
	if ((s = kb_insert_eval(kb, e, timings, n_timings, id, err))) {
		kb_tx_end(kb, false, NULL);
		return s;
	}
	return kb_tx_end(kb, true, err);
}

enum kf_status kf_kb_record_step(struct kf_kb *kb, const struct kf_kb_candidate *c,
				 const struct kf_kb_eval *e, const struct kf_kb_timing *timings,
				 size_t n_timings, int64_t *cand_id, int64_t *eval_id, struct kf_err *err)
{
	enum kf_status s = kb_tx_begin(kb, err);
	int64_t cid = 0, eid = 0;
	if (s)
		return s;
	if ((s = kb_insert_candidate(kb, c, &cid, err)))
		goto fail;
	if (e) {
		struct kf_kb_eval ec = *e;
		ec.candidate_id = cid;
		if ((s = kb_insert_eval(kb, &ec, timings, n_timings, &eid, err)))
			goto fail;
	}
	if ((s = kb_tx_end(kb, true, err)))
		return s;
	if (cand_id)
		*cand_id = cid;
	if (eval_id)
		*eval_id = eid;
	return KF_OK;
fail:
	kb_tx_end(kb, false, NULL);
	return s;
}

/* ---- reading ---- */

/* Steps st calling conv+fn per row; resets st. */
#define KB_ITERATE(kb, st, rowvar, conv, fn, ctx, err, what)                                                 \
	do {                                                                                                 \
		int rc_;                                                                                     \
		while ((rc_ = sqlite3_step(st)) == SQLITE_ROW) {                                             \
			(conv)(st, &(rowvar));                                                               \
			if ((fn)(ctx, &(rowvar)))                                                            \
				break;                                                                       \
		}                                                                                            \
		if (rc_ != SQLITE_ROW && rc_ != SQLITE_DONE) {                                               \
			kb_dberr(kb, err, what);                                                             \
			sqlite3_reset(st);                                                                   \
			return KF_ERR_DB;                                                                    \
		}                                                                                            \
		sqlite3_reset(st);                                                                           \
	} while (0)

/* The body of a get-by-id reader: one row by id through conv to fn, KF_ERR_NOTFOUND naming noun. */
#define KB_GET_BY_ID(kb, sql, id, rowtype, conv, fn, ctx, err, noun)                                         \
	do {                                                                                                 \
		sqlite3_stmt *st_ = kb_stmt(kb, sql, err);                                                   \
		rowtype row_;                                                                                \
		int rc_;                                                                                     \
		if (!st_)                                                                                    \
			return KF_ERR_DB;                                                                    \
		sqlite3_bind_int64(st_, 1, id);                                                              \
		rc_ = sqlite3_step(st_);                                                                     \
		if (rc_ == SQLITE_ROW) {                                                                     \
			(conv)(st_, &row_);                                                                  \
			(fn)(ctx, &row_);                                                                    \
		}                                                                                            \
		kb_done(st_);                                                                                \
		if (rc_ == SQLITE_DONE)                                                                      \
			return kf_err_set(err, KF_ERR_NOTFOUND, "no " noun " %lld", (long long)(id));        \
		return rc_ == SQLITE_ROW ? KF_OK : kb_dberr(kb, err, "cannot read a " noun);                 \
	} while (0)

#define TASK_COLS "id, name, hash, category, level, title, description, created_at"
static void task_row(sqlite3_stmt *st, struct kf_kb_task *t)
{
	t->id = sqlite3_column_int64(st, 0);
	t->name = kb_col_str(st, 1);
	t->hash = kb_col_str(st, 2);
	t->category = kb_col_str(st, 3);
	t->level = sqlite3_column_int(st, 4);
	t->title = kb_col_str(st, 5);
	t->description = kb_col_str(st, 6);
	t->created_at = sqlite3_column_double(st, 7);
}

enum kf_status kf_kb_task_get(struct kf_kb *kb, int64_t id, kf_kb_task_fn fn, void *ctx, struct kf_err *err)
{
	static const char sql[] = "SELECT " TASK_COLS " FROM tasks WHERE id = ?1";
	KB_GET_BY_ID(kb, sql, id, struct kf_kb_task, task_row, fn, ctx, err, "task");
}

enum kf_status kf_kb_tasks_each(struct kf_kb *kb, kf_kb_task_fn fn, void *ctx, struct kf_err *err)
{
	static const char sql[] = "SELECT " TASK_COLS " FROM tasks ORDER BY id";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct kf_kb_task t;
	if (!st)
		return KF_ERR_DB;
	KB_ITERATE(kb, st, t, task_row, fn, ctx, err, "cannot read tasks");
	return KF_OK;
}

#define RUN_COLS                                                                                             \
	"r.id, r.uid, r.task_id, r.strategy, r.provider, r.model, r.backend, r.seed, r.budget_calls, "       \
	"r.budget_tokens, r.budget_usd, r.budget_time_s, r.config, r.status, r.started_at, r.updated_at, "   \
	"r.finished_at, r.spend_usd, r.n_calls, r.tokens_in, r.tokens_out, "                                 \
	"(SELECT count(*) FROM candidates c WHERE c.run_id = r.id)"
static void run_row(sqlite3_stmt *st, struct kf_kb_run *r)
{
	r->id = sqlite3_column_int64(st, 0);
	r->uid = kb_col_str(st, 1);
	r->task_id = sqlite3_column_int64(st, 2);
	r->strategy = kb_col_str(st, 3);
	r->provider = kb_col_str(st, 4);
	r->model = kb_col_str(st, 5);
	r->backend = kb_col_str(st, 6);
	r->seed = sqlite3_column_int64(st, 7);
	r->budget_calls = sqlite3_column_int64(st, 8);
	r->budget_tokens = sqlite3_column_int64(st, 9);
	r->budget_usd = sqlite3_column_double(st, 10);
	r->budget_time_s = sqlite3_column_double(st, 11);
	r->config = kb_col_str(st, 12);
	r->status = kb_col_str(st, 13);
	r->started_at = sqlite3_column_double(st, 14);
	r->updated_at = sqlite3_column_double(st, 15);
	r->finished_at = sqlite3_column_double(st, 16);
	r->spend_usd = sqlite3_column_double(st, 17);
	r->n_calls = sqlite3_column_int64(st, 18);
	r->tokens_in = sqlite3_column_int64(st, 19);
	r->tokens_out = sqlite3_column_int64(st, 20);
	r->n_candidates = sqlite3_column_int64(st, 21);
}

enum kf_status kf_kb_run_get(struct kf_kb *kb, int64_t id, kf_kb_run_fn fn, void *ctx, struct kf_err *err)
{
	static const char sql[] = "SELECT " RUN_COLS " FROM runs r WHERE r.id = ?1";
	KB_GET_BY_ID(kb, sql, id, struct kf_kb_run, run_row, fn, ctx, err, "run");
}

enum kf_status kf_kb_runs_each(struct kf_kb *kb, int64_t task_id, kf_kb_run_fn fn, void *ctx,
			       struct kf_err *err)
{
	static const char sql[] =
	    "SELECT " RUN_COLS " FROM runs r WHERE ?1 <= 0 OR r.task_id = ?1 ORDER BY r.id";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct kf_kb_run r;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, task_id);
	KB_ITERATE(kb, st, r, run_row, fn, ctx, err, "cannot read runs");
	return KF_OK;
}

#define CAND_COLS                                                                                            \
	"id, run_id, task_id, parent_id, parent2_id, llm_call_id, generation, island, node, edit_kind, "     \
	"source, source_hash, tags, change, created_at, strategy_no"
static void cand_row(sqlite3_stmt *st, struct kf_kb_candidate *c)
{
	c->id = sqlite3_column_int64(st, 0);
	c->run_id = sqlite3_column_int64(st, 1);
	c->task_id = sqlite3_column_int64(st, 2);
	c->parent_id = sqlite3_column_int64(st, 3);
	c->parent2_id = sqlite3_column_int64(st, 4);
	c->llm_call_id = sqlite3_column_int64(st, 5);
	c->generation = sqlite3_column_int(st, 6);
	c->island = sqlite3_column_int(st, 7);
	c->node = sqlite3_column_int64(st, 8);
	c->edit_kind = kb_col_str(st, 9);
	c->source = kb_col_str(st, 10);
	c->source_hash = kb_col_str(st, 11);
	c->tags = kb_col_str(st, 12);
	c->change = kb_col_str(st, 13);
	c->created_at = sqlite3_column_double(st, 14);
	c->strategy_no = sqlite3_column_int(st, 15);
}

enum kf_status kf_kb_candidate_get(struct kf_kb *kb, int64_t id, kf_kb_candidate_fn fn, void *ctx,
				   struct kf_err *err)
{
	static const char sql[] = "SELECT " CAND_COLS " FROM candidates WHERE id = ?1";
	KB_GET_BY_ID(kb, sql, id, struct kf_kb_candidate, cand_row, fn, ctx, err, "candidate");
}

/* The statement of a listing scoped to one candidate (by_cand, ?1), one run (by_run, ?1) or everything
 * (all), whichever the ids ask for (a NULL by_cand: the listing has no candidate scope), bound. */
static sqlite3_stmt *kb_stmt_scoped(struct kf_kb *kb, const char *by_cand, const char *by_run,
				    const char *all, int64_t run_id, int64_t candidate_id, struct kf_err *err)
{
	bool cand = by_cand && candidate_id > 0, run = !cand && run_id > 0;
	sqlite3_stmt *st = kb_stmt(kb, cand ? by_cand : run ? by_run : all, err);
	if (st && (cand || run))
		sqlite3_bind_int64(st, 1, cand ? candidate_id : run_id);
	return st;
}

enum kf_status kf_kb_candidates_each(struct kf_kb *kb, int64_t run_id, kf_kb_candidate_fn fn, void *ctx,
				     struct kf_err *err)
{
	static const char one[] = "SELECT " CAND_COLS " FROM candidates WHERE run_id = ?1 ORDER BY id";
	static const char all[] = "SELECT " CAND_COLS " FROM candidates ORDER BY id";
	sqlite3_stmt *st = kb_stmt_scoped(kb, NULL, one, all, run_id, 0, err);
	struct kf_kb_candidate c;
	if (!st)
		return KF_ERR_DB;
	KB_ITERATE(kb, st, c, cand_row, fn, ctx, err, "cannot read candidates");
	return KF_OK;
}

#define CALL_COLS                                                                                            \
	"id, run_id, seq, provider, model, prompt, response, finish_reason, tokens_in, tokens_out, "         \
	"cost_usd, latency_ms, error, request_id, created_at, purpose, outcome, failure, reason, "           \
	"tokens_cached, tokens_cache_write, tokens_reasoning, endpoint"
static void call_row(sqlite3_stmt *st, struct kf_kb_llm_call *c)
{
	c->id = sqlite3_column_int64(st, 0);
	c->run_id = sqlite3_column_int64(st, 1);
	c->seq = sqlite3_column_int(st, 2);
	c->provider = kb_col_str(st, 3);
	c->model = kb_col_str(st, 4);
	c->prompt = kb_col_str(st, 5);
	c->response = kb_col_str(st, 6);
	c->finish_reason = kb_col_str(st, 7);
	c->tokens_in = sqlite3_column_int64(st, 8);
	c->tokens_out = sqlite3_column_int64(st, 9);
	c->cost_usd = sqlite3_column_double(st, 10);
	c->latency_ms = sqlite3_column_double(st, 11);
	c->error = sqlite3_column_type(st, 12) == SQLITE_NULL ? NULL : kb_col_str(st, 12);
	c->request_id = kb_col_str(st, 13);
	c->created_at = sqlite3_column_double(st, 14);
	c->purpose = kb_col_str(st, 15);
	c->outcome = kb_col_str(st, 16);
	c->failure = kb_col_str(st, 17);
	c->reason = kb_col_str(st, 18);
	c->tokens_cached = sqlite3_column_int64(st, 19);
	c->tokens_cache_write = sqlite3_column_int64(st, 20);
	c->tokens_reasoning = sqlite3_column_int64(st, 21);
	c->endpoint = kb_col_str(st, 22);
}

enum kf_status kf_kb_llm_calls_each(struct kf_kb *kb, int64_t run_id, kf_kb_llm_call_fn fn, void *ctx,
				    struct kf_err *err)
{
	static const char one[] = "SELECT " CALL_COLS " FROM llm_calls WHERE run_id = ?1 ORDER BY seq, id";
	static const char all[] = "SELECT " CALL_COLS " FROM llm_calls ORDER BY run_id, seq, id";
	sqlite3_stmt *st = kb_stmt_scoped(kb, NULL, one, all, run_id, 0, err);
	struct kf_kb_llm_call c;
	if (!st)
		return KF_ERR_DB;
	KB_ITERATE(kb, st, c, call_row, fn, ctx, err, "cannot read llm calls");
	return KF_OK;
}

enum kf_status kf_kb_llm_call_get(struct kf_kb *kb, int64_t id, kf_kb_llm_call_fn fn, void *ctx,
				  struct kf_err *err)
{
	static const char sql[] = "SELECT " CALL_COLS " FROM llm_calls WHERE id = ?1";
	KB_GET_BY_ID(kb, sql, id, struct kf_kb_llm_call, call_row, fn, ctx, err, "llm call");
}

#define EVAL_COLS                                                                                            \
	"e.id, e.candidate_id, e.backend, e.arch, e.toolchain, e.device, e.dtype, e.verdict, e.reason, "     \
	"e.seed, e.speedup, e.wall_ms, e.created_at"
static void eval_row(sqlite3_stmt *st, struct kf_kb_eval *e)
{
	e->id = sqlite3_column_int64(st, 0);
	e->candidate_id = sqlite3_column_int64(st, 1);
	e->backend = kb_col_str(st, 2);
	e->arch = kb_col_str(st, 3);
	e->toolchain = kb_col_str(st, 4);
	e->device = kb_col_str(st, 5);
	e->dtype = kb_col_str(st, 6);
	e->verdict = kb_col_str(st, 7);
	e->reason = kb_col_str(st, 8);
	e->seed = sqlite3_column_int64(st, 9);
	e->speedup = sqlite3_column_double(st, 10);
	e->wall_ms = sqlite3_column_double(st, 11);
	e->created_at = sqlite3_column_double(st, 12);
	e->n_shapes = 0;
	e->shapes = NULL;
}

struct shape_set {
	size_t n;
	struct kf_kb_shape_row *rows;
	char **strs; /* 3 per row: dims, status, detail */
};

static void shape_set_clear(struct shape_set *s)
{
	for (size_t i = 0; i < 3 * s->n; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* Copies an evaluation's shape rows out of the statement (their text would not outlive the next step). */
static enum kf_status load_shapes(struct kf_kb *kb, int64_t eval_id, struct shape_set *out,
				  struct kf_err *err)
{
	static const char sql[] = "SELECT dims, status, max_abs, max_rel, detail FROM eval_shapes WHERE "
				  "evaluation_id = ?1 ORDER BY idx";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	size_t cap = 0;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, eval_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct kf_kb_shape_row *r;
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			struct kf_kb_shape_row *nr = realloc(out->rows, nc * sizeof(*nr));
			char **ns = nr ? realloc(out->strs, 3 * nc * sizeof(*ns)) : NULL;
			if (nr)
				out->rows = nr;
			if (!ns) {
				kb_done(st);
				shape_set_clear(out);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			out->strs = ns;
			cap = nc;
		}
		r = &out->rows[out->n];
		out->strs[3 * out->n] = kf_strdup(kb_col_str(st, 0));
		out->strs[3 * out->n + 1] = kf_strdup(kb_col_str(st, 1));
		out->strs[3 * out->n + 2] = kf_strdup(kb_col_str(st, 4));
		out->n++;
		if (!out->strs[3 * out->n - 3] || !out->strs[3 * out->n - 2] || !out->strs[3 * out->n - 1]) {
			kb_done(st);
			shape_set_clear(out);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		r->dims = out->strs[3 * out->n - 3];
		r->status = out->strs[3 * out->n - 2];
		r->detail = out->strs[3 * out->n - 1];
		r->max_abs = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
		r->max_rel = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
	}
	kb_done(st);
	if (rc != SQLITE_DONE) {
		shape_set_clear(out);
		return kb_dberr(kb, err, "cannot read shape rows");
	}
	return KF_OK;
}

enum kf_status kf_kb_evals_each(struct kf_kb *kb, int64_t run_id, int64_t candidate_id, kf_kb_eval_fn fn,
				void *ctx, struct kf_err *err)
{
	static const char by_cand[] =
	    "SELECT " EVAL_COLS " FROM evaluations e WHERE e.candidate_id = ?1 ORDER BY e.id";
	static const char by_run[] =
	    "SELECT " EVAL_COLS " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
	    "WHERE c.run_id = ?1 ORDER BY e.id";
	static const char all[] = "SELECT " EVAL_COLS " FROM evaluations e ORDER BY e.id";
	sqlite3_stmt *st = kb_stmt_scoped(kb, by_cand, by_run, all, run_id, candidate_id, err);
	struct kf_kb_eval e;
	enum kf_status s;
	int rc;
	if (!st)
		return KF_ERR_DB;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct shape_set shapes;
		int stop;
		eval_row(st, &e);
		if ((s = load_shapes(kb, e.id, &shapes, err))) {
			kb_done(st);
			return s;
		}
		e.n_shapes = shapes.n;
		e.shapes = shapes.rows;
		stop = fn(ctx, &e);
		shape_set_clear(&shapes);
		if (stop)
			break;
	}
	kb_done(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return kb_dberr(kb, err, "cannot read evaluations");
	return KF_OK;
}

#define TIMING_COLS                                                                                          \
	"t.id, t.candidate_id, t.evaluation_id, t.shape, t.clock, t.n_samples, t.median_ms, t.iqr_ms, "      \
	"t.ci_lo_ms, t.ci_hi_ms, t.ref_median_ms, t.speedup, t.speedup_ci_lo, t.speedup_ci_hi, "             \
	"t.created_at, "                                                                                     \
	"t.noise_band, t.aa_lo, t.aa_hi"
static void timing_row(sqlite3_stmt *st, struct kf_kb_timing *t)
{
	t->id = sqlite3_column_int64(st, 0);
	t->candidate_id = sqlite3_column_int64(st, 1);
	t->evaluation_id = sqlite3_column_int64(st, 2);
	t->shape = kb_col_str(st, 3);
	t->clock = kb_col_str(st, 4);
	t->n_samples = sqlite3_column_int(st, 5);
	t->median_ms = sqlite3_column_double(st, 6);
	t->iqr_ms = sqlite3_column_double(st, 7);
	t->ci_lo_ms = sqlite3_column_double(st, 8);
	t->ci_hi_ms = sqlite3_column_double(st, 9);
	t->ref_median_ms = sqlite3_column_double(st, 10);
	t->speedup = sqlite3_column_double(st, 11);
	t->speedup_ci_lo = sqlite3_column_double(st, 12);
	t->speedup_ci_hi = sqlite3_column_double(st, 13);
	t->created_at = sqlite3_column_double(st, 14);
	t->noise_band = sqlite3_column_double(st, 15);
	t->aa_lo = sqlite3_column_double(st, 16);
	t->aa_hi = sqlite3_column_double(st, 17);
}

enum kf_status kf_kb_timings_each(struct kf_kb *kb, int64_t run_id, int64_t candidate_id, kf_kb_timing_fn fn,
				  void *ctx, struct kf_err *err)
{
	static const char by_cand[] =
	    "SELECT " TIMING_COLS " FROM timings t WHERE t.candidate_id = ?1 ORDER BY t.id";
	static const char by_run[] =
	    "SELECT " TIMING_COLS " FROM timings t JOIN candidates c ON c.id = t.candidate_id "
	    "WHERE c.run_id = ?1 ORDER BY t.id";
	static const char all[] = "SELECT " TIMING_COLS " FROM timings t ORDER BY t.id";
	sqlite3_stmt *st = kb_stmt_scoped(kb, by_cand, by_run, all, run_id, candidate_id, err);
	struct kf_kb_timing t;
	enum kf_status s;
	int rc;
	if (!st)
		return KF_ERR_DB;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct kb_timing_baselines bl;
		int stop;
		timing_row(st, &t);
		/* the row's text lives until the next step: the baselines' query is another statement */
		if ((s = kb_timing_baselines_load(kb, t.id, &bl, err))) {
			kb_done(st);
			return s;
		}
		t.n_baselines = bl.n;
		t.baselines = bl.v;
		stop = fn(ctx, &t);
		kb_timing_baselines_clear(&bl);
		if (stop)
			break;
	}
	kb_done(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return kb_dberr(kb, err, "cannot read timings");
	return KF_OK;
}

static void win_row(sqlite3_stmt *st, struct kf_kb_win *w)
{
	w->task_id = sqlite3_column_int64(st, 0);
	w->task_name = kb_col_str(st, 1);
	w->arch = kb_col_str(st, 2);
	w->dtype = kb_col_str(st, 3);
	w->candidate_id = sqlite3_column_int64(st, 4);
	w->evaluation_id = sqlite3_column_int64(st, 5);
	w->speedup = sqlite3_column_double(st, 6);
	w->updated_at = sqlite3_column_double(st, 7);
}

enum kf_status kf_kb_wins_each(struct kf_kb *kb, kf_kb_win_fn fn, void *ctx, struct kf_err *err)
{
	static const char sql[] =
	    "SELECT w.task_id, t.name, w.arch, w.dtype, w.candidate_id, w.evaluation_id, w.speedup, "
	    "w.updated_at "
	    "FROM wins w JOIN tasks t ON t.id = w.task_id ORDER BY t.name, w.task_id, w.arch, w.dtype";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct kf_kb_win w;
	if (!st)
		return KF_ERR_DB;
	KB_ITERATE(kb, st, w, win_row, fn, ctx, err, "cannot read wins");
	return KF_OK;
}

enum kf_status kf_kb_candidate_best(struct kf_kb *kb, int64_t candidate_id, const char *arch, double *speedup,
				    struct kf_err *err)
{
	static const char sql[] =
	    "SELECT coalesce(max(speedup), 0) FROM evaluations WHERE candidate_id = ?1 AND verdict = 'pass' "
	    "AND (?2 IS NULL OR arch = ?2)";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	int rc;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, candidate_id);
	kb_bind_str_null(st, 2, arch);
	rc = sqlite3_step(st);
	*speedup = rc == SQLITE_ROW ? sqlite3_column_double(st, 0) : 0;
	kb_done(st);
	return rc == SQLITE_ROW ? KF_OK : kb_dberr(kb, err, "cannot read a speedup");
}

enum kf_status kf_kb_run_best(struct kf_kb *kb, int64_t run_id, const char *arch, int64_t *cand_id,
			      double *speedup, struct kf_err *err)
{
	static const char sql[] =
	    "SELECT c.id, e.speedup FROM candidates c CROSS JOIN evaluations e ON e.candidate_id = c.id "
	    "WHERE c.run_id = ?1 AND e.verdict = 'pass' AND e.speedup > 0 AND (?2 IS NULL OR e.arch = ?2) "
	    "ORDER BY e.speedup DESC, e.id ASC LIMIT 1";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	int rc;
	*cand_id = 0;
	*speedup = 0;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	kb_bind_str_null(st, 2, arch);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*cand_id = sqlite3_column_int64(st, 0);
		*speedup = sqlite3_column_double(st, 1);
	}
	kb_done(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? KF_OK : kb_dberr(kb, err, "cannot read a run's best");
}

enum kf_status kf_kb_stats_get(struct kf_kb *kb, struct kf_kb_stats *out, struct kf_err *err)
{
	static const char sql[] =
	    "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM runs), (SELECT count(*) FROM "
	    "candidates), "
	    "(SELECT count(*) FROM llm_calls), (SELECT count(*) FROM evaluations), (SELECT count(*) FROM "
	    "timings), "
	    "(SELECT count(*) FROM wins), "
	    "(SELECT count(DISTINCT candidate_id) FROM evaluations WHERE verdict = 'pass'), "
	    "(SELECT coalesce(sum(tokens_in), 0) FROM llm_calls), (SELECT coalesce(sum(tokens_out), 0) FROM "
	    "llm_calls), "
	    "(SELECT coalesce(sum(cost_usd), 0) FROM llm_calls)";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	struct stat sb;
	int rc;
	memset(out, 0, sizeof(*out));
	if (!st)
		return KF_ERR_DB;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->n_tasks = sqlite3_column_int64(st, 0);
		out->n_runs = sqlite3_column_int64(st, 1);
		out->n_candidates = sqlite3_column_int64(st, 2);
		out->n_llm_calls = sqlite3_column_int64(st, 3);
		out->n_evaluations = sqlite3_column_int64(st, 4);
		out->n_timings = sqlite3_column_int64(st, 5);
		out->n_wins = sqlite3_column_int64(st, 6);
		out->n_verified = sqlite3_column_int64(st, 7);
		out->tokens_in = sqlite3_column_int64(st, 8);
		out->tokens_out = sqlite3_column_int64(st, 9);
		out->spend_usd = sqlite3_column_double(st, 10);
	}
	kb_done(st);
	if (rc != SQLITE_ROW)
		return kb_dberr(kb, err, "cannot read statistics");
	out->schema_version = kb->schema_version;
	if (stat(kb->path, &sb) == 0)
		out->file_bytes = (int64_t)sb.st_size;
	return KF_OK;
}
