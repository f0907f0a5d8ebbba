/* kf_optimize: the search loop. Keeps up to `concurrency` LLM requests in flight, handles their replies in
 * request order (so a seed, or a replayed transcript, reproduces the same choices), evaluates each
 * candidate in a worker thread (verify, then time) while the LLM client keeps driving the others, and
 * records every exchange, candidate, verdict and timing in the knowledge base, one transaction per step. */
#include "agent/optimize.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "redact.h"
#include "agent/search.h"
#include "cancel.h"
#include "eval/eval.h"
#include "expr.h"
#include "fs.h"
#include "json.h"
#include "kb/kb.h"
#include "hash.h"
#include "kfile.h"
#include "profiler/profiler.h"
#include "profiler/timing.h"
#include "task.h"

#define DEFAULT_BUDGET_CALLS KF_OPTIMIZE_BUDGET_CALLS
/* Knowledge-base examples and lessons shown in each prompt. */
#define N_EXAMPLES 2
#define N_LESSONS 4
#define MAX_SOURCE (1u << 20)
/* The strategy call: this many strategies are asked for when the budget has at least STRATEGY_MIN_BUDGET
 * calls (a smaller one is better spent on kernels). */
#define N_STRATEGIES 4
#define STRATEGY_MIN_BUDGET 8
/* Loud, early failure: this many failed calls (after their retries) or refusals in a row stop the run. */
#define FAILED_CALLS_STOP 3
#define REFUSALS_STOP 3
/* After this many replies whose edits did not apply against one parent, ask for whole files. */
#define EDIT_FAILURES_FULL 2
/* The run's memory in a prompt: earlier attempts of the lineage, the run's best kernels. */
#define HISTORY_N 6
#define RUN_BEST_N 2

const char *kf_strategy_name(enum kf_strategy s)
{
	return s == KF_STRATEGY_MCTS ? "mcts" : s == KF_STRATEGY_SCHEDULE ? "schedule" : "evo";
}

bool kf_strategy_parse(const char *s, enum kf_strategy *out)
{
	if (!s)
		return false;
	if (!strcmp(s, "evo"))
		*out = KF_STRATEGY_EVO;
	else if (!strcmp(s, "mcts"))
		*out = KF_STRATEGY_MCTS;
	else if (!strcmp(s, "schedule"))
		*out = KF_STRATEGY_SCHEDULE;
	else
		return false;
	return true;
}

/* ---- what the loop keeps per candidate (parallel to the search's list) ------------------------ */

struct cand {
	int64_t id; /* knowledge-base candidate id */
	char *source;
	char verdict[32];  /* "pass", "compile_error", ... ; "" for the reference */
	char *reason;      /* verdict reason (bounded) */
	char *compile_log; /* excerpt, compile errors only */
	char *check;       /* the failing check, for a public shape only */
	bool has_shape;
	struct kf_shape shape; /* the failing public shape */
	double max_error;
	char *profile_text; /* correct candidates */
	double lo, hi;
	double band;     /* the A/A noise band its interval must clear (kf_eval_outcome.noise_band) */
	bool force_full; /* the last diff against it did not apply: ask for whole files */
	int edits_unmatched, edits_total;
	int edit_failures; /* replies to it whose edits did not all apply */
	char *change;      /* the model's one-line rationale */
	char tags[256];    /* technique tags */
	int cell;          /* MAP-Elites cell (diversity) */
	int strategy;      /* the proposed strategy of its lineage, -1 none */
};

struct req {
	int parent;
	int island;
	enum kf_edit_mode mode;
	const char *why;
	bool strategies; /* the strategy call */
	struct kf_search_pick pick;
	uint64_t hash;             /* of the prompt: no two identical prompts in flight */
	struct kf_llm_result *res; /* arrived, not yet handled */
};

/* One attempt of the run (a candidate, or a reply that gave nothing to evaluate): the lineage's memory. */
struct attempt {
	int parent; /* candidate index */
	int cand;   /* candidate index, -1: unusable reply */
	char rationale[200];
	char verdict[32];
	double speedup;
	char note[240];
};

/* Counts per kind (failed calls by failure, unusable replies by reason). */
struct kinds {
	size_t n;
	struct kf_optimize_count v[KF_OPTIMIZE_MAX_KINDS];
};

static void kinds_add(struct kinds *k, const char *kind)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i].kind, kind)) {
			k->v[i].n++;
			return;
		}
	if (k->n < KF_OPTIMIZE_MAX_KINDS) {
		snprintf(k->v[k->n].kind, sizeof(k->v[0].kind), "%s", kind);
		k->v[k->n++].n = 1;
	}
}

struct eval_job {
	/* in */
	const struct kf_task *task;
	const char *source;
	size_t len;
	struct kf_eval_opts eo;
	/* out */
	enum kf_status st;
	struct kf_err err;
	struct kf_eval_outcome *out;
	atomic_int done;
	pthread_t th;
};

struct opt {
	const struct kf_optimize_opts *o;
	struct kf_optimize_result *res;
	struct kf_task *task;
	char *ref_source;
	struct kf_kb *kb;
	int64_t task_id, run_id;
	uint64_t seed;
	enum kf_strategy strategy;
	int concurrency;
	struct kf_llm_client *llm;
	struct kf_search *search;
	struct kf_search_params params; /* what search searches with (a resume: the run's) */
	struct cand *cands;
	size_t n_cands, cap_cands;
	struct req *reqs;
	size_t cap_reqs;
	uint64_t k0;                 /* requests recorded before this session (resume) */
	uint64_t submitted, handled; /* request numbers, k0-based */
	int best;                    /* index of the best correct candidate (0: the reference) */
	bool stop_submit;
	const char *stop_why; /* "budget", "done" */
	char stop_reason[512];
	double t0_ms;
	double spend_usd;
	int64_t tokens_in, tokens_out, tokens_cached, tokens_reasoning, calls;
	char arch[24], clock[8];
	int64_t by_verdict[KF_VERDICT_COUNT + 1];
	int64_t n_candidates, n_verified;
	char event[256];
	const char *warning; /* shown once with the next progress event */
	char warning_buf[256];
	struct kf_llm_settings llm_set;
	/* the strategy call */
	bool want_strategies, strategies_pending;
	int n_strat;
	struct kf_parse_strategy strat[KF_SEARCH_MAX_STRATEGIES];
	/* what went wrong with the calls */
	int64_t calls_failed, replies_unusable;
	struct kinds failures, unusable;
	int failed_in_row, refusals_in_row;
	enum kf_status fatal; /* a fatal API error stopped the run (KF_ERR_UNAVAILABLE) */
	/* the run's memory */
	struct attempt *att;
	size_t n_att, cap_att;
	struct kf_prompt_baseline baseline;
	char baseline_shape[256], baseline_peaks[64];
	/* the reference timed once beside the task's baselines: the prompt's target and what candidates'
	 * speedups over the baselines are chained through (NULL: not measured) */
	struct kf_profile_result *base_once;
};

static char *dup_bounded(const char *s, size_t max)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	return kf_strndup(s, n > max ? max : n);
}

static void cand_release(struct cand *c)
{
	free(c->source);
	free(c->change);
	free(c->reason);
	free(c->compile_log);
	free(c->check);
	free(c->profile_text);
}

static struct cand *cand_push(struct opt *z)
{
	if (z->n_cands == z->cap_cands) {
		size_t cap = z->cap_cands ? z->cap_cands * 2 : 64;
		struct cand *v = realloc(z->cands, cap * sizeof(*v));
		if (!v)
			return NULL;
		z->cands = v;
		z->cap_cands = cap;
	}
	struct cand *c = &z->cands[z->n_cands++];
	memset(c, 0, sizeof(*c));
	c->max_error = -1;
	c->strategy = -1;
	return c;
}

static struct req *req_at(struct opt *z, uint64_t k)
{
	uint64_t i = k - z->k0;
	if (i >= z->cap_reqs) {
		size_t cap = z->cap_reqs ? z->cap_reqs * 2 : 64;
		while (cap <= i)
			cap *= 2;
		struct req *v = realloc(z->reqs, cap * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + z->cap_reqs, 0, (cap - z->cap_reqs) * sizeof(*v));
		z->reqs = v;
		z->cap_reqs = cap;
	}
	return &z->reqs[i];
}

static double elapsed_s(const struct opt *z)
{
	return (kf_now_ms() - z->t0_ms) / 1000.0;
}

static void progress(struct opt *z)
{
	if (!z->o->progress)
		return;
	struct kf_optimize_progress p;
	memset(&p, 0, sizeof(p));
	p.run_id = z->run_id;
	p.calls = z->calls;
	p.candidates = z->n_candidates;
	memcpy(p.by_verdict, z->by_verdict, sizeof(p.by_verdict));
	if (z->best > 0) {
		p.best_speedup = kf_search_at(z->search, (size_t)z->best)->speedup;
		p.best_lo = z->cands[z->best].lo;
		p.best_hi = z->cands[z->best].hi;
	}
	p.spend_usd = z->spend_usd;
	p.elapsed_s = elapsed_s(z);
	p.event = z->event;
	p.calls_failed = z->calls_failed;
	p.replies_unusable = z->replies_unusable;
	p.warning = z->warning;
	z->warning = NULL;
	z->o->progress(z->o->progress_ctx, &p);
}

static struct attempt *attempt_push(struct opt *z)
{
	if (z->n_att == z->cap_att) {
		size_t cap = z->cap_att ? z->cap_att * 2 : 64;
		struct attempt *v = realloc(z->att, cap * sizeof(*v));
		if (!v)
			return NULL;
		z->att = v;
		z->cap_att = cap;
	}
	struct attempt *a = &z->att[z->n_att++];
	memset(a, 0, sizeof(*a));
	a->cand = -1;
	return a;
}

