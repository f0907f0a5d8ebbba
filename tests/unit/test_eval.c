/* Tests of the evaluation pipeline (eval/) on the cpu backend with the real worker ($KFORGE_WORKER), over
 * tests/data/eval: a task whose reference is slow on purpose (a plain kernel is > 10x faster, so its time
 * is implausible), a correct kernel, an exploit only the strict re-verification catches, one only the
 * re-check of timed outputs catches, kernels wrong at a hidden or a public shape, one that does not
 * compile; the task's baselines in the timings (tests/data/baselines); and the knowledge-base record of
 * outcomes in kb.h's vocabulary. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "core/cancel.h"
#include "eval/eval.h"
#include "kb/kb.h"
#include "testing.h"

#define DATA "tests/data/eval/"

static char tmpdir[] = "/tmp/kf-test-eval.XXXXXX";
static struct kf_task *task;

enum { K_FAST, K_TRAP, K_LATE, K_HIDDEN, K_PUBLIC, K_BROKEN, K_COUNT };
static const char *const kernel_file[K_COUNT] = {"fast.cu",         "strict_trap.cu",  "late_zero.cu",
						 "wrong_hidden.cu", "wrong_public.cu", "broken.cu"};
static struct kf_eval_outcome *outcome[K_COUNT];

/* Each kernel is evaluated once (with timing) and shared by the tests that read its outcome. */
static const struct kf_eval_outcome *eval_kernel(int k)
{
	struct kf_eval_opts o;
	struct kf_err err = KF_ERR_INIT;
	char path[256];
	enum kf_status st;

	CHECKF(task != NULL, "the test task did not load");
	if (outcome[k] || !task)
		return outcome[k];
	kf_eval_opts_init(&o);
	o.backend = KF_BACKEND_CPU;
	o.profile = true;
	/* 40 samples a side: more launches than late_zero.cu stays right for */
	o.rule = (struct kf_stop_rule){40, 0, 0, 40, 0};
	snprintf(path, sizeof(path), DATA "%s", kernel_file[k]);
	st = kf_eval_file(task, path, &o, &outcome[k], &err);
	CHECKF(st == KF_OK, "%s: %s", path, err.msg);
	return outcome[k];
}

static void test_correct_kernel_is_timed_and_reverified(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_FAST);
	if (!r)
		return;
	CHECK_EQ_INT(r->verdict, KF_VERDICT_PASS);
	CHECK_EQ_INT(r->stage, KF_EVAL_STAGE_VERIFY);
	CHECK(r->timed && r->profile && r->profile_status == KF_OK);
	/* > 10x over the slow reference: implausible, so a strict re-verification ran and passed */
	CHECK(r->profile && r->profile->implausible);
	CHECK(r->strict && r->strict->status == KF_VERDICT_PASS && r->strict->strict);
	CHECK(r->strict && r->strict->seed != r->verify->seed);
	CHECK(kf_eval_verification(r) == r->verify);
	CHECK_EQ_INT(r->n_timings, 1);
	if (r->n_timings) {
		const struct kf_eval_timing *t = &r->timings[0];
		CHECK_STR(t->clock, "cpu");
		CHECK_STR(t->source, "cpu");
		CHECK_EQ_INT(t->n_samples, 40);
		CHECK(t->median_ci.lo > 0 && t->median_ci.lo <= t->median_ns &&
		      t->median_ns <= t->median_ci.hi);
		CHECK_NEAR(t->median_ci.point, t->median_ns, 1e-9 * t->median_ns);
		CHECK(t->speedup.point > 10 && t->speedup.lo <= t->speedup.point);
		CHECK(t->significant);
		CHECK(!t->is_timing_shape); /* the cpu backend times the largest public shape */
	}
	CHECK(r->speedup > 10 && r->speedup_lo <= r->speedup && r->speedup <= r->speedup_hi);
	CHECK_STR(r->clock, "cpu");
	CHECK_STR(r->arch, "cpu");
	CHECK_STR(r->toolchain, kf_compiler_id(KF_BACKEND_CPU));
	CHECK(r->n_resources == 1 && r->resources && r->resources[0].block_threads == 128);
	CHECK(!r->feedback.check && !r->feedback.compile_log);
	CHECK_CONTAINS(r->feedback.profile_text, "speedup");
}

