/* The knowledge base: kforge's memory and record of evidence, in one SQLite file. Tasks, runs, candidates
 * with lineage, every LLM exchange, every verdict and timing, and the best verified kernel per task x arch x
 * dtype. Schema files live in kb/sql/ (embedded) and are applied as forward migrations on open. */
#ifndef KF_KB_H
#define KF_KB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kf.h"

/* The schema version this build writes; older files are migrated forward on a read-write open. */
#define KF_KB_SCHEMA_VERSION 5

struct kf_kb;

enum {
	KF_KB_READONLY = 1 << 0,  /* open without writing; fails on a file that needs a migration */
	KF_KB_NOCREATE = 1 << 1,  /* a missing file is KF_ERR_NOTFOUND instead of a new database */
	KF_KB_SYNC_FULL = 1 << 2, /* fsync every commit (survives power loss, not only a killed process) */
};

/* A struct kf_kb is one SQLite connection with its prepared statements: use it from one thread at a time
 * (open one per thread or process; they share the file safely).
 *
 * Opens (creating unless KF_KB_NOCREATE/READONLY) the database at path and migrates it to
 * KF_KB_SCHEMA_VERSION. Sets WAL mode, foreign keys, a busy timeout of 10 s so concurrent writers (bench
 * shards, two optimize runs) wait for each other, synchronous=NORMAL (a committed step survives kill -9 of
 * the process; SYNC_FULL also survives power loss). On failure *out is NULL; returns KF_ERR_NOTFOUND,
 * KF_ERR_DB (not an SQLite file, corrupt, locked past the timeout), KF_ERR_INVALID (a read-only open of a
 * file that needs a migration), KF_ERR_UNSUPPORTED (a schema newer than this build). */
enum kf_status kf_kb_open(const char *path, unsigned flags, struct kf_kb **out, struct kf_err *err);
/* Closes the database (checkpointing the WAL when it is the last connection). NULL is a no-op. */
void kf_kb_close(struct kf_kb *kb);
/* The schema version of the open file (PRAGMA user_version). */
int kf_kb_schema_version(struct kf_kb *kb);
/* Runs PRAGMA integrity_check and foreign_key_check; KF_OK when both are clean, else KF_ERR_DB with the
 * first problems in err. */
enum kf_status kf_kb_check(struct kf_kb *kb, struct kf_err *err);

/* Groups several record calls into one transaction (BEGIN IMMEDIATE: the write lock is taken at once, so
 * two processes never deadlock upgrading read locks). Every kf_kb_record_* call is already one
 * transaction on its own; inside begin/commit they join the outer one. Nesting is counted. */
enum kf_status kf_kb_begin(struct kf_kb *kb, struct kf_err *err);
enum kf_status kf_kb_commit(struct kf_kb *kb, struct kf_err *err);
/* Rolls back the outermost transaction (whatever the nesting depth); never fails. */
void kf_kb_rollback(struct kf_kb *kb);

/* ---- records ----
 * Strings in the structs below are borrowed on input (NULL means empty or absent) and, in structs handed to
 * a callback, valid only during that callback. Times are Unix seconds (REAL); money is USD; durations carry
 * their unit in the name. Ids are positive; 0 means none. */

struct kf_kb_task {
	int64_t id;
	const char *name; /* required */
	const char *hash; /* sha256 hex of the task file; required */
	const char *category;
	int level; /* KernelBench level (1 single op, 2 fusion, 3 model); 0 unknown */
	const char *title;
	const char *description;
	double created_at;
};

