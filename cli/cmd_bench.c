/* kforge bench SUITE: a KernelBench-style runner over many tasks (the runner library, runner/runner.h). It
 * either re-checks kernels generated elsewhere (--from-dir: through the evaluation pipeline) or runs the
 * search on each task, records everything in the knowledge base, and reports fast_p, geomean speedup,
 * correctness and compile rates. Scale-out: --shard I/N runs a deterministic slice; --slurm submits one
 * shard per job-array element, each with its own database, merged afterwards by 'kforge kb merge' and
 * reported with --collect. This file parses arguments, calls the runner and renders. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "json.h"
#include "runner/runner.h"

static const char help[] =
    "Runs a KernelBench-style benchmark over the tasks of SUITE (a folder searched for task.json files,\n"
    "or a file listing task paths, one per line). Results are recorded in the knowledge base and\n"
    "reported under --out as bench.html, bench.md, bench.json and bench.csv.\n\n"
    "modes:\n"
    "  (default)        run the search (kf_optimize) on each task, each with its own out dir\n"
    "  --from-dir DIR   evaluate kernels generated elsewhere: DIR/<task name>.cu per task (no LLM);\n"
    "                   verify each, profile the verified ones; a missing file counts as a failure\n"
    "  --collect        no evaluation: report the newest run of each task found in --db (e.g. the\n"
    "                   'kforge kb merge' of shard databases); with --from-dir only \"bench\" runs\n"
    "  --slurm          write OUT/bench.sbatch, a job array of --shards N elements (default 4), each\n"
    "                   running shard I/N into DB.shard-I.db and OUT/shard-I, submit it with sbatch\n"
    "                   and print the job id\n\n"
    "options:\n"
    "  --level N        only tasks of KernelBench level N\n"
    "  --tasks GLOB     only tasks whose name matches GLOB\n"
    "  --shard I/N      the tasks, sorted by name, whose 0-based index % N == I-1 (1 <= I <= N)\n"
    "  --p LIST         fast_p thresholds (default 0,0.5,0.8,1,1.5,2)\n"
    "  --provider P --model M --base-url URL --strategy evo|mcts --budget-calls N --seed N\n"
    "                   search settings (default mode; provider openai or anthropic, picked from\n"
    "                   the keys and base URLs set when not given; one LLM request at a time per task)\n"
    "  --jobs N         tasks at once (cpu backend only; on cuda GPU timing never overlaps: 1)\n"
    "  --backend B      auto (default), cpu or cuda\n"
    "  --db FILE        the knowledge base (default $KFORGE_DB, then kforge.db)\n"
    "  --out DIR        report folder (default bench-out)\n"
    "  --json           print the JSON report on stdout instead of the summary\n"
    "metrics: fast_p = (# tasks correct AND speedup > p) / (# all tasks, failures and missing included);\n"
    "the significant variant counts a task only when its speedup interval's lower bound is above p;\n"
    "speedups are against each task's reference kernel. On the cpu backend they are CPU times.\n"
    "exit: 0 benchmark done (results are data), 2 bad arguments or suite, 3 internal, 4 unavailable\n";

#define BENCH_JSON_MAX ((size_t)128 << 20)

static void note_done(void *ctx, size_t done, size_t n, const struct kf_suite_task *t, int64_t run_id)
{
	(void)ctx;
	fprintf(stderr, "[%zu/%zu] %s: run %lld\n", done, n, t->name, (long long)run_id);
}

/* fast_p and the geomean against each task's best baseline, for the tasks that have one to run. */
static void print_vs(const struct kf_bench_metrics *m)
{
	const char *w = kf_bench_base_word(m);
	if (!m->n_base)
		return;
	printf("  vs %s (%zu tasks with a baseline, %zu timed): geomean %.3fx;", w, m->n_base,
	       m->n_base_timed, m->geomean_base);
	for (size_t k = 0; k < m->n_p; k++)
		printf(" fast_%g=%.3f", m->p[k], m->fast_base[k]);
	printf("\n  vs %s significant:", w);
	for (size_t k = 0; k < m->n_p; k++)
		printf(" fast_%g=%.3f", m->p[k], m->fast_base_sig[k]);
	printf("\n");
}

