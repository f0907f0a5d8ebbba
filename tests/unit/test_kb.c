/* Tests of the knowledge base core (kb/kb.h): schema and migrations from every earlier version, recording
 * with one transaction per step, wins, readers for resume, technique tags, retrieval ranking on a fixture
 * database, and two processes writing one file at once. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hash.h"
#include "kb/kb.h"
#include "task.h"
#include "testing.h"

static char tmpdir[] = "/tmp/kf-test-kb.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char buf[8][512];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static struct kf_kb *open_new(const char *name)
{
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	const char *p = tmp_path(name);
	char side[600];
	unlink(p);
	snprintf(side, sizeof(side), "%s-wal", p);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", p);
	unlink(side);
	CHECKF(kf_kb_open(p, 0, &kb, &err) == KF_OK, "%s", err.msg);
	return kb;
}

/* A scalar from raw SQL on a separate connection (what another tool would see). */
static int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

static int64_t put_task(struct kf_kb *kb, const char *name, const char *cat, const char *desc)
{
	struct kf_kb_task t = {0};
	struct kf_err err = KF_ERR_INIT;
	char hash[65];
	int64_t id = 0;
	kf_kb_hash_hex(name, strlen(name), hash);
	t.name = name;
	t.hash = hash;
	t.category = cat;
	t.description = desc;
	t.level = 1;
	CHECKF(kf_kb_task_put(kb, &t, &id, &err) == KF_OK, "%s", err.msg);
	return id;
}

static int64_t begin_run(struct kf_kb *kb, int64_t task)
{
	struct kf_kb_run r = {0};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	r.task_id = task;
	r.strategy = "evo";
	r.provider = "replay";
	r.model = "test-model";
	r.seed = 7;
	CHECKF(kf_kb_run_begin(kb, &r, &id, &err) == KF_OK, "%s", err.msg);
	return id;
}

/* Records a candidate and (verdict non-NULL) its evaluation on arch with speedup. */
static int64_t step(struct kf_kb *kb, int64_t run, int64_t parent, const char *src, const char *verdict,
		    const char *arch, double speedup)
{
	struct kf_kb_candidate c = {0};
	struct kf_kb_eval e = {0};
	struct kf_kb_timing t = {0};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	c.run_id = run;
	c.parent_id = parent;
	c.source = src;
	c.edit_kind = parent ? "diff" : "seed";
	e.backend = "cuda";
	e.arch = arch;
	e.dtype = "f32";
	e.toolchain = "nvrtc 13.0";
	e.verdict = verdict;
	e.speedup = speedup;
	t.shape = "{\"N\":4096}";
	t.clock = "cupti";
	t.median_ms = 1.0 / (speedup > 0 ? speedup : 1);
	t.ref_median_ms = 1.0;
	t.speedup = speedup;
	CHECKF(kf_kb_record_step(kb, &c, verdict ? &e : NULL, &t, verdict && speedup > 0 ? 1 : 0, &id, NULL,
				 &err) == KF_OK,
	       "%s", err.msg);
	return id;
}

static void test_open_creates_schema(void)
{
	struct kf_kb *kb = open_new("new.db");
	const char *p = tmp_path("new.db");
	struct kf_kb *ro = NULL;
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(kf_kb_schema_version(kb), KF_KB_SCHEMA_VERSION);
	CHECK_EQ_INT(sql_int(p, "PRAGMA user_version"), KF_KB_SCHEMA_VERSION);
	CHECK_EQ_INT(
	    sql_int(p, "SELECT count(*) FROM sqlite_master WHERE name IN ('tasks','runs','candidates',"
		       "'llm_calls','evaluations','eval_shapes','timings','wins','task_fts','kernel_fts')"),
	    10);
	CHECK(kf_kb_check(kb, &err) == KF_OK);
	kf_kb_close(kb);
	/* WAL is a property of the file: a later reader sees it. */
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
	/* Read-only: reads work, writes are refused. */
	CHECK(kf_kb_open(p, KF_KB_READONLY, &ro, &err) == KF_OK);
	if (ro) {
		struct kf_kb_task t = {0};
		t.name = "x";
		t.hash = "y";
		CHECK(kf_kb_task_put(ro, &t, NULL, &err) != KF_OK);
		CHECK_CONTAINS(err.msg, "read-only");
		kf_kb_close(ro);
	}
	CHECK(kf_kb_open(tmp_path("missing.db"), KF_KB_READONLY, &ro, &err) == KF_ERR_NOTFOUND);
	CHECK(ro == NULL);
	CHECK(kf_kb_open(tmp_path("missing.db"), KF_KB_NOCREATE, &ro, &err) == KF_ERR_NOTFOUND);
	kf_kb_close(NULL);
}

static void test_open_refuses_bad_files(void)
{
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	const char *junk = tmp_path("junk.db"), *newer = tmp_path("newer.db");
	FILE *f = fopen(junk, "w");
	sqlite3 *db;
	fputs("this is not a database, just text that is long enough to be read as a header page\n", f);
	fclose(f);
	CHECK(kf_kb_open(junk, 0, &kb, &err) == KF_ERR_DB);
	CHECK(kb == NULL);
	kf_kb_close(open_new("newer.db"));
	CHECK(sqlite3_open(newer, &db) == SQLITE_OK);
	sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(kf_kb_open(newer, 0, &kb, &err) == KF_ERR_UNSUPPORTED);
	CHECK_CONTAINS(err.msg, "newer");
}

/* Loads an earlier schema's fixture (SQL text) into a file with the raw SQLite API. */
static bool load_fixture(const char *sql_path, const char *db_path)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	sqlite3 *db;
	char *msg = NULL;
	bool ok;
	unlink(db_path);
	if (kf_buf_read_file(&b, sql_path, &err) != KF_OK) {
		fprintf(stderr, "  %s\n", err.msg);
		return false;
	}
	ok = sqlite3_open(db_path, &db) == SQLITE_OK &&
	     sqlite3_exec(db, b.data, NULL, NULL, &msg) == SQLITE_OK;
	if (msg)
		fprintf(stderr, "  %s\n", msg);
	sqlite3_free(msg);
	sqlite3_close(db);
	kf_buf_release(&b);
	return ok;
}

struct win_seen {
	int n;
	int64_t cand;
	double speedup;
};

static int win_cb(void *ctx, const struct kf_kb_win *w)
{
	struct win_seen *s = ctx;
	s->n++;
	s->cand = w->candidate_id;
	s->speedup = w->speedup;
	return 0;
}

static int count_hits(void *ctx, const struct kf_kb_hit *h)
{
	(*(int *)ctx)++;
	return 0;
}