struct kf_kb_run {
	int64_t id;
	const char *uid; /* globally unique (random hex) so merges recognise the same run; made when NULL */
	int64_t task_id; /* required */
	const char *strategy; /* "evo", "mcts", "bench", "verify" ... */
	const char *provider; /* "openai", "anthropic", "replay" */
	const char *model;
	const char *backend; /* "cpu", "cuda" */
	int64_t seed;
	int64_t budget_calls;  /* 0: no limit */
	int64_t budget_tokens; /* 0: no limit */
	double budget_usd;     /* 0: no limit */
	double budget_time_s;  /* 0: no limit */
	const char *config;    /* JSON object of the options used; must never hold an API key */
	const char *status;    /* "running" (default), "done", "failed", "interrupted", "budget" */
	double started_at, updated_at, finished_at; /* finished_at 0 while running */
	/* Counters kept by kf_kb_record_llm_call, in the same transaction as the call. */
	double spend_usd;
	int64_t n_calls, tokens_in, tokens_out;
	int64_t n_candidates; /* filled on read */
};

struct kf_kb_llm_call {
	int64_t id;
	int64_t run_id; /* required */
	int seq;        /* 0-based order within the run; < 0 on input: the next free one */
	const char *provider, *model;
	const char *prompt;   /* the request messages as a JSON array of {role, content} */
	const char *response; /* the reply text */
	const char *finish_reason;
	int64_t tokens_in, tokens_out;
	double cost_usd;
	double latency_ms;
	const char *error; /* NULL when the call succeeded */
	const char *request_id;
	double created_at;
	/* schema 3: what the call became (kb/sql/003-calls-lessons.sql); NULL on input = the default */
	const char *purpose; /* "candidate" (default) or "strategies" */
	const char *outcome; /* "candidate", "strategies", "unusable", "failed" (default: "failed" when error
				is set, else "") */
	const char *failure; /* the failure kind of a failed call, "" otherwise */
	const char *reason;  /* why a reply was unusable, "" otherwise */
	int64_t tokens_cached, tokens_cache_write, tokens_reasoning; /* parts of tokens_in / tokens_out */
	const char *endpoint; /* "chat", "responses", "messages", "replay" */
};

struct kf_kb_candidate {
	int64_t id;
	int64_t run_id;          /* required */
	int64_t task_id;         /* 0 on input: the run's task */
	int64_t parent_id;       /* 0: none (a seed or a fresh rewrite) */
	int64_t parent2_id;      /* second parent of a crossover, 0: none */
	int64_t llm_call_id;     /* the call whose reply produced it, 0: none */
	int generation;          /* evo generation or MCTS depth */
	int island;              /* evo island, 0 otherwise */
	int64_t node;            /* MCTS node number, 0 otherwise */
	const char *edit_kind;   /* "seed", "rewrite", "diff", "crossover", "reference" */
	const char *source;      /* the whole kernel file; required */
	const char *source_hash; /* sha256 hex of source; computed when NULL */
	const char *tags;        /* technique tags, comma-separated; extracted from source when NULL */
	const char *change;      /* what changed against the parent (free text); NULL: derived on read */
	double created_at;
	int strategy_no; /* schema 3: the proposed strategy its lineage follows, 1-based; 0: none */
};

/* One row of an evaluation's shape sweep (docs/spec/verification.md's "shapes" array). */
struct kf_kb_shape_row {
	const char *dims;        /* JSON object, e.g. {"N":1024} */
	const char *status;      /* the verdict at this shape */
	double max_abs, max_rel; /* NAN when not compared */
	const char *detail;      /* first bad index and values, or "" */
};

struct kf_kb_eval {
	int64_t id;
	int64_t candidate_id;  /* required */
	const char *backend;   /* "cpu" or "cuda" */
	const char *arch;      /* "sm_90", or "cpu" for the cpu backend */
	const char *toolchain; /* e.g. "nvrtc 13.0" or the cpu compiler id */
	const char *device;    /* device name, driver; may be NULL */
	const char *dtype;     /* the task's main dtype, "f32"; keys the wins table */
	const char *verdict;   /* docs/spec/verification.md status: "pass", "wrong_output", ... required */
	const char *reason;
	int64_t seed;
	double speedup; /* aggregate speedup over the reference (geomean of timing shapes); 0: not timed */
	double wall_ms; /* how long the evaluation took */
	double created_at;
	size_t n_shapes;
	const struct kf_kb_shape_row *shapes;
};

