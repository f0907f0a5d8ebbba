/* The profile engine with several baselines (profiler/baselines.c, profiler/timing.c) on the cpu backend:
 * every baseline is verified before it is timed; a good one is timed beside candidate and reference with
 * its own speedup interval; a wrong one is rejected with its verdict and never timed; one that turns
 * wrong only after verification is caught by the re-check of its timed outputs; a library call is
 * unavailable with the reason; verdicts are cached by the parent. Fixture: tests/data/baselines/vadd. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/baseline.h"
#include "profiler/timing.h"
#include "testing.h"

static const char *TASK = "tests/data/baselines/vadd/task.json";
static char cache[512];

/* A fresh cache for this test whose compile entries are the shared ones (symlinks), so only the
 * baseline verdicts start empty. */
static void cache_setup(void)
{
	const char *shared = getenv("KFORGE_CACHE");
	DIR *d;
	struct dirent *e;

	snprintf(cache, sizeof(cache), "/tmp/kforge-test-pbase.%d", (int)getpid());
	mkdir(cache, 0700);
	if (shared && *shared && (d = opendir(shared))) {
		while ((e = readdir(d))) {
			char from[1024], to[1024];
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "baselines"))
				continue;
			snprintf(from, sizeof(from), "%s/%s", shared, e->d_name);
			snprintf(to, sizeof(to), "%s/%s", cache, e->d_name);
			if (symlink(from, to) != 0)
				perror(to);
		}
		closedir(d);
	}
	setenv("KFORGE_CACHE", cache, 1);
}

static size_t count_verdicts(void)
{
	char dir[600];
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	snprintf(dir, sizeof(dir), "%s/baselines", cache);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Overwrites every cached verdict with a rejection. */
static void tamper_verdicts(void)
{
	char dir[600];
	DIR *d;
	struct dirent *e;
	snprintf(dir, sizeof(dir), "%s/baselines", cache);
	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		char p[1024];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if ((f = fopen(p, "w"))) {
			fputs("wrong_output tampered cache entry\n", f);
			fclose(f);
		}
	}
	closedir(d);
}

static int find(const struct kf_profile_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_baselines; i++)
		if (!strcmp(r->baselines[i].name, name))
			return (int)i;
	return -1;
}

static enum kf_status profile(const struct kf_task *t, bool no_baselines, struct kf_profile_result **out,
			      struct kf_err *err)
{
	struct kf_profile_opts o;
	struct kf_kfile *k = NULL;
	enum kf_status st;

	kf_profile_opts_init(&o);
	o.backend = KF_BACKEND_CPU;
	o.seed = 7;
	o.no_baselines = no_baselines;
	/* exactly 60 samples: late.cu turns wrong after 48 launches of a worker (4 warm-ups + 60 > 48) */
	o.rule = (struct kf_stop_rule){60, 0, 1.0, 60, 1e11};
	o.worker_path = getenv("KFORGE_WORKER");
	*out = NULL;
	st = kf_kfile_load(t->reference, &k, err);
	if (!st)
		st = kf_kfile_bind(k, t, err);
	if (!st)
		st = kf_profile_run(t, k, &o, out, err);
	kf_kfile_free(k);
	return st;
}