static void test_verify_only(void)
{
	struct kf_eval_opts o;
	struct kf_eval_outcome *r = NULL;
	struct kf_err err = KF_ERR_INIT;
	if (!task)
		KF_SKIP("no task");
	kf_eval_opts_init(&o);
	o.backend = KF_BACKEND_CPU;
	o.seed = 12345;
	CHECK(kf_eval_file(task, DATA "fast.cu", &o, &r, &err) == KF_OK);
	if (!r)
		return;
	CHECK_EQ_INT(r->verdict, KF_VERDICT_PASS);
	CHECK(r->seed == 12345 && r->verify->seed == 12345);
	CHECK(!r->profile && !r->strict && !r->timed && r->n_timings == 0 && r->speedup == 0);
	CHECK(!r->feedback.check); /* a pass where no timing was asked for is an answer */
	kf_eval_outcome_free(r);

	/* a stop (Ctrl-C, an interrupted search) skips the optional steps; the verdict stands */
	volatile int stop = 1;
	o.profile = true;
	o.stop = &stop;
	CHECK(kf_eval_file(task, DATA "fast.cu", &o, &r, &err) == KF_OK);
	if (!r)
		return;
	CHECK(r->verdict == KF_VERDICT_PASS && !r->profile && !r->timed);
	CHECK(r->feedback.check != NULL); /* not timed where timing was asked: no answer for a search */
	kf_eval_outcome_free(r);

	CHECK(kf_eval_file(task, DATA "no_such_kernel.cu", &o, &r, &err) == KF_ERR_NOTFOUND && !r);
}

/* SIGTERM while a verification runs: the cancellation kills the workers, and a killed worker must not
 * read as the kernel's runtime error (seen on a GPU: a correct kernel left as runtime_error). The answer
 * is KF_ERR_INTERRUPTED and no outcome, wherever in the protocol the request lands. */
static void *cancel_after(void *arg)
{
	usleep((useconds_t)(uintptr_t)arg);
	kf_cancel_request(SIGTERM);
	return NULL;
}

static void test_cancel_is_no_verdict(void)
{
	static const unsigned delays_us[] = {150000, 400000, 900000};
	struct kf_eval_opts o;
	struct kf_err err = KF_ERR_INIT;
	if (!task)
		KF_SKIP("no task");
	kf_cancel_install();
	for (size_t i = 0; i < sizeof(delays_us) / sizeof(delays_us[0]); i++) {
		struct kf_eval_outcome *r = NULL;
		pthread_t th;
		kf_eval_opts_init(&o);
		o.backend = KF_BACKEND_CPU;
		kf_cancel_reset();
		CHECK(pthread_create(&th, NULL, cancel_after, (void *)(uintptr_t)delays_us[i]) == 0);
		enum kf_status st = kf_eval_file(task, DATA "fast.cu", &o, &r, &err);
		pthread_join(th, NULL);
		CHECKF(st == KF_ERR_INTERRUPTED && !r, "cancelled after %u us: status %d, verdict %s (%s)",
		       delays_us[i], (int)st, r ? kf_verdict_name(r->verdict) : "-", err.msg);
		kf_eval_outcome_free(r);
	}
	kf_cancel_reset();
}

