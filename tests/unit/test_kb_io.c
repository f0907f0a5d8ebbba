/* Tests of knowledge-base exchange (kb/io.c): JSONL export in the shared format, import into an empty
 * database giving the same records back, import atomicity on a bad file, and merge of two databases with
 * overlapping tasks (deduplicated by content hash, lineage preserved, runs kept). */
#include <cjson/cJSON.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kb/kb.h"
#include "testing.h"

static char tmpdir[] = "/tmp/kf-test-kbio.XXXXXX";

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
	unlink(tmp_path(name));
	CHECKF(kf_kb_open(tmp_path(name), 0, &kb, &err) == KF_OK, "%s", err.msg);
	return kb;
}

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

static char *slurp(const char *path)
{
	struct kf_buf b = KF_BUF_INIT(64 << 20);
	struct kf_err err = KF_ERR_INIT;
	if (kf_buf_read_file(&b, path, &err) != KF_OK)
		return NULL;
	return kf_buf_detach(&b, NULL);
}

static int64_t put_task(struct kf_kb *kb, const char *name, const char *hash_seed, const char *cat)
{
	struct kf_kb_task t = {0};
	struct kf_err err = KF_ERR_INIT;
	char hash[65];
	int64_t id = 0;
	kf_kb_hash_hex(hash_seed, strlen(hash_seed), hash);
	t.name = name;
	t.hash = hash;
	t.category = cat;
	t.title = name;
	t.description = "a test task";
	t.level = 2;
	CHECKF(kf_kb_task_put(kb, &t, &id, &err) == KF_OK, "%s", err.msg);
	return id;
}

static int64_t begin_run(struct kf_kb *kb, int64_t task, int64_t seed)
{
	struct kf_kb_run r = {0};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	r.task_id = task;
	r.strategy = "mcts";
	r.provider = "openai";
	r.model = "m";
	r.seed = seed;
	r.budget_usd = 2.5;
	r.config = "{\"concurrency\":4,\"strategy\":\"mcts\"}";
	CHECKF(kf_kb_run_begin(kb, &r, &id, &err) == KF_OK, "%s", err.msg);
	return id;
}

static int64_t call(struct kf_kb *kb, int64_t run, const char *response)
{
	struct kf_kb_llm_call c = {0};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	c.run_id = run;
	c.seq = -1;
	c.provider = "openai";
	c.model = "m";
	c.prompt =
	    "[{\"role\":\"system\",\"content\":\"you write CUDA\"},{\"role\":\"user\",\"content\":\"go\"}]";
	c.response = response;
	c.finish_reason = "stop";
	c.tokens_in = 321;
	c.tokens_out = 123;
	c.cost_usd = 0.00321;
	c.latency_ms = 456.25;
	c.request_id = "req";
	CHECKF(kf_kb_record_llm_call(kb, &c, &id, NULL, &err) == KF_OK, "%s", err.msg);
	return id;
}

static int64_t step(struct kf_kb *kb, int64_t run, int64_t parent, int64_t llm, const char *src,
		    const char *verdict, double speedup)
{
	struct kf_kb_candidate c = {0};
	struct kf_kb_eval e = {0};
	struct kf_kb_timing t = {0};
	struct kf_kb_shape_row rows[1] = {{"{\"N\":33}", "pass", 0.0, 1.5e-7, ""}};
	struct kf_err err = KF_ERR_INIT;
	int64_t id = 0;
	c.run_id = run;
	c.parent_id = parent;
	c.llm_call_id = llm;
	c.source = src;
	c.edit_kind = parent ? "diff" : "seed";
	c.generation = parent ? 1 : 0;
	e.backend = "cuda";
	e.arch = "sm_90";
	e.dtype = "f32";
	e.toolchain = "nvrtc 13.0";
	e.verdict = verdict;
	e.seed = (int64_t)0x7fffffffffff1234LL; /* beyond 2^53: must survive JSON */
	e.speedup = speedup;
	e.shapes = rows;
	e.n_shapes = 1;
	t.shape = "{\"N\":1048576}";
	t.clock = "cupti";
	t.n_samples = 100;
	t.median_ms = 0.1 / speedup;
	t.iqr_ms = 0.001;
	t.ref_median_ms = 0.1;
	t.speedup = speedup;
	t.speedup_ci_lo = speedup * 0.95;
	t.speedup_ci_hi = speedup * 1.05;
	/* schema 4: the task's baselines beside the timing, one timed and one the backend could not run */
	struct kf_kb_timing_baseline bl[2] = {
	    {"cublas.gemm", "library", "timed", "verified; timed", 0.05, 0.5 * speedup, 0.45 * speedup,
	     0.55 * speedup, 0.45 * speedup > 1, "chained"},
	    {"baseline.cu", "kernel", "rejected", "wrong_output at N=1: \"quoted\"", 0, 0, 0, 0, false, ""}};
	t.baselines = bl;
	t.n_baselines = 2;
	CHECKF(kf_kb_record_step(kb, &c, &e, &t, 1, &id, NULL, &err) == KF_OK, "%s", err.msg);
	return id;
}