/* One of the task's baselines at a timing (kb/sql/004-timing-baselines.sql). */
struct kf_kb_timing_baseline {
	const char *name;   /* "baseline.cu", "cublas.gemm"; required */
	const char *kind;   /* "kernel" or "library" */
	const char *status; /* "timed", "unavailable", "rejected", "failed", "skipped"; required */
	const char *reason; /* why it was not timed (or "") */
	double median_ms;   /* timed only: its median on the timing's clock */
	double speedup, speedup_ci_lo, speedup_ci_hi; /* timed only: baseline / candidate and its interval */
	bool significant;                             /* the candidate is significantly faster than it */
	const char *method;                           /* "interleaved" or "chained" (timed only) */
};
#define KF_KB_MAX_TIMING_BASELINES 8

struct kf_kb_timing {
	int64_t id;
	int64_t candidate_id;  /* required */
	int64_t evaluation_id; /* 0: none */
	const char *shape;     /* JSON dims of the timing shape */
	const char *clock;     /* "cupti", "cuda_event" or "cpu" (cpu times are never GPU speed) */
	int n_samples;
	double median_ms, iqr_ms;  /* the candidate's median time and interquartile range */
	double ci_lo_ms, ci_hi_ms; /* 95% bootstrap interval of that median; 0: none */
	double ref_median_ms;      /* the reference's median, timed interleaved */
	double speedup, speedup_ci_lo, speedup_ci_hi; /* reference / candidate and its 95% interval */
	double created_at;
	/* schema 5 (kb/sql/005-noise-band.sql): the A/A run's interval (reference / its twin; 0 0: none) and
	 * the noise band a significant speedup's lower bound clears (0: rows before version 5) */
	double noise_band, aa_lo, aa_hi;
	/* schema 4 (kb/sql/004-timing-baselines.sql): every baseline of the task at this timing, in its
	 * order (n_baselines at most KF_KB_MAX_TIMING_BASELINES) */
	size_t n_baselines;
	const struct kf_kb_timing_baseline *baselines;
};

struct kf_kb_win {
	int64_t task_id;
	const char *task_name;
	const char *arch, *dtype;
	int64_t candidate_id, evaluation_id;
	double speedup;
	double updated_at;
};

/* Inserts the task, or finds the existing row with the same (name, hash); *id (may be NULL) gets its id. */
enum kf_status kf_kb_task_put(struct kf_kb *kb, const struct kf_kb_task *t, int64_t *id, struct kf_err *err);
/* kf_kb_task_put for a loaded task file (core/task.h): its name, hash, category, level, title and
 * description. */
struct kf_task;
enum kf_status kf_kb_task_put_loaded(struct kf_kb *kb, const struct kf_task *task, int64_t *id,
				     struct kf_err *err);
/* The newest task row named name; KF_ERR_NOTFOUND when none. */
enum kf_status kf_kb_task_find(struct kf_kb *kb, const char *name, int64_t *id, struct kf_err *err);

/* Starts a run (status "running" unless given); *id gets its id. */
enum kf_status kf_kb_run_begin(struct kf_kb *kb, const struct kf_kb_run *r, int64_t *id, struct kf_err *err);
/* Sets a run's status ("done", "failed", "interrupted", "budget" mark it finished now; "running" re-opens
 * it for a resume). */
enum kf_status kf_kb_run_set_status(struct kf_kb *kb, int64_t run_id, const char *status, struct kf_err *err);

/* Records one LLM exchange and adds its tokens and cost to the run's counters in the same transaction.
 * *id gets its id, *seq_out (may be NULL) its seq. API keys are never part of a call record: callers
 * store the request messages, not the headers. */
enum kf_status kf_kb_record_llm_call(struct kf_kb *kb, const struct kf_kb_llm_call *c, int64_t *id,
				     int *seq_out, struct kf_err *err);