static void test_baselines(void)
{
	struct kf_task *t = NULL;
	struct kf_profile_result *r = NULL;
	struct kf_err err = KF_ERR_INIT;
	int good, wrong, tail, late, gemm;

	cache_setup();
	CHECKF(kf_task_load(TASK, 0, NULL, &t, &err) == KF_OK, "%s", err.msg);
	if (!t)
		return;
	CHECKF(profile(t, false, &r, &err) == KF_OK, "%s", err.msg);
	if (!r) {
		kf_task_free(t);
		return;
	}
	CHECK_EQ_INT(r->n_baselines, 5);
	good = find(r, "good.cu"), wrong = find(r, "wrong.cu"), tail = find(r, "no_tail.cu");
	late = find(r, "late.cu"), gemm = find(r, "cublas.gemm");
	CHECK(good >= 0 && wrong >= 0 && tail >= 0 && late >= 0 && gemm >= 0);
	if (good < 0 || wrong < 0 || tail < 0 || late < 0 || gemm < 0)
		goto out;
	CHECK(r->timed_outputs_ok);
	CHECK_EQ_INT(r->n_shapes, 1);
	/* the good one: verified, timed, its own interval; the legacy single-baseline fields follow it */
	CHECK_EQ_INT(r->baselines[good].status, KF_PROFILE_BASE_TIMED);
	CHECK(r->shapes[0].base_timed[good]);
	CHECK_EQ_INT(r->shapes[0].bases[good].n, 60);
	CHECK(r->shapes[0].speedup_bases[good].point > 0 && r->shapes[0].speedup_bases[good].lo > 0);
	CHECK(r->shapes[0].has_base);
	CHECK_EQ_INT(r->shapes[0].base.n, r->shapes[0].bases[good].n);
	CHECK_NEAR(r->shapes[0].speedup_base.point, r->shapes[0].speedup_bases[good].point, 0);
	/* rejected by verification, never timed */
	CHECK_EQ_INT(r->baselines[wrong].status, KF_PROFILE_BASE_REJECTED);
	CHECK_STR(r->baselines[wrong].verdict, "wrong_output");
	CHECK(!r->shapes[0].base_timed[wrong] && r->shapes[0].bases[wrong].n == 0);
	CHECK_EQ_INT(r->baselines[tail].status, KF_PROFILE_BASE_REJECTED);
	CHECK_STR(r->baselines[tail].verdict, "out_of_bounds");
	/* passes verification (at most 41 launches a worker), caught by the timed-output re-check */
	CHECK_EQ_INT(r->baselines[late].status, KF_PROFILE_BASE_REJECTED);
	CHECK_STR(r->baselines[late].verdict, "stateful");
	CHECK_CONTAINS(r->baselines[late].reason, "of a timed launch");
	CHECK(!r->shapes[0].base_timed[late]);
	/* a library call on the cpu backend */
	CHECK_EQ_INT(r->baselines[gemm].status, KF_PROFILE_BASE_UNAVAILABLE);
	CHECK(r->baselines[gemm].library);
	CHECK_CONTAINS(r->baselines[gemm].reason, "runs on the cuda backend only");
	CHECK_CONTAINS(r->baselines[gemm].call, "cublas.gemm(A=a, B=b");
	CHECK_STR(kf_profile_base_status_name(r->baselines[gemm].status), "unavailable");
	/* verdicts of what was verified are cached (pass, pass, two rejections); an unavailable one is not:
	 * a machine with a GPU may run it */
	CHECK_EQ_INT(count_verdicts(), 4);
	kf_profile_result_free(r);

	/* the cache is read: a (forged) rejection there keeps the good baseline from being timed */
	tamper_verdicts();
	CHECKF(profile(t, false, &r, &err) == KF_OK, "%s", err.msg);
	if (r) {
		CHECK_EQ_INT(r->baselines[good].status, KF_PROFILE_BASE_REJECTED);
		CHECK_CONTAINS(r->baselines[good].reason, "tampered");
		CHECK(!r->shapes[0].has_base);
	}
	kf_profile_result_free(r);

	/* no_baselines: listed as skipped, nothing timed beside the reference */
	CHECKF(profile(t, true, &r, &err) == KF_OK, "%s", err.msg);
	if (r) {
		CHECK_EQ_INT(r->n_baselines, 5);
		for (size_t i = 0; i < r->n_baselines; i++)
			CHECK_EQ_INT(r->baselines[i].status, KF_PROFILE_BASE_SKIPPED);
		CHECK(!r->shapes[0].has_base);
	}
out:
	kf_profile_result_free(r);
	kf_task_free(t);
}

static void test_teardown(void)
{
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	if (cache[0] && system(cmd) != 0)
		fprintf(stderr, "  could not remove %s\n", cache);
}

KF_TEST_MAIN(TEST(test_baselines), TEST(test_teardown))
