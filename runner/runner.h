/* runner: the bench runner as a library (`kforge bench` parses its arguments, calls these and renders).
 * Suites (a folder of tasks or a list file) with each task's name, category and level; deterministic
 * shards; a pool of child processes running one step per task; the per-task steps of the bench modes (a
 * kernel generated elsewhere through the evaluation pipeline, or the search) and the rows read back from
 * the knowledge base; the Slurm job array that runs one shard per element. */
#ifndef KF_RUNNER_H
#define KF_RUNNER_H

#include <limits.h>

#include "agent/optimize.h"
#include "kf.h"
#include "reports/bench.h"
#include "sandbox/sandbox.h"

/* ---- suites ---- */

struct kf_suite_task {
	char *path; /* the task file */
	char *name;
	char *category; /* "" when the task has none */
	int level;
	int n_kernel_baselines, n_library_baselines; /* its baselines (docs/baselines.md) by kind */
};

struct kf_suite {
	struct kf_suite_task *v;
	size_t n;
};

/* Reads spec (a folder searched for task.json files, or a file listing task paths or folders one per line,
 * relative to the file, '#' comments and blank lines ignored), loads every task for its name, category and
 * level, keeps those of level (0: any) whose name matches glob (NULL: any), and sorts them by name. Names
 * must be unique (results and DIR/<name>.cu key on them). KF_ERR_NOTFOUND for a missing suite or no task
 * left, KF_ERR_INVALID for a duplicate name, the task loader's errors for a bad task. On failure *s is
 * empty. */
enum kf_status kf_suite_load(const char *spec, int level, const char *glob, struct kf_suite *s,
			     struct kf_err *err);
/* Keeps shard i of n (1 <= i <= n): the tasks whose 0-based index in name order % n == i - 1. */
void kf_suite_shard(struct kf_suite *s, unsigned i, unsigned n);
/* Parses "I/N" with 1 <= I <= N (numbers out of range are false). */
bool kf_suite_shard_parse(const char *s, unsigned *i, unsigned *n);
void kf_suite_free(struct kf_suite *s);

/* ---- the pool ---- */

/* One task's step: records a run and sets *run_id (0: none). An error stops the whole pool. */
typedef enum kf_status (*kf_runner_fn)(void *ctx, const struct kf_suite_task *t, int64_t *run_id,
				       struct kf_err *err);
/* Called in the parent when task t has finished, done of n. */
typedef void (*kf_runner_done_fn)(void *ctx, size_t done, size_t n, const struct kf_suite_task *t,
				  int64_t run_id);

/* Runs fn for every task of s: in this process when jobs <= 1, else up to jobs child processes at once
 * (each opens its own database connection). run_ids[i] gets task i's run. Once stop is non-zero (it may be
 * NULL) or a step fails, nothing more is started and the running ones are waited for. Returns the first
 * step's error prefixed "task 'NAME'", KF_ERR_CRASH "its bench process died" for a child that ended
 * without a result, KF_ERR_INTERRUPTED after a stop. */
enum kf_status kf_runner_pool_run(const struct kf_suite *s, kf_runner_fn fn, void *ctx, int jobs,
				  volatile int *stop, kf_runner_done_fn done, void *done_ctx,
				  int64_t *run_ids, struct kf_err *err);

/* ---- the bench modes' steps (kf_runner_fn with a struct kf_runner_bench as ctx) ---- */

struct kf_runner_bench {
	const char *db_path;
	const char *out_dir;  /* optimize mode: each task's outputs go to OUT/tasks/<name> */
	const char *from_dir; /* from-dir mode: the kernel of task NAME is FROM/<name>.cu */
	enum kf_backend_kind backend;
	struct kf_device_info dev; /* the probed device on cuda */
	uint64_t seed;             /* 0: random */
	volatile int *stop;        /* Ctrl-C: the evaluation's optional steps and the search stop */
	/* optimize mode */
	enum kf_strategy strategy;
	struct kf_llm_config llm;
	int64_t budget_calls;
};

/* from-dir: evaluates FROM/<name>.cu through the pipeline (eval/) and records a "bench" run with the
 * candidate and its outcome. A missing file, and problems of one task (a broken reference, an unusable
 * backend, a kernel that could not be timed), are recorded as a failed run with the reason in its config,
 * not returned. */
enum kf_status kf_runner_from_dir(void *bench, const struct kf_suite_task *t, int64_t *run_id,
				  struct kf_err *err);
/* optimize: the search on the task (kf_optimize) with its outputs and reports in OUT/tasks/<name>; a search
 * that fails before recording a run is recorded as a failed run. KF_ERR_INTERRUPTED and
 * KF_ERR_UNAVAILABLE stop the bench. */
enum kf_status kf_runner_optimize(void *bench, const struct kf_suite_task *t, int64_t *run_id,
				  struct kf_err *err);

/* The report rows of s: from run_ids[i] when run_ids is given, else the newest run of each task in the
 * database (read-only) whose strategy is only (NULL: any but "verify"). A task without a run is a
 * "missing" row. rows has s->n elements. */
enum kf_status kf_runner_rows(const char *db_path, const struct kf_suite *s, const int64_t *run_ids,
			      const char *only, struct kf_bench_task *rows, struct kf_err *err);

/* ---- Slurm ---- */

struct kf_slurm_opts {
	const char *self;    /* the kforge binary (NULL: /proc/self/exe) */
	const char *cwd;     /* the folder the shards run in (NULL: the current one) */
	int argc;            /* the bench command line to pass on, argv[0] being "bench" */
	char *const *argv;   /* (--db, --out, --shard, --shards, --slurm, --json, --collect are dropped) */
	const char *db_path; /* shard I writes DB.shard-I.db (".db" is dropped from DB first) */
	const char *out_dir; /* shard I writes OUT/shard-I; the script is OUT/bench.sbatch */
	unsigned shards;
	const char *sbatch; /* the sbatch command (NULL: "sbatch") */
};

struct kf_slurm_job {
	char script[PATH_MAX + 32]; /* absolute */
	char stem[PATH_MAX];        /* the databases are STEM.shard-I.db */
	char job_id[256];           /* what sbatch --parsable printed */
};

/* Writes the job-array script into out: one element per shard, each running shard I/N of the command line
 * with its own database and out dir. job gets the script's path and the database stem. */
enum kf_status kf_slurm_script(const struct kf_slurm_opts *o, struct kf_buf *out, struct kf_slurm_job *job,
			       struct kf_err *err);
/* Writes the script (OUT is created) and submits it with sbatch --parsable. KF_ERR_UNAVAILABLE when sbatch
 * cannot be run (not found), KF_ERR_INTERNAL when it fails; the script is written either way. */
enum kf_status kf_slurm_submit(const struct kf_slurm_opts *o, struct kf_slurm_job *job, struct kf_err *err);

#endif