static void print_summary(const struct kf_bench_metrics *m, size_t n_m, const char *out_dir)
{
	for (size_t i = 0; i < n_m; i++) {
		if (m[i].level)
			printf("level %d: ", m[i].level);
		else
			printf("all: ");
		printf("%zu tasks, %zu compiled, %zu correct (%.1f%%), geomean speedup %.3fx over %zu\n",
		       m[i].n_tasks, m[i].n_compiled, m[i].n_correct, 100 * m[i].correct_rate, m[i].geomean,
		       m[i].n_geomean);
		printf("  fast_p:");
		for (size_t k = 0; k < m[i].n_p; k++)
			printf(" fast_%g=%.3f", m[i].p[k], m[i].fast[k]);
		printf("\n  significant:");
		for (size_t k = 0; k < m[i].n_p; k++)
			printf(" fast_%g=%.3f", m[i].p[k], m[i].fast_sig[k]);
		printf("\n");
		print_vs(&m[i]);
	}
	if (n_m && m[0].cpu_clock)
		printf("note: cpu backend: speedups are CPU times, not GPU speed\n");
	else if (n_m && m[0].model_clock)
		printf("note: cpu backend: speedups are the GPU cost model's predictions (clock model), not "
		       "measured on a GPU\n");
	printf(
	    "baseline: each task's reference kernel (vs %s: each task's best baseline, the tuned kernel or "
	    "library call it is least faster than)\nreports: %s/bench.{html,md,json,csv}\n",
	    n_m ? kf_bench_base_word(&m[0]) : "baseline", out_dir);
}

/* --slurm: writes and submits the job array, then says how to collect it. */
static int do_slurm(int argc, char **argv, const char *db_path, const char *out_dir, unsigned shards,
		    bool json)
{
	struct kf_slurm_opts o = {NULL, NULL, argc, argv, db_path, out_dir, shards, getenv("KFORGE_SBATCH")};
	struct kf_slurm_job job;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = kf_slurm_submit(&o, &job, &err);

	if (st) {
		kf_cli_error("%s", err.msg);
		return st == KF_ERR_UNAVAILABLE ? KF_EXIT_UNAVAILABLE : KF_EXIT_INTERNAL;
	}
	if (json) {
		cJSON *d = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(d, "databases");
		cJSON_AddStringToObject(d, "job_id", job.job_id);
		cJSON_AddStringToObject(d, "script", job.script);
		cJSON_AddNumberToObject(d, "shards", shards);
		for (unsigned i = 1; i <= shards; i++) {
			char db[PATH_MAX + 32];
			snprintf(db, sizeof(db), "%s.shard-%u.db", job.stem, i);
			cJSON_AddItemToArray(a, cJSON_CreateString(db));
		}
		if (kf_json_fput(d, true, stdout, &err))
			kf_cli_error("%s", err.msg);
		cJSON_Delete(d);
	} else {
		printf("%s\n", job.job_id);
		fprintf(stderr,
			"submitted job array %s (%u shards, script '%s')\nwhen it is done:\n"
			"  kforge kb merge %s.shard-*.db -o MERGED.db\n  kforge bench SUITE --collect --db "
			"MERGED.db\n",
			job.job_id, shards, job.script, job.stem);
	}
	return KF_EXIT_OK;
}

/* ---- the command ---- */

