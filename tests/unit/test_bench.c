/* Tests of the bench metrics (fast_p, its significance-aware variant, geomean, rates per level) on
 * hand-made data, of reading a task's outcome back from a knowledge base, of the bench renderers, and of
 * the run report (reports/run_report.c) on a run recorded through kb.h. Expected numbers are worked out
 * by hand in the comments. */
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kb/kb.h"
#include "reports/bench.h"
#include "reports/run_report.h"
#include "testing.h"

static char tmpdir[] = "/tmp/kf-test-bench.XXXXXX";

static struct kf_bench_task mk(const char *name, int level, const char *cat, const char *status,
			       bool compiled, double sp, double lo, double hi)
{
	struct kf_bench_task t;
	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "%s", name);
	snprintf(t.category, sizeof(t.category), "%s", cat);
	snprintf(t.status, sizeof(t.status), "%s", status);
	t.level = level;
	t.compiled = compiled;
	t.correct = !strcmp(status, "pass");
	t.speedup = sp;
	t.lo = lo;
	t.hi = hi;
	snprintf(t.clock, sizeof(t.clock), "%s", t.correct ? "cpu" : "");
	t.time_s = 10;
	t.usd = 0.5;
	t.calls = 4;
	return t;
}

/* A: 3.0 [2.5, 3.5]; B: 1.2 [0.9, 1.6]; C: 0.4 [0.3, 0.5] correct; D wrong (compiled); E missing. */
static void fixture(struct kf_bench_task *t)
{
	t[0] = mk("a", 1, "elementwise", "pass", true, 3.0, 2.5, 3.5);
	t[1] = mk("b", 1, "reduction", "pass", true, 1.2, 0.9, 1.6);
	t[2] = mk("c", 2, "elementwise", "pass", true, 0.4, 0.3, 0.5);
	t[3] = mk("d", 2, "reduction", "wrong_output", true, 0, 0, 0);
	t[4] = mk("e", 2, "reduction", "missing", false, 0, 0, 0);
	t[4].time_s = 0;
	t[4].usd = 0;
	t[4].calls = 0;
}

static void test_fast_p(void)
{
	struct kf_bench_task t[5];
	fixture(t);
	/* over ALL five tasks: p=0 -> a,b,c; p=0.5 -> a,b; p=1 -> a,b; p=1.5 -> a; p=2 -> a; p=3 -> none
	 * (strictly faster than p) */
	CHECK_NEAR(kf_bench_fast_p(t, 5, 0, false), 0.6, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 0.5, false), 0.4, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 1, false), 0.4, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 1.2, false), 0.2, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 1.5, false), 0.2, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 2, false), 0.2, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 3, false), 0.0, 1e-12);
	/* significant: lower bounds 2.5, 0.9, 0.3: p=0 -> 3; p=0.5 -> a,b; p=1 -> a only (b's 0.9 < 1);
	 * p=2 -> a; p=2.5 -> none (2.5 is not above 2.5) */
	CHECK_NEAR(kf_bench_fast_p(t, 5, 0, true), 0.6, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 0.5, true), 0.4, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 1, true), 0.2, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 2, true), 0.2, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 5, 2.5, true), 0.0, 1e-12);
	CHECK_NEAR(kf_bench_fast_p(t, 0, 0, false), 0.0, 0);
	/* a wrong task with a (stale) speedup never counts */
	t[3].speedup = 9;
	t[3].lo = 8;
	CHECK_NEAR(kf_bench_fast_p(t, 5, 2, true), 0.2, 1e-12);
}

static void test_geomean(void)
{
	struct kf_bench_task t[5];
	size_t n = 99;
	fixture(t);
	/* (3.0 * 1.2 * 0.4)^(1/3) = 1.44^(1/3) */
	CHECK_NEAR(kf_bench_geomean(t, 5, &n), cbrt(1.44), 1e-12);
	CHECK_EQ_INT(n, 3);
	CHECK_NEAR(kf_bench_geomean(t + 3, 2, &n), 0, 0);
	CHECK_EQ_INT(n, 0);
	/* 4 and 0.25 cancel */
	struct kf_bench_task u[2] = {mk("x", 1, "", "pass", true, 4, 3, 5),
				     mk("y", 1, "", "pass", true, 0.25, 0.2, 0.3)};
	CHECK_NEAR(kf_bench_geomean(u, 2, NULL), 1.0, 1e-12);
}

