/* kforge bench SUITE: a KernelBench-style runner over many tasks. It either re-checks kernels generated
 * elsewhere (--from-dir: verify, then profile the verified ones) or runs the search on each task, records
 * everything in the knowledge base, and reports fast_p, geomean speedup, correctness and compile rates.
 * Scale-out: --shard I/N runs a deterministic slice; --slurm submits one shard per job-array element,
 * each with its own database, merged afterwards by 'kforge kb merge' and reported with --collect. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <fnmatch.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent/optimize.h"
#include "cli.h"
#include "eval/eval.h"
#include "fs.h"
#include "kb/kb.h"
#include "reports/bench.h"

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

#define BENCH_REPORT_MAX ((size_t)128 << 20)

struct bench_entry {
	char *path; /* the task file */
	char *name;
	char *category;
	int level;
};

struct suite {
	struct bench_entry *e;
	size_t n, cap;
};

static void suite_free(struct suite *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].name);
		free(s->e[i].category);
	}
	free(s->e);
	s->e = NULL;
	s->n = s->cap = 0;
}

static enum kf_status suite_add_path(struct suite *s, const char *path, struct kf_err *err)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		struct bench_entry *p = realloc(s->e, cap * sizeof(*p));
		if (!p)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		s->e = p;
		s->cap = cap;
	}
	s->e[s->n].path = kf_strdup(path);
	s->e[s->n].name = NULL;
	s->e[s->n].category = NULL;
	s->e[s->n].level = 0;
	if (!s->e[s->n].path)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	s->n++;
	return KF_OK;
}

static struct suite *walk_suite; /* nftw has no context argument */
static enum kf_status walk_status;
static struct kf_err *walk_err;

static int walk_fn(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	(void)sb;
	if (type == FTW_F && !strcmp(base, "task.json") &&
	    (walk_status = suite_add_path(walk_suite, path, walk_err)))
		return 1;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct bench_entry *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* Reads SUITE (a folder or a list file), loads every task for its name and level, filters, sorts by name
 * and checks names are unique (DIR/<name>.cu and the reports key on them). */
static enum kf_status suite_load(const char *spec, int level, const char *glob, struct suite *s,
				 struct kf_err *err)
{
	struct stat sb;
	enum kf_status st = KF_OK;
	if (stat(spec, &sb))
		return kf_err_set(err, KF_ERR_NOTFOUND, "cannot read suite '%s': %s", spec, strerror(errno));
	if (S_ISDIR(sb.st_mode)) {
		walk_suite = s;
		walk_status = KF_OK;
		walk_err = err;
		if (nftw(spec, walk_fn, 32, FTW_PHYS) && !walk_status)
			return kf_err_set(err, KF_ERR_IO, "cannot walk suite '%s': %s", spec,
					  strerror(errno));
		if (walk_status)
			return walk_status;
	} else {
		struct kf_buf b = KF_BUF_INIT((size_t)16 << 20);
		char dir[PATH_MAX];
		const char *slash = strrchr(spec, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - spec) : 1, slash ? spec : ".");
		if ((st = kf_buf_read_file(&b, spec, err)))
			return st;
		for (char *line = b.data, *next; line && *line && !st; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			char *e = line + strlen(line);
			while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				*--e = 0;
			while (*line == ' ' || *line == '\t')
				line++;
			if (!*line || *line == '#')
				continue;
			char path[PATH_MAX * 2];
			if (line[0] == '/')
				snprintf(path, sizeof(path), "%s", line);
			else
				snprintf(path, sizeof(path), "%s/%s", dir, line);
			if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
				strncat(path, "/task.json", sizeof(path) - strlen(path) - 1);
			st = suite_add_path(s, path, err);
		}
		kf_buf_release(&b);
		if (st)
			return st;
	}
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct kf_task *t = NULL;
		if ((st = kf_task_load(s->e[i].path, 0, NULL, &t, err))) {
			for (size_t j = i; j < s->n; j++)
				free(s->e[j].path);
			s->n = k;
			return st;
		}
		bool keep = (!level || t->level == level) && (!glob || !fnmatch(glob, t->name, 0));
		if (keep) {
			char *name = kf_strdup(t->name), *cat = kf_strdup(t->category ? t->category : "");
			if (!name || !cat) {
				free(name);
				free(cat);
				kf_task_free(t);
				for (size_t j = i; j < s->n; j++)
					free(s->e[j].path);
				s->n = k;
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			struct bench_entry e = {s->e[i].path, name, cat, t->level};
			s->e[k++] = e;
		} else {
			free(s->e[i].path);
		}
		kf_task_free(t);
	}
	s->n = k;
	if (!s->n)
		return kf_err_set(err, KF_ERR_NOTFOUND, "no tasks in suite '%s'%s", spec,
				  level || glob ? " after --level/--tasks" : "");
	qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	for (size_t i = 1; i < s->n; i++)
		if (!strcmp(s->e[i].name, s->e[i - 1].name))
			return kf_err_set(err, KF_ERR_INVALID, "two tasks are named '%s' ('%s' and '%s')",
					  s->e[i].name, s->e[i - 1].path, s->e[i].path);
	return KF_OK;
}