int cmd_bench(int argc, char **argv)
{
	const char *level_s = NULL, *glob = NULL, *provider_s = NULL, *model = NULL, *base_url = NULL,
		   *strategy_s = NULL, *budget_s = NULL, *jobs_s = NULL, *backend_s = NULL, *db = NULL,
		   *out_dir = NULL, *shard_s = NULL, *from_dir = NULL, *p_s = NULL, *seed_s = NULL,
		   *shards_s = NULL, *pos[1];
	bool json = false, slurm = false, collect = false;
	const struct kf_opt opts[] = {
	    {"level", true, &level_s, NULL},
	    {"tasks", true, &glob, NULL},
	    {"provider", true, &provider_s, NULL},
	    {"model", true, &model, NULL},
	    {"base-url", true, &base_url, NULL},
	    {"strategy", true, &strategy_s, NULL},
	    {"budget-calls", true, &budget_s, NULL},
	    {"jobs", true, &jobs_s, NULL},
	    {"backend", true, &backend_s, NULL},
	    {"db", true, &db, NULL},
	    {"out", true, &out_dir, NULL},
	    {"shard", true, &shard_s, NULL},
	    {"from-dir", true, &from_dir, NULL},
	    {"p", true, &p_s, NULL},
	    {"seed", true, &seed_s, NULL},
	    {"shards", true, &shards_s, NULL},
	    {"json", false, NULL, &json},
	    {"slurm", false, NULL, &slurm},
	    {"collect", false, NULL, &collect},
	};
	size_t n_pos, n_p, n_m = 0;
	uint64_t v;
	unsigned shard_i = 0, shard_n = 0, shards = 4;
	int level = 0, jobs = 1, rc;
	double p[KF_BENCH_MAX_P];
	struct kf_runner_bench c;
	struct kf_suite s = {0};
	struct kf_err err = KF_ERR_INIT;
	struct kf_bench_task *rows = NULL;
	int64_t *run_ids = NULL;
	struct kf_bench_metrics m[17];
	struct kf_buf jbuf = KF_BUF_INIT(BENCH_JSON_MAX);
	enum kf_status st;

	if (kf_cli_start("bench", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "expected one SUITE (a folder of tasks or a list file)", &rc))
		return rc;
	memset(&c, 0, sizeof(c));
	if (level_s && (!kf_parse_u64(level_s, &v) || v < 1 || v > 9))
		return kf_cli_usage_error("bench", "--level needs 1, 2 or 3, not '%s'", level_s);
	level = level_s ? (int)v : 0;
	if (jobs_s && (!kf_parse_u64(jobs_s, &v) || v < 1 || v > 256))
		return kf_cli_usage_error("bench", "--jobs needs a number from 1 to 256, not '%s'", jobs_s);
	jobs = jobs_s ? (int)v : 1;
	if (shard_s && !kf_suite_shard_parse(shard_s, &shard_i, &shard_n))
		return kf_cli_usage_error("bench", "--shard needs I/N with 1 <= I <= N, not '%s'", shard_s);
	if (shards_s && (!kf_parse_u64(shards_s, &v) || v < 1 || v > 10000))
		return kf_cli_usage_error("bench", "--shards needs a number from 1 to 10000, not '%s'",
					  shards_s);
	if (shards_s)
		shards = (unsigned)v;
	if (p_s ? !kf_bench_p_parse(p_s, p, KF_BENCH_MAX_P, &n_p)
		: !(n_p = kf_bench_p_default(p, KF_BENCH_MAX_P)))
		return kf_cli_usage_error("bench",
					  "--p needs a comma-separated list of numbers >= 0, not '%s'", p_s);
	if (seed_s && !kf_parse_u64(seed_s, &c.seed))
		return kf_cli_usage_error("bench", "--seed needs a number, not '%s'", seed_s);
	if (budget_s && (!kf_parse_u64(budget_s, &v) || !v || v > INT64_MAX))
		return kf_cli_usage_error("bench", "--budget-calls needs a positive number, not '%s'",
					  budget_s);
	c.budget_calls = budget_s ? (int64_t)v : 0;
	if (strategy_s && !collect && !kf_strategy_parse(strategy_s, &c.strategy))
		return kf_cli_usage_error("bench", "--strategy must be schedule, evo or mcts, not '%s'",
					  strategy_s);
	bool search = !from_dir && !collect && !slurm;
	/* the provider as 'kforge optimize' picks it: --provider, then the keys and base URLs set */
	if (provider_s) {
		if (!kf_llm_provider_parse(provider_s, &c.llm.provider))
			return kf_cli_usage_error(
			    "bench", "--provider must be openai, anthropic or replay, not '%s'", provider_s);
	} else if (base_url) {
		c.llm.provider = KF_LLM_OPENAI;
	} else if (!kf_llm_provider_detect(model ? model : getenv("KFORGE_MODEL"), &c.llm.provider, NULL, 0,
					   NULL)) {
		/* the environment's provider; with both keys set, the model's (agent/models.c) */
	} else if (search) {
		kf_cli_error(
		    "no LLM provider: set OPENAI_API_KEY (or OPENAI_BASE_URL or --base-url for a local "
		    "server) or ANTHROPIC_API_KEY, or use --from-dir DIR to evaluate kernels generated "
		    "elsewhere");
		return KF_EXIT_UNAVAILABLE;
	}
	/* a replay file holds one run's replies: replaying is 'kforge optimize --provider replay' per task */
	if (c.llm.provider == KF_LLM_REPLAY && search)
		return kf_cli_usage_error(
		    "bench", "--provider replay is per run: use 'kforge optimize --provider replay'");
	c.llm.model = model ? model : getenv("KFORGE_MODEL");
	if (!c.llm.model && search)
		return kf_cli_usage_error("bench", "no model: give --model NAME or set KFORGE_MODEL");
	c.llm.base_url = base_url;
	c.llm.concurrency =
	    1; /* one request at a time per task: tasks run side by side with --jobs instead */
	if (slurm && collect)
		return kf_cli_usage_error("bench", "--slurm and --collect do not go together");
	c.db_path = kf_cli_db_path(db);
	c.out_dir = out_dir ? out_dir : "bench-out";
	c.from_dir = from_dir;
	if (from_dir && !collect) {
		struct stat sb;
		if (stat(from_dir, &sb) || !S_ISDIR(sb.st_mode))
			return kf_cli_usage_error("bench", "--from-dir '%s' is not a folder", from_dir);
	}

	if ((st = kf_suite_load(pos[0], level, glob, &s, &err))) {
		kf_cli_error("%s", err.msg);
		kf_suite_free(&s);
		return st == KF_ERR_NOMEM ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}
	if (slurm) {
		kf_suite_free(&s);
		return do_slurm(argc, argv, c.db_path, c.out_dir, shards, json);
	}
	if (shard_s)
		kf_suite_shard(&s, shard_i, shard_n);
	rows = calloc(s.n ? s.n : 1, sizeof(*rows));
	run_ids = calloc(s.n ? s.n : 1, sizeof(*run_ids));
	if (!rows || !run_ids) {
		kf_cli_error("out of memory");
		rc = KF_EXIT_INTERNAL;
		goto out;
	}

	const char *mode = collect ? "collect" : from_dir ? "from-dir" : "optimize";
	char backend_name[16] = "recorded";
	if (!collect) {
		if ((rc = kf_cli_backend_select("bench", backend_s, &c.backend, &c.dev)))
			goto out;
		snprintf(backend_name, sizeof(backend_name), "%s", kf_backend_name(c.backend));
		if (c.backend == KF_BACKEND_CUDA && jobs > 1) {
			/* GPU timing must never overlap other GPU work */
			kf_cli_warn("--jobs %d ignored on the cuda backend: tasks run one at a time", jobs);
			jobs = 1;
		}
		c.stop = kf_cancel_flag();
		st = kf_runner_pool_run(&s, from_dir ? kf_runner_from_dir : kf_runner_optimize, &c, jobs,
					kf_cancel_flag(), note_done, NULL, run_ids, &err);
		if (st) {
			kf_cli_error("%s", err.msg);
			rc = st == KF_ERR_INTERRUPTED   ? KF_EXIT_INTERRUPTED
			     : st == KF_ERR_UNAVAILABLE ? KF_EXIT_UNAVAILABLE
							: KF_EXIT_INTERNAL;
			goto out;
		}
	}
	if ((st = kf_runner_rows(c.db_path, &s, collect ? NULL : run_ids,
				 collect ? (from_dir ? "bench" : strategy_s) : NULL, rows, &err))) {
		kf_cli_error("%s", err.msg);
		rc = st == KF_ERR_NOTFOUND ? KF_EXIT_USAGE : KF_EXIT_INTERNAL;
		goto out;
	}
	n_m = kf_bench_metrics_all(rows, s.n, p, n_p, m, KF_ARRAY_SIZE(m));
	char source[PATH_MAX + 64];
	if (from_dir)
		snprintf(source, sizeof(source), "%s", from_dir);
	else
		snprintf(source, sizeof(source), "%s/%s", kf_llm_provider_name(c.llm.provider),
			 c.llm.model ? c.llm.model : "");
	struct kf_bench_info info = {pos[0], mode, backend_name, c.db_path, collect ? NULL : source, shard_s};
	if ((st = kf_bench_reports_write(c.out_dir, &info, rows, s.n, m, n_m, json ? &jbuf : NULL, &err))) {
		kf_cli_error("%s", err.msg);
		rc = KF_EXIT_INTERNAL;
		goto out;
	}
	if (json)
		fwrite(jbuf.data, 1, jbuf.len, stdout);
	else
		print_summary(m, n_m, c.out_dir);
	rc = KF_EXIT_OK;
out:
	kf_buf_release(&jbuf);
	kf_bench_tasks_free(rows, s.n);
	free(run_ids);
	kf_suite_free(&s);
	return kf_cancelled() ? KF_EXIT_INTERRUPTED : rc;
}