static void test_migrate_from_v1(void)
{
	const char *p = tmp_path("v1.db");
	struct kf_kb *kb = NULL, *ro = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct win_seen w = {0};
	struct kf_kb_stats st;
	int hits = 0;

	CHECK(load_fixture("tests/data/kb/v1.sql", p));
	CHECK_EQ_INT(sql_int(p, "PRAGMA user_version"), 1);
	/* A read-only open cannot migrate and says so. */
	CHECK(kf_kb_open(p, KF_KB_READONLY, &ro, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "upgrade");
	CHECKF(kf_kb_open(p, 0, &kb, &err) == KF_OK, "%s", err.msg);
	if (!kb)
		return;
	CHECK_EQ_INT(kf_kb_schema_version(kb), KF_KB_SCHEMA_VERSION);
	CHECK(kf_kb_stats_get(kb, &st, &err) == KF_OK);
	CHECK_EQ_INT(st.n_tasks, 2);
	CHECK_EQ_INT(st.n_runs, 1);
	CHECK_EQ_INT(st.n_candidates, 3);
	CHECK_EQ_INT(st.n_llm_calls, 2);
	CHECK_EQ_INT(st.n_evaluations, 3);
	CHECK_EQ_INT(st.n_timings, 1);
	CHECK_EQ_INT(st.n_verified, 2);
	CHECK_NEAR(st.spend_usd, 0.0125, 1e-12);
	/* The wins table is derived from v1's verified evaluations: candidate 2 at 1.8x. */
	CHECK(kf_kb_wins_each(kb, win_cb, &w, &err) == KF_OK);
	CHECK_EQ_INT(w.n, 1);
	CHECK_EQ_INT(w.cand, 2);
	CHECK_NEAR(w.speedup, 1.8, 1e-12);
	/* FTS indexes cover the old rows. */
	CHECK(kf_kb_search(kb, "warp_shuffle", 10, count_hits, &hits, &err) == KF_OK);
	CHECK_EQ_INT(hits, 1);
	hits = 0;
	CHECK(kf_kb_search(kb, "elementwise", 10, count_hits, &hits, &err) == KF_OK);
	CHECK_EQ_INT(hits, 1);
	CHECK(kf_kb_check(kb, &err) == KF_OK);
	/* schema 4: the old timing has no baselines, the table is there for new ones */
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM timing_baselines"), 0);
	/* New records go on after the old ones. */
	CHECK_EQ_INT(step(kb, 1, 3, "__global__ void softmax3() {}", "pass", "cpu", 2.5), 4);
	w.n = 0;
	kf_kb_wins_each(kb, win_cb, &w, &err);
	CHECK_EQ_INT(w.cand, 4);
	kf_kb_close(kb);
	/* Opening again is a no-op migration. */
	CHECK(kf_kb_open(p, KF_KB_READONLY, &ro, &err) == KF_OK);
	kf_kb_close(ro);
}

/* Two processes opening the same v1 file at once: one migrates, the other sees version 2 under the
 * write lock and applies nothing twice. */
static void test_migrate_concurrently(void)
{
	const char *p = tmp_path("v1conc.db");
	pid_t pids[3];
	CHECK(load_fixture("tests/data/kb/v1.sql", p));
	for (int i = 0; i < 3; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct kf_kb *k = NULL;
			struct kf_err e = KF_ERR_INIT;
			if (kf_kb_open(p, 0, &k, &e) != KF_OK) {
				fprintf(stderr, "opener %d: %s\n", i, e.msg);
				_exit(10);
			}
			{
				int v = kf_kb_schema_version(k);
				kf_kb_close(k);
				_exit(v == KF_KB_SCHEMA_VERSION ? 0 : 12);
			}
		}
	}
	for (int i = 0; i < 3; i++) {
		int status = 0;
		waitpid(pids[i], &status, 0);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "opener %d status %d", i, status);
	}
	CHECK_EQ_INT(sql_int(p, "PRAGMA user_version"), KF_KB_SCHEMA_VERSION);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM candidates"), 3);
	/* version 3: a call recorded with an error is a failed call; the other one's outcome is unknown */
	CHECK_EQ_INT(
	    sql_int(p, "SELECT count(*) FROM llm_calls WHERE outcome = 'failed' AND error IS NOT NULL"), 1);
	CHECK_EQ_INT(
	    sql_int(p, "SELECT count(*) FROM llm_calls WHERE outcome = '' AND purpose = 'candidate'"), 1);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM lessons"), 0);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM wins"), 1);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM task_fts WHERE task_fts MATCH 'softmax'"), 1);
}