/* Records a candidate (extracting tags and hashing the source when not given). */
enum kf_status kf_kb_record_candidate(struct kf_kb *kb, const struct kf_kb_candidate *c, int64_t *id,
				      struct kf_err *err);
/* Records an evaluation with its shape rows and timings (n_timings may be 0), and when the verdict is
 * "pass" with a speedup above the current win for (task, arch, dtype), makes it the new win; all in one
 * transaction. Timings' candidate_id/evaluation_id are filled in. *id (may be NULL) gets the eval id. */
enum kf_status kf_kb_record_eval(struct kf_kb *kb, const struct kf_kb_eval *e,
				 const struct kf_kb_timing *timings, size_t n_timings, int64_t *id,
				 struct kf_err *err);
/* A search's usual step, in one transaction: the candidate, then (e may be NULL) its evaluation and
 * timings. */
enum kf_status kf_kb_record_step(struct kf_kb *kb, const struct kf_kb_candidate *c,
				 const struct kf_kb_eval *e, const struct kf_kb_timing *timings,
				 size_t n_timings, int64_t *cand_id, int64_t *eval_id, struct kf_err *err);

/* ---- reading ----
 * Iterators call fn once per row in a fixed order (ascending id unless said otherwise) with borrowed data;
 * fn returns 0 to go on, anything else to stop (the iterator then returns KF_OK). */

typedef int (*kf_kb_task_fn)(void *ctx, const struct kf_kb_task *t);
typedef int (*kf_kb_run_fn)(void *ctx, const struct kf_kb_run *r);
typedef int (*kf_kb_candidate_fn)(void *ctx, const struct kf_kb_candidate *c);
typedef int (*kf_kb_llm_call_fn)(void *ctx, const struct kf_kb_llm_call *c);
typedef int (*kf_kb_eval_fn)(void *ctx, const struct kf_kb_eval *e);
typedef int (*kf_kb_timing_fn)(void *ctx, const struct kf_kb_timing *t);
typedef int (*kf_kb_win_fn)(void *ctx, const struct kf_kb_win *w);

enum kf_status kf_kb_task_get(struct kf_kb *kb, int64_t id, kf_kb_task_fn fn, void *ctx, struct kf_err *err);
enum kf_status kf_kb_tasks_each(struct kf_kb *kb, kf_kb_task_fn fn, void *ctx, struct kf_err *err);
/* One run with its counters; KF_ERR_NOTFOUND when no such run. */
enum kf_status kf_kb_run_get(struct kf_kb *kb, int64_t id, kf_kb_run_fn fn, void *ctx, struct kf_err *err);
/* Runs of one task (task_id 0: all runs). */
enum kf_status kf_kb_runs_each(struct kf_kb *kb, int64_t task_id, kf_kb_run_fn fn, void *ctx,
			       struct kf_err *err);
enum kf_status kf_kb_candidate_get(struct kf_kb *kb, int64_t id, kf_kb_candidate_fn fn, void *ctx,
				   struct kf_err *err);
/* A run's candidates in recording order (run_id 0: all candidates): what --resume rebuilds from. */
enum kf_status kf_kb_candidates_each(struct kf_kb *kb, int64_t run_id, kf_kb_candidate_fn fn, void *ctx,
				     struct kf_err *err);
/* A run's LLM calls in seq order (run_id 0: all, by run then seq). */
enum kf_status kf_kb_llm_calls_each(struct kf_kb *kb, int64_t run_id, kf_kb_llm_call_fn fn, void *ctx,
				    struct kf_err *err);
enum kf_status kf_kb_llm_call_get(struct kf_kb *kb, int64_t id, kf_kb_llm_call_fn fn, void *ctx,
				  struct kf_err *err);
/* Evaluations with their shape rows: of one candidate when candidate_id > 0, else of every candidate of
 * run_id (0: all), in recording order. */
enum kf_status kf_kb_evals_each(struct kf_kb *kb, int64_t run_id, int64_t candidate_id, kf_kb_eval_fn fn,
				void *ctx, struct kf_err *err);