/* The slice of shard I of N (1-based I): the sorted tasks whose index % N == I-1. */
static void suite_shard(struct suite *s, unsigned i, unsigned n)
{
	size_t k = 0;
	for (size_t j = 0; j < s->n; j++) {
		if (j % n == i - 1) {
			s->e[k++] = s->e[j];
		} else {
			free(s->e[j].path);
			free(s->e[j].name);
			free(s->e[j].category);
		}
	}
	s->n = k;
}

/* "I/N" with 1 <= I <= N; strtoul, not sscanf, so that a number out of range is an error (cert-err34-c). */
static bool parse_shard(const char *s, unsigned *i, unsigned *n)
{
	unsigned long a, b;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	a = strtoul(s, &end, 10);
	if (*end != '/' || !isdigit((unsigned char)end[1]))
		return false;
	b = strtoul(end + 1, &end, 10);
	if (*end || errno || a > UINT_MAX || b > UINT_MAX)
		return false;
	*i = (unsigned)a;
	*n = (unsigned)b;
	return *n >= 1 && *i >= 1 && *i <= *n;
}

/* ---- --from-dir: verify and profile one generated kernel, record it as a "bench" run ---- */

struct bench_ctx {
	const char *suite, *db_path, *out_dir, *from_dir;
	enum kf_backend_kind backend;
	struct kf_device_info dev;
	uint64_t seed;
	/* optimize mode */
	enum kf_strategy strategy;
	struct kf_llm_config llm;
	int64_t budget_calls;
};