static void test_metrics_levels(void)
{
	struct kf_bench_task t[5];
	struct kf_bench_metrics m;
	double p[KF_BENCH_MAX_P];
	size_t n_p = kf_bench_p_default(p, KF_BENCH_MAX_P);
	fixture(t);
	CHECK_EQ_INT(n_p, 6);
	CHECK_NEAR(p[2], 0.8, 0);
	kf_bench_metrics_compute(t, 5, p, n_p, 0, &m);
	CHECK_EQ_INT(m.n_tasks, 5);
	CHECK_EQ_INT(m.n_compiled, 4);
	CHECK_EQ_INT(m.n_correct, 3);
	CHECK_EQ_INT(m.n_missing, 1);
	CHECK_NEAR(m.compile_rate, 0.8, 1e-12);
	CHECK_NEAR(m.correct_rate, 0.6, 1e-12);
	/* p = 0, 0.5, 0.8, 1, 1.5, 2 */
	const double want[] = {0.6, 0.4, 0.4, 0.4, 0.2, 0.2}, want_sig[] = {0.6, 0.4, 0.4, 0.2, 0.2, 0.2};
	for (size_t i = 0; i < 6; i++) {
		CHECK_NEAR(m.fast[i], want[i], 1e-12);
		CHECK_NEAR(m.fast_sig[i], want_sig[i], 1e-12);
	}
	CHECK_NEAR(m.geomean, cbrt(1.44), 1e-12);
	CHECK_NEAR(m.time_s_per_task, 40.0 / 5, 1e-12);
	CHECK_NEAR(m.usd_per_task, 2.0 / 5, 1e-12);
	CHECK_NEAR(m.calls_per_task, 16.0 / 5, 1e-12);
	CHECK(m.cpu_clock);
	/* level 2: c, d, e: one correct of three, 0.4 is below 0.5 */
	kf_bench_metrics_compute(t, 5, p, n_p, 2, &m);
	CHECK_EQ_INT(m.n_tasks, 3);
	CHECK_EQ_INT(m.n_correct, 1);
	CHECK_NEAR(m.fast[0], 1.0 / 3, 1e-12);
	CHECK_NEAR(m.fast[1], 0.0, 0);
	CHECK_NEAR(m.geomean, 0.4, 1e-12);
	CHECK_NEAR(m.compile_rate, 2.0 / 3, 1e-12);
	/* level 3: no tasks, all zero */
	kf_bench_metrics_compute(t, 5, p, n_p, 3, &m);
	CHECK_EQ_INT(m.n_tasks, 0);
	CHECK_NEAR(m.fast[0], 0, 0);
}

static void test_p_parse(void)
{
	double p[4];
	size_t n;
	CHECK(kf_bench_p_parse("0,0.5,2", p, 4, &n));
	CHECK_EQ_INT(n, 3);
	CHECK_NEAR(p[1], 0.5, 0);
	CHECK(kf_bench_p_parse("1.25", p, 4, &n) && n == 1 && p[0] == 1.25);
	CHECK(!kf_bench_p_parse("1,,2", p, 4, &n));
	CHECK(!kf_bench_p_parse("-1", p, 4, &n));
	CHECK(!kf_bench_p_parse("abc", p, 4, &n));
	CHECK(!kf_bench_p_parse("", p, 4, &n));
	CHECK(!kf_bench_p_parse("1,2,", p, 4, &n));
	CHECK(!kf_bench_p_parse("1,2,3,4,5", p, 4, &n));
	CHECK(!kf_bench_p_parse("nan", p, 4, &n));
}

static void test_render(void)
{
	struct kf_bench_task t[5];
	struct kf_bench_metrics m[3];
	double p[KF_BENCH_MAX_P];
	size_t n_p = kf_bench_p_default(p, KF_BENCH_MAX_P);
	struct kf_bench_info info = {"suite<x>", "from-dir", "cpu", "b.db", "dir", NULL};
	struct kf_buf b = KF_BUF_INIT(1 << 22);
	fixture(t);
	snprintf(t[3].reason, sizeof(t[3].reason), "got 1, want 2 | \"quoted\"");
	kf_bench_metrics_compute(t, 5, p, n_p, 0, &m[0]);
	kf_bench_metrics_compute(t, 5, p, n_p, 1, &m[1]);
	kf_bench_metrics_compute(t, 5, p, n_p, 2, &m[2]);

	CHECK_EQ_INT(kf_bench_render_json(&b, &info, t, 5, m, 3), KF_OK);
	cJSON *o = cJSON_Parse(b.data);
	CHECK(o != NULL);
	cJSON *ov = cJSON_GetObjectItem(o, "overall");
	CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(ov, "fast_p"), "0.5")->valuedouble, 0.4, 1e-12);
	CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(ov, "fast_p_significant"), "1")->valuedouble, 0.2,
		   1e-12);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "levels")), 2);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "tasks")), 5);
	CHECK_STR(cJSON_GetObjectItem(o, "clock")->valuestring, "cpu");
	CHECK_STR(cJSON_GetObjectItem(o, "baseline")->valuestring, "reference");
	cJSON_Delete(o);

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_bench_render_csv(&b, t, 5), KF_OK);
	CHECK(!strncmp(b.data, "task,category,level,status,", 27));
	CHECK_CONTAINS(b.data, "\r\na,elementwise,1,pass,1,1,3,2.5,3.5,cpu,");
	CHECK_CONTAINS(b.data, "\"got 1, want 2 | \"\"quoted\"\"\"");

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_bench_render_md(&b, &info, t, 5, m, 3), KF_OK);
	CHECK_CONTAINS(b.data, "CPU clock");
	CHECK_CONTAINS(b.data, "| fast_p (all) | 0.600 | 0.400 | 0.400 | 0.400 | 0.200 | 0.200 |");
	CHECK_CONTAINS(b.data,
		       "| fast_p significant (all) | 0.600 | 0.400 | 0.400 | 0.200 | 0.200 | 0.200 |");
	CHECK_CONTAINS(b.data, "got 1, want 2 \\| ");

	kf_buf_reset(&b);
	t[0].progress = calloc(3, sizeof(double));
	t[0].progress[1] = 1.5;
	t[0].progress[2] = 3.0;
	t[0].n_progress = 3;
	CHECK_EQ_INT(kf_bench_render_html(&b, &info, t, 5, m, 3), KF_OK);
	CHECK_CONTAINS(b.data, "suite&lt;x&gt;");
	CHECK_CONTAINS(b.data, "fast_p curve");
	CHECK_CONTAINS(b.data, "Search progress");
	CHECK_CONTAINS(b.data, "Correctness by category");
	size_t lines = 0, bars = 0;
	for (const char *s = b.data; (s = strstr(s, "data-chart=\"line\"")); s++)
		lines++;
	for (const char *s = b.data; (s = strstr(s, "data-chart=\"bars\"")); s++)
		bars++;
	CHECK_EQ_INT(lines, 2); /* fast_p curve, search progress */
	CHECK_EQ_INT(bars, 2);  /* per-task speedups, correctness by category */
	free(t[0].progress);
	kf_buf_release(&b);
}