static void test_strict_reverification_catches_shape_trap(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_TRAP);
	if (!r)
		return;
	/* the ordinary sweep passes it; the strict one (earned by the implausible speed) does not */
	CHECK_EQ_INT(r->verify->status, KF_VERDICT_PASS);
	CHECK_EQ_INT(r->verdict, KF_VERDICT_WRONG_OUTPUT);
	CHECK_EQ_INT(r->stage, KF_EVAL_STAGE_STRICT);
	CHECK(r->strict && kf_eval_verification(r) == r->strict);
	CHECK_CONTAINS(r->reason, "M=1");
	CHECK(!r->timed && r->n_timings == 0 && r->speedup == 0);
	/* the failing shape is an edge shape: the prompt hears that, not its dims */
	CHECK(!r->feedback.has_shape);
	CHECK_CONTAINS(r->feedback.check, "not shown");
	CHECK(r->feedback.check && !strstr(r->feedback.check, "M=1"));
}

static void test_recheck_catches_late_change(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_LATE);
	if (!r)
		return;
	CHECK_EQ_INT(r->verify->status, KF_VERDICT_PASS);
	CHECK_EQ_INT(r->verdict, KF_VERDICT_STATEFUL); /* docs/spec/verification.md, check 9 */
	CHECK_EQ_INT(r->stage, KF_EVAL_STAGE_RECHECK);
	CHECK_CONTAINS(r->reason, "outputs of timed launches were wrong");
	CHECK(r->profile && !r->profile->timed_outputs_ok);
	CHECK(!r->strict); /* already rejected: no re-verification */
	CHECK(!r->timed && r->n_timings == 0);
	CHECK_CONTAINS(r->feedback.check, "timed launch");
}

static void test_feedback_hides_hidden_shapes(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_HIDDEN);
	if (!r)
		return;
	CHECK_EQ_INT(r->verdict, KF_VERDICT_WRONG_OUTPUT);
	CHECK_EQ_INT(r->stage, KF_EVAL_STAGE_VERIFY);
	CHECK(!r->profile); /* a rejected kernel is never timed */
	CHECK_CONTAINS(r->reason, "M=17");
	CHECK(!r->feedback.has_shape);
	CHECK_CONTAINS(r->feedback.check, "a shape you are not shown");
	CHECK(r->feedback.check && !strstr(r->feedback.check, "17") && !strstr(r->feedback.check, "M="));
}

static void test_feedback_names_public_shape(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_PUBLIC);
	int64_t m = 0, n = 0;
	if (!r)
		return;
	CHECK_EQ_INT(r->verdict, KF_VERDICT_WRONG_OUTPUT);
	CHECK(r->feedback.has_shape);
	CHECK(kf_shape_get(&r->feedback.shape, "M", &m) && kf_shape_get(&r->feedback.shape, "N", &n));
	CHECK(m == 24 && n == 128);
	CHECK_CONTAINS(r->feedback.check, "got");
	CHECK(r->feedback.max_error > 0);
	CHECK(!r->feedback.compile_log && !r->feedback.profile_text);
}

static void test_compile_error_feedback(void)
{
	const struct kf_eval_outcome *r = eval_kernel(K_BROKEN);
	if (!r)
		return;
	CHECK_EQ_INT(r->verdict, KF_VERDICT_COMPILE_ERROR);
	CHECK_CONTAINS(r->feedback.compile_log, "undeclared_name");
	CHECK(!r->feedback.check && !r->profile);
}

/* The task's baselines: only those verified and timed show in the timings (good.cu here; the others are
 * wrong, read out of bounds, go wrong while timed, or are a library call the cpu backend cannot make). */