/* The evaluation thread forks sandbox workers, and a forked child of a threaded process may only use the
 * allocator if no other thread held its lock at fork time (glibc's malloc takes care of that itself; the
 * sanitizers' allocator does not). While an evaluation runs, the main thread allocates only inside
 * poll_lock, and fork waits for poll_lock (pthread_atfork), so a fork never lands in the middle of it. */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&poll_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&poll_lock);
}

static void fork_child(void)
{
	/* the forking thread holds it in the child too: the only thread there */
	pthread_mutex_unlock(&poll_lock);
}

static void atfork_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The evaluation options of this run's candidates; the baselines' one session uses the same (same
 * shapes, same stopping rule), so the candidate's speedups can be chained through the reference. */
static void run_eval_opts(const struct opt *z, struct kf_eval_opts *eo)
{
	kf_eval_opts_init(eo);
	eo->backend = z->o->backend;
	eo->device = z->o->device;
	eo->worker_path = z->o->worker_path;
	eo->profile = true;
	eo->stop = kf_cancel_flag();
	if (z->o->backend == KF_BACKEND_CPU)
		/* a search times many kernels: at least 5 samples and 10 ms a side, stop at 2% relative
		 * standard error, at most 30 samples or 1.5 s a side (the bootstrap interval stays honest: it
		 * is computed from whatever was sampled) */
		eo->rule = (struct kf_stop_rule){5, 1e7, 0.02, 30, 1.5e9};
	eo->baselines_once = z->base_once;
	eo->model = !strcmp(z->clock, "model");
	/* the target the run's arch names ("model-v1-h200": a resumed run keeps its own) */
	const char *dash = strrchr(z->arch, '-');
	eo->model_target = eo->model && dash ? kf_cost_target_find(dash + 1) : NULL;
	if (eo->model && !eo->model_target)
		eo->model_target = z->o->model_target;
}

/* ---- evaluation (worker thread: a worker session is ended by the thread that started it) ---------- */

static void *eval_main(void *arg)
{
	struct eval_job *j = arg;
	j->st = kf_eval_run(j->task, "candidate.cu", j->source, j->len, &j->eo, &j->out, &j->err);
	atomic_store(&j->done, 1);
	return NULL;
}

/* ---- records ---------------------------------------------------------------------------------- */

/* A correct candidate's timing feedback and, for the first timed shape, where it stands against each
 * baseline the run timed: the target of the next attempt (on the cpu backend a CPU-clock ratio, said so). */
static char *feedback_with_baselines(const char *text, const struct kf_eval_outcome *ev)
{
	struct kf_buf b = KF_BUF_INIT(4000);
	const struct kf_eval_timing *t = ev->n_timings ? &ev->timings[0] : NULL;
	if (!text && (!t || !t->n_baselines))
		return NULL;
	if (text)
		kf_buf_adds(&b, text);
	for (size_t i = 0; t && i < t->n_baselines; i++) {
		const struct kf_eval_baseline_time *x = &t->baselines[i];
		kf_buf_addf(&b, "vs %s (%s): %.2fx (95%% CI %.2f-%.2f%s)%s\n", x->name,
			    x->library ? "the library call" : "a tuned kernel", x->speedup.point,
			    x->speedup.lo, x->speedup.hi, x->significant ? ", significantly faster" : "",
			    strcmp(t->clock, "cpu") ? "" : " on the CPU clock, not GPU speed");
	}
	return kf_buf_detach(&b, NULL);
}

/* Turns a finished evaluation into the cand fields and the search observation, and records the step (llm
 * call, candidate, evaluation, timings) in one transaction. */
static enum kf_status record_eval(struct opt *z, struct req *rq, struct kf_kb_llm_call *call, struct cand *c,
				  struct kf_search_cand *sc, const char *edit_kind,
				  const struct kf_eval_outcome *ev, struct kf_err *err)
{
	const struct kf_eval_feedback *fb = &ev->feedback;
	bool correct = ev->verdict == KF_VERDICT_PASS && ev->timed;
	enum kf_status st;

	/* feedback for a child prompt: eval keeps hidden and edge shapes' values out of it */
	snprintf(c->verdict, sizeof(c->verdict), "%s", kf_verdict_name(ev->verdict));
	c->reason = dup_bounded(ev->reason, 1200);
	c->compile_log = kf_strdup(fb->compile_log);
	c->check = kf_strdup(fb->check);
	c->has_shape = fb->has_shape;
	c->shape = fb->shape;
	c->max_error = fb->max_error;
	if (correct) {
		c->lo = ev->speedup_lo;
		c->hi = ev->speedup_hi;
		c->band = ev->noise_band;
		c->profile_text = feedback_with_baselines(fb->profile_text, ev);
	}

	char tags[512];
	struct kf_buf tb = KF_BUF_INIT(sizeof(tags) - 1);
	struct kf_err terr = KF_ERR_INIT;
	kf_kb_tags_extract(c->source, strlen(c->source), &tb, &terr);
	snprintf(tags, sizeof(tags), "%s", tb.data);
	kf_buf_release(&tb);

	struct kf_kb_candidate kc = {0};
	kc.run_id = z->run_id;
	kc.task_id = z->task_id;
	kc.parent_id = z->cands[rq->parent].id;
	kc.generation = kf_search_at(z->search, (size_t)rq->parent)->depth + 1;
	kc.island = rq->island;
	kc.node = z->strategy == KF_STRATEGY_MCTS ? (int64_t)z->n_cands - 1 : 0;
	kc.edit_kind = edit_kind;
	kc.source = c->source;
	kc.tags = tags;
	kc.change = c->change;
	kc.strategy_no = c->strategy >= 0 ? c->strategy + 1 : 0;
	snprintf(c->tags, sizeof(c->tags), "%s", tags);

	int64_t call_id = 0;
	if ((st = kf_kb_begin(z->kb, err)))
		return st;
	if ((st = kf_kb_record_llm_call(z->kb, call, &call_id, NULL, err)))
		goto fail;
	kc.llm_call_id = call_id;
	if ((st = kf_eval_record(z->kb, z->task, ev, &kc, &c->id, NULL, err)))
		goto fail;
	if ((st = kf_kb_commit(z->kb, err)))
		goto fail;

	sc->correct = correct;
	sc->failed = !correct;
	sc->speedup = correct ? ev->speedup : 0;
	sc->cell = kf_search_cell(tags, strlen(c->source));
	return KF_OK;
fail:
	kf_kb_rollback(z->kb);
	return st;
}

/* ---- requests ------------------------------------------------------------------------------------ */