/* Version 0: an SQLite file that kforge never wrote to gets every migration. */
static void test_migrate_from_v0(void)
{
	const char *p = tmp_path("v0.db");
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	sqlite3 *db;
	unlink(p);
	/* Version 0: an empty SQLite file someone created. */
	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	sqlite3_exec(db, "CREATE TABLE unrelated (x)", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(kf_kb_open(p, 0, &kb, &err) == KF_OK);
	CHECK(kb && kf_kb_schema_version(kb) == KF_KB_SCHEMA_VERSION);
	kf_kb_close(kb);
}

struct calls_seen {
	int n;
	int seqs[16];
	char errs[16];
};

static int call_cb(void *ctx, const struct kf_kb_llm_call *c)
{
	struct calls_seen *s = ctx;
	if (s->n < 16) {
		s->seqs[s->n] = c->seq;
		s->errs[s->n] = c->error != NULL;
	}
	s->n++;
	return 0;
}

struct run_seen {
	int64_t n_calls, tokens_in, tokens_out, n_cand;
	double spend;
	char status[32];
};

static int run_cb(void *ctx, const struct kf_kb_run *r)
{
	struct run_seen *s = ctx;
	s->n_calls = r->n_calls;
	s->tokens_in = r->tokens_in;
	s->tokens_out = r->tokens_out;
	s->n_cand = r->n_candidates;
	s->spend = r->spend_usd;
	snprintf(s->status, sizeof(s->status), "%s", r->status);
	return 0;
}

struct cand_seen {
	int n;
	int64_t ids[16], parents[16];
	char tags[256];
	char hash[65];
};

static int cand_cb(void *ctx, const struct kf_kb_candidate *c)
{
	struct cand_seen *s = ctx;
	if (s->n < 16) {
		s->ids[s->n] = c->id;
		s->parents[s->n] = c->parent_id;
	}
	snprintf(s->tags, sizeof(s->tags), "%s", c->tags);
	snprintf(s->hash, sizeof(s->hash), "%s", c->source_hash);
	s->n++;
	return 0;
}

struct eval_seen {
	int n, n_shapes;
	char verdict[32];
	double max_abs0, max_rel1;
};

static int eval_cb(void *ctx, const struct kf_kb_eval *e)
{
	struct eval_seen *s = ctx;
	s->n++;
	s->n_shapes = (int)e->n_shapes;
	snprintf(s->verdict, sizeof(s->verdict), "%s", e->verdict);
	if (e->n_shapes >= 2) {
		s->max_abs0 = e->shapes[0].max_abs;
		s->max_rel1 = e->shapes[1].max_rel;
	}
	return 0;
}

static void test_record_and_read_back(void)
{
	struct kf_kb *kb = open_new("rec.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_llm_call call = {0};
	struct kf_kb_candidate c = {0};
	struct kf_kb_eval e = {0};
	struct kf_kb_shape_row rows[2] = {{"{\"N\":7}", "pass", 1e-7, 0, ""},
					  {"{\"N\":4096}", "wrong_output", 0.5, NAN, "i=3"}};
	struct calls_seen cs = {0};
	struct run_seen rs = {0};
	struct cand_seen cands = {0};
	struct eval_seen es = {0};
	int64_t task, task2, run, call_id = 0, c1, c2, eid = 0, found = 0;
	int seq = -5;
	const char *src =
	    "// tiled\n__global__ void k(float *a) {\n  __shared__ float t[16][17];\n#pragma unroll\n"
	    "  for (int i = 0; i < 4; i++) atomicAdd(a, t[0][i]);\n}\n";

	if (!kb)
		return;
	task = put_task(kb, "matmul", "gemm", "C = A B");
	/* The same (name, hash) is the same task. */
	task2 = put_task(kb, "matmul", "gemm", "C = A B");
	CHECK_EQ_INT(task, task2);
	CHECK(kf_kb_task_find(kb, "matmul", &found, &err) == KF_OK);
	CHECK_EQ_INT(found, task);
	CHECK(kf_kb_task_find(kb, "nope", &found, &err) == KF_ERR_NOTFOUND);
	run = begin_run(kb, task);

	call.run_id = run;
	call.seq = -1;
	call.provider = "openai";
	call.model = "m";
	call.prompt = "[{\"role\":\"user\",\"content\":\"hi\"}]";
	call.response = "```cuda\n...\n```";
	call.tokens_in = 1000;
	call.tokens_out = 250;
	call.cost_usd = 0.0125;
	call.latency_ms = 812.5;
	CHECK(kf_kb_record_llm_call(kb, &call, &call_id, &seq, &err) == KF_OK);
	CHECK_EQ_INT(seq, 0);
	call.error = "http 529: overloaded";
	call.tokens_out = 0;
	CHECK(kf_kb_record_llm_call(kb, &call, NULL, &seq, &err) == KF_OK);
	CHECK_EQ_INT(seq, 1);
	/* A seq taken twice in one run is refused, and the counters do not move. */
	call.seq = 1;
	CHECK(kf_kb_record_llm_call(kb, &call, NULL, NULL, &err) == KF_ERR_DB);
	CHECK(kf_kb_llm_calls_each(kb, run, call_cb, &cs, &err) == KF_OK);
	CHECK_EQ_INT(cs.n, 2);
	CHECK(cs.seqs[0] == 0 && cs.seqs[1] == 1 && !cs.errs[0] && cs.errs[1]);
	CHECK(kf_kb_run_get(kb, run, run_cb, &rs, &err) == KF_OK);
	CHECK_EQ_INT(rs.n_calls, 2);
	CHECK_EQ_INT(rs.tokens_in, 2000);
	CHECK_EQ_INT(rs.tokens_out, 250);
	CHECK_NEAR(rs.spend, 0.025, 1e-12);
	CHECK_STR(rs.status, "running");

	c.run_id = run;
	c.source = src;
	c.llm_call_id = call_id;
	CHECK(kf_kb_record_candidate(kb, &c, &c1, &err) == KF_OK);
	e.candidate_id = c1;
	e.backend = "cuda";
	e.arch = "sm_90";
	e.dtype = "f32";
	e.verdict = "wrong_output";
	e.reason = "index 3";
	e.shapes = rows;
	e.n_shapes = 2;
	CHECK(kf_kb_record_eval(kb, &e, NULL, 0, &eid, &err) == KF_OK);
	CHECK(eid > 0);
	c2 = step(kb, run, c1, "__global__ void k2() { float4 v; }", "pass", "sm_90", 1.5);
	CHECK(kf_kb_candidates_each(kb, run, cand_cb, &cands, &err) == KF_OK);
	CHECK_EQ_INT(cands.n, 2);
	CHECK(cands.ids[0] == c1 && cands.ids[1] == c2 && cands.parents[1] == c1 && cands.parents[0] == 0);
	CHECK_STR(cands.tags, "vectorized_loads");
	CHECK_EQ_INT(strlen(cands.hash), 64);
	cands.n = 0;
	kf_kb_candidate_get(kb, c1, cand_cb, &cands, &err);
	CHECK_STR(cands.tags, "shared_memory,smem_tiling,loop_unroll,atomics");
	CHECK(kf_kb_evals_each(kb, 0, c1, eval_cb, &es, &err) == KF_OK);
	CHECK_EQ_INT(es.n, 1);
	CHECK_EQ_INT(es.n_shapes, 2);
	CHECK_STR(es.verdict, "wrong_output");
	CHECK_NEAR(es.max_abs0, 1e-7, 1e-20);
	CHECK(isnan(es.max_rel1));
	/* Invalid records are refused and leave nothing behind. */
	memset(&c, 0, sizeof(c));
	c.run_id = 999;
	c.source = "x";
	CHECK(kf_kb_record_candidate(kb, &c, NULL, &err) == KF_ERR_NOTFOUND);
	memset(&e, 0, sizeof(e));
	e.candidate_id = 12345;
	e.verdict = "pass";
	CHECK(kf_kb_record_eval(kb, &e, NULL, 0, NULL, &err) == KF_ERR_DB); /* foreign key */
	e.candidate_id = c1;
	e.speedup = NAN;
	CHECK(kf_kb_record_eval(kb, &e, NULL, 0, NULL, &err) == KF_ERR_INVALID);
	/* API keys are never stored: a config or a message holding one is refused. */
	{
		struct kf_kb_run r = {0};
		struct kf_kb_llm_call k = {0};
		r.task_id = task;
		r.config = "{\"api_key\":\"sk-proj-abcdefghijklmnopqrstuvwxyz0123\"}";
		CHECK(kf_kb_run_begin(kb, &r, NULL, &err) == KF_ERR_INVALID);
		CHECK_CONTAINS(err.msg, "API key");
		k.run_id = run;
		k.seq = -1;
		k.prompt =
		    "[{\"role\":\"user\",\"content\":\"my key is sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA\"}]";
		CHECK(kf_kb_record_llm_call(kb, &k, NULL, NULL, &err) == KF_ERR_INVALID);
		/* A masked key in a provider's error message is fine. */
		k.prompt = "[]";
		k.error = "http 401: Incorrect API key provided: sk-abc*************wxyz";
		CHECK(kf_kb_record_llm_call(kb, &k, NULL, NULL, &err) == KF_OK);
	}
	CHECK(kf_kb_run_set_status(kb, run, "done", &err) == KF_OK);
	CHECK(kf_kb_run_set_status(kb, 4242, "done", &err) == KF_ERR_NOTFOUND);
	kf_kb_run_get(kb, run, run_cb, &rs, &err);
	CHECK_STR(rs.status, "done");
	CHECK_EQ_INT(rs.n_cand, 2);
	CHECK(kf_kb_check(kb, &err) == KF_OK);
	kf_kb_close(kb);
}

struct task_seen {
	char name[64], category[64], hash[65];
	int level;
};

static int task_cb(void *ctx, const struct kf_kb_task *t)
{
	struct task_seen *s = ctx;
	snprintf(s->name, sizeof(s->name), "%s", t->name);
	snprintf(s->category, sizeof(s->category), "%s", t->category);
	snprintf(s->hash, sizeof(s->hash), "%s", t->hash);
	s->level = t->level;
	return 0;
}

/* A task file from the suite goes in with its own name, hash and category. */
static void test_task_from_file(void)
{
	struct kf_kb *kb;
	struct kf_task *task = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct task_seen seen = {0};
	int64_t id = 0;
	if (kf_task_load("tasks/l1/softmax_f32/task.json", KF_TASK_NO_FILES, NULL, &task, &err) != KF_OK)
		KF_SKIP("tasks/l1/softmax_f32/task.json does not load here");
	kb = open_new("task.db");
	if (kb) {
		CHECK(kf_kb_task_put_loaded(kb, task, &id, &err) == KF_OK);
		CHECK(kf_kb_task_get(kb, id, task_cb, &seen, &err) == KF_OK);
		CHECK_STR(seen.name, task->name);
		CHECK_STR(seen.category, task->category);
		CHECK_STR(seen.hash, task->hash);
		CHECK_EQ_INT(seen.level, task->level);
		kf_kb_close(kb);
	}
	kf_task_free(task);
}

static void test_wins(void)
{
	struct kf_kb *kb = open_new("wins.db");
	struct kf_err err = KF_ERR_INIT;
	struct win_seen w = {0};
	int64_t run, a, b;
	if (!kb)
		return;
	run = begin_run(kb, put_task(kb, "relu", "elementwise", "max(x, 0)"));
	a = step(kb, run, 0, "__global__ void a() {}", "pass", "sm_90", 1.5);
	step(kb, run, a, "__global__ void b() {}", "pass", "sm_90", 1.2);       /* slower: no change */
	step(kb, run, a, "__global__ void c() {}", "wrong_output", "sm_90", 9); /* wrong: never a win */
	step(kb, run, a, "__global__ void d() {}", "pass", "sm_90", 1.5);       /* a tie keeps the first */
	CHECK(kf_kb_wins_each(kb, win_cb, &w, &err) == KF_OK);
	CHECK_EQ_INT(w.n, 1);
	CHECK_EQ_INT(w.cand, a);
	b = step(kb, run, a, "__global__ void e() {}", "pass", "sm_90", 2.0);
	{
		int64_t best_id = 0;
		double best_sp = 0;
		CHECK(kf_kb_run_best(kb, run, "sm_90", &best_id, &best_sp, &err) == KF_OK);
		CHECK_EQ_INT(best_id, b);
		CHECK_NEAR(best_sp, 2.0, 1e-12);
		CHECK(kf_kb_run_best(kb, run, "sm_75", &best_id, &best_sp, &err) == KF_OK);
		CHECK(best_id == 0 && best_sp == 0);
	}
	step(kb, run, a, "__global__ void f() {}", "pass", "sm_80", 1.1); /* another arch: its own win */
	memset(&w, 0, sizeof(w));
	kf_kb_wins_each(kb, win_cb, &w, &err);
	CHECK_EQ_INT(w.n, 2);
	{
		double best = 0;
		CHECK(kf_kb_candidate_best(kb, b, "sm_90", &best, &err) == KF_OK);
		CHECK_NEAR(best, 2.0, 1e-12);
		CHECK(kf_kb_candidate_best(kb, b, "sm_80", &best, &err) == KF_OK);
		CHECK_NEAR(best, 0, 0);
	}
	kf_kb_close(kb);
}

static void test_nested_transactions(void)
{
	struct kf_kb *kb = open_new("tx.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_candidate bad = {0};
	struct cand_seen cands = {0};
	int64_t run;
	if (!kb)
		return;
	run = begin_run(kb, put_task(kb, "t", "c", "d"));
	CHECK(kf_kb_begin(kb, &err) == KF_OK);
	step(kb, run, 0, "__global__ void one() {}", "pass", "sm_90", 1.1);
	bad.run_id = run;
	bad.source = "__global__ void two() {}";
	bad.parent_id = 777; /* no such parent: the inner step fails alone */
	CHECK(kf_kb_record_candidate(kb, &bad, NULL, &err) == KF_ERR_DB);
	step(kb, run, 0, "__global__ void three() {}", NULL, NULL, 0);
	CHECK(kf_kb_commit(kb, &err) == KF_OK);
	kf_kb_candidates_each(kb, run, cand_cb, &cands, &err);
	CHECK_EQ_INT(cands.n, 2);
	/* A rolled back outer transaction leaves nothing. */
	CHECK(kf_kb_begin(kb, &err) == KF_OK);
	step(kb, run, 0, "__global__ void four() {}", NULL, NULL, 0);
	kf_kb_rollback(kb);
	cands.n = 0;
	kf_kb_candidates_each(kb, run, cand_cb, &cands, &err);
	CHECK_EQ_INT(cands.n, 2);
	kf_kb_close(kb);
}

struct tag_case {
	const char *src, *want;
};

static void test_tags(void)
{
	static const struct tag_case cases[] = {
	    {"__global__ void k(float *x) { x[0] = 1; }", ""},
	    {"// __shared__ float t[32][32]; #pragma unroll\n/* atomicAdd( */ __global__ void k() {}", ""},
	    {"__shared__ float tile[32][33];", "shared_memory,smem_tiling"},
	    {"extern __shared__ float buf[];", "shared_memory,dynamic_smem"},
	    {"float4 v = reinterpret_cast<const float4 *>(x)[i];", "vectorized_loads"},
	    {"v += __shfl_xor_sync(0xffffffff, v, 16);", "warp_shuffle"},
	    {"unsigned m = __ballot_sync(0xffffffff, p);", "warp_vote"},
	    {"wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;", "tensor_cores"},
	    {"asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, ...\");",
	     "tensor_cores,inline_ptx"},
	    {"asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 ...\");",
	     "tensor_cores,inline_ptx"},
	    {"asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(s), \"l\"(g));",
	     "async_copy,inline_ptx"},
	    {"__pipeline_memcpy_async(&s[i], &g[i], 16);", "async_copy"},
	    {"#pragma unroll 4\nfor (;;) {}", "loop_unroll"},
	    {"y = __expf(x) * __fdividef(1.f, s);", "fast_math"},
	    {"y = expf(x);", ""},
	    {"atomicAdd(&out[0], v); atomicCAS(p, 0, 1);", "atomics"},
	    {"__half2 h = __float2half2_rn(x);", "vectorized_loads,half_precision"}, /* a packed pair */
	    {"float v = __ldg(&x[i]);", "readonly_cache"},
	    {"__global__ void __launch_bounds__(256) k(const float *__restrict__ x) {}",
	     "launch_bounds,restrict"},
	    {"for (int i = idx; i < n; i += blockDim.x * gridDim.x) {}", "grid_stride"},
	    {"namespace cg = cooperative_groups; cg::thread_block b;", "cooperative_groups"},
	    {"__constant__ float w[64];", "constant_memory"},
	    {"const char *s = \"// not a comment\"; atomicAdd(p, 1);", "atomics"},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		struct kf_buf b = KF_BUF_INIT(4096);
		struct kf_err err = KF_ERR_INIT;
		CHECK(kf_kb_tags_extract(cases[i].src, strlen(cases[i].src), &b, &err) == KF_OK);
		CHECKF(!strcmp(b.data, cases[i].want), "case %zu: got '%s', want '%s'", i, b.data,
		       cases[i].want);
		kf_buf_release(&b);
	}
	CHECK(kf_kb_tag_names()[0] != NULL);
}

/* The retrieval fixture: softmax (reduction) is the query; its own kernels, two other reductions, a
 * normalization task whose description mentions softmax, and an unrelated gemm. */
static struct kf_kb *retrieval_fixture(int64_t ids[8])
{
	struct kf_kb *kb = open_new("retr.db");
	int64_t sm, lse, rsum, ln, mm, run;
	if (!kb)
		return NULL;
	sm = put_task(kb, "softmax", "reduction", "row-wise softmax of a 2-D float tensor");
	lse = put_task(kb, "logsumexp", "reduction", "log of the sum of exponentials over rows");
	rsum = put_task(kb, "row_sum", "reduction", "sum of each row");
	ln = put_task(kb, "layernorm", "normalization",
		      "layer normalization over rows, like softmax a row reduction");
	mm = put_task(kb, "matmul", "gemm", "dense matrix multiply");

	run = begin_run(kb, sm);
	ids[0] = step(kb, run, 0, "__global__ void sm0() {}", "pass", "sm_90", 1.0);
	ids[1] = step(kb, run, ids[0], "__global__ void sm1() { __shfl_xor_sync(~0u, 0, 1); }", "pass",
		      "sm_90", 2.5);
	ids[2] = step(kb, run, ids[1], "__global__ void sm2() { __shfl_xor_sync(~0u, 0, 1); float4 v; }",
		      "pass", "sm_90", 3.5);
	step(kb, run, ids[2], "__global__ void sm3() {}", "wrong_output", "sm_90",
	     50.0);                                                              /* never an example */
	step(kb, run, ids[2], "__global__ void sm4() {}", "pass", "sm_80", 9.0); /* other arch */
	run = begin_run(kb, lse);
	ids[3] = step(kb, run, 0, "__global__ void lse() {}", "pass", "sm_90", 1.7);
	run = begin_run(kb, rsum);
	ids[4] = step(kb, run, 0, "__global__ void rsum() {}", "pass", "sm_90", 4.0);
	run = begin_run(kb, ln);
	ids[5] = step(kb, run, 0, "__global__ void ln() {}", "pass", "sm_90", 1.3);
	run = begin_run(kb, mm);
	ids[6] = step(kb, run, 0, "__global__ void mm() {}", "pass", "sm_90", 8.0);
	return kb;
}

static void test_examples_ranking(void)
{
	int64_t ids[8];
	struct kf_kb *kb = retrieval_fixture(ids);
	struct kf_kb_example *ex = NULL, *ex2 = NULL;
	struct kf_err err = KF_ERR_INIT;
	size_t n = 0, n2 = 0;
	if (!kb)
		return;
	CHECK(kf_kb_examples_for(kb, "softmax", "sm_90", 6, &ex, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 6);
	if (n == 6) {
		/* Same task first, best first; then same category by speedup; then FTS (layernorm mentions
		 * softmax and rows); matmul never (no shared words). */
		CHECK_EQ_INT(ex[0].candidate_id, ids[2]);
		CHECK_EQ_INT(ex[1].candidate_id, ids[1]);
		CHECK_EQ_INT(ex[2].candidate_id, ids[0]);
		CHECK(ex[0].same_task && ex[2].same_task && !ex[3].same_task);
		CHECK_EQ_INT(ex[3].candidate_id, ids[4]);
		CHECK_EQ_INT(ex[4].candidate_id, ids[3]);
		CHECK_EQ_INT(ex[5].candidate_id, ids[5]);
		CHECK_STR(ex[5].task_name, "layernorm");
		CHECK_NEAR(ex[0].speedup, 3.5, 1e-12);
		CHECK_NEAR(ex[0].parent_speedup, 2.5, 1e-12);
		CHECK_EQ_INT(ex[0].parent_id, ids[1]);
		CHECK_STR(ex[0].change, "diff of #2: +vectorized_loads");
		CHECK_CONTAINS(ex[0].source, "sm2");
		CHECK_STR(ex[3].category, "reduction");
	}
	/* Deterministic: the same database gives the same list. */
	CHECK(kf_kb_examples_for(kb, "softmax", "sm_90", 6, &ex2, &n2, &err) == KF_OK);
	CHECK_EQ_INT(n2, n);
	for (size_t i = 0; i < n && i < n2; i++)
		CHECK_EQ_INT(ex[i].candidate_id, ex2[i].candidate_id);
	kf_kb_examples_free(ex, n);
	kf_kb_examples_free(ex2, n2);
	/* Another arch sees only its own verified kernels. */
	CHECK(kf_kb_examples_for(kb, "softmax", "sm_80", 5, &ex, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 1);
	kf_kb_examples_free(ex, n);
	/* k limits; k = 0 is empty; unknown task is an error. */
	CHECK(kf_kb_examples_for(kb, "softmax", "sm_90", 2, &ex, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 2);
	kf_kb_examples_free(ex, n);
	CHECK(kf_kb_examples_for(kb, "softmax", NULL, 0, &ex, &n, &err) == KF_OK);
	CHECK(n == 0 && ex == NULL);
	CHECK(kf_kb_examples_for(kb, "nope", NULL, 3, &ex, &n, &err) == KF_ERR_NOTFOUND);
	/* A task with no verified kernels of its own still gets its neighbours'. */
	CHECK(kf_kb_examples_for(kb, "matmul", "sm_90", 3, &ex, &n, &err) == KF_OK);
	CHECK(n == 1 && ex[0].same_task);
	kf_kb_examples_free(ex, n);
	kf_kb_close(kb);
}

/* step() with the timing's clock and the speedup interval's lower bound. */
static int64_t step_t(struct kf_kb *kb, int64_t run, const char *src, const char *arch, double speedup,
		      const char *clock, double lo)
{
	struct kf_kb_candidate c = {0};
	struct kf_kb_eval e = {0};
	struct kf_kb_timing t = {0};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	c.run_id = run;
	c.source = src;
	c.edit_kind = "seed";
	e.backend = strcmp(clock, "cpu") ? "cuda" : "cpu";
	e.arch = arch;
	e.dtype = "f32";
	e.verdict = "pass";
	e.speedup = speedup;
	t.shape = "{\"N\":4096}";
	t.clock = clock;
	t.median_ms = 1.0 / speedup;
	t.ref_median_ms = 1.0;
	t.speedup = speedup;
	t.speedup_ci_lo = lo;
	t.speedup_ci_hi = speedup * 1.05;
	CHECKF(kf_kb_record_step(kb, &c, &e, &t, 1, &id, NULL, &err) == KF_OK, "%s", err.msg);
	return id;
}

static bool ex_has(const struct kf_kb_example *ex, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ex[i].candidate_id == id)
			return true;
	return false;
}

struct lessons_seen {
	int n;
	char verdicts[8][32];
	bool same[8];
};

static int lesson_cb(void *ctx, const struct kf_kb_lesson *l)
{
	struct lessons_seen *s = ctx;
	if (s->n < 8) {
		snprintf(s->verdicts[s->n], sizeof(s->verdicts[0]), "%s", l->verdict);
		s->same[s->n] = l->same_task;
	}
	s->n++;
	return 0;
}

/* Examples a prompt may show: correct and significantly faster, on the run's clock class and arch
 * family, not the run's own, never the parent. Each exclusion below has a kernel that tries to get past. */
static void test_examples_hygiene(void)
{
	struct kf_kb *kb = open_new("hyg.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_example *ex = NULL;
	size_t n = 0;
	char hash[KF_SHA256_HEX];
	const char *parent_src = "__global__ void parent_k() {}";
	if (!kb)
		return;
	int64_t sm = put_task(kb, "softmax", "reduction", "row-wise softmax");
	int64_t lse = put_task(kb, "logsumexp", "reduction", "log sum exp");
	int64_t old = begin_run(kb, sm), cur = begin_run(kb, sm), lrun = begin_run(kb, lse);
	int64_t good = step_t(kb, old, "__global__ void good() {}", "sm_90", 2.0, "cupti", 1.5);
	int64_t noisy = step_t(kb, old, "__global__ void noisy() {}", "sm_90", 1.05, "cupti", 0.98);
	int64_t cpu = step_t(kb, old, "__global__ void cpu_win() {}", "cpu", 3.0, "cpu", 2.0);
	int64_t fam = step_t(kb, old, "__global__ void hopper_a() {}", "sm_90a", 1.8, "cuda_event", 1.3);
	int64_t other = step_t(kb, old, "__global__ void ampere() {}", "sm_80", 5.0, "cupti", 4.0);
	int64_t slow = step_t(kb, old, "__global__ void slow() {}", "sm_90", 0.16, "cupti", 0.15);
	int64_t mine = step_t(kb, cur, "__global__ void mine() {}", "sm_90", 2.5, "cupti", 2.0);
	int64_t par = step_t(kb, old, parent_src, "sm_90", 2.2, "cupti", 1.9);
	int64_t lcpu = step_t(kb, lrun, "__global__ void lse_cpu() {}", "cpu", 10.0, "cpu", 9.0);
	int64_t lgpu = step_t(kb, lrun, "__global__ void lse_gpu() {}", "sm_90", 1.4, "cupti", 1.2);
	kf_sha256_hex(parent_src, strlen(parent_src), hash);

	struct kf_kb_example_query q = {"softmax", "sm_90", true, "gpu", true, cur, hash, 10};
	CHECKF(kf_kb_examples_query(kb, &q, &ex, &n, &err) == KF_OK, "%s", err.msg);
	CHECK(ex_has(ex, n, good) && ex_has(ex, n, fam) && ex_has(ex, n, lgpu));
	CHECK(!ex_has(ex, n, noisy)); /* not significant */
	CHECK(!ex_has(ex, n, cpu));   /* CPU clock in a GPU prompt */
	CHECK(!ex_has(ex, n, lcpu));  /* a CPU-clock win of a neighbour */
	CHECK(!ex_has(ex, n, other)); /* another arch family */
	CHECK(!ex_has(ex, n, slow));  /* 0.16x is no lesson in speed */
	CHECK(!ex_has(ex, n, mine));  /* the run's own */
	CHECK(!ex_has(ex, n, par));   /* the parent */
	CHECK_EQ_INT(n, 3);
	kf_kb_examples_free(ex, n);
	/* a CPU run sees CPU-clock kernels only */
	struct kf_kb_example_query qc = {"softmax", "cpu", true, "cpu", true, cur, NULL, 10};
	CHECK(kf_kb_examples_query(kb, &qc, &ex, &n, &err) == KF_OK);
	CHECK(n == 2 && ex_has(ex, n, cpu) && ex_has(ex, n, lcpu));
	kf_kb_examples_free(ex, n);
	/* without the filters the old retrieval still shows everything of the arch */
	CHECK(kf_kb_examples_for(kb, "softmax", "sm_90", 10, &ex, &n, &err) == KF_OK);
	CHECK(ex_has(ex, n, noisy) && ex_has(ex, n, mine));
	kf_kb_examples_free(ex, n);
	{
		char f[16];
		kf_kb_arch_family("sm_90a", f, sizeof(f));
		CHECK_STR(f, "sm_9");
		kf_kb_arch_family("sm_100", f, sizeof(f));
		CHECK_STR(f, "sm_10");
		kf_kb_arch_family("cpu", f, sizeof(f));
		CHECK_STR(f, "cpu");
	}

	/* lessons: the same task's first, the right clock and family only, none of the run's own, no twice */
	struct kf_kb_lesson l = {0};
	l.task_id = sm;
	l.run_id = old;
	l.arch = "sm_90";
	l.clock = "gpu";
	l.verdict = "wrong_output";
	l.tried = "split the row across two warps";
	l.outcome = "max abs error 0.4: the second warp's partial sum was never added";
	CHECK(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK);
	CHECK(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK); /* the same lesson twice */
	l.verdict = "compile_error";
	l.tried = "cp.async double buffering";
	l.run_id = cur; /* the run's own: not shown */
	CHECK(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK);
	l.run_id = old;
	l.clock = "cpu";
	l.arch = "cpu";
	l.verdict = "pass";
	CHECK(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK); /* a CPU-clock lesson */
	l.task_id = lse;
	l.run_id = lrun;
	l.clock = "gpu";
	l.arch = "sm_90a";
	l.verdict = "race";
	l.tried = "shared partial sums";
	CHECK(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK);
	struct lessons_seen seen = {0};
	CHECK(kf_kb_lessons_for(kb, "softmax", "sm_90", "gpu", cur, 5, lesson_cb, &seen, &err) == KF_OK);
	CHECK_EQ_INT(seen.n, 2);
	CHECK_STR(seen.verdicts[0], "wrong_output");
	CHECK(seen.same[0] && !seen.same[1]);
	CHECK_STR(seen.verdicts[1], "race");
	kf_kb_close(kb);
}

/* A model-clock evaluation: its fitness is the cost model's row (clock "model"), its CPU rows secondary
 * (kb/retrieve.c, KB_SECONDARY_TIMING). A model run sees it, as significant when the model row is, even
 * though its CPU rows are not; a CPU run never sees it (another arch key and a model row); a CPU-clock
 * evaluation never reaches a model run. */
static void test_examples_model_clock(void)
{
	struct kf_kb *kb = open_new("model.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_example *ex = NULL;
	size_t n = 0;
	if (!kb)
		return;
	int64_t sm = put_task(kb, "softmax", "reduction", "row-wise softmax");
	int64_t old = begin_run(kb, sm), cur = begin_run(kb, sm);
	/* predicted 3x (band 5%), its CPU rows a not significant 1.01x */
	struct kf_kb_candidate c = {
	    .run_id = old, .source = "__global__ void warp_row() {}", .edit_kind = "seed"};
	struct kf_kb_eval e = {
	    .backend = "cpu", .arch = "model-v1-h100", .dtype = "f32", .verdict = "pass", .speedup = 3.0};
	struct kf_kb_timing t[2] = {{.shape = "{\"N\":16}",
				     .clock = "cpu",
				     .median_ms = 1,
				     .ref_median_ms = 1.01,
				     .speedup = 1.01,
				     .speedup_ci_lo = 0.97,
				     .speedup_ci_hi = 1.05,
				     .noise_band = 0.03},
				    {.shape = "{\"N\":4096}",
				     .clock = "model",
				     .median_ms = 0.1,
				     .ref_median_ms = 0.3,
				     .speedup = 3.0,
				     .speedup_ci_lo = 3.0,
				     .speedup_ci_hi = 3.0,
				     .noise_band = 0.05}};
	int64_t model_win = 0;
	CHECKF(kf_kb_record_step(kb, &c, &e, t, 2, &model_win, NULL, &err) == KF_OK, "%s", err.msg);
	/* predicted 1.02x: inside the model's band */
	c.source = "__global__ void meh() {}";
	e.speedup = t[1].speedup = t[1].speedup_ci_lo = t[1].speedup_ci_hi = 1.02;
	int64_t model_noise = 0;
	CHECK(kf_kb_record_step(kb, &c, &e, t, 2, &model_noise, NULL, &err) == KF_OK);
	int64_t cpu_win = step_t(kb, old, "__global__ void thread_row() {}", "cpu", 5.0, "cpu", 4.0);

	struct kf_kb_example_query qm = {"softmax", "model-v1-h100", true, "model", true, cur, NULL, 10};
	CHECKF(kf_kb_examples_query(kb, &qm, &ex, &n, &err) == KF_OK, "%s", err.msg);
	CHECK(ex_has(ex, n, model_win));
	CHECK(!ex_has(ex, n, model_noise)); /* not significant on its own clock */
	CHECK(!ex_has(ex, n, cpu_win));     /* a CPU-clock win in a model prompt */
	CHECK_EQ_INT(n, 1);
	kf_kb_examples_free(ex, n);
	struct kf_kb_example_query qc = {"softmax", "cpu", true, "cpu", true, cur, NULL, 10};
	CHECK(kf_kb_examples_query(kb, &qc, &ex, &n, &err) == KF_OK);
	CHECK(n == 1 && ex_has(ex, n, cpu_win));
	kf_kb_examples_free(ex, n);
	/* even under the cpu arch key a model-clock evaluation is no CPU-clock example */
	struct kf_kb_example_query qx = {"softmax", "model-v1-h100", true, "cpu", true, cur, NULL, 10};
	CHECK(kf_kb_examples_query(kb, &qx, &ex, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 0);
	kf_kb_examples_free(ex, n);
	kf_kb_close(kb);
}

static void test_search(void)
{
	int64_t ids[8];
	struct kf_kb *kb = retrieval_fixture(ids);
	struct kf_err err = KF_ERR_INIT;
	int hits = 0;
	if (!kb)
		return;
	CHECK(kf_kb_search(kb, "softmax", 10, count_hits, &hits, &err) == KF_OK);
	CHECK_EQ_INT(hits, 2); /* softmax, layernorm (its description) */
	hits = 0;
	CHECK(kf_kb_search(kb, "vectorized_loads", 10, count_hits, &hits, &err) == KF_OK);
	CHECK_EQ_INT(hits, 1);
	hits = 0;
	/* FTS5 syntax in the text is taken as words, never as a query. */
	CHECK(kf_kb_search(kb, "NEAR(\"x\" OR matmul*", 10, count_hits, &hits, &err) == KF_OK);
	CHECK(kf_kb_search(kb, "(( ))", 10, count_hits, &hits, &err) == KF_ERR_INVALID);
	kf_kb_close(kb);
}

/* Two processes record into one file at once: the busy timeout and BEGIN IMMEDIATE serialise them. */
static void test_concurrent_writers(void)
{
	struct kf_kb *kb = open_new("conc.db");
	const char *p = tmp_path("conc.db");
	struct kf_err err = KF_ERR_INIT;
	int64_t task;
	pid_t pids[2];
	enum { N = 150 };
	if (!kb)
		return;
	task = put_task(kb, "conc", "test", "two writers");
	kf_kb_close(kb);
	for (int w = 0; w < 2; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			struct kf_kb *k = NULL;
			struct kf_err e = KF_ERR_INIT;
			int64_t run;
			char src[128];
			if (kf_kb_open(p, 0, &k, &e) != KF_OK)
				_exit(10);
			run = begin_run(k, task);
			for (int i = 0; i < N; i++) {
				struct kf_kb_candidate c = {0};
				struct kf_kb_eval ev = {0};
				snprintf(src, sizeof(src), "__global__ void w%d_%d() {}", w, i);
				c.run_id = run;
				c.source = src;
				ev.verdict = "pass";
				ev.arch = "sm_90";
				ev.dtype = "f32";
				ev.speedup = 1.0 + i * 0.01 + w * 0.001;
				if (kf_kb_record_step(k, &c, &ev, NULL, 0, NULL, NULL, &e) != KF_OK) {
					fprintf(stderr, "writer %d: %s\n", w, e.msg);
					_exit(11);
				}
			}
			kf_kb_close(k);
			_exit(0);
		}
	}
	for (int w = 0; w < 2; w++) {
		int status = 0;
		waitpid(pids[w], &status, 0);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d status %d", w, status);
	}
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM candidates"), 2 * N);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM evaluations"), 2 * N);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM runs"), 2);
	CHECK_EQ_INT(sql_int(p, "SELECT count(*) FROM wins"), 1);
	kb = NULL;
	CHECK(kf_kb_open(p, 0, &kb, &err) == KF_OK);
	CHECK(kb && kf_kb_check(kb, &err) == KF_OK);
	kf_kb_close(kb);
}

/* Schema 4: the task's baselines beside each timing, read back with it, aggregated per baseline over a
 * candidate's timings (geometric mean, widest interval, significant only when every shape is), the best
 * baseline being the one the candidate is least faster than; a bad row rolls the whole step back. */
struct tb_seen {
	int n_timings;
	size_t n[4];
	char first[4][32], status1[4][16];
};

static int tb_cb(void *ctx, const struct kf_kb_timing *t)
{
	struct tb_seen *x = ctx;
	if (x->n_timings < 4) {
		x->n[x->n_timings] = t->n_baselines;
		snprintf(x->first[x->n_timings], 32, "%s", t->n_baselines ? t->baselines[0].name : "");
		snprintf(x->status1[x->n_timings], 16, "%s",
			 t->n_baselines > 1 ? t->baselines[1].status : "");
	}
	x->n_timings++;
	return 0;
}

static void test_timing_baselines(void)
{
	struct kf_kb *kb = open_new("tb.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_candidate c = {0};
	struct kf_kb_eval e = {0};
	struct kf_kb_timing t[2] = {{0}, {0}};
	struct kf_kb_timing_baseline b0[3] = {
	    {"baseline.cu", "kernel", "timed", "verified; timed", 2.0, 2.0, 1.8, 2.2, true, "interleaved"},
	    {"cublas.gemm", "library", "timed", "verified; timed", 0.5, 0.5, 0.45, 0.55, false,
	     "interleaved"},
	    {"cudnn.sdpa", "library", "unavailable", "runs on the cuda backend only", 0, 0, 0, 0, false, ""}};
	struct kf_kb_timing_baseline b1[3] = {
	    {"baseline.cu", "kernel", "timed", "verified; timed", 8.0, 8.0, 0.9, 9.0, false, "interleaved"},
	    {"cublas.gemm", "library", "timed", "verified; timed", 2.0, 2.0, 1.9, 2.1, true, "interleaved"},
	    {"cudnn.sdpa", "library", "unavailable", "runs on the cuda backend only", 0, 0, 0, 0, false, ""}};
	struct kf_kb_vs v[8];
	struct tb_seen seen = {0};
	size_t n = 0;
	int64_t cid = 0;
	if (!kb)
		return;
	c.run_id = begin_run(kb, put_task(kb, "tb_task", "gemm", "baselines beside timings"));
	c.source = "__global__ void tb() {}";
	e.backend = "cuda";
	e.arch = "sm_90";
	e.verdict = "pass";
	e.speedup = 2;
	for (int i = 0; i < 2; i++) {
		t[i].shape = i ? "{\"N\":2}" : "{\"N\":1}";
		t[i].clock = "cupti";
		t[i].median_ms = 1;
		t[i].ref_median_ms = 2;
		t[i].speedup = 2;
		t[i].n_baselines = 3;
		t[i].baselines = i ? b1 : b0;
	}
	CHECKF(kf_kb_record_step(kb, &c, &e, t, 2, &cid, NULL, &err) == KF_OK, "%s", err.msg);
	CHECK(kf_kb_timings_each(kb, 0, cid, tb_cb, &seen, &err) == KF_OK);
	CHECK_EQ_INT(seen.n_timings, 2);
	CHECK_EQ_INT(seen.n[0], 3);
	CHECK_STR(seen.first[1], "baseline.cu");
	CHECK_STR(seen.status1[0], "timed");
	CHECK(kf_kb_candidate_vs(kb, cid, v, KF_ARRAY_SIZE(v), &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 3);
	if (n == 3) {
		CHECK_STR(v[0].name, "baseline.cu");
		CHECK(!v[0].library && v[1].library);
		CHECK_NEAR(v[0].speedup, 4.0, 1e-12); /* sqrt(2 x 8) */
		CHECK_NEAR(v[0].lo, 0.9, 1e-12);
		CHECK_NEAR(v[0].hi, 9.0, 1e-12);
		CHECK(!v[0].significant); /* not at the second shape */
		CHECK_NEAR(v[1].speedup, 1.0, 1e-12);
		CHECK(!v[1].significant);
		CHECK_EQ_INT(v[1].n_timed, 2);
		CHECK_STR(v[1].method, "interleaved");
		CHECK_STR(v[2].status, "unavailable");
		CHECK_CONTAINS(v[2].reason, "cuda backend only");
		CHECK_EQ_INT(v[2].n_timed, 0);
		CHECK_EQ_INT(kf_kb_vs_best(v, n), 1); /* cuBLAS: the candidate is least faster than it */
	}
	CHECK_EQ_INT(kf_kb_vs_best(v, 0), -1);
	/* a row no kforge writes: the whole step is refused, nothing of it stays */
	b1[2].status = "maybe";
	CHECK(kf_kb_record_step(kb, &c, &e, t, 2, NULL, NULL, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "'cudnn.sdpa': unknown status 'maybe'");
	b1[2].status = "unavailable";
	b1[0].speedup = NAN;
	CHECK(kf_kb_record_step(kb, &c, &e, t, 2, NULL, NULL, &err) == KF_ERR_INVALID);
	kf_kb_close(kb);
	CHECK_EQ_INT(sql_int(tmp_path("tb.db"), "SELECT count(*) FROM candidates"), 1);
	CHECK_EQ_INT(sql_int(tmp_path("tb.db"), "SELECT count(*) FROM timing_baselines"), 6);
	CHECK_EQ_INT(sql_int(tmp_path("tb.db"), "SELECT count(*) FROM timing_baselines WHERE significant"),
		     2);
}

KF_TEST_MAIN_TMPDIR(tmpdir, TEST(test_open_creates_schema), TEST(test_open_refuses_bad_files),
		    TEST(test_migrate_from_v1), TEST(test_migrate_from_v0), TEST(test_migrate_concurrently),
		    TEST(test_record_and_read_back), TEST(test_task_from_file), TEST(test_wins),
		    TEST(test_nested_transactions), TEST(test_tags), TEST(test_examples_ranking),
		    TEST(test_examples_hygiene), TEST(test_examples_model_clock), TEST(test_search),
		    TEST(test_concurrent_writers), TEST(test_timing_baselines))
