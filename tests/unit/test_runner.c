/* Tests of the bench runner library (runner/runner.h) without a GPU or an LLM: suites from a folder and a
 * list file with filters and name checks, shards, the process pool (results, failures, a child that dies,
 * a stop), the Slurm job script and its submission through a stand-in sbatch, and rows for tasks that have
 * no run. The bench modes end to end are tests/integration/bench*.sh. */
#include <sys/stat.h>
#include <unistd.h>

#include "runner/runner.h"
#include "testing.h"

#define SUITE "tests/data/bench/suite"

static char tmpdir[] = "/tmp/kf-test-runner.XXXXXX";

static void write_file(const char *rel, const char *text, mode_t mode)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	f = fopen(p, "w");
	CHECKF(f != NULL, "cannot create %s", p);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
}

static void test_suite_folder_and_filters(void)
{
	struct kf_suite s;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_suite_load(SUITE, 0, NULL, &s, &err) == KF_OK);
	CHECK_EQ_INT(s.n, 5);
	if (s.n == 5) {
		CHECK_STR(s.v[0].name, "bench_broken");
		CHECK_STR(s.v[4].name, "bench_wrong");
		CHECK_CONTAINS(s.v[0].path, "bench_broken/task.json");
		CHECK(s.v[0].category && s.v[0].level == 2);
	}
	kf_suite_free(&s);
	CHECK(s.n == 0 && !s.v);
	CHECK(kf_suite_load(SUITE, 2, NULL, &s, &err) == KF_OK && s.n == 2);
	if (s.n == 2)
		CHECK(kf_t_streq(s.v[0].name, "bench_broken") && kf_t_streq(s.v[1].name, "bench_slow"));
	kf_suite_free(&s);
	CHECK(kf_suite_load(SUITE, 0, "bench_f*", &s, &err) == KF_OK && s.n == 1);
	kf_suite_free(&s);
	CHECK(kf_suite_load(SUITE, 3, NULL, &s, &err) == KF_ERR_NOTFOUND && s.n == 0);
	CHECK_CONTAINS(err.msg, "after --level/--tasks");
	CHECK(kf_suite_load("tests/data/no-such-suite", 0, NULL, &s, &err) == KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "cannot read suite");
}

static void test_suite_list_file(void)
{
	struct kf_suite s;
	struct kf_err err = KF_ERR_INIT;
	char p[512], text[2048], top[1024];
	CHECK(getcwd(top, sizeof(top)) != NULL);
	/* relative to the list's folder, an absolute path, a folder for its task.json, comments, blanks */
	snprintf(text, sizeof(text),
		 "# two tasks\n  %s/" SUITE "/bench_slow  \n\n%s/" SUITE "/bench_fast/task.json\n", top, top);
	write_file("list.txt", text, 0644);
	snprintf(p, sizeof(p), "%s/list.txt", tmpdir);
	CHECK(kf_suite_load(p, 0, NULL, &s, &err) == KF_OK);
	CHECK_EQ_INT(s.n, 2);
	if (s.n == 2)
		CHECK(kf_t_streq(s.v[0].name, "bench_fast") && kf_t_streq(s.v[1].name, "bench_slow"));
	kf_suite_free(&s);
	/* the same task twice: names must be unique */
	snprintf(text, sizeof(text), "%s/" SUITE "/bench_slow\n%s/" SUITE "/bench_slow/task.json\n", top,
		 top);
	write_file("twice.txt", text, 0644);
	snprintf(p, sizeof(p), "%s/twice.txt", tmpdir);
	CHECK(kf_suite_load(p, 0, NULL, &s, &err) == KF_ERR_INVALID && s.n == 0);
	CHECK_CONTAINS(err.msg, "two tasks are named 'bench_slow'");
	/* a line naming nothing: the task loader's error */
	write_file("bad.txt", "nowhere/task.json\n", 0644);
	snprintf(p, sizeof(p), "%s/bad.txt", tmpdir);
	CHECK(kf_suite_load(p, 0, NULL, &s, &err) != KF_OK && s.n == 0);
	CHECK_CONTAINS(err.msg, "nowhere/task.json");
}