/* ---- against each task's best baseline ---- */

static void with_base(struct kf_bench_task *t, const char *name, bool library, double sp, double lo,
		      double hi)
{
	t->has_base = true;
	snprintf(t->base_name, sizeof(t->base_name), "%s", name);
	t->base_library = library;
	t->base_speedup = sp;
	t->base_lo = lo;
	t->base_hi = hi;
	t->base_significant = lo > 1;
	snprintf(t->base_method, sizeof(t->base_method), "interleaved");
	if (library)
		t->n_library_baselines = 1;
	else
		t->n_kernel_baselines = 1;
}

/* a: 4.0 [3, 5] over a tuned kernel; b: 0.5 [0.4, 0.6] over cuBLAS; c: correct, only a library baseline,
 * on the cpu backend (unavailable there: not comparable, not counted); d: wrong, has a kernel baseline
 * (counted, not faster); e: 1.2 [0.9, 1.5] over cuBLAS. Comparable: a, b, d, e. */
static void vs_fixture(struct kf_bench_task *t)
{
	t[0] = mk("a", 1, "elementwise", "pass", true, 3.0, 2.5, 3.5);
	t[1] = mk("b", 1, "gemm", "pass", true, 1.2, 0.9, 1.6);
	t[2] = mk("c", 2, "gemm", "pass", true, 0.4, 0.3, 0.5);
	t[3] = mk("d", 2, "reduction", "wrong_output", true, 0, 0, 0);
	t[4] = mk("e", 2, "gemm", "pass", true, 1.5, 1.4, 1.6);
	for (int i = 0; i < 5; i++)
		snprintf(t[i].backend, sizeof(t[i].backend), "cpu");
	with_base(&t[0], "baseline.cu", false, 4.0, 3.0, 5.0);
	with_base(&t[1], "cublas.gemm", true, 0.5, 0.4, 0.6);
	t[2].n_library_baselines = 1;
	snprintf(t[2].base_note, sizeof(t[2].base_note),
		 "cublas.gemm: unavailable: it runs on the cuda backend only");
	t[3].n_kernel_baselines = 1;
	with_base(&t[4], "cublas.gemm", true, 1.2, 0.9, 1.5);
}

