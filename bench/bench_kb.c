/* make bench: knowledge-base speed. (1) Recording one candidate with its evaluation (3 shape rows, one
 * timing, the wins update, FTS indexing) in its own transaction, against a raw SQLite insert of the same
 * source in its own transaction on the same kind of file; target under 1 ms. (2) kf_kb_examples_for(k=5)
 * on a database of 100,000 candidates, against a raw indexed fetch of 5 of the task's sources; target
 * under 10 ms. Exits 1 when a target is missed. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb/kb.h"

#define N_RECORD 2000
#define N_BIG 100000
#define N_TASKS 200
#define N_CATEGORIES 20
#define N_QUERIES 200

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(p * (double)(n - 1))];
}

static void rm_db(const char *p)
{
	char side[600];
	unlink(p);
	snprintf(side, sizeof(side), "%s-wal", p);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", p);
	unlink(side);
}

/* A plausible kernel of ~700 bytes that differs per i (so hashes and FTS terms differ). */
static void make_source(char *buf, size_t n, long i)
{
	static const char *ops[] = {"__expf", "fmaxf", "__shfl_xor_sync(0xffffffff, v, 16) +", "rsqrtf",
				    "tanhf"};
	snprintf(buf, n,
		 "// candidate %ld\n#define TILE %ld\n__global__ void __launch_bounds__(256) k%ld(const "
		 "float *__restrict__ x,\n"
		 "    float *__restrict__ y, int rows, int cols) {\n"
		 "  __shared__ float tile[TILE][TILE + 1];\n"
		 "  int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;\n"
		 "  float v = (r < rows && c < cols) ? x[(size_t)r * cols + c] : 0.f;\n"
		 "#pragma unroll\n  for (int s = 0; s < %ld; s++) v = %s(v);\n"
		 "  tile[threadIdx.y][threadIdx.x] = v;\n  __syncthreads();\n"
		 "  if (r < rows && c < cols) y[(size_t)r * cols + c] = tile[threadIdx.y][threadIdx.x] * "
		 "%ld.0f;\n}\n",
		 i, 8 + i % 25, i, 1 + i % 7, ops[i % 5], i % 1000);
}