static void test_shards(void)
{
	struct kf_suite s;
	struct kf_err err = KF_ERR_INIT;
	unsigned i = 0, n = 0;
	CHECK(kf_suite_shard_parse("2/3", &i, &n) && i == 2 && n == 3);
	CHECK(kf_suite_shard_parse("1/1", &i, &n));
	CHECK(!kf_suite_shard_parse("0/3", &i, &n));
	CHECK(!kf_suite_shard_parse("4/3", &i, &n));
	CHECK(!kf_suite_shard_parse("1/", &i, &n));
	CHECK(!kf_suite_shard_parse("a/b", &i, &n));
	CHECK(!kf_suite_shard_parse("-1/3", &i, &n));
	CHECK(!kf_suite_shard_parse("99999999999/99999999999", &i, &n));
	CHECK(!kf_suite_shard_parse(NULL, &i, &n));
	/* shard 2/3 of five sorted tasks: indices 1 and 4 */
	CHECK(kf_suite_load(SUITE, 0, NULL, &s, &err) == KF_OK);
	kf_suite_shard(&s, 2, 3);
	CHECK_EQ_INT(s.n, 2);
	if (s.n == 2)
		CHECK(kf_t_streq(s.v[0].name, "bench_fast") && kf_t_streq(s.v[1].name, "bench_wrong"));
	kf_suite_free(&s);
}

/* A step that records run id 100 + the task's position, fails for "bench_slow" when asked, and dies in a
 * child for "bench_wrong" when asked. */
struct step_ctx {
	const struct kf_suite *s;
	bool fail, die;
};

static enum kf_status step(void *ctx, const struct kf_suite_task *t, int64_t *run_id, struct kf_err *err)
{
	struct step_ctx *c = ctx;
	if (c->fail && !strcmp(t->name, "bench_slow"))
		return kf_err_set(err, KF_ERR_INVALID, "step failed on purpose");
	if (c->die && !strcmp(t->name, "bench_wrong"))
		_exit(9);
	*run_id = 100 + (t - c->s->v);
	return KF_OK;
}

static void count_done(void *ctx, size_t done, size_t n, const struct kf_suite_task *t, int64_t run_id)
{
	int *calls = ctx;
	(*calls)++;
	(void)done, (void)n, (void)t, (void)run_id;
}

static void test_pool(void)
{
	struct kf_suite s;
	struct kf_err err = KF_ERR_INIT;
	int64_t ids[5];
	int calls;
	CHECK(kf_suite_load(SUITE, 0, NULL, &s, &err) == KF_OK);
	if (s.n != 5)
		return;
	for (int jobs = 1; jobs <= 3; jobs += 2) {
		struct step_ctx c = {&s, false, false};
		memset(ids, 0, sizeof(ids));
		calls = 0;
		CHECKF(kf_runner_pool_run(&s, step, &c, jobs, NULL, count_done, &calls, ids, &err) == KF_OK,
		       "jobs %d: %s", jobs, err.msg);
		for (int i = 0; i < 5; i++)
			CHECKF(ids[i] == 100 + i, "jobs %d: task %d got run %lld", jobs, i,
			       (long long)ids[i]);
		CHECK_EQ_INT(calls, 5);

		c.fail = true;
		CHECK(kf_runner_pool_run(&s, step, &c, jobs, NULL, NULL, NULL, ids, &err) == KF_ERR_INVALID);
		CHECK_CONTAINS(err.msg, "task 'bench_slow': step failed on purpose");
	}
	struct step_ctx c = {&s, false, true};
	CHECK(kf_runner_pool_run(&s, step, &c, 2, NULL, NULL, NULL, ids, &err) == KF_ERR_CRASH);
	CHECK_CONTAINS(err.msg, "task 'bench_wrong': its bench process died");
	/* a stop before the start runs nothing */
	volatile int stop = 1;
	c.die = false;
	memset(ids, 0, sizeof(ids));
	CHECK(kf_runner_pool_run(&s, step, &c, 1, &stop, NULL, NULL, ids, &err) == KF_ERR_INTERRUPTED);
	CHECK(kf_runner_pool_run(&s, step, &c, 3, &stop, NULL, NULL, ids, &err) == KF_ERR_INTERRUPTED);
	CHECK(ids[0] == 0 && ids[4] == 0);
	kf_suite_free(&s);
}