static void test_fast_p_vs_baseline(void)
{
	struct kf_bench_task t[5];
	struct kf_bench_metrics m;
	double p[KF_BENCH_MAX_P];
	size_t n_p = kf_bench_p_default(p, KF_BENCH_MAX_P);
	vs_fixture(t);
	CHECK(kf_bench_base_eligible(&t[0]) && kf_bench_base_eligible(&t[3]) &&
	      !kf_bench_base_eligible(&t[2]));
	/* the same task on the cuda backend could run its library baseline: comparable (and not faster) */
	snprintf(t[2].backend, sizeof(t[2].backend), "cuda");
	CHECK(kf_bench_base_eligible(&t[2]));
	snprintf(t[2].backend, sizeof(t[2].backend), "cpu");
	/* over a, b, d, e: p=0 -> a, b, e; p=1 -> a, e; p=2 -> a; p=4 -> none (strictly faster) */
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 0, false), 0.75, 1e-12);
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 1, false), 0.5, 1e-12);
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 2, false), 0.25, 1e-12);
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 4, false), 0, 0);
	/* significant: lower bounds 3, 0.4, 0.9: p=1 -> a only */
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 1, true), 0.25, 1e-12);
	CHECK_NEAR(kf_bench_fast_p_base(t, 5, 0.5, true), 0.5, 1e-12);
	CHECK_NEAR(kf_bench_fast_p_base(t, 0, 0, false), 0, 0);
	kf_bench_metrics_compute(t, 5, p, n_p, 0, &m);
	CHECK_EQ_INT(m.n_base, 4);
	CHECK_EQ_INT(m.n_base_timed, 3);
	CHECK_EQ_INT(m.n_base_library, 2);
	CHECK_NEAR(m.geomean_base, cbrt(4.0 * 0.5 * 1.2), 1e-12);
	CHECK_NEAR(m.fast_base[0], 0.75, 1e-12); /* p = 0 */
	CHECK_NEAR(m.fast_base[3], 0.5, 1e-12);  /* p = 1 */
	CHECK_NEAR(m.fast_base_sig[3], 0.25, 1e-12);
	/* a kernel among them: "vs baseline"; the reference metrics are untouched */
	CHECK_STR(kf_bench_base_word(&m), "baseline");
	CHECK_NEAR(m.fast[0], 0.8, 1e-12);
	/* level 2 (c, d, e): every best baseline timed is a library call -> "vs library" */
	kf_bench_metrics_compute(t, 5, p, n_p, 2, &m);
	CHECK_EQ_INT(m.n_base, 2);
	CHECK_EQ_INT(m.n_base_library, 1);
	CHECK_STR(kf_bench_base_word(&m), "library");
	CHECK_NEAR(m.fast_base[3], 0.5, 1e-12);
	/* no comparable task: "vs baseline", zeros */
	kf_bench_metrics_compute(t + 2, 1, p, n_p, 0, &m);
	CHECK_EQ_INT(m.n_base, 0);
	CHECK_NEAR(m.fast_base[0], 0, 0);
	CHECK_STR(kf_bench_base_word(&m), "baseline");
}

static void test_render_vs_baseline(void)
{
	struct kf_bench_task t[5];
	struct kf_bench_metrics m[3];
	double p[KF_BENCH_MAX_P];
	size_t n_p = kf_bench_p_default(p, KF_BENCH_MAX_P);
	struct kf_bench_info info = {"suite", "from-dir", "cpu", "b.db", "dir", NULL};
	struct kf_buf b = KF_BUF_INIT(1 << 22);
	vs_fixture(t);
	kf_bench_metrics_compute(t, 5, p, n_p, 0, &m[0]);
	kf_bench_metrics_compute(t, 5, p, n_p, 1, &m[1]);
	kf_bench_metrics_compute(t, 5, p, n_p, 2, &m[2]);
	CHECK_EQ_INT(kf_bench_render_md(&b, &info, t, 5, m, 3), KF_OK);
	CHECK_CONTAINS(b.data, "## vs baseline: each task's best baseline");
	CHECK_CONTAINS(b.data, "| all | 4 | 3 | 2 | 1.339x over 3 |");
	CHECK_CONTAINS(b.data,
		       "| fast_p vs baseline (all) | 0.750 | 0.500 | 0.500 | 0.500 | 0.250 | 0.250 |");
	CHECK_CONTAINS(b.data, "| fast_p vs library significant (level 2) | 0.500 | 0.500 | 0.500 | 0.000 |");
	CHECK_CONTAINS(b.data, "| b | cublas.gemm | library | 0.500x | 0.400-0.600 | no | timed beside |");
	CHECK_CONTAINS(
	    b.data, "| c | - | - | - | - | - | cublas.gemm: unavailable: it runs on the cuda backend only |");
	CHECK_CONTAINS(b.data, "| d | - | - | - | - | - | not correct: not compared |");
	/* the reference's table stays as it was */
	CHECK_CONTAINS(b.data, "| fast_p (all) | 0.800 |");

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_bench_render_json(&b, &info, t, 5, m, 3), KF_OK);
	cJSON *o = cJSON_Parse(b.data),
	      *vs = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "overall"), "vs_best_baseline");
	CHECK(vs != NULL);
	if (vs) {
		CHECK_STR(cJSON_GetObjectItem(vs, "word")->valuestring, "baseline");
		CHECK_NEAR(cJSON_GetObjectItem(vs, "tasks")->valuedouble, 4, 0);
		CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(vs, "fast_p"), "1")->valuedouble, 0.5,
			   1e-12);
		CHECK_NEAR(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(vs, "fast_p_significant"), "1")->valuedouble,
		    0.25, 1e-12);
		CHECK_NEAR(cJSON_GetObjectItem(vs, "geomean_speedup")->valuedouble, cbrt(2.4), 1e-12);
	}
	cJSON *tasks = cJSON_GetObjectItem(o, "tasks"),
	      *bb = cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 1), "best_baseline");
	CHECK(bb && cJSON_IsObject(bb));
	if (bb && cJSON_IsObject(bb)) {
		CHECK_STR(cJSON_GetObjectItem(bb, "name")->valuestring, "cublas.gemm");
		CHECK_STR(cJSON_GetObjectItem(bb, "kind")->valuestring, "library");
		CHECK(cJSON_IsFalse(cJSON_GetObjectItem(bb, "significant")));
	}
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 2), "best_baseline")));
	CHECK_CONTAINS(cJSON_GetObjectItem(cJSON_GetArrayItem(tasks, 2), "baseline_note")->valuestring,
		       "unavailable");
	cJSON_Delete(o);

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_bench_render_csv(&b, t, 5), KF_OK);
	CHECK_CONTAINS(b.data,
		       ",reason,best_baseline,baseline_kind,speedup_vs_baseline,vs_ci_lo,vs_ci_hi\r\n");
	CHECK_CONTAINS(b.data, ",cublas.gemm,library,0.5,0.4,0.6\r\n");
	CHECK_CONTAINS(b.data, "\r\nd,reduction,2,wrong_output,1,0,0,0,0,,");

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_bench_render_html(&b, &info, t, 5, m, 3), KF_OK);
	CHECK_CONTAINS(b.data, "<h2>vs baseline: each task's best baseline</h2>");
	CHECK_CONTAINS(b.data, "<th>vs library (level 2)</th>");
	kf_buf_release(&b);
}