/* Database A: task softmax (file hash "s1") with one run of three candidates. */
static void fill_a(struct kf_kb *kb)
{
	int64_t t = put_task(kb, "softmax", "s1", "reduction");
	int64_t r = begin_run(kb, t, 1);
	int64_t c1 = step(kb, r, 0, call(kb, r, "first"), "__global__ void s0() {}", "pass", 1.0);
	int64_t c2 = step(kb, r, c1, call(kb, r, "second \"quoted\"\nline"),
			  "__global__ void s1() { float4 v; }", "pass", 2.0);
	int64_t c3 = step(kb, r, c2, 0, "__global__ void s2() {}", "wrong_output", 0.5);
	struct kf_kb_lesson l = {0,
				 t,
				 r,
				 c3,
				 "sm_90",
				 "gpu",
				 "wrong_output",
				 "split the row",
				 "max abs error 0.5",
				 1700000000.0,
				 NULL,
				 false};
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_kb_record_lesson(kb, &l, NULL, &err) == KF_OK, "%s", err.msg);
	kf_kb_run_set_status(kb, r, "done", NULL);
}

/* Database B: the same softmax task (same hash) with a run that re-found s1 and went on from it, and a
 * matmul task of its own. */
static void fill_b(struct kf_kb *kb)
{
	int64_t t = put_task(kb, "softmax", "s1", "reduction");
	int64_t m = put_task(kb, "matmul", "m1", "gemm");
	int64_t r = begin_run(kb, t, 2);
	int64_t c1 = step(kb, r, 0, 0, "__global__ void s1() { float4 v; }", "pass", 2.2);
	step(kb, r, c1, 0, "__global__ void s3() { float4 v; __shfl_xor_sync(~0u, 0, 1); }", "pass", 3.0);
	r = begin_run(kb, m, 3);
	step(kb, r, 0, 0, "__global__ void mm() {}", "pass", 5.0);
}