/* Timings of one candidate when candidate_id > 0, else of every candidate of run_id (0: all). */
enum kf_status kf_kb_timings_each(struct kf_kb *kb, int64_t run_id, int64_t candidate_id, kf_kb_timing_fn fn,
				  void *ctx, struct kf_err *err);
/* The wins table, by task name, arch, dtype. */
enum kf_status kf_kb_wins_each(struct kf_kb *kb, kf_kb_win_fn fn, void *ctx, struct kf_err *err);
/* The best verified speedup of a candidate on arch (NULL: any arch); 0 when it has none. */
enum kf_status kf_kb_candidate_best(struct kf_kb *kb, int64_t candidate_id, const char *arch, double *speedup,
				    struct kf_err *err);

/* A candidate against one of its task's baselines over all its timings (kf_kb_candidate_vs). */
struct kf_kb_vs {
	char name[128];  /* "cublas.gemm", "baseline.cu" */
	bool library;    /* kind "library" */
	char status[16]; /* "timed" when some timing has it timed, else the first timing's status */
	char reason[512];
	char method[16];  /* "interleaved" or "chained" (of the timed rows; "" otherwise) */
	char clock[16];   /* the timings' clock ("cpu", "cupti", "cuda_event") */
	size_t n_timed;   /* timings (shapes) at which it was timed */
	double speedup;   /* baseline / candidate: the geometric mean over those timings */
	double lo, hi;    /* the lowest lower and the highest upper interval bound over them */
	bool significant; /* the candidate is significantly faster than it at every one of them */
	double median_ms; /* the baseline's median: the geometric mean over them */
};

/* The candidate's standing against each baseline of its task, from its timings (schema 4), in the task's
 * order; *n = 0 for a candidate with no timing or none recorded with baselines (before schema 4). */
enum kf_status kf_kb_candidate_vs(struct kf_kb *kb, int64_t candidate_id, struct kf_kb_vs *out, size_t max,
				  size_t *n, struct kf_err *err);
/* The best baseline: the timed one the candidate is least faster than (the lowest speedup, the first of
 * equals); -1 when none was timed. */
int kf_kb_vs_best(const struct kf_kb_vs *v, size_t n);

/* The best verified candidate of a run on arch (NULL: any arch): highest speedup, the earliest of equals.
 * *cand_id = 0 and *speedup = 0 when the run has none. */
enum kf_status kf_kb_run_best(struct kf_kb *kb, int64_t run_id, const char *arch, int64_t *cand_id,
			      double *speedup, struct kf_err *err);

struct kf_kb_stats {
	int schema_version;
	int64_t n_tasks, n_runs, n_candidates, n_llm_calls, n_evaluations, n_timings, n_wins;
	int64_t n_verified; /* candidates with at least one "pass" evaluation */
	int64_t tokens_in, tokens_out;
	double spend_usd;
	int64_t file_bytes;
};
enum kf_status kf_kb_stats_get(struct kf_kb *kb, struct kf_kb_stats *out, struct kf_err *err);

/* ---- retrieval for prompts ---- */

/* One example for a prompt. Strings are owned by the array (kf_kb_examples_free). */
struct kf_kb_example {
	int64_t candidate_id, task_id, parent_id;
	char *task_name, *category;
	char *source;
	char *tags;
	char *edit_kind;
	char *change;          /* the recorded change, else derived: tags added/removed against the parent */
	double speedup;        /* best verified speedup on the arch */
	double parent_speedup; /* the parent's, 0 when none */
	bool same_task;
};

/* Up to k best verified kernels for a prompt about task_name on arch (NULL: any arch): first the same
 * task's (highest speedup first, one per distinct source), then other tasks' wins: same category first,
 * then by FTS5 rank of the task text (name, category, description) against the query task's text. Ties
 * break by ids, so the order is the same for the same database. *n may be less than k; an unknown task
 * is KF_ERR_NOTFOUND. Free with kf_kb_examples_free. */