/* ---- a run recorded through kb.h ---- */

struct fix {
	struct kf_kb *kb;
	int64_t task_id, run_id, cand[4], run2, run3;
};

static bool with_baselines;

static int64_t add_cand(struct kf_kb *kb, int64_t run, int64_t parent, const char *edit, const char *src,
			const char *verdict, double speedup, double lo, double hi)
{
	struct kf_kb_candidate c = {.run_id = run, .parent_id = parent, .edit_kind = edit, .source = src};
	struct kf_kb_shape_row row = {"{\"N\":1024}", verdict, 0, 0, ""};
	struct kf_kb_eval e = {.backend = "cpu",
			       .arch = "cpu",
			       .toolchain = "g++",
			       .dtype = "f32",
			       .verdict = verdict,
			       .reason = !strcmp(verdict, "pass") ? "3 shapes passed"
								  : "wrong at N=1024\nsecond line",
			       .seed = 7,
			       .speedup = speedup,
			       .n_shapes = 1,
			       .shapes = &row};
	struct kf_kb_timing tm = {.shape = "{\"N\":1048576}",
				  .clock = "cpu",
				  .n_samples = 30,
				  .median_ms = 1.0 / (speedup > 0 ? speedup : 1),
				  .ref_median_ms = 1.0,
				  .speedup = speedup,
				  .speedup_ci_lo = lo,
				  .speedup_ci_hi = hi};
	int64_t id = 0;
	struct kf_err err = KF_ERR_INIT;
	/* the task's baselines beside each timing (schema 4): a tuned kernel the candidate beats by 1.6x, and
	 * a library call it does not beat (0.75x), which is therefore the best baseline */
	struct kf_kb_timing_baseline bl[2] = {{"baseline.cu", "kernel", "timed", "verified; timed",
					       0.8 * tm.median_ms / 0.5, 1.6, 1.4, 1.8, true, "chained"},
					      {"cublas.gemm", "library", "timed", "verified; timed",
					       0.75 * tm.median_ms, 0.75, 0.7, 0.8, false, "chained"}};
	if (with_baselines) {
		tm.baselines = bl;
		tm.n_baselines = 2;
	}
	enum kf_status st = kf_kb_record_step(kb, &c, &e, &tm, speedup > 0 ? 1 : 0, &id, NULL, &err);
	CHECKF(st == KF_OK, "%s", err.msg);
	return id;
}

static void fix_open(struct fix *f, const char *name)
{
	char path[256];
	struct kf_err err = KF_ERR_INIT;
	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/%s.db", tmpdir, name);
	unlink(path);
	CHECK_EQ_INT(kf_kb_open(path, 0, &f->kb, &err), KF_OK);
	struct kf_kb_task t = {
	    .name = "vadd", .hash = "00ff", .category = "elementwise", .level = 1, .title = "add"};
	CHECK_EQ_INT(kf_kb_task_put(f->kb, &t, &f->task_id, &err), KF_OK);
	struct kf_kb_run r = {.task_id = f->task_id,
			      .strategy = "evo",
			      .provider = "replay",
			      .model = "m1",
			      .backend = "cpu",
			      .seed = 42,
			      .budget_calls = 4};
	CHECK_EQ_INT(kf_kb_run_begin(f->kb, &r, &f->run_id, &err), KF_OK);
	struct kf_kb_llm_call call = {.run_id = f->run_id,
				      .seq = -1,
				      .provider = "replay",
				      .model = "m1",
				      .prompt = "[]",
				      .response = "x",
				      .tokens_in = 100,
				      .tokens_out = 50,
				      .cost_usd = 0.25};
	int64_t cid;
	CHECK_EQ_INT(kf_kb_record_llm_call(f->kb, &call, &cid, NULL, &err), KF_OK);
	/* seed passes at 1.0; a diff fails to compile; a rewrite of the seed passes at 2.0 [1.5, 2.5]; a diff
	 * of that is wrong */
	f->cand[0] = add_cand(f->kb, f->run_id, 0, "seed", "// seed\nk0", "pass", 1.0, 0.9, 1.1);
	f->cand[1] = add_cand(f->kb, f->run_id, f->cand[0], "diff", "k1 ```", "compile_error", 0, 0, 0);
	f->cand[2] =
	    add_cand(f->kb, f->run_id, f->cand[0], "rewrite", "// best <kernel>\nk2", "pass", 2.0, 1.5, 2.5);
	f->cand[3] = add_cand(f->kb, f->run_id, f->cand[2], "diff", "k3", "wrong_output", 0, 0, 0);
	CHECK_EQ_INT(kf_kb_run_set_status(f->kb, f->run_id, "done", &err), KF_OK);
	/* run2: nothing verified; run3: verified but slower than the reference */
	CHECK_EQ_INT(kf_kb_run_begin(f->kb, &r, &f->run2, &err), KF_OK);
	add_cand(f->kb, f->run2, 0, "rewrite", "w", "wrong_output", 0, 0, 0);
	CHECK_EQ_INT(kf_kb_run_begin(f->kb, &r, &f->run3, &err), KF_OK);
	add_cand(f->kb, f->run3, 0, "rewrite", "s", "pass", 0.8, 0.7, 0.9);
}