static void test_slurm(void)
{
	char *argv[] = {"bench", "suite dir", "--from-dir", "k's",    "--db",
			"x.db",  "--json",    "--shards=3", "--jobs", "2"};
	char out[512], sb[512], db[512];
	struct kf_slurm_job job;
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(db, sizeof(db), "%s/bench.db", tmpdir);
	struct kf_slurm_opts o = {
	    "/opt/kf/kforge", "/work", (int)KF_ARRAY_SIZE(argv), argv, db, out, 3, NULL};
	memset(&job, 0, sizeof(job));
	CHECK(kf_slurm_script(&o, &b, &job, &err) == KF_OK);
	CHECK_CONTAINS(b.data, "#SBATCH --array=1-3\n");
	CHECK_CONTAINS(b.data, "\ncd '/work'\n");
	/* the command line passes on, quoted, without what the script sets per shard */
	CHECK_CONTAINS(b.data, "exec '/opt/kf/kforge' bench 'suite dir' '--from-dir' 'k'\\''s' '--jobs' '2' "
			       "--shard \"$I/3\" --db ");
	CHECK(!strstr(b.data, "x.db") && !strstr(b.data, "--json") && !strstr(b.data, "--shards"));
	snprintf(sb, sizeof(sb), "%s/bench", tmpdir);
	CHECK_STR(job.stem, sb); /* ".db" dropped */
	snprintf(sb, sizeof(sb), "%s/out/bench.sbatch", tmpdir);
	CHECK_STR(job.script, sb);
	kf_buf_release(&b);

	/* submission through a stand-in sbatch that prints "JOBID;CLUSTER" */
	write_file("sbatch", "#!/bin/sh\necho '4242;cluster'\n", 0755);
	snprintf(sb, sizeof(sb), "%s/sbatch", tmpdir);
	o.sbatch = sb;
	CHECK(kf_slurm_submit(&o, &job, &err) == KF_OK);
	CHECK_STR(job.job_id, "4242");
	CHECK(access(job.script, X_OK) == 0);
	/* an sbatch that cannot be found: unavailable, the script is there anyway */
	unlink(job.script);
	snprintf(sb, sizeof(sb), "%s/no-sbatch", tmpdir);
	CHECK(kf_slurm_submit(&o, &job, &err) == KF_ERR_UNAVAILABLE);
	CHECK(access(job.script, F_OK) == 0);
	/* one that fails */
	write_file("bad-sbatch", "#!/bin/sh\nexit 1\n", 0755);
	snprintf(sb, sizeof(sb), "%s/bad-sbatch", tmpdir);
	CHECK(kf_slurm_submit(&o, &job, &err) == KF_ERR_INTERNAL);
	CHECK_CONTAINS(err.msg, "sbatch failed (exit 1)");
}

static void test_rows_without_runs(void)
{
	struct kf_suite s;
	struct kf_bench_task *rows = calloc(5, sizeof(*rows));
	struct kf_err err = KF_ERR_INIT;
	char db[512];
	int64_t ids[5] = {0};
	snprintf(db, sizeof(db), "%s/rows.db", tmpdir);
	CHECK(kf_suite_load(SUITE, 0, NULL, &s, &err) == KF_OK);
	if (s.n != 5 || !rows) {
		free(rows);
		return;
	}
	/* --collect on a database that does not exist is an error, not an empty report */
	CHECK(kf_runner_rows(db, &s, NULL, NULL, rows, &err) == KF_ERR_NOTFOUND);
	CHECK(kf_runner_rows(db, &s, ids, NULL, rows, &err) == KF_OK);
	for (int i = 0; i < 5; i++)
		CHECK(kf_t_streq(rows[i].status, "missing") && kf_t_streq(rows[i].name, s.v[i].name));
	CHECK(kf_runner_rows(db, &s, NULL, "bench", rows, &err) == KF_OK &&
	      kf_t_streq(rows[2].status, "missing"));
	kf_bench_tasks_free(rows, 5);
	kf_suite_free(&s);
}

KF_TEST_MAIN_TMPDIR(tmpdir, TEST(test_suite_folder_and_filters), TEST(test_suite_list_file),
		    TEST(test_shards), TEST(test_pool), TEST(test_slurm), TEST(test_rows_without_runs))