enum kf_status kf_kb_examples_for(struct kf_kb *kb, const char *task_name, const char *arch, size_t k,
				  struct kf_kb_example **out, size_t *n, struct kf_err *err);
void kf_kb_examples_free(struct kf_kb_example *ex, size_t n);

/* The same retrieval with the hygiene a prompt needs: only kernels that some evaluation shows correct and
 * timed on the run's clock class (never CPU-clock wins for a GPU run), on the run's arch or its family
 * (sm_90 and sm_90a; sm_86 and sm_89), significantly faster than their reference when asked (every timed
 * shape's speedup interval above 1: KB_SIGNIFICANT_TIMING in kb/retrieve.c), none of the run's own
 * candidates (the prompt shows those itself) and never the parent's source. */
struct kf_kb_example_query {
	const char *task_name; /* required */
	const char *arch;      /* "sm_90", "cpu"; NULL: any */
	bool arch_family;      /* match arch by family instead of exactly */
	const char *clock;     /* timing class: "gpu" (cupti, cuda events), "cpu" or "model"; NULL: any */
	bool significant_only;
	int64_t exclude_run;             /* 0: none */
	const char *exclude_source_hash; /* sha256 hex of a source never to show (the parent); NULL: none */
	size_t k;
};
enum kf_status kf_kb_examples_query(struct kf_kb *kb, const struct kf_kb_example_query *q,
				    struct kf_kb_example **out, size_t *n, struct kf_err *err);
/* The family of an arch for retrieval: "sm_90a" -> "sm_9", "sm_100" -> "sm_10", "cpu" -> "cpu". */
void kf_kb_arch_family(const char *arch, char *out, size_t n);

/* ---- lessons: what an attempt tried and what happened, kept beside the code (schema 3) ---- */
struct kf_kb_lesson {
	int64_t id, task_id, run_id, candidate_id; /* candidate_id 0: none */
	const char *arch;                          /* the run's target, "sm_90" or "cpu" */
	const char *clock;                         /* the run's timing class: "gpu", "cpu", "model" */
	const char *verdict; /* "wrong_output", "compile_error", "pass" (a correct kernel that was slower) */
	const char *tried;   /* one line: the attempt's rationale */
	const char *outcome; /* one line: what happened and why */
	double created_at;
	const char *task_name; /* on read */
	bool same_task;        /* on read */
};
typedef int (*kf_kb_lesson_fn)(void *ctx, const struct kf_kb_lesson *l);
/* Records a lesson (tried and outcome bounded at 300 bytes each). */
enum kf_status kf_kb_record_lesson(struct kf_kb *kb, const struct kf_kb_lesson *l, int64_t *id,
				   struct kf_err *err);
/* Up to k lessons for a prompt about task_name on arch (family match) and clock class, those of
 * exclude_run left out: the same task's first, then the same category's, newest first, one per distinct
 * (verdict, tried). */
enum kf_status kf_kb_lessons_for(struct kf_kb *kb, const char *task_name, const char *arch, const char *clock,
				 int64_t exclude_run, size_t k, kf_kb_lesson_fn fn, void *ctx,
				 struct kf_err *err);
/* Every lesson (of one run when run_id > 0), in id order. */
enum kf_status kf_kb_lessons_each(struct kf_kb *kb, int64_t run_id, kf_kb_lesson_fn fn, void *ctx,
				  struct kf_err *err);

/* One full-text search hit: a task (kind "task") or a kernel (kind "candidate"). */
struct kf_kb_hit {
	const char *kind;
	int64_t id;
	const char *title;   /* task name, or "task-name #id" for a kernel */
	const char *snippet; /* the matching text with [brackets] around the terms */
	double rank;         /* bm25, lower is better */
};
typedef int (*kf_kb_hit_fn)(void *ctx, const struct kf_kb_hit *h);
/* FTS5 search over task names, categories, descriptions, kernel sources and tags; the text is taken as
 * plain words (all must match, FTS5 syntax characters are neutralised). Best first, at most limit hits of
 * each kind. */