static char *run_config(const char *mode, const char *kernel, const char *outcome, const char *error)
{
	cJSON *o = cJSON_CreateObject(), *b = cJSON_AddObjectToObject(o, "bench");
	cJSON_AddStringToObject(b, "mode", mode);
	if (kernel)
		cJSON_AddStringToObject(b, "kernel", kernel);
	if (outcome)
		cJSON_AddStringToObject(b, "outcome", outcome);
	if (error)
		cJSON_AddStringToObject(b, "error", error);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* Evaluates DIR/<name>.cu for one task and records a run; *run_id gets it. Harness problems of one task
 * (a broken reference, an unusable backend, a kernel that could not be timed) are recorded on the run as
 * an "error", not returned. */
static enum kf_status eval_one(const struct bench_ctx *c, const struct bench_entry *e, int64_t *run_id,
			       struct kf_err *err)
{
	struct kf_kb *kb = NULL;
	struct kf_task *task = NULL;
	struct kf_eval_outcome *ev = NULL;
	struct kf_buf src = KF_BUF_INIT((size_t)4 << 20);
	char kernel[PATH_MAX * 2];
	char *config = NULL;
	struct kf_err terr = KF_ERR_INIT;
	int64_t task_id = 0;
	double started = kf_wall_s();
	enum kf_status st;

	*run_id = 0;
	snprintf(kernel, sizeof(kernel), "%s/%s.cu", c->from_dir, e->name);
	if ((st = kf_kb_open(c->db_path, 0, &kb, err)) || (st = kf_task_load(e->path, 0, NULL, &task, err)) ||
	    (st = kf_kb_task_put_loaded(kb, task, &task_id, err)))
		goto out;

	const char *outcome = NULL;
	if (access(kernel, F_OK) != 0) {
		outcome = "missing";
	} else if (kf_buf_read_file(&src, kernel, &terr)) {
		outcome = "error";
	} else {
		struct kf_eval_opts eo;
		kf_eval_opts_init(&eo);
		eo.backend = c->backend;
		eo.device = &c->dev;
		eo.seed = c->seed;
		eo.profile = true;
		eo.stop = &kf_cli_interrupted;
		if (kf_eval_run(task, kernel, src.data, src.len, &eo, &ev, &terr)) {
			outcome = "error";
		} else if (ev->profile_status && ev->profile_status != KF_ERR_RUNTIME) {
			outcome = "error"; /* verified but not timed: no speedup to report */
			terr = ev->profile_err;
		}
	}

	struct kf_kb_run run = {.task_id = task_id,
				.strategy = "bench",
				.provider = "",
				.model = "",
				.backend = kf_backend_name(c->backend),
				.seed = (int64_t)(ev ? ev->seed : c->seed),
				.started_at = started};
	config =
	    run_config("from-dir", kernel, outcome, outcome && strcmp(outcome, "missing") ? terr.msg : NULL);
	run.config = config;
	if ((st = kf_kb_begin(kb, err)))
		goto out;
	if ((st = kf_kb_run_begin(kb, &run, run_id, err)))
		goto rollback;
	if (!outcome) {
		struct kf_kb_candidate cand = {.run_id = *run_id, .edit_kind = "bench", .source = src.data};
		if ((st = kf_eval_record(kb, task, ev, &cand, NULL, NULL, err)))
			goto rollback;
	}
	if ((st = kf_kb_run_set_status(kb, *run_id, outcome ? "failed" : "done", err)) ||
	    (st = kf_kb_commit(kb, err)))
		goto rollback;
	goto out;
rollback:
	kf_kb_rollback(kb);
	*run_id = 0;
out:
	free(config);
	kf_buf_release(&src);
	kf_eval_outcome_free(ev);
	kf_task_free(task);
	kf_kb_close(kb);
	return st;
}

/* ---- default mode: the search on one task ---- */

static void on_signal(int sig)
{
	(void)sig;
	kf_cli_interrupted = 1;
	kf_optimize_stop = 1; /* the search stops at its next safe point; the run can be resumed */
}

/* Records a run that could not start (the search failed before recording one) so the report shows why. */
static enum kf_status record_failed(const struct bench_ctx *c, const struct bench_entry *e, const char *why,
				    int64_t *run_id, struct kf_err *err)
{
	struct kf_kb *kb = NULL;
	struct kf_task *task = NULL;
	int64_t task_id = 0;
	char *config = run_config("optimize", NULL, "error", why);
	enum kf_status st;
	if (!(st = kf_kb_open(c->db_path, 0, &kb, err)) &&
	    !(st = kf_task_load(e->path, 0, NULL, &task, err)) &&
	    !(st = kf_kb_task_put_loaded(kb, task, &task_id, err))) {
		struct kf_kb_run run = {.task_id = task_id,
					.strategy = kf_strategy_name(c->strategy),
					.provider = kf_llm_provider_name(c->llm.provider),
					.model = c->llm.model,
					.backend = kf_backend_name(c->backend),
					.budget_calls = c->budget_calls,
					.config = config};
		if (!(st = kf_kb_run_begin(kb, &run, run_id, err)))
			st = kf_kb_run_set_status(kb, *run_id, "failed", err);
	}
	free(config);
	kf_task_free(task);
	kf_kb_close(kb);
	return st;
}

static enum kf_status optimize_one(const struct bench_ctx *c, const struct bench_entry *e, int64_t *run_id,
				   struct kf_err *err)
{
	char out[PATH_MAX];
	struct kf_optimize_opts o;
	struct kf_optimize_result res;
	struct kf_err oerr = KF_ERR_INIT;
	enum kf_status st;

	*run_id = 0;
	snprintf(out, sizeof(out), "%s/tasks/%s", c->out_dir, e->name);
	if ((st = kf_mkdir_p(out, 0777, err)))
		return st;
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	o.task_path = e->path;
	o.strategy = c->strategy;
	o.llm = c->llm;
	o.budget_calls = c->budget_calls;
	o.backend = c->backend;
	o.device = c->backend == KF_BACKEND_CUDA ? &c->dev : NULL;
	o.db_path = c->db_path;
	o.out_dir = out;
	o.seed = c->seed;
	st = kf_optimize(&o, &res, &oerr);
	*run_id = res.run_id;
	if (st == KF_ERR_INTERRUPTED || st == KF_ERR_UNAVAILABLE) {
		*err = oerr;
		return st;
	}
	if (st && !res.run_id)
		return record_failed(c, e, oerr.msg, run_id, err);
	return KF_OK;
}

/* ---- running the tasks: inline, or --jobs child processes at once (each with its own connection) ---- */

typedef enum kf_status (*task_fn)(const struct bench_ctx *c, const struct bench_entry *e, int64_t *run_id,
				  struct kf_err *err);

struct child_msg {
	int64_t run_id;
	int status;
	char msg[sizeof(((struct kf_err *)0)->msg)];
};

static void note_done(size_t done, size_t n, const char *name, int64_t run_id)
{
	fprintf(stderr, "[%zu/%zu] %s: run %lld\n", done, n, name, (long long)run_id);
}

static enum kf_status run_all(const struct bench_ctx *c, const struct suite *s, task_fn fn, int jobs,
			      int64_t *run_ids, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	if (jobs <= 1) {
		for (size_t i = 0; i < s->n; i++) {
			if (kf_cli_interrupted)
				return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
			if ((st = fn(c, &s->e[i], &run_ids[i], err)))
				return kf_err_prefix(err, "task '%s'", s->e[i].name);
			note_done(i + 1, s->n, s->e[i].name, run_ids[i]);
		}
		return KF_OK;
	}
	pid_t *pid = calloc(s->n ? s->n : 1, sizeof(pid_t));
	int *fd = calloc(s->n ? s->n : 1, sizeof(int));
	size_t next = 0, running = 0, done = 0;
	if (!pid || !fd) {
		free(pid);
		free(fd);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	fflush(NULL);
	while (done < s->n) {
		while (!st && !kf_cli_interrupted && running < (size_t)jobs && next < s->n) {
			int p[2];
			if (pipe(p))
				st = kf_err_set(err, KF_ERR_IO, "pipe: %s", strerror(errno));
			pid_t k = st ? -1 : fork();
			if (!st && k < 0) {
				close(p[0]);
				close(p[1]);
				st = kf_err_set(err, KF_ERR_IO, "fork: %s", strerror(errno));
			}
			if (st)
				break;
			if (k == 0) {
				struct child_msg m = {0};
				struct kf_err cerr = KF_ERR_INIT;
				close(p[0]);
				m.status = fn(c, &s->e[next], &m.run_id, &cerr);
				snprintf(m.msg, sizeof(m.msg), "%s", cerr.msg);
				ssize_t w = write(p[1], &m, sizeof(m));
				_exit(w == (ssize_t)sizeof(m) ? 0 : 3);
			}
			close(p[1]);
			pid[next] = k;
			fd[next] = p[0];
			next++;
			running++;
		}
		if (!running)
			break;
		int ws;
		pid_t k = waitpid(-1, &ws, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			st = kf_err_set(err, KF_ERR_IO, "waitpid: %s", strerror(errno));
			break;
		}
		for (size_t i = 0; i < next; i++) {
			if (pid[i] != k)
				continue;
			struct child_msg m;
			ssize_t r = read(fd[i], &m, sizeof(m));
			close(fd[i]);
			pid[i] = 0;
			running--;
			done++;
			if (r != (ssize_t)sizeof(m)) {
				if (!st)
					st = kf_err_set(err, KF_ERR_CRASH,
							"task '%s': its bench process died", s->e[i].name);
			} else if (m.status) {
				if (!st) {
					st = kf_err_set(err, (enum kf_status)m.status, "%s", m.msg);
					kf_err_prefix(err, "task '%s'", s->e[i].name);
				}
			} else {
				run_ids[i] = m.run_id;
				note_done(done, s->n, s->e[i].name, m.run_id);
			}
		}
		if ((st || kf_cli_interrupted) && next < s->n)
			next = s->n; /* start nothing more; wait for the running ones */
		if (next == s->n && !running)
			break;
	}
	free(pid);
	free(fd);
	if (!st && kf_cli_interrupted)
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
	return st;
}

/* ---- --collect: the newest run of each task in the database ---- */

struct pick {
	const char *only; /* strategy filter, or NULL: any but "verify" */
	int64_t id;
	double started;
};

static int on_pick(void *ctx, const struct kf_kb_run *r)
{
	struct pick *p = ctx;
	const char *s = r->strategy ? r->strategy : "";
	if (p->only ? strcmp(s, p->only) != 0 : !strcmp(s, "verify"))
		return 0;
	if (!p->id || r->started_at > p->started || (r->started_at == p->started && r->id > p->id)) {
		p->id = r->id;
		p->started = r->started_at;
	}
	return 0;
}

static void task_missing(const struct bench_entry *e, struct kf_bench_task *t, const char *why)
{
	snprintf(t->name, sizeof(t->name), "%s", e->name);
	snprintf(t->category, sizeof(t->category), "%s", e->category);
	t->level = e->level;
	snprintf(t->status, sizeof(t->status), "missing");
	snprintf(t->reason, sizeof(t->reason), "%s", why);
}

/* Builds the rows: from run_ids when given, else the newest matching run of each task in the database. */
static enum kf_status rows_build(const char *db_path, const struct suite *s, const int64_t *run_ids,
				 const char *only, struct kf_bench_task *rows, struct kf_err *err)
{
	struct kf_kb *kb = NULL;
	enum kf_status st = kf_kb_open(db_path, run_ids ? 0 : KF_KB_READONLY | KF_KB_NOCREATE, &kb, err);
	for (size_t i = 0; !st && i < s->n; i++) {
		int64_t id = run_ids ? run_ids[i] : 0;
		if (!run_ids) {
			int64_t task_id = 0;
			struct pick p = {only, 0, 0};
			st = kf_kb_task_find(kb, s->e[i].name, &task_id, err);
			if (st == KF_ERR_NOTFOUND) {
				st = KF_OK;
			} else if (!st) {
				st = kf_kb_runs_each(kb, task_id, on_pick, &p, err);
				id = p.id;
			}
		}
		if (st)
			break;
		task_missing(&s->e[i], &rows[i], "no run of this task was recorded");
		if (id)
			st = kf_bench_task_from_run(kb, id, &rows[i], err);
	}
	kf_kb_close(kb);
	return st;
}

/* ---- reports ---- */

static int level_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static size_t metrics_all(const struct kf_bench_task *rows, size_t n, const double *p, size_t n_p,
			  struct kf_bench_metrics *m, size_t max)
{
	int levels[16] = {0};
	size_t nl = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < nl && levels[j] != rows[i].level)
			j++;
		if (j == nl && nl < KF_ARRAY_SIZE(levels) && rows[i].level)
			levels[nl++] = rows[i].level;
	}
	qsort(levels, nl, sizeof(int), level_cmp);
	kf_bench_metrics_compute(rows, n, p, n_p, 0, &m[k++]);
	for (size_t j = 0; j < nl && k < max; j++)
		kf_bench_metrics_compute(rows, n, p, n_p, levels[j], &m[k++]);
	return k;
}