static void test_baselines_timed(void)
{
	struct kf_task *vt = NULL;
	struct kf_eval_opts o;
	struct kf_eval_outcome *r = NULL;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_task_load("tests/data/baselines/vadd/task.json", 0, NULL, &vt, &err) == KF_OK);
	if (!vt)
		return;
	kf_eval_opts_init(&o);
	o.backend = KF_BACKEND_CPU;
	o.profile = true;
	o.rule = (struct kf_stop_rule){60, 0, 0, 60, 0}; /* past late.cu's first 48 launches */
	CHECKF(kf_eval_file(vt, "tests/data/baselines/vadd/reference.cu", &o, &r, &err) == KF_OK, "%s",
	       err.msg);
	if (r) {
		CHECK_EQ_INT(r->verdict, KF_VERDICT_PASS);
		CHECK(r->timed && r->n_timings == 1);
		if (r->n_timings == 1) {
			const struct kf_eval_timing *t = &r->timings[0];
			CHECK_EQ_INT(t->n_baselines, 1);
			CHECK_CONTAINS(t->baselines[0].name, "good.cu");
			CHECK(t->baselines[0].median_ns > 0);
			CHECK(t->baselines[0].speedup.lo <= t->baselines[0].speedup.point &&
			      t->baselines[0].speedup.point <= t->baselines[0].speedup.hi);
			CHECK(!t->baselines[0].library && !t->baselines[0].chained);
			CHECK_EQ_INT(t->baselines[0].index, 0);
			/* the one decision: the interval's rule (kf_ci_significant until A/A bands) */
			CHECK(t->baselines[0].significant == kf_ci_significant(&t->baselines[0].speedup));
		}
		/* what became of every baseline: the reasons a report and the KB show */
		CHECK_EQ_INT(r->n_baselines, 5);
		CHECK(!r->baselines_chained);
		if (r->n_baselines == 5) {
			CHECK_EQ_INT(r->baselines[0].status, KF_PROFILE_BASE_TIMED);
			CHECK_EQ_INT(r->baselines[1].status, KF_PROFILE_BASE_REJECTED);
			CHECK_STR(r->baselines[1].verdict, "wrong_output");
			CHECK_STR(r->baselines[2].verdict, "out_of_bounds");
			CHECK_STR(r->baselines[3].verdict, "stateful");
			CHECK_EQ_INT(r->baselines[4].status, KF_PROFILE_BASE_UNAVAILABLE);
			CHECK(r->baselines[4].library);
			CHECK_CONTAINS(r->baselines[4].reason, "cuda backend only");
		}
	}
	kf_eval_outcome_free(r);
	kf_task_free(vt);
}

struct base_rows {
	int n;
	char status[8][16], method[8][16], kind[8][8];
	double speedup[8];
	bool significant[8];
};

static int on_base_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct base_rows *b = ctx;
	for (size_t i = 0; i < t->n_baselines && b->n < 8; i++, b->n++) {
		snprintf(b->status[b->n], 16, "%s", t->baselines[i].status);
		snprintf(b->method[b->n], 16, "%s", t->baselines[i].method);
		snprintf(b->kind[b->n], 8, "%s", t->baselines[i].kind);
		b->speedup[b->n] = t->baselines[i].speedup;
		b->significant[b->n] = t->baselines[i].significant;
	}
	return 0;
}

/* A search times the baselines once (kf_eval_baselines_time) and chains each candidate's speedup over them
 * through the reference: the candidate's own profile times no baseline, its timing still has one for each
 * baseline timed in that session (with the two-session interval), and the record says "chained". */