static int bench_record(const char *dir)
{
	char path[512], raw_path[512], src[2048];
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_task t = {0};
	struct kf_kb_run r = {0};
	struct kf_kb_shape_row rows[3] = {{"{\"N\":7}", "pass", 1e-7, 1e-6, ""},
					  {"{\"N\":1025}", "pass", 2e-7, 1e-6, ""},
					  {"{\"N\":65536}", "pass", 3e-7, 1e-6, ""}};
	static double kb_us[N_RECORD], raw_us[N_RECORD];
	int64_t task, run, parent = 0;
	sqlite3 *db;
	sqlite3_stmt *st;
	double kb_med, raw_med, kb_p99;

	snprintf(path, sizeof(path), "%s/record.db", dir);
	snprintf(raw_path, sizeof(raw_path), "%s/raw.db", dir);
	rm_db(path);
	rm_db(raw_path);
	if (kf_kb_open(path, 0, &kb, &err)) {
		fprintf(stderr, "bench_kb: %s\n", err.msg);
		return 1;
	}
	t.name = "softmax";
	t.hash = "bench";
	t.category = "reduction";
	kf_kb_task_put(kb, &t, &task, &err);
	r.task_id = task;
	kf_kb_run_begin(kb, &r, &run, &err);
	for (long i = 0; i < N_RECORD; i++) {
		struct kf_kb_candidate c = {0};
		struct kf_kb_eval e = {0};
		struct kf_kb_timing tm = {0};
		int64_t id;
		double t0;
		make_source(src, sizeof(src), i);
		c.run_id = run;
		c.parent_id = parent;
		c.source = src;
		e.backend = "cuda";
		e.arch = "sm_90";
		e.dtype = "f32";
		e.toolchain = "nvrtc 13.0";
		e.verdict = i % 2 ? "pass" : "wrong_output";
		e.speedup = i % 2 ? 1.0 + (double)(i % 50) / 10 : 0;
		e.shapes = rows;
		e.n_shapes = 3;
		tm.shape = "{\"N\":65536}";
		tm.clock = "cupti";
		tm.median_ms = 0.5;
		tm.speedup = e.speedup;
		t0 = kf_now_ms();
		if (kf_kb_record_step(kb, &c, &e, &tm, 1, &id, NULL, &err)) {
			fprintf(stderr, "bench_kb: %s\n", err.msg);
			kf_kb_close(kb);
			return 1;
		}
		kb_us[i] = (kf_now_ms() - t0) * 1000;
		parent = id;
	}
	kf_kb_close(kb);

	/* Baseline: the least a durable record can cost on this disk, one row in one transaction. */
	if (sqlite3_open(raw_path, &db) != SQLITE_OK)
		return 1;
	sqlite3_exec(db,
		     "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE c (id INTEGER "
		     "PRIMARY KEY, source TEXT)",
		     NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO c (source) VALUES (?1)", -1, &st, NULL);
	for (long i = 0; i < N_RECORD; i++) {
		double t0;
		make_source(src, sizeof(src), i);
		t0 = kf_now_ms();
		sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		sqlite3_bind_text(st, 1, src, -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_reset(st);
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		raw_us[i] = (kf_now_ms() - t0) * 1000;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	kb_p99 = pct(kb_us, N_RECORD, 0.99);
	kb_med = median(kb_us, N_RECORD);
	raw_med = median(raw_us, N_RECORD);
	printf("record candidate+evaluation: median %.1f us, p99 %.1f us (target < 1000 us); raw one-row "
	       "insert %.1f us; "
	       "ratio %.1fx\n",
	       kb_med, kb_p99, raw_med, kb_med / raw_med);
	return kb_med < 1000 ? 0 : 1;
}

static int bench_retrieve(const char *dir)
{
	char path[512], src[2048], name[64], cat[64], desc[256];
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	static int64_t tasks[N_TASKS], runs[N_TASKS];
	static double kb_ms[N_QUERIES], raw_ms[N_QUERIES];
	sqlite3 *db;
	sqlite3_stmt *st;
	double t_build, kb_med, kb_max, raw_med;
	size_t total = 0;

	snprintf(path, sizeof(path), "%s/big.db", dir);
	rm_db(path);
	if (kf_kb_open(path, 0, &kb, &err)) {
		fprintf(stderr, "bench_kb: %s\n", err.msg);
		return 1;
	}
	t_build = kf_now_ms();
	kf_kb_begin(kb, &err);
	for (int i = 0; i < N_TASKS; i++) {
		struct kf_kb_task t = {0};
		struct kf_kb_run r = {0};
		char hash[65];
		snprintf(name, sizeof(name), "task_%03d", i);
		snprintf(cat, sizeof(cat), "category_%02d", i % N_CATEGORIES);
		snprintf(desc, sizeof(desc), "operation %d over rows of a matrix with op%d and op%d", i,
			 i % 13, i % 17);
		kf_kb_hash_hex(name, strlen(name), hash);
		t.name = name;
		t.hash = hash;
		t.category = cat;
		t.description = desc;
		kf_kb_task_put(kb, &t, &tasks[i], &err);
		r.task_id = tasks[i];
		kf_kb_run_begin(kb, &r, &runs[i], &err);
	}
	for (long i = 0; i < N_BIG; i++) {
		struct kf_kb_candidate c = {0};
		struct kf_kb_eval e = {0};
		int ti = (int)(i % N_TASKS);
		make_source(src, sizeof(src), i);
		c.run_id = runs[ti];
		c.source = src;
		e.arch = i % 4 ? "sm_90" : "sm_80";
		e.dtype = "f32";
		e.verdict = i % 3 ? "pass" : "wrong_output";
		e.speedup = i % 3 ? 0.5 + (double)((i * 7919) % 1000) / 250 : 0;
		if (kf_kb_record_step(kb, &c, &e, NULL, 0, NULL, NULL, &err)) {
			fprintf(stderr, "bench_kb: %s\n", err.msg);
			kf_kb_rollback(kb);
			kf_kb_close(kb);
			return 1;
		}
		/* Commit in batches: one transaction of 100k steps would hold the whole WAL. */
		if (i % 5000 == 4999) {
			kf_kb_commit(kb, &err);
			kf_kb_begin(kb, &err);
		}
	}
	kf_kb_commit(kb, &err);
	t_build = kf_now_ms() - t_build;
	kf_kb_close(kb);
	kb = NULL;
	if (kf_kb_open(path, KF_KB_READONLY, &kb, &err)) {
		fprintf(stderr, "bench_kb: %s\n", err.msg);
		return 1;
	}
	for (int q = 0; q < N_QUERIES; q++) {
		struct kf_kb_example *ex;
		size_t n;
		double t0;
		snprintf(name, sizeof(name), "task_%03d", (q * 37) % N_TASKS);
		t0 = kf_now_ms();
		if (kf_kb_examples_for(kb, name, "sm_90", 5, &ex, &n, &err)) {
			fprintf(stderr, "bench_kb: %s\n", err.msg);
			kf_kb_close(kb);
			return 1;
		}
		kb_ms[q] = kf_now_ms() - t0;
		total += n;
		kf_kb_examples_free(ex, n);
	}
	kf_kb_close(kb);

	/* Baseline: an indexed fetch of five of the task's sources with no ranking at all. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 1;
	sqlite3_prepare_v2(
	    db,
	    "SELECT c.source FROM tasks t JOIN candidates c ON c.task_id = t.id WHERE t.name = ?1 "
	    "ORDER BY c.id DESC LIMIT 5",
	    -1, &st, NULL);
	for (int q = 0; q < N_QUERIES; q++) {
		double t0;
		size_t bytes = 0;
		snprintf(name, sizeof(name), "task_%03d", (q * 37) % N_TASKS);
		t0 = kf_now_ms();
		sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(st) == SQLITE_ROW)
			bytes += (size_t)sqlite3_column_bytes(st, 0);
		sqlite3_reset(st);
		raw_ms[q] = kf_now_ms() - t0;
		if (!bytes)
			return 1;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	kb_max = pct(kb_ms, N_QUERIES, 1.0);
	kb_med = median(kb_ms, N_QUERIES);
	raw_med = median(raw_ms, N_QUERIES);
	printf("examples_for(k=5) over %d candidates (built in %.1f s): median %.2f ms, max %.2f ms (target "
	       "< 10 ms), "
	       "%.1f examples per query; raw indexed fetch %.3f ms; ratio %.1fx\n",
	       N_BIG, t_build / 1000, kb_med, kb_max, (double)total / N_QUERIES, raw_med, kb_med / raw_med);
	return kb_med < 10 && total == 5 * N_QUERIES ? 0 : 1;
}

int main(void)
{
	char dir[] = "/tmp/kf-bench-kb.XXXXXX";
	char cmd[600];
	int rc;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = bench_record(dir);
	rc |= bench_retrieve(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_kb: cannot remove %s\n", dir);
	return rc;
}