static enum kf_status write_reports(const char *out_dir, const struct kf_bench_info *info,
				    const struct kf_bench_task *rows, size_t n,
				    const struct kf_bench_metrics *m, size_t n_m, struct kf_buf *json,
				    struct kf_err *err)
{
	static const char *const names[] = {"bench.json", "bench.md", "bench.csv", "bench.html"};
	enum kf_status st = kf_mkdir_p(out_dir, 0777, err);
	for (size_t i = 0; i < KF_ARRAY_SIZE(names) && !st; i++) {
		struct kf_buf b = KF_BUF_INIT(BENCH_REPORT_MAX);
		char path[PATH_MAX];
		if (i == 0)
			st = kf_bench_render_json(&b, info, rows, n, m, n_m);
		else if (i == 1)
			st = kf_bench_render_md(&b, info, rows, n, m, n_m);
		else if (i == 2)
			st = kf_bench_render_csv(&b, rows, n);
		else
			st = kf_bench_render_html(&b, info, rows, n, m, n_m);
		if (st) {
			kf_err_set(err, st, "cannot render '%s': %s", names[i], kf_status_name(st));
		} else {
			snprintf(path, sizeof(path), "%s/%s", out_dir, names[i]);
			st = kf_write_file_atomic(path, b.data, b.len, err);
		}
		if (!st && i == 0 && json)
			st = kf_buf_add(json, b.data, b.len);
		kf_buf_release(&b);
	}
	return st;
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
	}
	if (n_m && m[0].cpu_clock)
		printf("note: cpu backend: speedups are CPU times, not GPU speed\n");
	printf("baseline: each task's reference kernel\nreports: %s/bench.{html,md,json,csv}\n", out_dir);
}