static void test_export_format(void)
{
	struct kf_kb *kb = open_new("fmt.db");
	struct kf_err err = KF_ERR_INIT;
	char *text, *line, *save = NULL;
	int n = 0, calls = 0, types[7] = {0};
	static const char *names[7] = {"kforge-export", "task",       "run",   "llm_call",
				       "candidate",     "evaluation", "timing"};
	if (!kb)
		return;
	fill_a(kb);
	CHECKF(kf_kb_export(kb, 0, tmp_path("a.jsonl"), &err) == KF_OK, "%s", err.msg);
	text = slurp(tmp_path("a.jsonl"));
	CHECK(text != NULL);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		cJSON *o = cJSON_Parse(line);
		const cJSON *type = cJSON_GetObjectItem(o, "type");
		CHECKF(cJSON_IsString(type), "line %d has no type", n + 1);
		if (n == 0) {
			CHECK(cJSON_IsString(type) && !strcmp(type->valuestring, "kforge-export"));
			CHECK_EQ_INT(cJSON_GetObjectItem(o, "version")->valuedouble, 1);
		}
		for (int k = 0; cJSON_IsString(type) && k < 7; k++)
			if (!strcmp(type->valuestring, names[k]))
				types[k]++;
		if (cJSON_IsString(type) && !strcmp(type->valuestring, "llm_call")) {
			/* The fields replay reads (shared-decisions). */
			static const char *fields[] = {"run_id",     "seq",      "provider",      "model",
						       "prompt",     "response", "finish_reason", "tokens_in",
						       "tokens_out", "cost_usd", "latency_ms",    "error",
						       "request_id"};
			for (size_t f = 0; f < KF_ARRAY_SIZE(fields); f++)
				CHECKF(cJSON_GetObjectItem(o, fields[f]) != NULL, "llm_call without '%s'",
				       fields[f]);
			CHECK(cJSON_IsArray(cJSON_GetObjectItem(o, "prompt")));
			CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "error")));
			CHECK_EQ_INT(cJSON_GetObjectItem(o, "seq")->valuedouble, calls);
			calls++;
		}
		cJSON_Delete(o);
	}
	CHECK_EQ_INT(types[0], 1);
	CHECK_EQ_INT(types[1], 1);
	CHECK_EQ_INT(types[2], 1);
	CHECK_EQ_INT(types[3], 2);
	CHECK_EQ_INT(types[4], 3);
	CHECK_EQ_INT(types[5], 3);
	CHECK_EQ_INT(types[6], 3);
	free(text);
	/* a timing carries its baselines (schema 4) */
	text = slurp(tmp_path("a.jsonl"));
	CHECK_CONTAINS(text,
		       "\"baselines\":[{\"name\":\"cublas.gemm\",\"kind\":\"library\",\"status\":\"timed\"");
	CHECK_CONTAINS(text, "\"method\":\"chained\"");
	CHECK_CONTAINS(text, "\"name\":\"baseline.cu\",\"kind\":\"kernel\",\"status\":\"rejected\"");
	free(text);
	/* --run limits the export; an unknown run is an error. */
	CHECK(kf_kb_export(kb, 1, tmp_path("a1.jsonl"), &err) == KF_OK);
	CHECK(kf_kb_export(kb, 99, tmp_path("a99.jsonl"), &err) == KF_ERR_NOTFOUND);
	CHECK(access(tmp_path("a99.jsonl"), F_OK) != 0);
	kf_kb_close(kb);
}

