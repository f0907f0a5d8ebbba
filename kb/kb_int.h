/* Private to kb/: the open-database struct, the statement cache and small SQLite helpers shared by
 * kb.c (schema, recording, reading), retrieve.c (examples, search), tags.c and io.c (export, import,
 * merge). */
#ifndef KF_KB_INT_H
#define KF_KB_INT_H

#include <sqlite3.h>

#include "kb.h"

#define KB_STMT_CACHE 128

struct kf_kb {
	sqlite3 *db;
	char *path;
	unsigned flags;
	int tx_depth; /* 0: no transaction; 1: BEGIN IMMEDIATE; more: savepoints */
	int schema_version;
	/* Prepared statements keyed by the address of their SQL text (a string literal at one call site has
	 * one address), so each statement is prepared once per connection. */
	const char *stmt_sql[KB_STMT_CACHE];
	sqlite3_stmt *stmt[KB_STMT_CACHE];
	size_t n_stmt;
};

/* The cached statement for sql, reset and with bindings cleared; NULL with err set on failure. The
 * caller resets it (kb_done) before returning so no read transaction stays open. */
sqlite3_stmt *kb_stmt(struct kf_kb *kb, const char *sql, struct kf_err *err);
static inline void kb_done(sqlite3_stmt *st)
{
	if (st)
		sqlite3_reset(st);
}
/* err = KF_ERR_DB "WHAT: sqlite message"; returns KF_ERR_DB. */
enum kf_status kb_dberr(struct kf_kb *kb, struct kf_err *err, const char *what);
#if defined(__clang_analyzer__) && !defined(KB_DBERR_IMPL)
/* For static analysis only (see kf_err_set in core/kf.h): kb_dberr always returns KF_ERR_DB. */
#define kb_dberr(kb, err, what) (kb_dberr((kb), (err), (what)), KF_ERR_DB)
#endif
/* Executes SQL text without results (several statements allowed). */
enum kf_status kb_exec(struct kf_kb *kb, const char *sql, struct kf_err *err);

/* Transactions: the outermost is BEGIN IMMEDIATE, inner ones are savepoints, so a failed inner step
 * rolls back only itself. kb_tx_end commits (ok) or rolls back (!ok) one level. */
enum kf_status kb_tx_begin(struct kf_kb *kb, struct kf_err *err);
enum kf_status kb_tx_end(struct kf_kb *kb, bool ok, struct kf_err *err);

/* Binds s, or "" when s is NULL (for NOT NULL columns). */
int kb_bind_str(sqlite3_stmt *st, int i, const char *s);
/* Binds s, or NULL. */
int kb_bind_str_null(sqlite3_stmt *st, int i, const char *s);
/* Binds id, or NULL when id <= 0. */
int kb_bind_id(sqlite3_stmt *st, int i, int64_t id);
/* Column text, never NULL. */
const char *kb_col_str(sqlite3_stmt *st, int i);

/* The inserts behind kf_kb_record_candidate/eval, without a transaction of their own (import reuses
 * them inside its single transaction). */
enum kf_status kb_insert_candidate(struct kf_kb *kb, const struct kf_kb_candidate *c, int64_t *id,
				   struct kf_err *err);
enum kf_status kb_insert_eval(struct kf_kb *kb, const struct kf_kb_eval *e,
			      const struct kf_kb_timing *timings, size_t n_timings, int64_t *id,
			      struct kf_err *err);

/* A timing's baselines (kb/baselines.c): inserted after their timing row (n at most
 * KF_KB_MAX_TIMING_BASELINES, each checked: name, a known status, kind and method, finite numbers), and
 * read back with their strings copied (kb_timing_baselines_clear frees them). */
enum kf_status kb_insert_timing_baselines(struct kf_kb *kb, int64_t timing_id,
					  const struct kf_kb_timing_baseline *v, size_t n,
					  struct kf_err *err);
struct kb_timing_baselines {
	size_t n;
	struct kf_kb_timing_baseline v[KF_KB_MAX_TIMING_BASELINES];
};
enum kf_status kb_timing_baselines_load(struct kf_kb *kb, int64_t timing_id, struct kb_timing_baselines *out,
					struct kf_err *err);
void kb_timing_baselines_clear(struct kb_timing_baselines *s);

/* True when s holds something that looks like an API key (which the knowledge base never stores). */
bool kb_has_secret(const char *s);

/* Derives "what changed" from the tag lists of a candidate and its parent, e.g. "+warp_shuffle -atomics". */
enum kf_status kb_tags_diff(const char *tags, const char *parent_tags, struct kf_buf *out);

#endif