static void test_baselines_chained(void)
{
	struct kf_task *vt = NULL;
	struct kf_eval_opts o;
	struct kf_eval_outcome *r = NULL;
	struct kf_profile_result *once = NULL;
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct base_rows rows = {0};
	char path[512];
	int64_t task_id = 0, run_id = 0, cid = 0;
	CHECK(kf_task_load("tests/data/baselines/vadd/task.json", 0, NULL, &vt, &err) == KF_OK);
	if (!vt)
		return;
	kf_eval_opts_init(&o);
	o.backend = KF_BACKEND_CPU;
	o.profile = true;
	o.rule = (struct kf_stop_rule){60, 0, 0, 60, 0}; /* past late.cu's first 48 launches */
	CHECKF(kf_eval_baselines_time(vt, &o, &once, &err) == KF_OK, "%s", err.msg);
	if (!once) {
		kf_task_free(vt);
		return;
	}
	CHECK(once->n_shapes == 1 && once->shapes[0].base_timed[0] && !once->shapes[0].base_timed[4]);
	o.baselines_once = once;
	o.rule = (struct kf_stop_rule){10, 0, 0, 10, 0}; /* the candidate: fewer samples, the same shape */
	CHECKF(kf_eval_file(vt, "tests/data/baselines/vadd/good.cu", &o, &r, &err) == KF_OK, "%s", err.msg);
	if (r && r->n_timings == 1) {
		const struct kf_eval_timing *t = &r->timings[0];
		const struct kf_profile_shape *ps = &r->profile->shapes[0];
		/* the candidate's own session timed no baseline: every one was skipped there */
		CHECK(!ps->base_timed[0]);
		CHECK_EQ_INT(r->profile->baselines[0].status, KF_PROFILE_BASE_SKIPPED);
		/* ... and the outcome shows the once-per-run session's statuses */
		CHECK(r->baselines_chained);
		CHECK_EQ_INT(r->n_baselines, 5);
		CHECK_EQ_INT(r->baselines[0].status, KF_PROFILE_BASE_TIMED);
		CHECK_EQ_INT(r->baselines[4].status, KF_PROFILE_BASE_UNAVAILABLE);
		CHECK_EQ_INT(t->n_baselines, 1);
		if (t->n_baselines == 1) {
			const struct kf_eval_baseline_time *b = &t->baselines[0];
			double want =
			    ps->ref.stats.median / ps->cand.stats.median *
			    (once->shapes[0].bases[0].stats.median / once->shapes[0].ref.stats.median);
			CHECK(b->chained && !b->library);
			CHECK_NEAR(b->speedup.point, want, 1e-9 * want);
			CHECK(b->speedup.lo <= b->speedup.point && b->speedup.point <= b->speedup.hi);
			/* its time through the reference: the kernel's time x the speedup over it */
			CHECK_NEAR(b->median_ns, ps->cand.stats.median * b->speedup.point,
				   1e-6 * b->median_ns);
			CHECK(b->significant == kf_ci_significant(&b->speedup));
		}
		snprintf(path, sizeof(path), "%s/chained.db", tmpdir);
		CHECK(kf_kb_open(path, 0, &kb, &err) == KF_OK);
		if (kb) {
			struct kf_kb_run run = {.task_id = 0, .strategy = "evo", .backend = "cpu"};
			struct kf_kb_candidate c = {.edit_kind = "seed", .source = "// good"};
			CHECK(kf_kb_task_put_loaded(kb, vt, &task_id, &err) == KF_OK);
			run.task_id = task_id;
			CHECK(kf_kb_run_begin(kb, &run, &run_id, &err) == KF_OK);
			c.run_id = run_id;
			CHECKF(kf_eval_record(kb, vt, r, &c, &cid, NULL, &err) == KF_OK, "%s", err.msg);
			CHECK(kf_kb_timings_each(kb, 0, cid, on_base_timing, &rows, &err) == KF_OK);
			CHECK_EQ_INT(rows.n, 5);
			CHECK_STR(rows.status[0], "timed");
			CHECK_STR(rows.method[0], "chained");
			CHECK_NEAR(rows.speedup[0], t->baselines[0].speedup.point, 1e-12);
			CHECK(rows.significant[0] == t->baselines[0].significant);
			CHECK_STR(rows.status[1], "rejected");
			CHECK_STR(rows.status[4], "unavailable");
			CHECK_STR(rows.kind[4], "library");
			kf_kb_close(kb);
		}
	} else {
		CHECKF(false, "good.cu was not timed: %s", r ? r->reason : err.msg);
	}
	kf_eval_outcome_free(r);
	kf_profile_result_free(once);
	kf_task_free(vt);
}