static void test_task_from_run(void)
{
	struct fix f;
	struct kf_bench_task t;
	struct kf_err err = KF_ERR_INIT;
	fix_open(&f, "from_run");
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(kf_bench_task_from_run(f.kb, f.run_id, &t, &err), KF_OK);
	CHECK_STR(t.name, "vadd");
	CHECK_STR(t.category, "elementwise");
	CHECK_EQ_INT(t.level, 1);
	CHECK_STR(t.status, "pass");
	CHECK(t.correct && t.compiled);
	CHECK_NEAR(t.speedup, 2.0, 1e-12);
	CHECK_NEAR(t.lo, 1.5, 1e-12);
	CHECK_NEAR(t.hi, 2.5, 1e-12);
	CHECK_STR(t.clock, "cpu");
	CHECK_EQ_INT(t.candidates, 4);
	CHECK_EQ_INT(t.calls, 1);
	CHECK_EQ_INT(t.tokens, 150);
	CHECK_NEAR(t.usd, 0.25, 1e-12);
	/* best so far per candidate: 1, 1, 2, 2 */
	CHECK_EQ_INT(t.n_progress, 4);
	if (t.n_progress == 4) {
		CHECK_NEAR(t.progress[0], 1.0, 1e-12);
		CHECK_NEAR(t.progress[1], 1.0, 1e-12);
		CHECK_NEAR(t.progress[2], 2.0, 1e-12);
		CHECK_NEAR(t.progress[3], 2.0, 1e-12);
	}
	free(t.progress);
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(kf_bench_task_from_run(f.kb, f.run2, &t, &err), KF_OK);
	CHECK_STR(t.status, "wrong_output");
	CHECK(!t.correct && t.compiled);
	CHECK_NEAR(t.speedup, 0, 0);
	CHECK_EQ_INT(t.n_progress, 0);
	CHECK_EQ_INT(kf_bench_task_from_run(f.kb, 9999, &t, &err), KF_ERR_NOTFOUND);
	kf_kb_close(f.kb);
}