static void test_export_import_roundtrip(void)
{
	struct kf_kb *a = open_new("rt_a.db"), *b = open_new("rt_b.db"), *c;
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_import_stats st;
	char *t1, *t2;
	if (!a || !b)
		return;
	fill_a(a);
	fill_b(a); /* a second run with a duplicate source inside one database stays two records */
	CHECK(kf_kb_export(a, 0, tmp_path("rt1.jsonl"), &err) == KF_OK);
	CHECKF(kf_kb_import(b, tmp_path("rt1.jsonl"), &st, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(st.tasks, 2);
	CHECK_EQ_INT(st.runs, 3);
	CHECK_EQ_INT(st.candidates, 6);
	CHECK_EQ_INT(st.llm_calls, 2);
	CHECK_EQ_INT(st.evaluations, 6);
	CHECK_EQ_INT(st.timings, 6);
	CHECK_EQ_INT(st.dup_candidates, 0);
	CHECK_EQ_INT(sql_int(tmp_path("rt_b.db"), "SELECT count(*) FROM timing_baselines"), 12);
	CHECK(kf_kb_export(b, 0, tmp_path("rt2.jsonl"), &err) == KF_OK);
	t1 = slurp(tmp_path("rt1.jsonl"));
	t2 = slurp(tmp_path("rt2.jsonl"));
	CHECK(t1 && t2 && !strcmp(t1, t2));
	free(t1);
	free(t2);
	/* Importing the same file again adds nothing: every run is already there. */
	CHECK(kf_kb_import(b, tmp_path("rt1.jsonl"), &st, &err) == KF_OK);
	CHECK_EQ_INT(st.runs, 0);
	CHECK_EQ_INT(st.dup_runs, 3);
	CHECK_EQ_INT(st.candidates + st.llm_calls + st.evaluations + st.timings, 0);
	CHECK(kf_kb_check(b, &err) == KF_OK);
	kf_kb_close(a);
	kf_kb_close(b);
	/* The win survives the trip: derived again from the imported evaluations. */
	CHECK_EQ_INT(sql_int(tmp_path("rt_b.db"), "SELECT count(*) FROM wins"), 2);
	CHECK_EQ_INT(sql_int(tmp_path("rt_b.db"), "SELECT n_calls FROM runs WHERE id = 1"), 2);
	/* lessons travel with their run, their candidate remapped, and only once */
	CHECK_EQ_INT(sql_int(tmp_path("rt_b.db"),
			     "SELECT count(*) FROM lessons l JOIN candidates c ON c.id = l.candidate_id "
			     "WHERE c.source = '__global__ void s2() {}' AND l.tried = 'split the row'"),
		     1);
	c = NULL;
	(void)c;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_import_rejects_bad_files(void)
{
	struct kf_kb *kb = open_new("bad.db");
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_import_stats st;
	char *good, *bad;
	size_t n;
	if (!kb)
		return;
	write_file(tmp_path("nohdr.jsonl"), "{\"type\":\"task\",\"id\":1,\"name\":\"x\",\"hash\":\"y\"}\n");
	CHECK(kf_kb_import(kb, tmp_path("nohdr.jsonl"), &st, &err) == KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "kforge-export");
	write_file(tmp_path("v9.jsonl"), "{\"type\":\"kforge-export\",\"version\":9}\n");
	CHECK(kf_kb_import(kb, tmp_path("v9.jsonl"), &st, &err) == KF_ERR_UNSUPPORTED);
	write_file(tmp_path("empty.jsonl"), "");
	CHECK(kf_kb_import(kb, tmp_path("empty.jsonl"), &st, &err) == KF_ERR_PARSE);
	CHECK(kf_kb_import(kb, tmp_path("none.jsonl"), &st, &err) == KF_ERR_NOTFOUND);
	/* A good export with a broken last line imports nothing at all (one transaction). */
	{
		struct kf_kb *a = open_new("bad_src.db");
		fill_a(a);
		kf_kb_export(a, 0, tmp_path("good.jsonl"), &err);
		kf_kb_close(a);
	}
	good = slurp(tmp_path("good.jsonl"));
	if (!good)
		return;
	n = strlen(good);
	bad = malloc(n + 64);
	memcpy(bad, good, n);
	strcpy(bad + n, "{\"type\":\"candidate\",\"id\":99,\n");
	write_file(tmp_path("trunc.jsonl"), bad);
	CHECK(kf_kb_import(kb, tmp_path("trunc.jsonl"), &st, &err) == KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, ":16:"); /* header + 14 records (a lesson among them), then the broken one */
	CHECK_EQ_INT(sql_int(tmp_path("bad.db"), "SELECT count(*) FROM candidates"), 0);
	CHECK_EQ_INT(sql_int(tmp_path("bad.db"), "SELECT count(*) FROM tasks"), 0);
	/* A timing's baseline with a status no kforge writes is refused with the line, nothing imported. */
	{
		char *p = strstr(good, "\"status\":\"rejected\"");
		if (p) {
			memcpy(p + 10, "REJECTED", 8);
			write_file(tmp_path("badbase.jsonl"), good);
			CHECK(kf_kb_import(kb, tmp_path("badbase.jsonl"), &st, &err) == KF_ERR_INVALID);
			CHECK_CONTAINS(err.msg, "unknown status 'REJECTED'");
			CHECK_CONTAINS(err.msg, "badbase.jsonl:");
			CHECK_EQ_INT(sql_int(tmp_path("bad.db"), "SELECT count(*) FROM timings"), 0);
			memcpy(p + 10, "rejected", 8);
		}
	}
	/* A source that does not match its hash is refused. */
	{
		char *p = strstr(good, "void s0()");
		if (p) {
			p[5] = 'X';
			write_file(tmp_path("tamper.jsonl"), good);
			CHECK(kf_kb_import(kb, tmp_path("tamper.jsonl"), &st, &err) == KF_ERR_INVALID);
			CHECK_CONTAINS(err.msg, "source_hash");
		}
	}
	/* A record pointing at a run the file does not hold. */
	write_file(tmp_path("orphan.jsonl"), "{\"type\":\"kforge-export\",\"version\":1}\n"
					     "{\"type\":\"llm_call\",\"id\":1,\"run_id\":5,\"seq\":0}\n");
	CHECK(kf_kb_import(kb, tmp_path("orphan.jsonl"), &st, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, ":2:");
	free(good);
	free(bad);
	kf_kb_close(kb);
}

struct lineage {
	int n;
	int64_t id[16], parent[16], run[16];
	char hash[16][65];
};

static int lin_cb(void *ctx, const struct kf_kb_candidate *c)
{
	struct lineage *l = ctx;
	if (l->n < 16) {
		l->id[l->n] = c->id;
		l->parent[l->n] = c->parent_id;
		l->run[l->n] = c->run_id;
		snprintf(l->hash[l->n], 65, "%s", c->source_hash);
	}
	l->n++;
	return 0;
}

static int find_hash(const struct lineage *l, const char *src)
{
	char h[65];
	kf_kb_hash_hex(src, strlen(src), h);
	for (int i = 0; i < l->n && i < 16; i++)
		if (!strcmp(l->hash[i], h))
			return i;
	return -1;
}

static void test_merge_overlapping(void)
{
	struct kf_kb *a = open_new("ma.db"), *b = open_new("mb.db"), *m = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_import_stats st;
	struct lineage l = {0};
	const char *srcs[2] = {tmp_path("ma.db"), tmp_path("mb.db")};
	const char *out = tmp_path("merged.db");
	const char *srcs_again[3];
	int s0, s1, s2, s3;
	if (!a || !b)
		return;
	fill_a(a);
	fill_b(b);
	kf_kb_close(a);
	kf_kb_close(b);
	unlink(out);
	CHECKF(kf_kb_merge(srcs, 2, out, false, &st, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(st.tasks, 2);     /* softmax once, matmul */
	CHECK_EQ_INT(st.dup_tasks, 1); /* B's softmax is A's */
	CHECK_EQ_INT(st.runs, 3);
	CHECK_EQ_INT(st.candidates, 5); /* s1 from B is A's s1 */
	CHECK_EQ_INT(st.dup_candidates, 1);
	CHECK_EQ_INT(st.evaluations, 6); /* B's evaluation of s1 is kept, on A's row */
	/* every timing keeps its two baselines through the merge */
	CHECK_EQ_INT(sql_int(out, "SELECT count(*) FROM timing_baselines"), 12);
	CHECK_EQ_INT(sql_int(out, "SELECT count(*) FROM timing_baselines WHERE method = 'chained'"), 6);
	CHECK_EQ_INT(sql_int(out, "SELECT count(*) FROM tasks WHERE name = 'softmax'"), 1);
	CHECK_EQ_INT(sql_int(out,
			     "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
			     "WHERE c.source LIKE '%s1()%'"),
		     2);
	CHECK(kf_kb_open(out, KF_KB_READONLY, &m, &err) == KF_OK);
	if (!m)
		return;
	CHECK(kf_kb_check(m, &err) == KF_OK);
	kf_kb_candidates_each(m, 0, lin_cb, &l, &err);
	CHECK_EQ_INT(l.n, 5);
	s0 = find_hash(&l, "__global__ void s0() {}");
	s1 = find_hash(&l, "__global__ void s1() { float4 v; }");
	s2 = find_hash(&l, "__global__ void s2() {}");
	s3 = find_hash(&l, "__global__ void s3() { float4 v; __shfl_xor_sync(~0u, 0, 1); }");
	CHECK(s0 >= 0 && s1 >= 0 && s2 >= 0 && s3 >= 0);
	if (s0 >= 0 && s1 >= 0 && s2 >= 0 && s3 >= 0) {
		/* Lineage follows the remapping: s3 (from B) now descends from A's s1. */
		CHECK_EQ_INT(l.parent[s1], l.id[s0]);
		CHECK_EQ_INT(l.parent[s2], l.id[s1]);
		CHECK_EQ_INT(l.parent[s3], l.id[s1]);
		CHECK(l.run[s3] != l.run[s1]);
	}
	{
		/* The wins are the best of both. */
		struct kf_kb_example *ex;
		size_t n;
		CHECK(kf_kb_examples_for(m, "softmax", "sm_90", 1, &ex, &n, &err) == KF_OK);
		CHECK(n == 1 && fabs(ex[0].speedup - 3.0) < 1e-12);
		kf_kb_examples_free(ex, n);
	}
	kf_kb_close(m);
	/* An existing output is refused without force, and kept intact. */
	CHECK(kf_kb_merge(srcs, 2, out, false, &st, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "--force");
	CHECK_EQ_INT(sql_int(out, "SELECT count(*) FROM candidates"), 5);
	/* The merged file merged again with its own sources adds nothing new. */
	srcs_again[0] = out;
	srcs_again[1] = srcs[0];
	srcs_again[2] = srcs[1];
	CHECK(kf_kb_merge(srcs_again, 3, tmp_path("merged2.db"), false, &st, &err) == KF_OK);
	CHECK_EQ_INT(sql_int(tmp_path("merged2.db"), "SELECT count(*) FROM candidates"), 5);
	CHECK_EQ_INT(sql_int(tmp_path("merged2.db"), "SELECT count(*) FROM runs"), 3);
	CHECK_EQ_INT(sql_int(tmp_path("merged2.db"), "SELECT count(*) FROM evaluations"), 6);
	CHECK_EQ_INT(st.dup_runs, 3);
	/* Force replaces; a missing source fails and leaves no output behind. */
	CHECK(kf_kb_merge(srcs, 1, out, true, &st, &err) == KF_OK);
	CHECK_EQ_INT(sql_int(out, "SELECT count(*) FROM candidates"), 3);
	srcs_again[0] = tmp_path("nope.db");
	CHECK(kf_kb_merge(srcs_again, 1, tmp_path("merged3.db"), false, &st, &err) == KF_ERR_NOTFOUND);
	CHECK(access(tmp_path("merged3.db"), F_OK) != 0);
}

/* An export of one run whose seed parent was recorded by another run re-attaches to that parent by its
 * source hash when the parent is already in the target. */
static void test_import_run_links_parent_by_hash(void)
{
	struct kf_kb *a = open_new("p_a.db"), *b = open_new("p_b.db");
	struct kf_err err = KF_ERR_INIT;
	struct lineage l = {0};
	int64_t t, r1, r2, p, c;
	if (!a || !b)
		return;
	t = put_task(a, "softmax", "s1", "reduction");
	r1 = begin_run(a, t, 1);
	p = step(a, r1, 0, 0, "__global__ void base() {}", "pass", 1.0);
	r2 = begin_run(a, t, 2);
	c = step(a, r2, p, 0, "__global__ void child() {}", "pass", 2.0);
	(void)c;
	CHECK(kf_kb_export(a, r1, tmp_path("r1.jsonl"), &err) == KF_OK);
	CHECK(kf_kb_export(a, r2, tmp_path("r2.jsonl"), &err) == KF_OK);
	CHECK(kf_kb_import(b, tmp_path("r1.jsonl"), NULL, &err) == KF_OK);
	CHECK(kf_kb_import(b, tmp_path("r2.jsonl"), NULL, &err) == KF_OK);
	kf_kb_candidates_each(b, 0, lin_cb, &l, &err);
	CHECK_EQ_INT(l.n, 2);
	CHECK(l.n == 2 && l.parent[1] == l.id[0]);
	kf_kb_close(a);
	kf_kb_close(b);
}

KF_TEST_MAIN_TMPDIR(tmpdir, TEST(test_export_format), TEST(test_export_import_roundtrip),
		    TEST(test_import_rejects_bad_files), TEST(test_merge_overlapping),
		    TEST(test_import_run_links_parent_by_hash))