static uint64_t text_hash(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = a; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h ^= 0xff;
	for (const char *p = b; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static bool hash_in_flight(struct opt *z, uint64_t h)
{
	for (uint64_t k = z->handled; k < z->submitted; k++) {
		struct req *q = req_at(z, k);
		if (q && q->hash == h)
			return true;
	}
	return false;
}

/* The earlier attempts of the parent's lineage, oldest first: those made from the parent or one of its
 * ancestors, and the ancestors themselves. */
static size_t lineage_history(struct opt *z, int parent, struct kf_prompt_attempt *out, size_t max,
			      char (*verdicts)[64])
{
	bool anc[4096] = {false};
	size_t n = 0;
	for (int a = parent; a >= 0 && a < (int)KF_ARRAY_SIZE(anc);
	     a = kf_search_at(z->search, (size_t)a)->parent)
		anc[a] = true;
	/* newest first into a ring, then reversed */
	const struct attempt *chosen[HISTORY_N * 2] = {NULL};
	size_t m = 0;
	for (size_t i = z->n_att; i-- > 0 && m < max && m < KF_ARRAY_SIZE(chosen);) {
		const struct attempt *a = &z->att[i];
		/* made from a kernel of the lineage (not the reference: the other seeds are other lineages),
		 * or a kernel of the lineage itself */
		bool on = (a->parent > 0 && a->parent < (int)KF_ARRAY_SIZE(anc) && anc[a->parent]) ||
			  (a->cand > 0 && a->cand < (int)KF_ARRAY_SIZE(anc) && anc[a->cand]);
		if (on)
			chosen[m++] = &z->att[i];
	}
	for (size_t i = m; i-- > 0;) {
		const struct attempt *a = chosen[i];
		struct kf_prompt_attempt *o = &out[n];
		o->id = a->cand > 0 ? z->cands[a->cand].id : 0;
		o->parent_id = a->parent > 0 ? z->cands[a->parent].id : 0;
		o->rationale = a->rationale[0] ? a->rationale : NULL;
		snprintf(verdicts[n], sizeof(verdicts[0]), "%s", a->verdict);
		o->verdict = verdicts[n];
		o->speedup = a->speedup;
		o->note = a->note[0] ? a->note : NULL;
		n++;
	}
	return n;
}

/* The run's best correct kernels other than the parent, best first, and one of another approach (another
 * strategy or MAP-Elites cell than the parent's) as inspiration. */
static size_t run_best(struct opt *z, int parent, struct kf_prompt_example *best, size_t max, int *insp)
{
	int order[RUN_BEST_N];
	size_t n = 0,
	       total = kf_search_count(z->search) < z->n_cands ? kf_search_count(z->search) : z->n_cands;
	if (max > RUN_BEST_N)
		max = RUN_BEST_N;
	*insp = -1;
	/* the best max correct kernels, best first (insertion into a short sorted list) */
	for (size_t i = 1; i < total; i++) {
		const struct kf_search_cand *c = kf_search_at(z->search, i);
		if (!c->correct || (int)i == parent || c->speedup <= 0 ||
		    !strcmp(z->cands[i].source, z->cands[parent].source))
			continue;
		size_t j = n;
		while (j > 0 && kf_search_at(z->search, (size_t)order[j - 1])->speedup < c->speedup) {
			if (j < max)
				order[j] = order[j - 1];
			j--;
		}
		if (j < max) {
			order[j] = (int)i;
			if (n < max)
				n++;
		}
	}
	/* inspiration: the best correct kernel of another strategy or behaviour cell than the parent's */
	const struct cand *pc = &z->cands[parent];
	double best_insp = 0;
	for (size_t i = 1; i < total; i++) {
		const struct kf_search_cand *c = kf_search_at(z->search, i);
		bool shown = false;
		for (size_t j = 0; j < n; j++)
			shown |= order[j] == (int)i;
		if (!c->correct || (int)i == parent || shown ||
		    !strcmp(z->cands[i].source, z->cands[parent].source))
			continue;
		bool other = z->cands[i].strategy != pc->strategy || z->cands[i].cell != pc->cell;
		if (other && c->speedup > best_insp) {
			best_insp = c->speedup;
			*insp = (int)i;
		}
	}
	for (size_t j = 0; j < n; j++) {
		const struct cand *c = &z->cands[order[j]];
		best[j] = (struct kf_prompt_example){
		    NULL, c->source, kf_search_at(z->search, (size_t)order[j])->speedup, c->tags, c->change};
	}
	return n;
}

struct lesson_buf {
	size_t n;
	struct kf_prompt_lesson v[N_LESSONS];
	char text[N_LESSONS][4][320];
};

static int lesson_take(void *ctx, const struct kf_kb_lesson *l)
{
	struct lesson_buf *b = ctx;
	if (b->n >= N_LESSONS)
		return 1;
	char(*t)[320] = b->text[b->n];
	snprintf(t[0], sizeof(t[0]), "%s", l->task_name);
	snprintf(t[1], sizeof(t[1]), "%s", l->verdict);
	snprintf(t[2], sizeof(t[2]), "%s", l->tried);
	snprintf(t[3], sizeof(t[3]), "%s", l->outcome);
	b->v[b->n] = (struct kf_prompt_lesson){l->same_task ? NULL : t[0], t[1], t[2], t[3]};
	b->n++;
	return 0;
}

static void prompt_common(struct opt *z, struct kf_prompt_input *in)
{
	in->task = z->task;
	in->reference_source = z->ref_source;
	in->device = z->o->backend == KF_BACKEND_CUDA ? z->o->device : NULL;
	in->arch = z->o->backend == KF_BACKEND_CUDA && z->o->device ? z->o->device->arch : "sm_90";
	in->clock = z->clock;
	in->baseline = z->baseline.ref_ns > 0 || z->baseline.floor_ns > 0 || z->baseline.n_baselines
			   ? &z->baseline
			   : NULL;
}

/* Submits the request, unless an identical prompt is in flight: then it says which attempt it is and asks
 * for a different direction, so two concurrent requests never spend money on the same question. */
static enum kf_status submit_prompt(struct opt *z, struct req *rq, uint64_t k, struct kf_prompt_input *in,
				    struct kf_err *err)
{
	struct kf_buf sys = KF_BUF_INIT(1u << 20), user = KF_BUF_INIT(4u << 20);
	char variant[200];
	size_t user_static = 0;
	enum kf_status st = KF_OK;

	for (int v = 0; v < 64; v++) {
		kf_buf_reset(&sys);
		kf_buf_reset(&user);
		if (v) {
			snprintf(variant, sizeof(variant),
				 "(Attempt %d of several made at once from this kernel: take a different "
				 "direction from "
				 "the others.)",
				 v + 1);
			in->variant = variant;
		}
		st = rq->strategies
			 ? kf_prompt_build_strategies(in, N_STRATEGIES, &sys, &user, &user_static, err)
			 : kf_prompt_build(in, &sys, &user, &user_static, err);
		if (st)
			break;
		rq->hash = text_hash(sys.data, user.data);
		if (!hash_in_flight(z, rq->hash))
			break;
	}
	if (!st) {
		struct kf_llm_message m = {"user", user.data, user_static};
		struct kf_llm_request r = {sys.data, 1, &m, 0};
		st = kf_llm_submit(z->llm, &r, k, err);
	}
	in->variant = NULL; /* it pointed here */
	kf_buf_release(&sys);
	kf_buf_release(&user);
	return st;
}

static enum kf_status submit_strategies(struct opt *z, struct req *rq, uint64_t k, struct kf_err *err)
{
	struct kf_prompt_input in = {0};
	rq->parent = 0;
	rq->island = 0;
	rq->why = "strategies";
	rq->strategies = true;
	rq->pick.parent = 0;
	rq->pick.strategy = -1;
	prompt_common(z, &in);
	enum kf_status st = submit_prompt(z, rq, k, &in, err);
	if (!st) {
		z->strategies_pending = true;
		z->submitted++;
	}
	return st;
}

static enum kf_status submit_one(struct opt *z, struct kf_err *err)
{
	uint64_t k = z->submitted;
	struct kf_rng rng;
	struct kf_search_pick pick;
	struct req *rq = req_at(z, k);
	enum kf_status st;

	if (!rq)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	memset(rq, 0, sizeof(*rq));
	if (z->want_strategies && !z->n_strat && k == z->k0)
		return submit_strategies(z, rq, k, err);
	/* one generator per request number, derived from the run's seed: the same seed gives the same
	 * choices, and a resume continues at the first request number not yet recorded */
	kf_rng_seed(&rng, z->seed ^ kf_mix64(k + 1));
	kf_search_pick(z->search, k, &rng, &pick);
	struct cand *p = &z->cands[pick.parent];
	rq->parent = pick.parent;
	rq->island = pick.island;
	rq->why = pick.why;
	rq->pick = pick;
	rq->res = NULL;
	rq->mode = pick.parent > 0 && !p->force_full ? KF_EDIT_DIFF : KF_EDIT_FULL;

	/* knowledge-base examples: correct and significantly faster, this run's clock class and arch family,
	 * none of this run's own, never the parent */
	struct kf_kb_example *ex = NULL;
	size_t n_ex = 0;
	struct kf_err xerr = KF_ERR_INIT;
	char parent_hash[KF_SHA256_HEX];
	kf_sha256_hex(p->source, strlen(p->source), parent_hash);
	struct kf_kb_example_query q = {
	    z->task->name, z->arch, true, z->clock, true, z->run_id, pick.parent > 0 ? parent_hash : NULL,
	    N_EXAMPLES};
	if (kf_kb_examples_query(z->kb, &q, &ex, &n_ex, &xerr))
		n_ex = 0;
	struct kf_prompt_example pex[N_EXAMPLES];
	size_t n_pex = 0;
	for (size_t i = 0; i < n_ex && n_pex < N_EXAMPLES; i++) {
		if (!ex[i].source || !strcmp(ex[i].source, p->source))
			continue;
		pex[n_pex++] =
		    (struct kf_prompt_example){ex[i].same_task ? NULL : ex[i].task_name, ex[i].source,
					       ex[i].speedup, ex[i].tags, ex[i].change};
	}
	struct lesson_buf *lb = calloc(1, sizeof(*lb));
	if (lb)
		kf_kb_lessons_for(z->kb, z->task->name, z->arch, z->clock, z->run_id, N_LESSONS, lesson_take,
				  lb, &xerr);
	struct kf_prompt_feedback fb = {0};
	struct kf_search_cand *ps = kf_search_at(z->search, (size_t)pick.parent);
	fb.max_error = -1;
	if (pick.parent > 0) {
		fb.correct = ps->correct;
		fb.verdict = p->verdict;
		fb.compile_log = p->compile_log;
		fb.failing_check = p->check;
		fb.failing_shape = p->has_shape ? &p->shape : NULL;
		fb.max_error = p->max_error;
		fb.profile_text = ps->correct ? p->profile_text : NULL;
		fb.edits_unmatched = p->edits_unmatched;
		fb.edits_total = p->edits_total;
	}
	struct kf_prompt_attempt hist[HISTORY_N];
	char hverdicts[HISTORY_N][64];
	struct kf_prompt_example best[RUN_BEST_N], insp;
	int insp_i = -1;
	char strat[400];
	struct kf_prompt_input in = {0};
	prompt_common(z, &in);
	in.n_examples = n_pex;
	in.examples = pex;
	in.n_history =
	    pick.parent > 0 || z->n_att ? lineage_history(z, pick.parent, hist, HISTORY_N, hverdicts) : 0;
	in.history = hist;
	in.n_best = run_best(z, pick.parent, best, RUN_BEST_N, &insp_i);
	in.best = best;
	if (insp_i > 0) {
		const struct cand *c = &z->cands[insp_i];
		insp = (struct kf_prompt_example){
		    NULL, c->source, kf_search_at(z->search, (size_t)insp_i)->speedup, c->tags, c->change};
		in.inspiration = &insp;
	}
	if (pick.strategy >= 0 && pick.strategy < z->n_strat) {
		snprintf(strat, sizeof(strat), "%s: %s", z->strat[pick.strategy].name,
			 z->strat[pick.strategy].text);
		in.strategy = strat;
	}
	in.n_lessons = lb ? lb->n : 0;
	in.lessons = lb ? lb->v : NULL;
	in.parent_source = pick.parent > 0 ? p->source : NULL;
	in.feedback = pick.parent > 0 ? &fb : NULL;
	in.mode = rq->mode;
	st = submit_prompt(z, rq, k, &in, err);
	kf_kb_examples_free(ex, n_ex);
	free(lb);
	if (!st)
		z->submitted++;
	return st;
}

static bool budget_left(struct opt *z)
{
	const struct kf_optimize_opts *o = z->o;
	int64_t calls = o->budget_calls > 0 ? o->budget_calls : DEFAULT_BUDGET_CALLS;
	if ((int64_t)z->submitted >= calls) {
		snprintf(z->stop_reason, sizeof(z->stop_reason), "the budget of %lld calls was used",
			 (long long)calls);
	} else if (o->budget_usd > 0 && z->spend_usd >= o->budget_usd) {
		snprintf(z->stop_reason, sizeof(z->stop_reason), "the budget of $%.4f was spent ($%.4f)",
			 o->budget_usd, z->spend_usd);
	} else if (o->time_limit_s > 0 && elapsed_s(z) >= o->time_limit_s) {
		snprintf(z->stop_reason, sizeof(z->stop_reason), "the time limit of %.0f s was reached",
			 o->time_limit_s);
	} else {
		return true;
	}
	z->stop_why = "budget";
	return false;
}

/* A fatal API error, or too many failures in a row: the run stops at once with the API's message. */
static void stop_fatal(struct opt *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop_fatal(struct opt *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(z->stop_reason, sizeof(z->stop_reason), fmt, ap);
	va_end(ap);
	z->fatal = KF_ERR_UNAVAILABLE;
	z->stop_submit = true;
	z->stop_why = "failed";
}

/* Why a reply gave nothing to evaluate, as a kind for the counts. */
static const char *unusable_kind(const struct kf_parse_result *pr, const char *finish_reason)
{
	if (pr->edits_total > 0 && pr->edits_unmatched > 0)
		return "edits_not_applied";
	if (finish_reason && !strcmp(finish_reason, "length"))
		return "cut_off";
	if (pr->source_len > MAX_SOURCE)
		return "too_large";
	return "no_kernel";
}

/* A reply that became no candidate: counted, recorded with its reason, fed back to its parent. */
static enum kf_status reply_unusable(struct opt *z, struct req *rq, struct kf_kb_llm_call *call,
				     const char *kind, const char *reason, const char *rationale,
				     struct kf_err *err)
{
	z->replies_unusable++;
	z->by_verdict[KF_VERDICT_COUNT]++;
	kinds_add(&z->unusable, kind);
	kf_search_note_unusable(z->search);
	kf_search_pick_void(z->search, &rq->pick);
	struct attempt *a = attempt_push(z);
	if (a) {
		a->parent = rq->parent;
		snprintf(a->rationale, sizeof(a->rationale), "%s", rationale ? rationale : "");
		snprintf(a->verdict, sizeof(a->verdict), "unusable");
		snprintf(a->note, sizeof(a->note), "%s", reason);
	}
	snprintf(z->event, sizeof(z->event), "reply %llu: unusable (%s): %.180s",
		 (unsigned long long)z->handled, kind, reason);
	char recorded[400];
	snprintf(recorded, sizeof(recorded), "%s: %s", kind,
		 reason); /* the kind first: reports count by it */
	call->outcome = "unusable";
	call->reason = recorded;
	enum kf_status st = kf_kb_record_llm_call(z->kb, call, NULL, NULL, err);
	call->reason = NULL; /* it pointed here */
	return st;
}

/* One short lesson of an evaluated attempt worth remembering: a failure and its reason, or a correct
 * kernel that was not faster than its parent. */
static void record_lesson(struct opt *z, const struct cand *c, const struct kf_search_cand *sc, int parent)
{
	const struct kf_search_cand *ps = kf_search_at(z->search, (size_t)parent);
	char outcome[300];
	if (sc->correct && !(ps && sc->speedup < ps->speedup * 0.98))
		return;
	if (sc->correct)
		snprintf(outcome, sizeof(outcome),
			 "correct but slower than its parent (%.2fx against %.2fx, %s clock)", sc->speedup,
			 ps->speedup, z->clock);
	else /* the prompt-safe feedback: a reason names a hidden or edge shape's values */
		snprintf(outcome, sizeof(outcome), "%.280s",
			 c->check    ? c->check
			 : c->reason ? c->reason
				     : c->verdict);
	struct kf_kb_lesson l = {0};
	l.task_id = z->task_id;
	l.run_id = z->run_id;
	l.candidate_id = c->id;
	l.arch = z->arch;
	l.clock = z->clock;
	l.verdict = c->verdict;
	l.tried = c->change && c->change[0] ? c->change : c->tags;
	l.outcome = outcome;
	struct kf_err e2 = KF_ERR_INIT;
	kf_kb_record_lesson(z->kb, &l, NULL, &e2); /* a lesson lost is no reason to stop a run */
}

static enum kf_status handle_strategies(struct opt *z, struct req *rq, struct kf_kb_llm_call *call,
					struct kf_err *err)
{
	struct kf_llm_result *r = rq->res;
	z->strategies_pending = false;
	call->purpose = "strategies";
	z->n_strat = kf_parse_strategies(r->text, r->text_len, z->strat, N_STRATEGIES);
	if (z->n_strat < 2) {
		char reason[160];
		snprintf(reason, sizeof(reason),
			 "no_strategies: asked for %d strategies, found %d numbered 'NAME: text' lines",
			 N_STRATEGIES, z->n_strat);
		z->n_strat = 0;
		z->replies_unusable++;
		kinds_add(&z->unusable, "no_strategies");
		snprintf(z->event, sizeof(z->event), "strategy call: unusable (%s); seeds choose freely",
			 reason);
		call->outcome = "unusable";
		call->reason = reason;
		enum kf_status st = kf_kb_record_llm_call(z->kb, call, NULL, NULL, err);
		call->reason = NULL; /* it pointed here */
		return st;
	}
	kf_search_set_strategies(z->search, z->n_strat);
	snprintf(z->event, sizeof(z->event), "strategy call: %d strategies (%s, %s%s)", z->n_strat,
		 z->strat[0].name, z->strat[1].name, z->n_strat > 2 ? ", ..." : "");
	call->outcome = "strategies";
	return kf_kb_record_llm_call(z->kb, call, NULL, NULL, err);
}

/* Handles request k's reply: record the call, parse, evaluate (in a thread, polling the LLM meanwhile),
 * record the step, tell the search. */
static enum kf_status handle_one(struct opt *z, struct req *rq, struct kf_err *err)
{
	struct kf_llm_result *r = rq->res;
	struct kf_kb_llm_call call = {0};
	struct cand *parent = &z->cands[rq->parent];
	enum kf_status st = KF_OK;
	char rationale[200] = "";

	/* The reply is outside text: a secret in it (raw or lightly encoded, core/redact.h) goes before it
	 * is recorded, parsed or built into a prompt; a kernel that held one then fails to compile, a
	 * rejected candidate rather than a run stopped by the knowledge base's refusal to store it. */
	if (r->text && kf_redact(r->text, r->text_len + 1))
		r->text_len = strlen(r->text);

	call.run_id = z->run_id;
	call.seq = -1;
	call.provider = r->provider;
	call.model = r->model;
	call.prompt = r->prompt_json;
	call.response = r->text;
	call.finish_reason = r->finish_reason;
	call.tokens_in = r->tokens_in;
	call.tokens_out = r->tokens_out;
	call.tokens_cached = r->tokens_cached;
	call.tokens_cache_write = r->tokens_cache_write;
	call.tokens_reasoning = r->tokens_reasoning;
	call.endpoint = r->endpoint;
	call.cost_usd = r->cost_usd;
	call.latency_ms = r->latency_ms;
	call.error = r->status ? r->error : NULL;
	call.failure = r->status ? r->failure : "";
	call.request_id = r->request_id;
	call.purpose = rq->strategies ? "strategies" : "candidate";
	z->calls++;
	z->spend_usd += r->cost_usd;
	z->tokens_in += r->tokens_in;
	z->tokens_out += r->tokens_out;
	z->tokens_cached += r->tokens_cached;
	z->tokens_reasoning += r->tokens_reasoning;

	if (r->status) {
		if (r->exhausted) {
			/* replay: the transcript ran out; nothing was spent, nothing is recorded */
			z->calls--;
			z->stop_submit = true;
			z->stop_why = "budget";
			snprintf(z->stop_reason, sizeof(z->stop_reason), "the replayed transcript ran out");
			snprintf(z->event, sizeof(z->event), "request %llu: replay transcript exhausted",
				 (unsigned long long)z->handled);
			return KF_OK;
		}
		z->calls_failed++;
		kinds_add(&z->failures, r->failure[0] ? r->failure : KF_LLM_FAIL_HTTP);
		z->failed_in_row++;
		bool refusal = !strcmp(r->failure, KF_LLM_FAIL_REFUSAL);
		z->refusals_in_row = refusal ? z->refusals_in_row + 1 : 0;
		if (rq->strategies)
			z->strategies_pending = false;
		else
			kf_search_pick_void(z->search, &rq->pick);
		snprintf(z->event, sizeof(z->event), "request %llu failed (%s): %.200s",
			 (unsigned long long)z->handled, r->failure, r->error);
		call.outcome = "failed";
		st = kf_kb_record_llm_call(z->kb, &call, NULL, NULL, err);
		if (r->fatal)
			stop_fatal(z, "%s", r->error);
		else if (z->refusals_in_row >= REFUSALS_STOP)
			stop_fatal(z, "the model refused %d times in a row; the last: %s", z->refusals_in_row,
				   r->error);
		else if (z->failed_in_row >= FAILED_CALLS_STOP)
			stop_fatal(z, "%d calls in a row failed; the last (%s): %s", z->failed_in_row,
				   r->failure, r->error);
		return st;
	}
	z->failed_in_row = 0;
	z->refusals_in_row = 0;
	if (rq->strategies)
		return handle_strategies(z, rq, &call, err);

	kf_parse_rationale(r->text, r->text_len, rationale, sizeof(rationale));
	struct kf_parse_result pr = {0};
	st = kf_parse_reply(r->text, r->text_len, r->finish_reason, parent->source, &pr, err);
	parent->edits_total = pr.edits_total;
	parent->edits_unmatched = pr.edits_unmatched;
	if (pr.need_rewrite)
		parent->force_full = true;
	if (st == KF_ERR_PARSE || (!st && (pr.source_len > MAX_SOURCE || pr.edits_unmatched > 0))) {
		/* A reply whose edits did not all apply is not evaluated half-edited: the failure goes back
		 * into the next prompt about the parent (and after two, whole files are asked for). */
		char reason[300];
		const char *kind = unusable_kind(&pr, r->finish_reason);
		if (!strcmp(kind, "edits_not_applied")) {
			snprintf(reason, sizeof(reason),
				 "%d of %d SEARCH/REPLACE edits did not match the parent%s",
				 pr.edits_unmatched, pr.edits_total,
				 !strcmp(r->finish_reason, "length")
				     ? " (the reply was cut at the token limit)"
				     : "");
			if (++parent->edit_failures >= EDIT_FAILURES_FULL)
				parent->force_full = true;
		} else {
			snprintf(reason, sizeof(reason), "%s",
				 pr.reason[0] ? pr.reason : "no kernel in the reply");
		}
		kf_parse_result_release(&pr);
		kf_err_clear(err);
		return reply_unusable(z, rq, &call, kind, reason, rationale, err);
	}
	if (st) {
		kf_parse_result_release(&pr);
		return st;
	}

	struct eval_job *j = calloc(1, sizeof(*j));
	if (!j) {
		kf_parse_result_release(&pr);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	pthread_once(&atfork_once, atfork_init);
	j->task = z->task;
	j->source = pr.source;
	j->len = pr.source_len;
	run_eval_opts(z, &j->eo);
	j->err = (struct kf_err)KF_ERR_INIT;
	if (pthread_create(&j->th, NULL, eval_main, j)) {
		free(j);
		kf_parse_result_release(&pr);
		return kf_err_set(err, KF_ERR_INTERNAL, "cannot start an evaluation thread: %s",
				  strerror(errno));
	}
	/* while it runs, keep the LLM requests moving; replies wait in their slots */
	while (!atomic_load(&j->done)) {
		struct kf_llm_result *d = NULL;
		struct kf_err perr = KF_ERR_INIT;
		if (kf_llm_pending(z->llm) == 0) {
			usleep(20000);
			continue;
		}
		/* poll without waiting inside the lock (a fork waits for it), then sleep outside it */
		pthread_mutex_lock(&poll_lock);
		if (kf_llm_poll(z->llm, 0, &d, &perr) == KF_OK && d) {
			struct req *slot = d->tag >= z->k0 ? req_at(z, d->tag) : NULL;
			if (slot && !slot->res)
				slot->res = d;
			else
				kf_llm_result_free(d);
		}
		pthread_mutex_unlock(&poll_lock);
		if (!d)
			usleep(10000);
	}
	pthread_join(j->th, NULL);

	if (j->st) {
		st = kf_err_set(err, j->st, "%s", j->err.msg);
		goto out;
	}
	struct cand *c = cand_push(z);
	if (!c) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	parent = &z->cands[rq->parent]; /* cand_push may have moved it */
	c->source = pr.source;
	pr.source = NULL;
	c->change = rationale[0] ? kf_strdup(rationale) : NULL;
	c->strategy = rq->pick.strategy;
	struct kf_search_cand sc = {0};
	sc.parent = rq->parent;
	sc.island = rq->island;
	sc.strategy = rq->pick.strategy;
	const char *kind = pr.used_edits ? "diff" : rq->parent > 0 ? "rewrite" : "seed";
	call.outcome = "candidate";
	if ((st = record_eval(z, rq, &call, c, &sc, kind, j->out, err))) {
		cand_release(c);
		z->n_cands--;
		goto out;
	}
	sc.lo = sc.correct ? c->lo : 0;
	sc.band = c->band;
	sc.repairable = strcmp(c->verdict, "unsupported") != 0;
	c->cell = sc.cell;
	if (kf_search_add(z->search, &sc, true) < 0) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	int idx = (int)z->n_cands - 1;
	enum kf_verdict v;
	if (kf_verdict_parse(c->verdict, &v))
		z->by_verdict[v]++;
	z->n_candidates++;
	if (sc.correct)
		z->n_verified++;
	if (sc.correct && sc.speedup > kf_search_at(z->search, (size_t)z->best)->speedup)
		z->best = idx;
	record_lesson(z, c, &sc, rq->parent);
	struct attempt *a = attempt_push(z);
	if (a) {
		a->parent = rq->parent;
		a->cand = idx;
		snprintf(a->rationale, sizeof(a->rationale), "%s", rationale);
		snprintf(a->verdict, sizeof(a->verdict), "%s", c->verdict);
		a->speedup = sc.correct ? sc.speedup : 0;
		if (!sc.correct)
			snprintf(a->note, sizeof(a->note), "%.230s",
				 c->check    ? c->check
				 : c->reason ? c->reason
					     : "");
	}
	if (sc.correct)
		snprintf(z->event, sizeof(z->event), "candidate %lld (%s of %lld, %s): pass, %.3fx (%s)",
			 (long long)c->id, kind, (long long)parent->id, rq->why, sc.speedup, z->res->clock);
	else
		snprintf(z->event, sizeof(z->event), "candidate %lld (%s of %lld, %s): %s", (long long)c->id,
			 kind, (long long)parent->id, rq->why, c->verdict);
out:
	kf_eval_outcome_free(j->out);
	free(j);
	kf_parse_result_release(&pr);
	return st;
}

/* ---- setup: a new run, or a resumed one rebuilt from the knowledge base --------------------------- */

struct run_info {
	bool found;
	int64_t task_id, seed, n_calls;
	double spend;
	int64_t tin, tout;
	char strategy[16], status[16];
	char *config; /* the run's recorded configuration (JSON), malloc'd; NULL: none */
};

static int run_cb(void *ctx, const struct kf_kb_run *r)
{
	struct run_info *ri = ctx;
	ri->found = true;
	ri->task_id = r->task_id;
	ri->seed = r->seed;
	ri->n_calls = r->n_calls;
	ri->spend = r->spend_usd;
	ri->tin = r->tokens_in;
	ri->tout = r->tokens_out;
	snprintf(ri->strategy, sizeof(ri->strategy), "%s", r->strategy ? r->strategy : "");
	snprintf(ri->status, sizeof(ri->status), "%s", r->status ? r->status : "");
	free(ri->config);
	ri->config = r->config ? kf_strdup(r->config) : NULL;
	return 1;
}

/* The search parameters a run recorded in its configuration ("search"), over *p; none recorded: *p as
 * it is. */
/* The clock a run ranked by (its configuration's "clock" and "fitness_arch"; a run recorded before the
 * model clock existed ranked by its backend's clock): a resume goes on with it, or refuses when this
 * machine cannot (a model-clock run without the instrumented build). */
static enum kf_status recorded_clock(struct opt *z, int64_t run, const char *config, struct kf_err *err)
{
	cJSON *j = config ? cJSON_Parse(config) : NULL;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "clock");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "fitness_arch");
	const char *clock = cJSON_IsString(c) ? c->valuestring : NULL;
	const char *arch = cJSON_IsString(a) ? a->valuestring : NULL;
	enum kf_status st = KF_OK;
	if (z->o->backend == KF_BACKEND_CPU) {
		if (!clock || strcmp(clock, "model")) {
			snprintf(z->clock, sizeof(z->clock), "cpu");
			snprintf(z->arch, sizeof(z->arch), "cpu");
		} else if (kf_cpu_sanitizer_unavailable()) {
			st = kf_err_set(
			    err, KF_ERR_UNAVAILABLE,
			    "run %lld ranks by the cost model's clock, which needs the instrumented build: "
			    "%s",
			    (long long)run, kf_cpu_sanitizer_unavailable());
		} else {
			snprintf(z->clock, sizeof(z->clock), "model");
			if (arch && !strncmp(arch, "model-", 6))
				snprintf(z->arch, sizeof(z->arch), "%s", arch);
		}
		snprintf(z->res->clock, sizeof(z->res->clock), "%s", z->clock);
	}
	cJSON_Delete(j);
	return st;
}

static enum kf_status recorded_params(int64_t run, const char *config, struct kf_search_params *p,
				      struct kf_err *err)
{
	char name[64];
	struct kf_jpath path;
	cJSON *j = config ? cJSON_Parse(config) : NULL;
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "search");
	enum kf_status st = KF_OK;
	snprintf(name, sizeof(name), "run %lld's configuration", (long long)run);
	kf_jpath_init(&path, name);
	kf_jpath_push_key(&path, "search");
	if (o &&
	    ((st = kf_search_params_parse(o, p, NULL, &path, err)) || (st = kf_search_params_check(p, err))))
		kf_err_prefix(err, "cannot resume");
	cJSON_Delete(j);
	return st;
}

struct eval_info {
	int64_t cand;
	char verdict[32];
	char *reason;
	double speedup;
	double lo,
	    hi; /* the speedup interval (of the last timing row: one timing shape per candidate on cpu) */
	double band; /* ... and its A/A noise band */
};

struct evals {
	struct eval_info *v;
	size_t n, cap;
};

static int eval_cb(void *ctx, const struct kf_kb_eval *e)
{
	struct evals *ev = ctx;
	struct eval_info *v = kf_grow(ev->v, ev->n, &ev->cap, sizeof(*ev->v), 64);
	if (!v)
		return 1;
	ev->v = v;
	struct eval_info *x = &ev->v[ev->n++];
	x->cand = e->candidate_id;
	snprintf(x->verdict, sizeof(x->verdict), "%s", e->verdict ? e->verdict : "");
	x->reason = dup_bounded(e->reason, 1200);
	x->speedup = e->speedup;
	x->lo = x->hi = 0;
	return 0;
}

/* Timings are read before the candidates so the rebuilt search sees each one's interval (significance). */
static int timing_cb(void *ctx, const struct kf_kb_timing *t)
{
	struct evals *ev = ctx;
	for (size_t i = 0; i < ev->n; i++)
		if (ev->v[i].cand == t->candidate_id) {
			/* one timing shape per candidate on the cpu backend; for several, the last one stands
			 * in */
			ev->v[i].lo = t->speedup_ci_lo;
			ev->v[i].hi = t->speedup_ci_hi;
			ev->v[i].band = t->noise_band;
		}
	return 0;
}

struct cand_ctx {
	struct opt *z;
	struct evals *ev;
	enum kf_status st;
};

static int cand_cb(void *ctx, const struct kf_kb_candidate *kc)
{
	struct cand_ctx *cc = ctx;
	struct opt *z = cc->z;
	if (kc->edit_kind && !strcmp(kc->edit_kind, "reference")) {
		z->cands[0].id = kc->id;
		return 0;
	}
	int parent = 0;
	for (size_t i = 0; i < z->n_cands; i++)
		if (z->cands[i].id == kc->parent_id)
			parent = (int)i;
	const struct eval_info *e = NULL;
	for (size_t i = 0; i < cc->ev->n; i++)
		if (cc->ev->v[i].cand == kc->id)
			e = &cc->ev->v[i];
	struct cand *c = cand_push(z);
	if (!c) {
		cc->st = KF_ERR_NOMEM;
		return 1;
	}
	c->id = kc->id;
	c->source = kf_strdup(kc->source);
	c->change = kc->change && kc->change[0] ? kf_strdup(kc->change) : NULL;
	c->strategy = kc->strategy_no > 0 ? kc->strategy_no - 1 : -1;
	snprintf(c->tags, sizeof(c->tags), "%s", kc->tags ? kc->tags : "");
	struct kf_search_cand sc = {0};
	sc.parent = parent;
	sc.island = kc->island;
	sc.strategy = c->strategy;
	if (e) {
		c->lo = e->lo;
		c->hi = e->hi;
		c->band = e->band;
		sc.lo = e->lo;
		sc.band = e->band;
		sc.repairable = strcmp(e->verdict, "unsupported") != 0;
		snprintf(c->verdict, sizeof(c->verdict), "%s", e->verdict);
		c->reason = kf_strdup(e->reason);
		sc.correct = !strcmp(e->verdict, "pass") && e->speedup > 0;
		sc.failed = !sc.correct;
		sc.speedup = sc.correct ? e->speedup : 0;
		if (!sc.correct) {
			/* the recorded reason names the failing shape: a hidden or edge one is described
			 * without its values (and the prompt builder masks hidden values in any text) */
			char fb[1200];
			kf_verify_reason_feedback(z->task, e->reason, fb, sizeof(fb));
			c->check = kf_strdup(fb);
		}
		enum kf_verdict v;
		if (kf_verdict_parse(e->verdict, &v))
			z->by_verdict[v]++;
	} else {
		sc.failed = true;
	}
	sc.cell = kf_search_cell(kc->tags, c->source ? strlen(c->source) : 0);
	c->cell = sc.cell;
	if (kf_search_add(z->search, &sc, false) < 0) {
		cc->st = KF_ERR_NOMEM;
		return 1;
	}
	z->n_candidates++;
	if (sc.correct)
		z->n_verified++;
	int idx = (int)z->n_cands - 1;
	if (sc.correct && sc.speedup > kf_search_at(z->search, (size_t)z->best)->speedup)
		z->best = idx;
	/* the lineage's memory, as far as the records tell it */
	struct attempt *a = attempt_push(z);
	if (a) {
		a->parent = parent;
		a->cand = idx;
		snprintf(a->rationale, sizeof(a->rationale), "%s", c->change ? c->change : "");
		snprintf(a->verdict, sizeof(a->verdict), "%s", c->verdict[0] ? c->verdict : "unknown");
		a->speedup = sc.correct ? sc.speedup : 0;
		if (!sc.correct && (c->check || c->reason)) /* check: the reason made prompt-safe */
			snprintf(a->note, sizeof(a->note), "%.230s", c->check ? c->check : c->reason);
	}
	return 0;
}

/* A resumed run gets its proposed strategies back from its recorded strategy call. */
static int strategies_cb(void *ctx, const struct kf_kb_llm_call *c)
{
	struct opt *z = ctx;
	if (c->purpose && !strcmp(c->purpose, "strategies") && c->outcome &&
	    !strcmp(c->outcome, "strategies") && !z->n_strat) {
		z->n_strat = kf_parse_strategies(c->response, strlen(c->response), z->strat, N_STRATEGIES);
		if (z->n_strat < 2)
			z->n_strat = 0;
	}
	return 0;
}

static char *run_config(const struct opt *z)
{
	const struct kf_optimize_opts *o = z->o;
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "command", "optimize");
	cJSON_AddStringToObject(j, "task_path", o->task_path);
	cJSON_AddStringToObject(j, "strategy", kf_strategy_name(z->strategy));
	cJSON_AddStringToObject(j, "provider", kf_llm_provider_name(o->llm.provider));
	if (o->llm.model)
		cJSON_AddStringToObject(j, "model", o->llm.model);
	if (o->llm.base_url)
		cJSON_AddStringToObject(j, "base_url", o->llm.base_url);
	cJSON_AddNumberToObject(j, "concurrency", z->concurrency);
	cJSON_AddNumberToObject(j, "islands", z->params.islands);
	cJSON_AddNumberToObject(j, "early_stop_after", (double)kf_search_patience(z->search));
	/* every knob of the search: a resume searches with these (kf_search_params_parse) */
	kf_search_params_json(&z->params, cJSON_AddObjectToObject(j, "search"));
	const char *prompts = kf_prompt_dir();
	if (prompts)
		cJSON_AddStringToObject(j, "prompts", prompts);
	cJSON_AddNumberToObject(j, "strategies_asked", z->want_strategies ? N_STRATEGIES : 0);
	cJSON_AddStringToObject(j, "backend", kf_backend_name(o->backend));
	/* what the run ranks by (a resume keeps it): "gpu", "cpu" or "model" with the model's key */
	cJSON_AddStringToObject(j, "clock", z->clock);
	cJSON_AddStringToObject(j, "fitness_arch", z->arch);
	if (o->llm.provider != KF_LLM_REPLAY) {
		/* what the client sends, resolved from the options and the model table */
		const struct kf_llm_settings *ls = &z->llm_set;
		cJSON *l = cJSON_AddObjectToObject(j, "llm");
		cJSON_AddStringToObject(l, "endpoint", kf_llm_endpoint_name(ls->endpoint));
		cJSON_AddStringToObject(l, "model_table", ls->model.known ? ls->model.key : "");
		cJSON_AddNumberToObject(l, "max_tokens", ls->max_tokens);
		cJSON_AddStringToObject(l, "token_field", ls->token_field ? ls->token_field : "");
		if (ls->effort >= 0)
			cJSON_AddStringToObject(l, "reasoning_effort", kf_llm_effort_name(ls->effort));
		if (ls->thinking_budget)
			cJSON_AddNumberToObject(l, "thinking_budget", ls->thinking_budget);
		if (o->llm.temperature_set)
			cJSON_AddNumberToObject(l, "temperature", o->llm.temperature);
		cJSON_AddBoolToObject(l, "prompt_cache", ls->prompt_cache);
		cJSON_AddStringToObject(l, "price", ls->price_known ? ls->price_source : "unknown");
	}
	cJSON_AddStringToObject(j, "out_dir", o->out_dir);
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

static bool shape_hidden(const struct kf_task *t, const struct kf_shape *s)
{
	for (size_t i = 0; i < t->n_hidden; i++) {
		const struct kf_shape *h = &t->shapes_hidden[i];
		bool same = h->n == s->n;
		for (size_t d = 0; same && d < s->n; d++) {
			int64_t v;
			same = kf_shape_get(h, s->names[d], &v) && v == s->values[d];
		}
		if (same)
			return true;
	}
	return false;
}

/* The seed prompt's "where the time goes": the reference timed once (on this run's backend and clock)
 * beside every baseline of the task, and the roofline floor of the target at the same shape. That one
 * session is also what every candidate's speedup over a baseline is chained through (docs/baselines.md,
 * "What a search measures"): the baselines are timed once per run, not once per candidate. Best effort:
 * a run goes on without it (its candidates then time the baselines beside them, as kforge profile does). */
static void measure_baseline(struct opt *z)
{
	const struct kf_task *t = z->task;
	const struct kf_optimize_opts *o = z->o;
	const struct kf_shape *shape = NULL;
	struct kf_peaks dev;
	const struct kf_peaks *pk = NULL;
	const struct kf_device_info *d = o->backend == KF_BACKEND_CUDA ? o->device : NULL;
	struct kf_profile_result *pr = NULL;
	struct kf_err e2 = KF_ERR_INIT;
	double flops = 0, bytes = 0;

	for (size_t i = 0; i < t->n_timing && !shape; i++)
		if (!shape_hidden(t, &t->shapes_timing[i]))
			shape = &t->shapes_timing[i];
	if (d && !kf_peaks_from_device(d->name, d->arch, d->sm_count, d->sm_clock_khz, d->mem_clock_khz,
				       d->mem_bus_width_bits, &dev, NULL))
		pk = &dev;
	else
		pk = kf_peaks_table_guess(d ? d->name : NULL, d && d->arch[0] ? d->arch : "sm_90");
	if (!kf_cancelled()) {
		struct kf_eval_opts eo;
		run_eval_opts(z, &eo);
		eo.seed = z->seed ? z->seed : 1;
		if (!kf_eval_baselines_time(t, &eo, &pr, &e2) && pr->n_shapes > 0) {
			z->base_once = pr;
			if (!shape_hidden(t, &pr->shapes[0].shape)) {
				const struct kf_profile_shape *ps = &pr->shapes[0];
				z->baseline.ref_ns = ps->ref.stats.median;
				shape = &ps->shape;
				for (size_t b = 0;
				     b < pr->n_baselines && b < KF_ARRAY_SIZE(z->baseline.baselines); b++) {
					struct kf_prompt_vs *v =
					    &z->baseline.baselines[z->baseline.n_baselines++];
					*v = (struct kf_prompt_vs){
					    pr->baselines[b].name, pr->baselines[b].library, 0, 0,
					    kf_profile_base_status_name(pr->baselines[b].status)};
					if (ps->base_timed[b] && ps->ref.stats.median > 0) {
						v->median_ns = ps->bases[b].stats.median;
						v->ratio = v->median_ns / ps->ref.stats.median;
					}
				}
			}
		} else {
			kf_profile_result_free(pr);
		}
	}
	if (shape) {
		kf_shape_format(shape, z->baseline_shape, sizeof(z->baseline_shape));
		z->baseline.shape = z->baseline_shape;
		kf_task_flops(t, shape, &flops);
		kf_task_bytes(t, shape, &bytes);
	}
	if (pk && (flops > 0 || bytes > 0)) {
		enum kf_dtype dt = KF_DTYPE_F32;
		kf_dtype_parse(kf_eval_task_dtype(t), &dt);
		z->baseline.floor_ns = kf_roofline_floor_ns(flops, bytes, dt, pk);
		double pf = pk->flops[kf_peak_kind_for_dtype(dt)];
		z->baseline.bound =
		    flops / (pf > 0 ? pf : 1) > bytes / (pk->dram_bytes_per_s > 0 ? pk->dram_bytes_per_s : 1)
			? "compute"
			: "memory";
		snprintf(z->baseline_peaks, sizeof(z->baseline_peaks), "%s", pk->name);
		z->baseline.peaks = z->baseline_peaks;
	}
	/* the baselines were timed on the CPU clock whenever the run ranks by the model: say so */
	z->baseline.clock = strcmp(z->clock, "model") ? z->clock : "cpu";
}

static enum kf_status setup(struct opt *z, struct kf_err *err)
{
	const struct kf_optimize_opts *o = z->o;
	enum kf_status st;
	struct kf_buf ref = KF_BUF_INIT(MAX_SOURCE);

	if ((st = kf_task_load(o->task_path, 0, NULL, &z->task, err)))
		return st;
	if ((st = kf_buf_read_file(&ref, z->task->reference, err)))
		return kf_err_prefix(err, "reference of '%s'", z->task->name);
	z->ref_source = kf_buf_detach(&ref, NULL);
	snprintf(z->arch, sizeof(z->arch), "%s",
		 o->backend == KF_BACKEND_CUDA && o->device && o->device->arch[0] ? o->device->arch : "cpu");
	snprintf(z->res->clock, sizeof(z->res->clock), "%s", o->backend == KF_BACKEND_CUDA ? "gpu" : "cpu");
	if (o->backend == KF_BACKEND_CPU && !o->cpu_fitness && !kf_cpu_sanitizer_unavailable()) {
		/* no GPU: the cost model's prediction is the fitness, never CPU time (docs/cost-model.md) */
		const struct kf_cost_target *mt =
		    o->model_target ? o->model_target : kf_cost_target_default();
		snprintf(z->res->clock, sizeof(z->res->clock), "model");
		snprintf(z->arch, sizeof(z->arch), "model-v%d-%s", KF_COST_MODEL_VERSION, mt->key);
	}
	snprintf(z->clock, sizeof(z->clock), "%s", z->res->clock);
	if ((st = kf_mkdir_p(o->out_dir, 0777, err)))
		return st;
	if ((st = kf_kb_open(o->db_path, 0, &z->kb, err)))
		return st;
	if ((st = kf_kb_task_put_loaded(z->kb, z->task, &z->task_id, err)))
		return st;

	struct cand *c0 = cand_push(z);
	if (!c0 || !(c0->source = kf_strdup(z->ref_source)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	int64_t budget = o->budget_calls > 0 ? o->budget_calls : DEFAULT_BUDGET_CALLS;
	z->params = o->search ? *o->search : kf_search_params_default();
	z->search = kf_search_new(z->strategy, &z->params);
	struct kf_search_cand root = {.parent = -1};
	if (!z->search || kf_search_add(z->search, &root, false) < 0)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	kf_search_set_budget(z->search, budget);
	z->want_strategies = !o->no_strategies && budget >= STRATEGY_MIN_BUDGET;
	measure_baseline(z);

	if (o->resume_run > 0) {
		struct run_info ri = {0};
		st = kf_kb_run_get(z->kb, o->resume_run, run_cb, &ri, err);
		/* the run searches on as it started: its strategy (below), and the parameters it recorded (a
		 * run recorded before they were is one with the defaults) */
		z->params = kf_search_params_default();
		if (!st)
			st = recorded_params(o->resume_run, ri.config, &z->params, err);
		if (!st)
			st = recorded_clock(z, o->resume_run, ri.config, err);
		free(ri.config);
		if (st)
			return st;
		if (ri.task_id != z->task_id)
			return kf_err_set(err, KF_ERR_INVALID,
					  "run %lld is not of task '%s' (or the task file changed)",
					  (long long)o->resume_run, z->task->name);
		/* a finished run ("done", "budget") may be continued too, with a larger budget */
		enum kf_strategy s;
		if (!kf_strategy_parse(ri.strategy, &s))
			return kf_err_set(err, KF_ERR_INVALID,
					  "run %lld is not an optimize run (strategy '%s')",
					  (long long)o->resume_run, ri.strategy);
		z->strategy = s;
		kf_search_free(z->search);
		z->search = kf_search_new(s, &z->params);
		if (!z->search || kf_search_add(z->search, &root, false) < 0)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		kf_search_set_budget(z->search, budget);
		z->run_id = o->resume_run;
		z->seed = (uint64_t)ri.seed;
		z->k0 = (uint64_t)ri.n_calls;
		z->submitted = z->handled = z->k0;
		z->calls = ri.n_calls;
		z->spend_usd = ri.spend;
		z->tokens_in = ri.tin;
		z->tokens_out = ri.tout;
		struct evals ev = {0};
		struct cand_ctx cc = {z, &ev, KF_OK};
		st = kf_kb_evals_each(z->kb, z->run_id, 0, eval_cb, &ev, err);
		if (!st)
			st = kf_kb_timings_each(z->kb, z->run_id, 0, timing_cb, &ev, err);
		if (!st)
			st = kf_kb_llm_calls_each(z->kb, z->run_id, strategies_cb, z, err);
		if (!st)
			kf_search_set_strategies(z->search, z->n_strat);
		if (!st)
			st = kf_kb_candidates_each(z->kb, z->run_id, cand_cb, &cc, err);
		if (!st && cc.st)
			st = kf_err_set(err, cc.st, "out of memory");
		for (size_t i = 0; i < ev.n; i++)
			free(ev.v[i].reason);
		free(ev.v);
		if (st)
			return st;
		kf_search_reset_patience(z->search); /* a resume gets a fresh early-stop window */
		if (z->n_strat || z->k0 > 0)
			z->want_strategies = false; /* asked already (or the run began without) */
		return kf_kb_run_set_status(z->kb, z->run_id, "running", err);
	}

	if (!z->seed) {
		uint64_t s = 0;
		if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s))
			s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		z->seed = (s & INT64_MAX) | 1; /* stored as a signed 64-bit integer */
	}
	char *config = run_config(z);
	struct kf_kb_run run = {0};
	run.task_id = z->task_id;
	run.strategy = kf_strategy_name(z->strategy);
	run.provider = kf_llm_provider_name(o->llm.provider);
	run.model = o->llm.model ? o->llm.model : "";
	run.backend = kf_backend_name(o->backend);
	run.seed = (int64_t)z->seed;
	run.budget_calls = o->budget_calls > 0 ? o->budget_calls : DEFAULT_BUDGET_CALLS;
	run.budget_usd = o->budget_usd;
	run.budget_time_s = o->time_limit_s;
	run.config = config;
	st = kf_kb_run_begin(z->kb, &run, &z->run_id, err);
	free(config);
	if (st)
		return st;
	/* the reference is candidate 0 of the lineage (speedup 1 by definition, so no evaluation row) */
	struct kf_kb_candidate kc = {0};
	kc.run_id = z->run_id;
	kc.task_id = z->task_id;
	kc.edit_kind = "reference";
	kc.source = z->ref_source;
	kc.change = "the task's reference kernel";
	return kf_kb_record_candidate(z->kb, &kc, &z->cands[0].id, err);
}

/* ---- outputs ------------------------------------------------------------------------------------- */

static void write_best(struct opt *z)
{
	struct kf_optimize_result *res = z->res;
	char path[PATH_MAX + 16];
	struct kf_err e2 = KF_ERR_INIT;

	snprintf(path, sizeof(path), "%s/best.cu", z->o->out_dir);
	/* only a significant win is a winner (or what --keep-best asks for) */
	if (z->best > 0 && (z->o->keep_best || z->cands[z->best].lo > 1.0 + z->cands[z->best].band)) {
		const char *src = z->cands[z->best].source;
		if (!kf_write_file_atomic(path, src, strlen(src), &e2))
			snprintf(res->best_path, sizeof(res->best_path), "%s", path);
	} else {
		unlink(path); /* an old run's best.cu must not pass for this run's */
	}
}

static void fill_result(struct opt *z)
{
	struct kf_optimize_result *r = z->res;
	r->run_id = z->run_id;
	r->calls = z->calls;
	r->candidates = z->n_candidates;
	r->verified = z->n_verified;
	memcpy(r->by_verdict, z->by_verdict, sizeof(r->by_verdict));
	r->spend_usd = z->spend_usd;
	r->elapsed_s = elapsed_s(z);
	r->tokens_in = z->tokens_in;
	r->tokens_out = z->tokens_out;
	r->tokens_cached = z->tokens_cached;
	r->tokens_reasoning = z->tokens_reasoning;
	r->calls_failed = z->calls_failed;
	r->replies_unusable = z->replies_unusable;
	r->n_failures = z->failures.n;
	memcpy(r->failures, z->failures.v, sizeof(r->failures));
	r->n_unusable = z->unusable.n;
	memcpy(r->unusable, z->unusable.v, sizeof(r->unusable));
	r->n_strategies = z->n_strat;
	snprintf(r->stop_reason, sizeof(r->stop_reason), "%s", z->stop_reason);
	if (z->best > 0) {
		r->best_candidate_id = z->cands[z->best].id;
		r->best_speedup = kf_search_at(z->search, (size_t)z->best)->speedup;
		r->best_lo = z->cands[z->best].lo;
		r->best_hi = z->cands[z->best].hi;
		r->significant = r->best_lo > 1.0 + z->cands[z->best].band;
		r->improved = r->best_speedup > 1.0 && r->significant; /* a win is a significant one */
		r->best_band = z->cands[z->best].band;
		struct kf_err e2 = KF_ERR_INIT;
		if (kf_kb_candidate_vs(z->kb, r->best_candidate_id, r->baselines, KF_ARRAY_SIZE(r->baselines),
				       &r->n_baselines, &e2))
			r->n_baselines = 0; /* the summary goes without them; the report says the same */
	}
	r->best_baseline = kf_kb_vs_best(r->baselines, r->n_baselines);
}

/* The model's price: an unknown one is a warning, and with --budget-usd a refusal (the budget could never
 * act: every call would cost $0). */
static enum kf_status check_price(struct opt *z, struct kf_err *err)
{
	const struct kf_optimize_opts *o = z->o;
	if (o->llm.provider == KF_LLM_REPLAY || z->llm_set.price_known)
		return KF_OK;
	if (o->budget_usd > 0)
		return kf_err_set(
		    err, KF_ERR_INVALID,
		    "model '%s' has no price in the table (agent/data/prices.json, $KFORGE_PRICES): "
		    "--budget-usd cannot be kept; give --price-in and --price-out (USD per 1M tokens)",
		    o->llm.model ? o->llm.model : "");
	snprintf(
	    z->warning_buf, sizeof(z->warning_buf),
	    "model '%s' has no price in the table: its calls are counted as $0 (give --price-in/--price-out "
	    "to price them)",
	    o->llm.model ? o->llm.model : "");
	z->warning = z->warning_buf;
	snprintf(z->res->warning, sizeof(z->res->warning), "%s", z->warning_buf);
	return KF_OK;
}

enum kf_status kf_optimize(const struct kf_optimize_opts *o, struct kf_optimize_result *res,
			   struct kf_err *err)
{
	struct opt z;
	enum kf_status st;
	struct kf_err ferr = KF_ERR_INIT;

	memset(res, 0, sizeof(*res));
	memset(&z, 0, sizeof(z));
	if (!o || !o->task_path || !o->db_path || !o->out_dir)
		return kf_err_set(err, KF_ERR_INVALID,
				  "optimize needs a task, a database and an output folder");
	z.o = o;
	z.res = res;
	z.t0_ms = kf_now_ms();
	z.seed = o->seed;
	z.strategy = o->strategy;
	z.concurrency = o->llm.concurrency > 0 ? o->llm.concurrency : 4;

	struct kf_llm_config cfg = o->llm;
	cfg.concurrency = z.concurrency;
	if ((st = kf_llm_client_new(&cfg, &z.llm, err)))
		goto done;
	kf_llm_client_settings(z.llm, &z.llm_set);
	if ((st = check_price(&z, err)))
		goto done;
	/* the pre-flight check: a bad key or an unknown model ends here, before a run is recorded */
	if (!o->no_preflight) {
		char note[512];
		if ((st = kf_llm_preflight(z.llm, note, sizeof(note), err)))
			goto done;
		kf_llm_client_settings(z.llm, &z.llm_set); /* the model's record may have lowered the cap */
	}
	if ((st = setup(&z, err)))
		goto done;
	snprintf(z.event, sizeof(z.event), "%s run %lld of '%s' (seed %llu)",
		 o->resume_run > 0 ? "resumed" : "started", (long long)z.run_id, z.task->name,
		 (unsigned long long)z.seed);
	progress(&z);

	for (;;) {
		if (kf_cancelled())
			break;
		/* the strategy call goes alone: the seeds need its answer */
		while (!z.stop_submit && !z.strategies_pending &&
		       z.submitted - z.handled < (uint64_t)z.concurrency) {
			if (kf_search_stagnant(z.search)) {
				z.stop_submit = true;
				z.stop_why = "done";
				snprintf(z.stop_reason, sizeof(z.stop_reason),
					 "no significant improvement in %lld attempts in a row",
					 (long long)kf_search_since_improvement(z.search));
				break;
			}
			if (!budget_left(&z)) {
				z.stop_submit = true;
				break;
			}
			if ((st = submit_one(&z, err)))
				goto done;
		}
		if (z.fatal || z.handled == z.submitted)
			break;
		struct req *rq = req_at(&z, z.handled);
		if (!rq) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto done;
		}
		if (!rq->res) {
			struct kf_llm_result *d = NULL;
			if ((st = kf_llm_poll(z.llm, 100, &d, err))) {
				if (st == KF_ERR_INTERRUPTED && kf_cancelled()) {
					st = KF_OK; /* recorded as interrupted below */
					break;
				}
				goto done;
			}
			if (d) {
				struct req *slot = d->tag >= z.k0 ? req_at(&z, d->tag) : NULL;
				if (slot && !slot->res)
					slot->res = d;
				else
					kf_llm_result_free(d);
			}
			continue;
		}
		st = handle_one(&z, rq, err);
		if (st == KF_ERR_INTERRUPTED && kf_cancelled()) {
			st = KF_OK; /* this attempt's evaluation was cut short: not recorded, resume redoes it
				     */
			break;
		}
		kf_llm_result_free(rq->res);
		rq->res = NULL;
		if (st)
			goto done;
		z.handled++;
		progress(&z);
	}

	if (kf_cancelled()) {
		kf_kb_run_set_status(z.kb, z.run_id, "interrupted", &ferr);
		snprintf(res->status, sizeof(res->status), "interrupted");
		snprintf(z.stop_reason, sizeof(z.stop_reason), "interrupted");
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted; resume with --resume %lld",
				(long long)z.run_id);
	} else if (z.fatal) {
		/* loud: the API's message goes to the caller (stderr, exit 4); the run is recorded as failed
		 */
		st = kf_err_set(err, z.fatal, "%s", z.stop_reason);
	} else {
		const char *s = z.stop_why ? z.stop_why : "done";
		snprintf(res->status, sizeof(res->status), "%s", s);
		st = kf_kb_run_set_status(z.kb, z.run_id, s, err);
	}
done:
	if (z.kb && z.run_id) {
		if (st && st != KF_ERR_INTERRUPTED) {
			kf_kb_run_set_status(z.kb, z.run_id, "failed", &ferr);
			snprintf(res->status, sizeof(res->status), "failed");
			if (!z.stop_reason[0])
				snprintf(z.stop_reason, sizeof(z.stop_reason), "%s",
					 err ? err->msg : "failed");
		}
		if (z.search) {
			fill_result(&z);
			write_best(&z);
		}
	}
	res->run_id = z.run_id;
	if (!z.run_id && st && err)
		snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", err->msg);
	for (uint64_t k = z.handled; k < z.submitted; k++) {
		struct req *rq = req_at(&z, k);
		if (rq) {
			kf_llm_result_free(rq->res);
			rq->res = NULL;
		}
	}
	kf_llm_client_free(z.llm);
	for (size_t i = 0; i < z.n_cands; i++)
		cand_release(&z.cands[i]);
	free(z.cands);
	free(z.reqs);
	free(z.att);
	kf_search_free(z.search);
	kf_profile_result_free(z.base_once);
	kf_kb_close(z.kb);
	free(z.ref_source);
	kf_task_free(z.task);
	return st;
}