/* ---- --slurm: a job array, one shard per element ---- */

static enum kf_status sh_quote(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_addch(b, '\'');
	for (; *s && !st; s++)
		st = *s == '\'' ? kf_buf_adds(b, "'\\''") : kf_buf_addch(b, *s);
	if (!st)
		st = kf_buf_addch(b, '\'');
	return st;
}

/* Options the script sets per shard, never passed through: name, and whether it takes a value. */
static bool slurm_drop(const char *a, bool *takes_value)
{
	static const char *const val[] = {"--db", "--out", "--shard", "--shards"};
	static const char *const flag[] = {"--slurm", "--json", "--collect"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(val); i++) {
		size_t n = strlen(val[i]);
		if (!strncmp(a, val[i], n) && (a[n] == 0 || a[n] == '=')) {
			*takes_value = a[n] == 0;
			return true;
		}
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(flag); i++)
		if (!strcmp(a, flag[i])) {
			*takes_value = false;
			return true;
		}
	return false;
}

static const char *abs_path(const char *p, char *buf, size_t n)
{
	char cwd[PATH_MAX];
	if (p[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(buf, n, "%s", p);
	else
		snprintf(buf, n, "%s/%s", cwd, p);
	return buf;
}

static int do_slurm(int argc, char **argv, const char *db_path, const char *out_dir, unsigned shards,
		    bool json)
{
	struct kf_buf sc = KF_BUF_INIT((size_t)1 << 20);
	struct kf_err err = KF_ERR_INIT;
	char self[PATH_MAX], cwd[PATH_MAX], stem[PATH_MAX], out_abs[PATH_MAX], script[PATH_MAX + 32];
	enum kf_status st;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !getcwd(cwd, sizeof(cwd))) {
		kf_cli_error("cannot find the kforge binary or the current folder");
		return KF_EXIT_INTERNAL;
	}
	self[n] = 0;
	abs_path(db_path, stem, sizeof(stem));
	size_t sl = strlen(stem);
	if (sl > 3 && !strcmp(stem + sl - 3, ".db"))
		stem[sl - 3] = 0;
	abs_path(out_dir, out_abs, sizeof(out_abs));
	if ((st = kf_mkdir_p(out_abs, 0777, &err))) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_INTERNAL;
	}
	snprintf(script, sizeof(script), "%s/bench.sbatch", out_abs);
	st = kf_buf_addf(
	    &sc,
	    "#!/bin/bash\n# kforge bench as a Slurm job array: element I runs shard I/%u with its own\n"
	    "# database and out dir; afterwards: kforge kb merge then kforge bench --collect.\n"
	    "#SBATCH --job-name=kforge-bench\n#SBATCH --array=1-%u\n#SBATCH --ntasks=1\n"
	    "#SBATCH --output=%s/slurm-%%A_%%a.log\nset -eu\ncd ",
	    shards, shards, out_abs);
	if (!st)
		st = sh_quote(&sc, cwd);
	if (!st)
		st = kf_buf_adds(&sc, "\nI=$SLURM_ARRAY_TASK_ID\nexec ");
	if (!st)
		st = sh_quote(&sc, self);
	if (!st)
		st = kf_buf_adds(&sc, " bench");
	for (int i = 1; i < argc && !st; i++) {
		bool tv;
		if (slurm_drop(argv[i], &tv)) {
			i += tv;
			continue;
		}
		st = kf_buf_addch(&sc, ' ');
		if (!st)
			st = sh_quote(&sc, argv[i]);
	}
	if (!st)
		st = kf_buf_addf(&sc, " --shard \"$I/%u\" --db ", shards);
	if (!st)
		st = sh_quote(&sc, stem);
	if (!st)
		st = kf_buf_adds(&sc, "\".shard-$I.db\" --out ");
	if (!st)
		st = sh_quote(&sc, out_abs);
	if (!st)
		st = kf_buf_adds(&sc, "\"/shard-$I\"\n");
	if (st || (st = kf_write_file_atomic(script, sc.data, sc.len, &err))) {
		kf_cli_error("cannot write '%s': %s", script, err.msg[0] ? err.msg : kf_status_name(st));
		kf_buf_release(&sc);
		return KF_EXIT_INTERNAL;
	}
	kf_buf_release(&sc);
	chmod(script, 0755);

	const char *sbatch = getenv("KFORGE_SBATCH");
	char cmd[PATH_MAX * 2 + 64], line[256] = "";
	struct kf_buf q = KF_BUF_INIT(PATH_MAX * 2);
	sh_quote(&q, sbatch && *sbatch ? sbatch : "sbatch");
	kf_buf_adds(&q, " --parsable ");
	sh_quote(&q, script);
	snprintf(cmd, sizeof(cmd), "%s", q.data);
	kf_buf_release(&q);
	fflush(NULL);
	FILE *p = popen(cmd, "r");
	if (!p) {
		kf_cli_error("cannot run sbatch: %s", strerror(errno));
		return KF_EXIT_UNAVAILABLE;
	}
	if (!fgets(line, sizeof(line), p))
		line[0] = 0;
	while (fgetc(p) != EOF)
		;
	int rc = pclose(p);
	line[strcspn(line, ";\r\n")] = 0;
	if (rc != 0 || !line[0]) {
		kf_cli_error("sbatch failed (exit %d); the script is '%s'",
			     WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, script);
		return WIFEXITED(rc) && WEXITSTATUS(rc) == 127 ? KF_EXIT_UNAVAILABLE : KF_EXIT_INTERNAL;
	}
	if (json) {
		cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "databases");
		cJSON_AddStringToObject(o, "job_id", line);
		cJSON_AddStringToObject(o, "script", script);
		cJSON_AddNumberToObject(o, "shards", shards);
		for (unsigned i = 1; i <= shards; i++) {
			char db[PATH_MAX + 32];
			snprintf(db, sizeof(db), "%s.shard-%u.db", stem, i);
			cJSON_AddItemToArray(a, cJSON_CreateString(db));
		}
		char *s = cJSON_Print(o);
		puts(s);
		free(s);
		cJSON_Delete(o);
	} else {
		printf("%s\n", line);
		fprintf(stderr,
			"submitted job array %s (%u shards, script '%s')\nwhen it is done:\n"
			"  kforge kb merge %s.shard-*.db -o MERGED.db\n  kforge bench SUITE --collect --db "
			"MERGED.db\n",
			line, shards, script, stem);
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
	struct bench_ctx c;
	struct suite s = {0};
	struct kf_err err = KF_ERR_INIT;
	struct kf_bench_task *rows = NULL;
	int64_t *run_ids = NULL;
	struct kf_bench_metrics m[17];
	struct kf_buf jbuf = KF_BUF_INIT(BENCH_REPORT_MAX);
	enum kf_status st;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("bench", help);
	if ((rc = kf_cli_parse("bench", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, &n_pos)))
		return rc;
	if (n_pos != 1)
		return kf_cli_usage_error("bench", "expected one SUITE (a folder of tasks or a list file)");
	memset(&c, 0, sizeof(c));
	if (level_s && (!kf_cli_parse_u64(level_s, &v) || v < 1 || v > 9))
		return kf_cli_usage_error("bench", "--level needs 1, 2 or 3, not '%s'", level_s);
	level = level_s ? (int)v : 0;
	if (jobs_s && (!kf_cli_parse_u64(jobs_s, &v) || v < 1 || v > 256))
		return kf_cli_usage_error("bench", "--jobs needs a number from 1 to 256, not '%s'", jobs_s);
	jobs = jobs_s ? (int)v : 1;
	if (shard_s && !parse_shard(shard_s, &shard_i, &shard_n))
		return kf_cli_usage_error("bench", "--shard needs I/N with 1 <= I <= N, not '%s'", shard_s);
	if (shards_s && (!kf_cli_parse_u64(shards_s, &v) || v < 1 || v > 10000))
		return kf_cli_usage_error("bench", "--shards needs a number from 1 to 10000, not '%s'",
					  shards_s);
	if (shards_s)
		shards = (unsigned)v;
	if (p_s ? !kf_bench_p_parse(p_s, p, KF_BENCH_MAX_P, &n_p)
		: !(n_p = kf_bench_p_default(p, KF_BENCH_MAX_P)))
		return kf_cli_usage_error("bench",
					  "--p needs a comma-separated list of numbers >= 0, not '%s'", p_s);
	if (seed_s && !kf_cli_parse_u64(seed_s, &c.seed))
		return kf_cli_usage_error("bench", "--seed needs a number, not '%s'", seed_s);
	if (budget_s && (!kf_cli_parse_u64(budget_s, &v) || !v || v > INT64_MAX))
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
	c.suite = pos[0];
	c.db_path = kf_cli_db_path(db);
	c.out_dir = out_dir ? out_dir : "bench-out";
	c.from_dir = from_dir;
	if (from_dir && !collect) {
		struct stat sb;
		if (stat(from_dir, &sb) || !S_ISDIR(sb.st_mode))
			return kf_cli_usage_error("bench", "--from-dir '%s' is not a folder", from_dir);
	}

	if ((st = suite_load(pos[0], level, glob, &s, &err))) {
		kf_cli_error("%s", err.msg);
		suite_free(&s);
		return st == KF_ERR_NOMEM ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}
	if (slurm) {
		suite_free(&s);
		return do_slurm(argc, argv, c.db_path, c.out_dir, shards, json);
	}
	if (shard_s)
		suite_shard(&s, shard_i, shard_n);
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
		struct sigaction sa, old_int, old_term;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		st = run_all(&c, &s, from_dir ? eval_one : optimize_one, jobs, run_ids, &err);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		if (st) {
			kf_cli_error("%s", err.msg);
			rc = st == KF_ERR_INTERRUPTED   ? KF_EXIT_INTERRUPTED
			     : st == KF_ERR_UNAVAILABLE ? KF_EXIT_UNAVAILABLE
							: KF_EXIT_INTERNAL;
			goto out;
		}
	}
	if ((st = rows_build(c.db_path, &s, collect ? NULL : run_ids,
			     collect ? (from_dir ? "bench" : strategy_s) : NULL, rows, &err))) {
		kf_cli_error("%s", err.msg);
		rc = st == KF_ERR_NOTFOUND ? KF_EXIT_USAGE : KF_EXIT_INTERNAL;
		goto out;
	}
	n_m = metrics_all(rows, s.n, p, n_p, m, KF_ARRAY_SIZE(m));
	char source[PATH_MAX + 64];
	if (from_dir)
		snprintf(source, sizeof(source), "%s", from_dir);
	else
		snprintf(source, sizeof(source), "%s/%s", kf_llm_provider_name(c.llm.provider),
			 c.llm.model ? c.llm.model : "");
	struct kf_bench_info info = {pos[0], mode, backend_name, c.db_path, collect ? NULL : source, shard_s};
	if ((st = write_reports(c.out_dir, &info, rows, s.n, m, n_m, json ? &jbuf : NULL, &err))) {
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
	suite_free(&s);
	return kf_cli_interrupted ? KF_EXIT_INTERRUPTED : rc;
}