static void test_run_report(void)
{
	struct fix f;
	struct kf_buf b = KF_BUF_INIT(1 << 22);
	struct kf_err err = KF_ERR_INIT;
	enum kf_report_format fmt;
	char want[128];
	fix_open(&f, "report");

	CHECK(kf_report_format_parse("html", &fmt) && fmt == KF_REPORT_HTML);
	CHECK(kf_report_format_parse("md", &fmt) && fmt == KF_REPORT_MD);
	CHECK(!kf_report_format_parse("pdf", &fmt));

	CHECK_EQ_INT(kf_report_run(f.kb, f.run_id, KF_REPORT_MD, &b, &err), KF_OK);
	snprintf(want, sizeof(want), "Best verified kernel: candidate %lld at 2.000x", (long long)f.cand[2]);
	CHECK_CONTAINS(b.data, want);
	CHECK_CONTAINS(b.data, "CPU times");
	CHECK_CONTAINS(b.data, "| N=1048576 | 0.5 | 1 | 2.000x | 1.500-2.500 | 30 | cpu |");
	CHECK_CONTAINS(b.data, "```cuda\n// best <kernel>\nk2\n```");
	CHECK_CONTAINS(b.data, "| strategy | evo |");
	CHECK_CONTAINS(b.data, "| provider / model | replay / m1 |");
	CHECK_CONTAINS(b.data, "| seed | 42 |");
	CHECK_CONTAINS(b.data, "1 calls, 100 tokens in, 50 tokens out, $0.2500");
	/* lineage: the winner, then the seed */
	snprintf(want, sizeof(want), "| %lld | %lld | rewrite | 2.000x |", (long long)f.cand[2],
		 (long long)f.cand[0]);
	CHECK_CONTAINS(b.data, want);
	snprintf(want, sizeof(want), "| %lld | 0 | seed | 1.000x |", (long long)f.cand[0]);
	CHECK_CONTAINS(b.data, want);
	/* attempts: every candidate with its verdict and a one-line reason */
	snprintf(want, sizeof(want),
		 "| %lld | %lld | diff | compile_error | - | wrong at N=1024 second line |",
		 (long long)f.cand[1], (long long)f.cand[0]);
	CHECK_CONTAINS(b.data, want);
	CHECK_CONTAINS(b.data, "| wrong_output | 1 |");
	CHECK_CONTAINS(b.data, "| pass | 2 |");

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run_id, KF_REPORT_HTML, &b, &err), KF_OK);
	CHECK(!strncmp(b.data, "<!DOCTYPE html>", 15));
	CHECK_CONTAINS(b.data, "data-chart=\"line\"");
	CHECK_CONTAINS(b.data, "data-chart=\"bars\"");
	CHECK_CONTAINS(b.data, "// best &lt;kernel&gt;");
	CHECK_CONTAINS(b.data, "they are CPU times, not GPU speed");
	CHECK_CONTAINS(b.data, "</html>");

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run_id, KF_REPORT_JSON, &b, &err), KF_OK);
	cJSON *o = cJSON_Parse(b.data);
	CHECK(o != NULL);
	cJSON *best = cJSON_GetObjectItem(o, "best");
	CHECK_EQ_INT((int64_t)cJSON_GetObjectItem(best, "candidate_id")->valuedouble, f.cand[2]);
	CHECK_NEAR(cJSON_GetObjectItem(best, "ci_lo")->valuedouble, 1.5, 1e-12);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "lineage")), 2);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(o, "attempts")), 4);
	CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "verdicts"), "pass")->valuedouble, 2, 0);
	CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "spend"), "usd")->valuedouble, 0.25, 1e-12);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "improved")));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "significant")));
	CHECK_STR(cJSON_GetObjectItem(o, "clock")->valuestring, "cpu");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "run"), "model")->valuestring, "m1");
	cJSON_Delete(o);

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run2, KF_REPORT_MD, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "No verified improvement: no candidate passed verification");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run2, KF_REPORT_HTML, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "No verified improvement");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run3, KF_REPORT_MD, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "No verified improvement: the best verified kernel");
	CHECK_CONTAINS(b.data, "0.800x of the reference");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, f.run3, KF_REPORT_JSON, &b, &err), KF_OK);
	o = cJSON_Parse(b.data);
	CHECK(o && cJSON_IsFalse(cJSON_GetObjectItem(o, "improved")));
	cJSON_Delete(o);

	/* a search's root candidate is the task's reference: shown as such, not counted as an attempt */
	struct kf_kb_run r4 = {
	    .task_id = f.task_id, .strategy = "mcts", .provider = "openai", .model = "m2", .backend = "cpu"};
	int64_t run4 = 0, ref_id = 0;
	CHECK_EQ_INT(kf_kb_run_begin(f.kb, &r4, &run4, &err), KF_OK);
	struct kf_kb_candidate ref = {.run_id = run4, .edit_kind = "reference", .source = "ref"};
	CHECK_EQ_INT(kf_kb_record_candidate(f.kb, &ref, &ref_id, &err), KF_OK);
	add_cand(f.kb, run4, ref_id, "rewrite", "r1", "pass", 1.5, 1.2, 1.8);
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, run4, KF_REPORT_MD, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "| reference | reference (the baseline) | - |");
	CHECK_CONTAINS(b.data, "| pass | 1 |");
	CHECK(!strstr(b.data, "| not evaluated |"));
	CHECK(!strstr(b.data, "| reference (the baseline) | 1 |"));

	CHECK(!strstr(b.data, "Against the task's baselines")); /* none recorded */

	/* a run whose timings carry the task's baselines: the summary's "vs library", the section, JSON, and
	 * the bench row's best baseline */
	int64_t run5 = 0;
	CHECK_EQ_INT(kf_kb_run_begin(f.kb, &r4, &run5, &err), KF_OK);
	with_baselines = true;
	add_cand(f.kb, run5, 0, "rewrite", "r5", "pass", 2.0, 1.8, 2.2);
	with_baselines = false;
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, run5, KF_REPORT_MD, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data,
		       "**Best kernel vs library (cublas.gemm): 0.750x (95% interval 0.700-0.800), not "
		       "significantly faster (CPU clock: not GPU speed).**");
	CHECK_CONTAINS(b.data, "## Against the task's baselines");
	CHECK_CONTAINS(b.data,
		       "| baseline.cu | kernel | timed | 1.600x | 1.400-1.800 | yes | 0.8 | chained through "
		       "the reference (timed once per run) |");
	CHECK_CONTAINS(b.data, "CPU-clock ratios");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, run5, KF_REPORT_HTML, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "<h2>Against the task's baselines</h2>");
	CHECK_CONTAINS(b.data, "Speedup over each baseline (CPU times)");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, run5, KF_REPORT_JSON, &b, &err), KF_OK);
	o = cJSON_Parse(b.data);
	cJSON *vs = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "best"), "vs");
	CHECK(vs != NULL);
	if (vs) {
		CHECK_STR(cJSON_GetObjectItem(vs, "best")->valuestring, "cublas.gemm");
		CHECK_STR(cJSON_GetObjectItem(vs, "word")->valuestring, "library");
		CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(vs, "baselines")), 2);
	}
	cJSON_Delete(o);
	struct kf_bench_task bt;
	memset(&bt, 0, sizeof(bt));
	CHECK_EQ_INT(kf_bench_task_from_run(f.kb, run5, &bt, &err), KF_OK);
	CHECK(bt.has_base && bt.base_library && !bt.base_significant);
	CHECK_STR(bt.base_name, "cublas.gemm");
	CHECK_NEAR(bt.base_speedup, 0.75, 1e-12);
	CHECK_STR(bt.base_method, "chained");
	CHECK_STR(bt.backend, "cpu");
	free(bt.progress);

	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_run(f.kb, 12345, KF_REPORT_MD, &b, &err), KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "12345");

	/* a bounded output buffer that is too small is an error, not a truncated report */
	struct kf_buf small = KF_BUF_INIT(64);
	CHECK(kf_report_run(f.kb, f.run_id, KF_REPORT_HTML, &small, &err) == KF_ERR_LIMIT);
	kf_buf_release(&small);
	kf_buf_release(&b);
	kf_kb_close(f.kb);
}