static void test_clock_vocabulary(void)
{
	CHECK_STR(kf_eval_clock_source(KF_BACKEND_CUDA, "cupti"), "cupti");
	CHECK_STR(kf_eval_clock_source(KF_BACKEND_CUDA, "events"), "cuda_event");
	CHECK_STR(kf_eval_clock_source(KF_BACKEND_CPU, "cpu-wall"), "cpu");
	CHECK_STR(kf_eval_clock_source(KF_BACKEND_CPU, "cupti"), "cpu"); /* a cpu time is never a GPU one */
	CHECK_STR(kf_eval_stage_name(KF_EVAL_STAGE_STRICT), "strict");
	if (task)
		CHECK_STR(kf_eval_task_dtype(task), "f32");
}

struct rows {
	int n_evals, n_timings;
	char verdict[2][32], toolchain[2][64], arch[2][16], dtype[2][16], first_dims[2][64];
	size_t n_shapes[2];
	double speedup[2];
	bool has_m1_row[2];
	struct {
		char clock[16], shape[64];
		int n;
		double median, lo, hi, ref, sp, sp_lo, sp_hi;
	} t;
};

static int on_eval(void *ctx, const struct kf_kb_eval *e)
{
	struct rows *r = ctx;
	int i = r->n_evals++;
	if (i > 1)
		return 0;
	snprintf(r->verdict[i], sizeof(r->verdict[i]), "%s", e->verdict);
	snprintf(r->toolchain[i], sizeof(r->toolchain[i]), "%s", e->toolchain);
	snprintf(r->arch[i], sizeof(r->arch[i]), "%s", e->arch);
	snprintf(r->dtype[i], sizeof(r->dtype[i]), "%s", e->dtype);
	snprintf(r->first_dims[i], sizeof(r->first_dims[i]), "%s", e->n_shapes ? e->shapes[0].dims : "");
	r->n_shapes[i] = e->n_shapes;
	r->speedup[i] = e->speedup;
	for (size_t k = 0; k < e->n_shapes; k++)
		if (strstr(e->shapes[k].dims, "\"M\":1,") && !strcmp(e->shapes[k].status, "wrong_output"))
			r->has_m1_row[i] = true;
	return 0;
}

static int on_timing(void *ctx, const struct kf_kb_timing *t)
{
	struct rows *r = ctx;
	r->n_timings++;
	snprintf(r->t.clock, sizeof(r->t.clock), "%s", t->clock);
	snprintf(r->t.shape, sizeof(r->t.shape), "%s", t->shape);
	r->t.n = t->n_samples;
	r->t.median = t->median_ms;
	r->t.lo = t->ci_lo_ms;
	r->t.hi = t->ci_hi_ms;
	r->t.ref = t->ref_median_ms;
	r->t.sp = t->speedup;
	r->t.sp_lo = t->speedup_ci_lo;
	r->t.sp_hi = t->speedup_ci_hi;
	return 0;
}

