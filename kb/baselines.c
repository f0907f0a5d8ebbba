/* The task's baselines beside each timing (schema 4, kb/sql/004-timing-baselines.sql): written with the
 * timing they belong to (kb.c's kb_insert_eval, io.c's import) and read back with it, so a report, the
 * bench metrics or retrieval see how a kernel compares with a tuned kernel or a library call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

static bool one_of(const char *s, const char *const *v)
{
	for (; *v; v++)
		if (!strcmp(s, *v))
			return true;
	return false;
}

static enum kf_status check_row(const struct kf_kb_timing_baseline *b, size_t i, struct kf_err *err)
{
	static const char *const status[] = {"timed", "unavailable", "rejected", "failed", "skipped", NULL};
	static const char *const kind[] = {"kernel", "library", NULL};
	static const char *const method[] = {"", "interleaved", "chained", NULL};
	if (!b->name || !*b->name)
		return kf_err_set(err, KF_ERR_INVALID, "timing baseline %zu: a name is required", i);
	if (!b->status || !one_of(b->status, status))
		return kf_err_set(err, KF_ERR_INVALID, "timing baseline '%s': unknown status '%s'", b->name,
				  b->status ? b->status : "");
	if (b->kind && !one_of(b->kind, kind))
		return kf_err_set(err, KF_ERR_INVALID, "timing baseline '%s': unknown kind '%s'", b->name,
				  b->kind);
	if (b->method && !one_of(b->method, method))
		return kf_err_set(err, KF_ERR_INVALID, "timing baseline '%s': unknown method '%s'", b->name,
				  b->method);
	if (!isfinite(b->median_ms) || !isfinite(b->speedup) || !isfinite(b->speedup_ci_lo) ||
	    !isfinite(b->speedup_ci_hi) || b->median_ms < 0 || b->speedup < 0)
		return kf_err_set(err, KF_ERR_INVALID,
				  "timing baseline '%s': times and speedups must be finite "
				  "and >= 0",
				  b->name);
	return KF_OK;
}

enum kf_status kb_insert_timing_baselines(struct kf_kb *kb, int64_t timing_id,
					  const struct kf_kb_timing_baseline *v, size_t n, struct kf_err *err)
{
	static const char ins[] =
	    "INSERT INTO timing_baselines (timing_id, idx, name, kind, status, reason, median_ms, speedup, "
	    "speedup_ci_lo, speedup_ci_hi, significant, method) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
	if (n > KF_KB_MAX_TIMING_BASELINES)
		return kf_err_set(err, KF_ERR_INVALID, "a timing has at most %d baselines, not %zu",
				  KF_KB_MAX_TIMING_BASELINES, n);
	for (size_t i = 0; i < n; i++) {
		const struct kf_kb_timing_baseline *b = &v[i];
		enum kf_status s = check_row(b, i, err);
		sqlite3_stmt *st;
		int rc;
		if (s)
			return s;
		if (!(st = kb_stmt(kb, ins, err)))
			return KF_ERR_DB;
		sqlite3_bind_int64(st, 1, timing_id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		kb_bind_str(st, 3, b->name);
		kb_bind_str(st, 4, b->kind ? b->kind : "kernel");
		kb_bind_str(st, 5, b->status);
		kb_bind_str(st, 6, b->reason);
		sqlite3_bind_double(st, 7, b->median_ms);
		sqlite3_bind_double(st, 8, b->speedup);
		sqlite3_bind_double(st, 9, b->speedup_ci_lo);
		sqlite3_bind_double(st, 10, b->speedup_ci_hi);
		sqlite3_bind_int(st, 11, b->significant ? 1 : 0);
		kb_bind_str(st, 12, b->method);
		rc = sqlite3_step(st);
		kb_done(st);
		if (rc != SQLITE_DONE)
			return kb_dberr(kb, err, "cannot record a timing's baseline");
	}
	return KF_OK;
}

void kb_timing_baselines_clear(struct kb_timing_baselines *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->v[i].name);
		free((char *)s->v[i].kind);
		free((char *)s->v[i].status);
		free((char *)s->v[i].reason);
		free((char *)s->v[i].method);
	}
	s->n = 0;
}

enum kf_status kb_timing_baselines_load(struct kf_kb *kb, int64_t timing_id, struct kb_timing_baselines *out,
					struct kf_err *err)
{
	static const char sql[] = "SELECT name, kind, status, reason, median_ms, speedup, speedup_ci_lo, "
				  "speedup_ci_hi, significant, "
				  "method FROM timing_baselines WHERE timing_id = ?1 ORDER BY idx";
	sqlite3_stmt *st = kb_stmt(kb, sql, err);
	int rc;
	out->n = 0;
	if (!st)
		return KF_ERR_DB;
	sqlite3_bind_int64(st, 1, timing_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->n < KF_KB_MAX_TIMING_BASELINES) {
		struct kf_kb_timing_baseline *b = &out->v[out->n++];
		b->name = kf_strdup(kb_col_str(st, 0));
		b->kind = kf_strdup(kb_col_str(st, 1));
		b->status = kf_strdup(kb_col_str(st, 2));
		b->reason = kf_strdup(kb_col_str(st, 3));
		b->method = kf_strdup(kb_col_str(st, 9));
		b->median_ms = sqlite3_column_double(st, 4);
		b->speedup = sqlite3_column_double(st, 5);
		b->speedup_ci_lo = sqlite3_column_double(st, 6);
		b->speedup_ci_hi = sqlite3_column_double(st, 7);
		b->significant = sqlite3_column_int(st, 8) != 0;
		if (!b->name || !b->kind || !b->status || !b->reason || !b->method) {
			kb_done(st);
			kb_timing_baselines_clear(out);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
	}
	kb_done(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		kb_timing_baselines_clear(out);
		return kb_dberr(kb, err, "cannot read a timing's baselines");
	}
	return KF_OK;
}

struct vs_acc {
	struct kf_kb_vs *v;
	size_t max, n;
	double log_sp[KF_KB_MAX_TIMING_BASELINES], log_med[KF_KB_MAX_TIMING_BASELINES];
};

static int on_vs_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct vs_acc *a = ctx;
	for (size_t i = 0; i < t->n_baselines && i < a->max && i < KF_KB_MAX_TIMING_BASELINES; i++) {
		const struct kf_kb_timing_baseline *b = &t->baselines[i];
		struct kf_kb_vs *v = &a->v[i];
		bool timed = !strcmp(b->status, "timed") && b->speedup > 0 && b->median_ms > 0;
		if (i >= a->n) {
			memset(v, 0, sizeof(*v));
			snprintf(v->name, sizeof(v->name), "%s", b->name);
			v->library = b->kind && !strcmp(b->kind, "library");
			snprintf(v->status, sizeof(v->status), "%s", b->status);
			snprintf(v->reason, sizeof(v->reason), "%s", b->reason ? b->reason : "");
			snprintf(v->clock, sizeof(v->clock), "%s", t->clock ? t->clock : "");
			v->significant = true;
			a->log_sp[i] = a->log_med[i] = 0;
			a->n = i + 1;
		}
		if (!timed)
			continue;
		if (!v->n_timed) {
			snprintf(v->status, sizeof(v->status), "timed");
			snprintf(v->reason, sizeof(v->reason), "%s", b->reason ? b->reason : "");
			snprintf(v->method, sizeof(v->method), "%s", b->method ? b->method : "");
			v->lo = b->speedup_ci_lo;
			v->hi = b->speedup_ci_hi;
		}
		v->n_timed++;
		a->log_sp[i] += log(b->speedup);
		a->log_med[i] += log(b->median_ms);
		v->lo = b->speedup_ci_lo < v->lo ? b->speedup_ci_lo : v->lo;
		v->hi = b->speedup_ci_hi > v->hi ? b->speedup_ci_hi : v->hi;
		v->significant = v->significant && b->significant;
	}
	return 0;
}

enum kf_status kf_kb_candidate_vs(struct kf_kb *kb, int64_t candidate_id, struct kf_kb_vs *out, size_t max,
				  size_t *n, struct kf_err *err)
{
	struct vs_acc a = {out, max, 0, {0}, {0}};
	enum kf_status s = kf_kb_timings_each(kb, 0, candidate_id, on_vs_timing, &a, err);
	*n = 0;
	if (s)
		return s;
	for (size_t i = 0; i < a.n; i++) {
		struct kf_kb_vs *v = &out[i];
		if (v->n_timed) {
			v->speedup = exp(a.log_sp[i] / (double)v->n_timed);
			v->median_ms = exp(a.log_med[i] / (double)v->n_timed);
		} else {
			v->significant = false;
		}
	}
	*n = a.n;
	return KF_OK;
}

int kf_kb_vs_best(const struct kf_kb_vs *v, size_t n)
{
	int best = -1;
	for (size_t i = 0; i < n; i++)
		if (v[i].n_timed && (best < 0 || v[i].speedup < v[best].speedup))
			best = (int)i;
	return best;
}