/* kforge report --compare: runs of one task side by side; runs of two tasks, one run, the same run twice
 * and an unknown run are refused. */
static void test_compare(void)
{
	struct fix f;
	struct kf_buf b = KF_BUF_INIT(1 << 22);
	struct kf_err err = KF_ERR_INIT;
	int64_t other_task, other_run;
	fix_open(&f, "compare");
	int64_t ids[3] = {f.run_id, f.run3, f.run2};
	CHECK_EQ_INT(kf_report_compare(f.kb, ids, 3, KF_REPORT_MD, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "# kforge compare: vadd");
	CHECK_CONTAINS(b.data, "2.000x **best** | 1.500-2.500 |");
	CHECK_CONTAINS(b.data, "| 0.800x | 0.700-0.900 |");
	CHECK_CONTAINS(b.data, "none verified");
	CHECK_CONTAINS(b.data, "CPU-clock ratios");
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_compare(f.kb, ids, 3, KF_REPORT_HTML, &b, &err), KF_OK);
	CHECK_CONTAINS(b.data, "data-chart=\"line\"");
	CHECK_CONTAINS(b.data, "data-chart=\"bars\"");
	CHECK_CONTAINS(b.data, "data-series=\"1\""); /* one progress curve per run with a verified kernel */
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_compare(f.kb, ids, 2, KF_REPORT_JSON, &b, &err), KF_OK);
	cJSON *j = cJSON_Parse(b.data);
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	CHECK(cJSON_GetArraySize(runs) == 2);
	const cJSON *best = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "best");
	CHECK(best && cJSON_GetObjectItemCaseSensitive(best, "speedup")->valuedouble == 2.0);
	CHECK(cJSON_GetObjectItemCaseSensitive(j, "best_run")->valuedouble == (double)f.run_id);
	cJSON_Delete(j);
	/* refusals */
	struct kf_kb_task t = {.name = "other", .hash = "11", .category = "x", .level = 1, .title = "o"};
	struct kf_kb_run r = {.strategy = "mcts", .backend = "cpu"};
	CHECK_EQ_INT(kf_kb_task_put(f.kb, &t, &other_task, &err), KF_OK);
	r.task_id = other_task;
	CHECK_EQ_INT(kf_kb_run_begin(f.kb, &r, &other_run, &err), KF_OK);
	int64_t mixed[2] = {f.run_id, other_run}, twice[2] = {f.run_id, f.run_id},
		missing[2] = {f.run_id, 999};
	kf_buf_reset(&b);
	CHECK_EQ_INT(kf_report_compare(f.kb, mixed, 2, KF_REPORT_MD, &b, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "compare runs of one task");
	CHECK_EQ_INT(kf_report_compare(f.kb, twice, 2, KF_REPORT_MD, &b, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_report_compare(f.kb, ids, 1, KF_REPORT_MD, &b, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_report_compare(f.kb, missing, 2, KF_REPORT_MD, &b, &err), KF_ERR_NOTFOUND);
	kf_buf_release(&b);
	kf_kb_close(f.kb);
}

KF_TEST_MAIN_TMPDIR(tmpdir, TEST(test_fast_p), TEST(test_geomean), TEST(test_metrics_levels),
		    TEST(test_p_parse), TEST(test_render), TEST(test_task_from_run), TEST(test_run_report),
		    TEST(test_compare), TEST(test_fast_p_vs_baseline), TEST(test_render_vs_baseline))