enum kf_status kf_kb_search(struct kf_kb *kb, const char *text, size_t limit, kf_kb_hit_fn fn, void *ctx,
			    struct kf_err *err);

/* ---- technique tags ---- */

/* Appends to out the technique tags found in CUDA source (comments ignored), comma-separated in the fixed
 * order of kf_kb_tag_names(): shared_memory, smem_tiling (a 2-D __shared__ tile), dynamic_smem,
 * vectorized_loads, warp_shuffle, warp_vote, tensor_cores (wmma/mma/wgmma/ldmatrix), async_copy (cp.async,
 * memcpy_async), tma, loop_unroll, fast_math (__expf, __fdividef, ...), atomics, half_precision,
 * readonly_cache (__ldg), launch_bounds, restrict, grid_stride, cooperative_groups, constant_memory,
 * inline_ptx. Appends nothing for a kernel with none. Patterns are PCRE2, compiled once per process. */
enum kf_status kf_kb_tags_extract(const char *source, size_t len, struct kf_buf *out, struct kf_err *err);
/* The list of tag names this build knows, NULL-terminated. */
const char *const *kf_kb_tag_names(void);

/* ---- exchange: JSONL export/import and merge ---- */

/* Writes the records as JSONL (shared-decisions: a {"type":"kforge-export","version":1} line, then "task",
 * "run", "llm_call", "candidate", "evaluation", "timing" lines in that order, each by id) to path
 * ("-": stdout). run_id > 0 limits it to that run and its task. Written atomically for files. */
enum kf_status kf_kb_export(struct kf_kb *kb, int64_t run_id, const char *path, struct kf_err *err);

struct kf_kb_import_stats {
	int64_t tasks, runs, candidates, llm_calls, evaluations, timings; /* rows inserted */
	int64_t dup_tasks, dup_runs, dup_candidates; /* records found already present (by content) */
};
/* Reads a JSONL export and adds its records in one transaction (all or nothing). Ids are remapped; tasks
 * are deduplicated by (name, hash), runs by uid (a run already present adds nothing), candidates by source
 * hash within the same task against rows that existed before this import; parent links follow the
 * remapping (or the parent's source hash when the parent was not exported). Lines are bounded to 64 MiB.
 * stats may be NULL. A bad line is KF_ERR_PARSE with its line number. */
enum kf_status kf_kb_import(struct kf_kb *kb, const char *path, struct kf_kb_import_stats *stats,
			    struct kf_err *err);
/* Merges the databases at srcs into a new database at out_path (which must not exist unless force) with
 * the same rules as import, each source opened read-only. The result is written to a temporary file and
 * renamed into place, so a failed merge leaves nothing. */
enum kf_status kf_kb_merge(const char *const *srcs, size_t n_srcs, const char *out_path, bool force,
			   struct kf_kb_import_stats *stats, struct kf_err *err);

/* Records as JSON objects, exactly as export writes them (with "type" and "id"); for --json output and
 * reports. The caller frees them with cJSON_Delete; NULL when out of memory. The candidate's needs kb to
 * add its parent's source hash. */
struct cJSON;
struct cJSON *kf_kb_task_json(const struct kf_kb_task *t);
struct cJSON *kf_kb_run_json(const struct kf_kb_run *r);
struct cJSON *kf_kb_llm_call_json(const struct kf_kb_llm_call *c);
struct cJSON *kf_kb_candidate_json(struct kf_kb *kb, const struct kf_kb_candidate *c);
struct cJSON *kf_kb_eval_json(const struct kf_kb_eval *e);
struct cJSON *kf_kb_timing_json(const struct kf_kb_timing *t);

/* sha256 hex of n bytes (65 bytes with the NUL). */
void kf_kb_hash_hex(const void *data, size_t n, char out[65]);

#endif