static void test_record_in_kb(void)
{
	const struct kf_eval_outcome *fast = eval_kernel(K_FAST), *trap = eval_kernel(K_TRAP);
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct rows rows;
	char path[512];
	int64_t task_id = 0, run_id = 0, c1 = 0, c2 = 0, e1 = 0;
	if (!fast || !trap)
		return;
	snprintf(path, sizeof(path), "%s/eval.db", tmpdir);
	CHECK(kf_kb_open(path, 0, &kb, &err) == KF_OK);
	if (!kb)
		return;
	CHECK(kf_kb_task_put_loaded(kb, task, &task_id, &err) == KF_OK);
	struct kf_kb_run run = {.task_id = task_id, .strategy = "verify", .backend = "cpu"};
	CHECK(kf_kb_run_begin(kb, &run, &run_id, &err) == KF_OK);
	struct kf_kb_candidate c = {.run_id = run_id, .edit_kind = "seed", .source = "// fast"};
	CHECK(kf_eval_record(kb, task, fast, &c, &c1, &e1, &err) == KF_OK && c1 > 0 && e1 > 0);
	c.source = "// trap";
	/* inside the caller's transaction it joins it */
	CHECK(kf_kb_begin(kb, &err) == KF_OK);
	CHECK(kf_eval_record(kb, task, trap, &c, &c2, NULL, &err) == KF_OK && c2 > c1);
	CHECK(kf_kb_commit(kb, &err) == KF_OK);

	memset(&rows, 0, sizeof(rows));
	CHECK(kf_kb_evals_each(kb, run_id, 0, on_eval, &rows, &err) == KF_OK);
	CHECK(kf_kb_timings_each(kb, run_id, 0, on_timing, &rows, &err) == KF_OK);
	CHECK_EQ_INT(rows.n_evals, 2);
	CHECK_STR(rows.verdict[0], "pass");
	CHECK_STR(rows.verdict[1], "wrong_output");
	for (int i = 0; i < 2; i++) {
		CHECK_STR(rows.toolchain[i], kf_compiler_id(KF_BACKEND_CPU));
		CHECK_STR(rows.arch[i], "cpu");
		CHECK_STR(rows.dtype[i], "f32");
		CHECK_STR(rows.first_dims[i], "{\"M\":24,\"N\":128}");
	}
	CHECK_EQ_INT(rows.n_shapes[0], fast->verify->n_shapes);
	/* the rejected kernel's rows are the strict verification's, with the shape that failed */
	CHECK(trap->strict && rows.n_shapes[1] == trap->strict->n_shapes);
	CHECK(rows.has_m1_row[1] && !rows.has_m1_row[0]);
	CHECK_NEAR(rows.speedup[0], fast->speedup, 1e-9 * fast->speedup);
	CHECK(rows.speedup[1] == 0);
	/* one timing row, the correct kernel's; a rejected kernel has none */
	CHECK_EQ_INT(rows.n_timings, 1);
	CHECK_STR(rows.t.clock, "cpu");
	CHECK_STR(rows.t.shape, "{\"M\":32,\"N\":100}");
	CHECK_EQ_INT(rows.t.n, 40);
	if (fast->n_timings) {
		const struct kf_eval_timing *t = &fast->timings[0];
		/* ci_lo_ms/ci_hi_ms: the interval of the median time, not the quartiles */
		CHECK_NEAR(rows.t.lo, t->median_ci.lo / 1e6, 1e-12);
		CHECK_NEAR(rows.t.hi, t->median_ci.hi / 1e6, 1e-12);
		CHECK(rows.t.lo <= rows.t.median && rows.t.median <= rows.t.hi);
		CHECK_NEAR(rows.t.median, t->median_ns / 1e6, 1e-12);
		CHECK_NEAR(rows.t.ref, t->ref_median_ns / 1e6, 1e-12);
		CHECK_NEAR(rows.t.sp, t->speedup.point, 1e-12);
		CHECK_NEAR(rows.t.sp_lo, t->speedup.lo, 1e-12);
		CHECK_NEAR(rows.t.sp_hi, t->speedup.hi, 1e-12);
	}
	kf_kb_close(kb);
}

int main(int argc, char **argv)
{
	static const struct kf_test_case cases[] = {
	    TEST(test_correct_kernel_is_timed_and_reverified),
	    TEST(test_verify_only),
	    TEST(test_cancel_is_no_verdict),
	    TEST(test_strict_reverification_catches_shape_trap),
	    TEST(test_recheck_catches_late_change),
	    TEST(test_feedback_hides_hidden_shapes),
	    TEST(test_feedback_names_public_shape),
	    TEST(test_compile_error_feedback),
	    TEST(test_baselines_timed),
	    TEST(test_baselines_chained),
	    TEST(test_clock_vocabulary),
	    TEST(test_record_in_kb),
	};
	struct kf_err err = KF_ERR_INIT;
	char cmd[600];
	int rc;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (kf_task_load(DATA "task.json", 0, NULL, &task, &err))
		fprintf(stderr, "cannot load the test task: %s\n", err.msg);
	rc = kf_test_run(cases, KF_ARRAY_SIZE(cases), argc, argv);
	for (int k = 0; k < K_COUNT; k++)
		kf_eval_outcome_free(outcome[k]);
	kf_task_free(task);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return rc;
}
