/* kforge profile's engine: see timing.h. One worker per kernel (candidate, reference, each baseline), each
 * holding n_sets input sets in separate allocation slots; samples alternate between the kernels. */
#include <math.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baselines_int.h"
#include "core/baseline.h"
#include "timing.h"
#include "verifier/verifier.h"

#define MAX_SETS 8

void kf_profile_opts_init(struct kf_profile_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = KF_BACKEND_CPU;
	o->n_sets = 4;
	o->step_timeout_ms = 30000;
}

static void default_rule(enum kf_backend_kind b, struct kf_stop_rule *r)
{
	if (r->min_samples)
		return;
	if (b == KF_BACKEND_CUDA) {
		/* GPU: at least 20 samples and 50 ms each side; stop when the standard error is under 0.5% of
		 * the mean; never more than 400 samples or 10 s. */
		*r = (struct kf_stop_rule){20, 5e7, 0.005, KF_PROFILE_MAX_SAMPLES, 1e10};
	} else {
		/* CPU fibers are slow and noisy: fewer samples, a time cap so profile stays interactive. */
		*r = (struct kf_stop_rule){7, 2e7, 0.01, 60, 4e9};
	}
}

struct runner {
	const char *what; /* "candidate", "reference", or the baseline's name */
	struct kf_compiled *comp;
	struct kf_kfile *kf;
	const struct kf_baseline *lib; /* a library baseline: planned by kf_libcall_plan, kf is NULL */
	int base;                      /* index in kf_profile_result.baselines, or -1 */
	bool off;                      /* a baseline that failed here: not run any more */
	struct kf_plan *plan;
	struct kf_session *s;
	struct kf_timed *timed;
	bool aa;               /* the reference's twin of the A/A run (timed, never checked) */
	bool watch;            /* the candidate: its worker's quiescence is checked between steps */
	uint64_t idle_cpu_ns;  /* its worker's CPU time when its last step returned */
	uint64_t idle_from_ns; /* ... and when (kf_now_ns); 0 before the first */
	int setup_threads;     /* its worker's threads after the warm-up */
	int64_t in_off[MAX_SETS][KF_MAX_BUFFERS];
	int64_t out_off[MAX_SETS][KF_MAX_BUFFERS];
	size_t arena;
};

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

static void layout(struct runner *r, const struct kf_task *t, int n_sets, const uint64_t *n_bytes)
{
	size_t off = 0;
	for (int s = 0; s < n_sets; s++)
		for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
			r->in_off[s][b] = -1;
			if (b < t->n_tensors && t->tensors[b].role != KF_ROLE_OUTPUT) {
				r->in_off[s][b] = (int64_t)off;
				off += round_up(n_bytes[b], 64);
			}
		}
	for (int s = 0; s < n_sets; s++)
		for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
			r->out_off[s][b] = -1;
			/* only the task's outputs come back: they are what gets re-checked */
			if (b < t->n_tensors && t->tensors[b].role != KF_ROLE_INPUT) {
				r->out_off[s][b] = (int64_t)off;
				off += 2 * KF_GUARD_BYTES + round_up(n_bytes[b], 256);
			}
		}
	r->arena = off ? off : 4096;
}

static void step_for(struct kf_step *st, const struct runner *r, int set, uint32_t flags, int timeout_ms)
{
	memset(st, 0, sizeof(*st));
	st->flags = flags;
	st->slot = (uint32_t)set;
	st->reps = 1;
	st->poison = 0x7fc07fc0u;
	st->canary = 0xc3a55a3cu;
	st->timeout_ms = timeout_ms;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		st->in_off[b] = flags & KF_STEP_COPY_IN ? r->in_off[set][b] : -1;
		st->out_off[b] = flags & KF_STEP_COPY_OUT ? r->out_off[set][b] : -1;
	}
}

static enum kf_status run_step(struct runner *r, const struct kf_step *st, struct kf_step_result *res,
			       struct kf_err *err)
{
	enum kf_status s = kf_session_step(r->s, st, res, err);
	if (s)
		return s;
	if (res->status)
		return kf_err_set(err, KF_ERR_RUNTIME, "%s failed while timed (%s): %s", r->what,
				  kf_status_name(res->status), res->msg);
	return KF_OK;
}

static const struct kf_tensor *first_output(const struct kf_task *t)
{
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT)
			return &t->tensors[i];
	return &t->tensors[0];
}

/* A baseline that failed while being timed: recorded in its status, dropped for the rest of the run (the
 * candidate's profile goes on without it). false for the candidate and the reference, whose failure is
 * the profile's. */
static bool base_drop(struct runner *r, struct kf_profile_result *res, enum kf_status st,
		      const struct kf_err *err)
{
	struct kf_profile_baseline *pb;
	if (r->base < 0 || st == KF_ERR_NOMEM || st == KF_ERR_INTERRUPTED)
		return false;
	pb = &res->baselines[r->base];
	pb->status = st == KF_ERR_UNAVAILABLE ? KF_PROFILE_BASE_UNAVAILABLE : KF_PROFILE_BASE_FAILED;
	snprintf(pb->reason, sizeof(pb->reason), "%s", err ? err->msg : kf_status_name(st));
	r->off = true;
	if (r->s) {
		kf_session_end(r->s, NULL);
		r->s = NULL;
	}
	return true;
}

/* The outputs a baseline's timed launches left in input set s against the reference's: a baseline is held
 * to the candidate's standard (docs/spec/verification.md, check 9); one that differs is rejected. */
static void base_recheck(const struct kf_task *t, struct runner *r, const struct runner *ref, int s,
			 const uint64_t *numel, struct kf_profile_result *res)
{
	for (size_t b = 0; b < t->n_tensors; b++) {
		const struct kf_tensor *te = &t->tensors[b];
		struct kf_tol tol = kf_task_tolerance(t, te->dtype);
		struct kf_profile_baseline *pb = &res->baselines[r->base];
		struct kf_cmp cmp;
		if (te->role != KF_ROLE_OUTPUT)
			continue; /* inout tensors depend on the launch count (see profile_shape) */
		kf_compare(kf_session_arena(r->s) + r->out_off[s][b] + KF_GUARD_BYTES,
			   kf_session_arena(ref->s) + ref->out_off[s][b] + KF_GUARD_BYTES, te->dtype,
			   (size_t)numel[b], &tol, &cmp);
		if (cmp.verdict == KF_VERDICT_PASS)
			continue;
		pb->status = KF_PROFILE_BASE_REJECTED;
		snprintf(pb->verdict, sizeof(pb->verdict), "stateful");
		snprintf(pb->reason, sizeof(pb->reason),
			 "%s of a timed launch (input set %d): '%s' element %lld got %.9g want %.9g",
			 kf_verdict_name(cmp.verdict), s, te->name, (long long)cmp.first_bad, cmp.got,
			 cmp.want);
		r->off = true;
		return;
	}
}

/* ---- the timed rounds ---------------------------------------------------------------------------- */

/* Two poison patterns alternate between rounds (NaN, a huge finite value): a kernel that skips the
 * elements it finds already written, or that tests for one pattern, leaves the other behind. */
static const uint32_t round_poison[2] = {0x7fc07fc0u, 0x7f7f7f7fu};

/* Every timed launch gets new input values: the whole tensor redrawn up to this many elements, beyond it
 * a redrawn window of this many at a random offset (the rest keeps the values of earlier rounds). */
#define FRESH_MAX_ELEMS ((uint64_t)4 << 20)
/* A share of 1 in REALLOC_EVERY preparations moves the set to new buffers (new addresses). */
#define REALLOC_EVERY 4
/* A share of 1 in CHECK_EVERY rounds has its outputs checked (picked after the round; plus the last). */
#define CHECK_EVERY 3
/* Quiescence: between two steps a worker may burn at most this much CPU time, plus QUIET_SHARE of the
 * wall time that passed (what a worker does between steps is waiting for the next one). */
#define QUIET_SLACK_NS 3e6
#define QUIET_SHARE 0.25
/* The noise band's floor (docs/spec/verification.md): an A/A interval narrower than this does not make a
 * smaller difference significant. */
#define BAND_FLOOR_CPU 0.03
#define BAND_FLOOR_GPU 0.02

struct round_ctx {
	const struct kf_task *t;
	const struct kf_profile_opts *o;
	struct runner *rs;
	size_t n_run;
	int n_sets;
	bool cuda;
	uint64_t numel[KF_MAX_BUFFERS], n_bytes[KF_MAX_BUFFERS];
	uint8_t *in[MAX_SETS][KF_MAX_BUFFERS];
	struct kf_rng pick;  /* the parent's own choices: realloc, which rounds are checked */
	struct kf_rng fresh; /* new input values */
	struct kf_step_result *sr;
};

/* New values for input set s before round i, copied into every worker's arena (only what changed). */
static void fresh_inputs(struct round_ctx *c, int s)
{
	for (size_t b = 0; b < c->t->n_tensors; b++) {
		const struct kf_tensor *te = &c->t->tensors[b];
		size_t es = kf_dtype_size(te->dtype);
		uint64_t n = c->numel[b], len = n, off = 0;
		if (te->role == KF_ROLE_OUTPUT || !n)
			continue;
		if (n > FRESH_MAX_ELEMS) {
			len = FRESH_MAX_ELEMS;
			off = kf_rng_below(&c->fresh, n - len + 1);
		}
		kf_inputs_fill(c->in[s][b] + off * es, te->dtype, (size_t)len, te, KF_INPUT_INIT, &c->fresh);
		for (size_t k = 0; k < c->n_run; k++)
			if (!c->rs[k].off && c->rs[k].s && c->rs[k].in_off[s][b] >= 0)
				memcpy(kf_session_arena(c->rs[k].s) + c->rs[k].in_off[s][b] + off * es,
				       c->in[s][b] + off * es, (size_t)(len * es));
	}
}

/* Runner r's quiescence since its last step: CPU time its threads used while it had nothing to do, and
 * threads that appeared after its setup. false with why when it was busy. */
static bool quiet_since(struct runner *r, char *why, size_t n)
{
	uint64_t cpu = 0;
	int threads = 0;
	struct kf_err e = KF_ERR_INIT;
	double gap;
	if (!r->watch || !r->s || kf_session_usage(r->s, &cpu, &threads, &e))
		return true; /* /proc cannot say: the output checks still hold */
	gap = (double)(kf_now_ns() - r->idle_from_ns);
	if (r->idle_from_ns && (double)(cpu - r->idle_cpu_ns) > QUIET_SLACK_NS + QUIET_SHARE * gap) {
		snprintf(
		    why, n,
		    "not quiescent: the %s's worker used %.1f ms of CPU time in the %.1f ms between two of "
		    "its steps (work that goes on after a step returned)",
		    r->what, (double)(cpu - r->idle_cpu_ns) / 1e6, gap / 1e6);
		return false;
	}
	if (r->setup_threads && threads > r->setup_threads) {
		snprintf(why, n, "not quiescent: the %s's worker has %d threads, %d after its setup", r->what,
			 threads, r->setup_threads);
		return false;
	}
	return true;
}

static void mark_idle(struct runner *r)
{
	uint64_t cpu = 0;
	int threads = 0;
	struct kf_err e = KF_ERR_INIT;
	if (r->watch && r->s && !kf_session_usage(r->s, &cpu, &threads, &e)) {
		r->idle_cpu_ns = cpu;
		r->idle_from_ns = kf_now_ns();
		if (!r->setup_threads)
			r->setup_threads = threads;
	}
}

/* One runner's turn in a round on set s: a preparation step (this round's inputs copied in, outputs and
 * scratch poisoned, new buffers now and then), then the timed step alone, its time read here. */
static enum kf_status turn(struct round_ctx *c, struct runner *r, int s, uint32_t poison, double *wall_ns,
			   struct kf_err *err)
{
	struct kf_step step;
	enum kf_status st;
	uint64_t t0;
	bool moved = kf_rng_below(&c->pick, REALLOC_EVERY) == 0;

	step_for(&step, r, s, KF_STEP_COPY_IN | KF_STEP_POISON | (moved ? KF_STEP_REALLOC : 0),
		 c->o->step_timeout_ms);
	step.reps = 0;
	step.poison = poison;
	if ((st = run_step(r, &step, c->sr, err)))
		return st;
	step_for(&step, r, s, KF_STEP_TIME | (c->cuda ? KF_STEP_FLUSH_L2 : 0), c->o->step_timeout_ms);
	t0 = kf_now_ns();
	st = run_step(r, &step, c->sr, err);
	*wall_ns = (double)(kf_now_ns() - t0);
	return st;
}

/* The outputs runner k's timed launch of this round left in set s, read back. */
static enum kf_status read_back(struct round_ctx *c, struct runner *r, int s, struct kf_err *err)
{
	struct kf_step step;
	step_for(&step, r, s, KF_STEP_COPY_OUT, c->o->step_timeout_ms);
	step.reps = 0;
	return run_step(r, &step, c->sr, err);
}

/* Candidate against reference on the outputs of one checked round. */
static void check_round(struct round_ctx *c, int s, size_t round, struct kf_profile_shape *ps)
{
	const struct runner *cand = &c->rs[0], *ref = &c->rs[1];
	for (size_t b = 0; b < c->t->n_tensors && ps->outputs_ok; b++) {
		const struct kf_tensor *te = &c->t->tensors[b];
		struct kf_tol tol = kf_task_tolerance(c->t, te->dtype);
		struct kf_cmp cmp;
		if (te->role == KF_ROLE_INPUT)
			continue;
		/* inout tensors too: every timed launch started from the same copied-in values */
		kf_compare(kf_session_arena(cand->s) + cand->out_off[s][b] + KF_GUARD_BYTES,
			   kf_session_arena(ref->s) + ref->out_off[s][b] + KF_GUARD_BYTES, te->dtype,
			   (size_t)c->numel[b], &tol, &cmp);
		if (cmp.verdict != KF_VERDICT_PASS) {
			ps->outputs_ok = false;
			snprintf(
			    ps->recheck_detail, sizeof(ps->recheck_detail),
			    "%s of timed launch %zu (input set %d): '%s' element %lld got %.9g want %.9g, "
			    "%llu bad",
			    kf_verdict_name(cmp.verdict), round + 1, s, te->name, (long long)cmp.first_bad,
			    cmp.got, cmp.want, (unsigned long long)cmp.n_bad);
		}
	}
}

static bool is_base(const struct runner *r)
{
	return r->base >= 0;
}

/* Times one shape: warm-up, then rounds of every kernel in turn (alternating A B C / C B A), each launch
 * from scratch, a share of the rounds checked, until the stopping rule holds for every kernel. */
static enum kf_status profile_shape(const struct kf_task *t, struct runner *rs, size_t n_run,
				    const struct kf_profile_opts *o, const struct kf_shape *shape,
				    bool reverse, struct kf_profile_shape *ps, struct kf_profile_result *res,
				    struct kf_err *err)
{
	struct round_ctx c = {.t = t, .o = o, .rs = rs, .n_run = n_run};
	struct kf_stop_rule rule = o->rule;
	enum kf_status st = KF_OK;
	double total_ns[3 + KF_PROFILE_MAX_BASELINES] = {0};
	double *worker_ns = calloc(KF_PROFILE_MAX_SAMPLES, sizeof(double));
	size_t n_worker = 0;
	uint64_t seed_pick = 0;

	c.n_sets = o->n_sets > 0 && o->n_sets <= MAX_SETS ? o->n_sets : 4;
	c.cuda = o->backend == KF_BACKEND_CUDA;
	c.sr = malloc(sizeof(*c.sr));
	if (!c.sr || !worker_ns) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	default_rule(o->backend, &rule);
	ps->shape = *shape;
	/* the parent's choices come from the kernel's entropy, not from anything the candidate can see */
	if (getrandom(&seed_pick, sizeof(seed_pick), 0) != (ssize_t)sizeof(seed_pick))
		seed_pick = kf_now_ns() ^ 0x5eed;
	kf_rng_seed(&c.pick, seed_pick);
	kf_rng_seed(&c.fresh, kf_mix64(o->seed ^ 0xf7e5));
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t ne;
		st = kf_task_numel(t, i, shape, &ne, err);
		if (st)
			goto out;
		c.numel[i] = (uint64_t)ne;
		c.n_bytes[i] = (uint64_t)ne * kf_dtype_size(t->tensors[i].dtype);
	}
	/* distinct input sets, drawn like the verifier's "init" inputs */
	for (int s = 0; s < c.n_sets; s++)
		for (size_t i = 0; i < t->n_tensors; i++) {
			struct kf_rng rng;
			if (t->tensors[i].role == KF_ROLE_OUTPUT)
				continue;
			c.in[s][i] = malloc(c.n_bytes[i] ? c.n_bytes[i] : 1);
			if (!c.in[s][i]) {
				st = kf_err_set(err, KF_ERR_NOMEM, "out of memory for timing inputs");
				goto out;
			}
			kf_rng_seed(&rng, kf_mix64(o->seed + (uint64_t)s * 131 + i));
			kf_inputs_fill(c.in[s][i], t->tensors[i].dtype, (size_t)c.numel[i], &t->tensors[i],
				       KF_INPUT_INIT, &rng);
		}
	for (size_t k = 0; k < n_run; k++) {
		struct runner *r = &rs[k];
		struct kf_worker_opts wo = {0};
		st = r->lib ? kf_libcall_plan(r->lib, t, shape, &r->plan, err)
			    : kf_plan_make(r->kf, t, shape, &r->plan, err);
		if (st && base_drop(r, res, st, err))
			st = KF_OK;
		if (st)
			goto out;
		if (r->off)
			continue;
		layout(r, t, c.n_sets, c.n_bytes);
		wo.backend = o->backend;
		wo.worker_path = o->worker_path;
		wo.start_timeout_ms = 30000;
		st = kf_session_start(&wo, r->comp, r->plan, r->arena, &r->s, err);
		if (st && base_drop(r, res, st, err))
			continue;
		if (st)
			goto out;
		uint8_t *arena = kf_session_arena(r->s);
		for (int s = 0; s < c.n_sets; s++)
			for (size_t b = 0; b < t->n_tensors; b++)
				if (r->in_off[s][b] >= 0)
					/* exactly the inputs, each with in[s][b] set (see layout):
					 * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
					memcpy(arena + r->in_off[s][b], c.in[s][b], c.n_bytes[b]);
		/* each set in its own slot: distinct addresses; the first launches are the warm-up */
		for (int s = 0; s < c.n_sets && !st; s++) {
			struct kf_step step;
			step_for(&step, r, s, KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON,
				 o->step_timeout_ms);
			step.reps = c.cuda ? 3 : 1;
			st = run_step(r, &step, c.sr, err);
		}
		if (st && base_drop(r, res, st, err))
			st = KF_OK;
		if (st)
			goto out;
		mark_idle(r);
	}
	ps->outputs_ok = true;
	for (size_t i = 0; i < KF_PROFILE_MAX_SAMPLES && ps->outputs_ok; i++) {
		int s = (int)(i % (size_t)c.n_sets);
		bool backwards = (i % 2 == 1) != reverse;
		fresh_inputs(&c, s);
		for (size_t j = 0; j < n_run; j++) {
			struct runner *r = &rs[backwards ? n_run - 1 - j : j];
			size_t k = (size_t)(r - rs);
			double wall = 0;
			if (r->off)
				continue;
			if (k == 0 && !quiet_since(r, ps->recheck_detail, sizeof(ps->recheck_detail))) {
				ps->outputs_ok = false;
				break;
			}
			st = turn(&c, r, s, round_poison[i % 2], &wall, err);
			if (st && base_drop(r, res, st, err))
				continue;
			if (st)
				goto out;
			mark_idle(r);
			if (c.sr->n_times < 1 || !(c.sr->time_ns[0] > 0) || !(wall > 0)) {
				st = kf_err_set(err, KF_ERR_RUNTIME, "%s: the worker returned no time",
						r->what);
				goto out;
			}
			/* the cpu clock that counts is the parent's around the step; the worker's is kept
			 * beside it (a candidate runs in that process and could bend it) */
			double sample = c.cuda ? c.sr->time_ns[0] : wall;
			r->timed->samples[r->timed->n++] = sample;
			total_ns[k] += sample;
			if (k == 0 && n_worker < KF_PROFILE_MAX_SAMPLES)
				worker_ns[n_worker++] = c.sr->time_ns[0];
			snprintf(r->timed->timing_source, sizeof(r->timed->timing_source), "%s",
				 c.sr->timing_source);
			r->timed->kernels_seen = c.sr->kernels_seen;
		}
		if (!ps->outputs_ok)
			break;
		/* every kernel still timed must meet the rule */
		enum kf_stop_reason worst = KF_STOP_CONTINUE;
		bool all = true;
		for (size_t k = 0; k < n_run && all; k++) {
			enum kf_stop_reason w;
			if (rs[k].off)
				continue;
			w = kf_stop_rule_check(&rule, rs[k].timed->samples, rs[k].timed->n, total_ns[k]);
			all = w != KF_STOP_CONTINUE;
			worst = w > worst ? w : worst;
		}
		ps->stop = all ? worst : KF_STOP_MAX_SAMPLES;
		/* checked: a share picked now, after the launches, and always the last round */
		bool last = all || i + 1 == KF_PROFILE_MAX_SAMPLES;
		if (last || kf_rng_below(&c.pick, CHECK_EVERY) == 0) {
			for (size_t k = 0; k < n_run && !st; k++) {
				if (rs[k].off || rs[k].aa)
					continue;
				st = read_back(&c, &rs[k], s, err);
				if (st && base_drop(&rs[k], res, st, err))
					st = KF_OK;
			}
			if (st)
				goto out;
			for (size_t k = 2; k < n_run; k++)
				if (!rs[k].off && is_base(&rs[k]))
					base_recheck(t, &rs[k], &rs[1], s, c.numel, res);
			check_round(&c, s, i, ps);
			ps->n_checked++;
			for (size_t k = 0; k < n_run; k++)
				mark_idle(&rs[k]); /* reading back is not the candidate's time */
		}
		if (last)
			break;
	}
	if (!ps->outputs_ok)
		goto out; /* the verdict; no times worth reporting */
	if (n_worker) {
		struct kf_stats ws;
		if (!kf_stats_compute(worker_ns, n_worker, &ws, err))
			ps->cand.worker_median_ns = ws.median;
	}
	for (size_t k = 0; k < n_run; k++) {
		if (rs[k].off)
			continue;
		st = kf_stats_compute(rs[k].timed->samples, rs[k].timed->n, &rs[k].timed->stats, err);
		if (st)
			goto out;
	}
	{
		struct kf_boot_opts bo = {10000, kf_mix64(o->seed ^ 0xb007), 0.95, true};
		double floor = c.cuda ? BAND_FLOOR_GPU : BAND_FLOOR_CPU;
		st = kf_boot_speedup(ps->ref.samples, ps->ref.n, ps->cand.samples, ps->cand.n, &bo,
				     &ps->speedup, err);
		/* the A/A run: the reference against its twin, under the same protocol, same rounds */
		if (!st && ps->aa.n) {
			st = kf_boot_speedup(ps->ref.samples, ps->ref.n, ps->aa.samples, ps->aa.n, &bo,
					     &ps->aa_ci, err);
			ps->has_aa = !st;
		}
		ps->noise_band = floor;
		/* the systematic difference two workers running the same kernel show (the A/A point's
		 * distance from 1), never under the floor; the candidate's own noise is in its interval */
		if (ps->has_aa)
			ps->noise_band = fmax(floor, fabs(ps->aa_ci.point - 1.0));
		ps->speedup.band = ps->noise_band;
		for (size_t k = 2; k < n_run && !st; k++) {
			int b = rs[k].base;
			if (rs[k].off || !is_base(&rs[k]))
				continue;
			st = kf_boot_speedup(ps->bases[b].samples, ps->bases[b].n, ps->cand.samples,
					     ps->cand.n, &bo, &ps->speedup_bases[b], err);
			ps->speedup_bases[b].band = ps->noise_band;
			ps->base_timed[b] = !st;
			/* the single-baseline fields of before: the first baseline timed */
			if (!st && !ps->has_base) {
				ps->has_base = true;
				ps->base = ps->bases[b];
				ps->speedup_base = ps->speedup_bases[b];
			}
		}
		if (st)
			goto out;
	}
	ps->flops = 0;
	ps->bytes = 0;
	kf_task_flops(t, shape, &ps->flops);
	kf_task_bytes(t, shape, &ps->bytes);
	if (res->has_peaks && (ps->flops > 0 || ps->bytes > 0)) {
		struct kf_err e2 = KF_ERR_INIT;
		if (!kf_roofline_eval(ps->flops, ps->bytes, first_output(t)->dtype, &res->peaks,
				      ps->cand.stats.median, &ps->roof, &e2)) {
			ps->has_roof = true;
			ps->below_floor = ps->cand.stats.median < ps->roof.floor_ns;
		}
	}
out:
	for (int s = 0; s < MAX_SETS; s++)
		for (size_t b = 0; b < KF_MAX_BUFFERS; b++)
			free(c.in[s][b]);
	for (size_t k = 0; k < n_run; k++) {
		kf_session_end(rs[k].s, NULL);
		rs[k].s = NULL;
		kf_plan_free(rs[k].plan);
		rs[k].plan = NULL;
	}
	free(worker_ns);
	free(c.sr);
	return st;
}

/* An implausible shape is timed again in fresh workers with the order reversed; the less favourable of
 * the two speedups is the result, the other is reported beside it (retime). */
static enum kf_status retime(const struct kf_task *t, struct runner *rs, size_t n_run,
			     const struct kf_profile_opts *o, const struct kf_shape *shape,
			     struct kf_profile_shape *ps, struct kf_profile_result *res, struct kf_err *err)
{
	struct kf_profile_shape *again = calloc(1, sizeof(*again));
	struct runner copy[3 + KF_PROFILE_MAX_BASELINES];
	enum kf_status st;
	size_t used;
	if (!again)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	/* the first run, kept aside while the runners' timed slots (in ps) fill again */
	*again = *ps;
	memcpy(copy, rs, n_run * sizeof(*rs));
	for (size_t k = 0; k < n_run; k++) {
		memset(copy[k].timed, 0, sizeof(*copy[k].timed));
		copy[k].idle_cpu_ns = copy[k].idle_from_ns = 0;
		copy[k].setup_threads = 0;
	}
	ps->has_base = false;
	st = profile_shape(t, copy, n_run, o, shape, true, ps, res, err);
	if (!st && ps->outputs_ok) {
		/* ps: the reversed run; again: the first. Keep the less favourable as the result. */
		if (again->speedup.lo < ps->speedup.lo) {
			struct kf_ci second = ps->speedup;
			*ps = *again;
			ps->retime = second;
		} else {
			ps->retime = again->speedup;
		}
		ps->retimed = true;
		used = strlen(res->flags);
		snprintf(res->flags + used, sizeof(res->flags) - used,
			 "; re-timed in fresh workers in reverse order: %.2fx and %.2fx, the lower kept",
			 ps->speedup.point, ps->retime.point);
	}
	free(again);
	return st;
}

size_t kf_profile_static_resources(const struct kf_task *t, const struct kf_kfile *k,
				   const struct kf_shape *shape, const char *arch, struct kf_launch_res **out)
{
	struct kf_compile_opts co = {0};
	struct kf_compiled *c = NULL;
	struct kf_plan *p = NULL;
	struct kf_err e = KF_ERR_INIT;
	size_t n = 0;

	*out = NULL;
	co.backend = KF_BACKEND_CUDA;
	co.arch = arch;
	if (kf_compile(k, &co, &c, &e) || kf_plan_make(k, t, shape, &p, &e))
		goto out;
	*out = calloc(p->n_launches, sizeof(**out));
	if (!*out)
		goto out;
	n = p->n_launches;
	for (size_t i = 0; i < p->n_launches; i++) {
		struct kf_launch_res *lr = &(*out)[i];
		const struct kf_plan_launch *pl = &p->launches[i];
		snprintf(lr->kernel, sizeof(lr->kernel), "%s", pl->kernel);
		lr->block_threads = (int)(pl->block[0] * pl->block[1] * pl->block[2]);
		lr->regs = -1;
		lr->smem_bytes = (int)pl->smem_bytes;
		lr->smem_static_bytes = -1;
		for (size_t j = 0; j < c->n_kernels; j++)
			if (!strcmp(c->kernels[j].name, pl->kernel)) {
				lr->regs = c->kernels[j].registers;
				lr->smem_static_bytes = c->kernels[j].smem_static_bytes;
				lr->smem_bytes += c->kernels[j].smem_static_bytes;
				lr->spill_bytes =
				    c->kernels[j].spill_store_bytes + c->kernels[j].spill_load_bytes;
			}
		lr->has_occ = !kf_occupancy(arch, lr->block_threads, lr->regs > 0 ? lr->regs : 0,
					    lr->smem_bytes, &lr->occ, &e);
	}
out:
	kf_plan_free(p);
	kf_compiled_free(c);
	return n;
}

enum kf_status kf_profile_run(const struct kf_task *t, const struct kf_kfile *k,
			      const struct kf_profile_opts *o, struct kf_profile_result **out,
			      struct kf_err *err)
{
	struct kf_profile_result *res = calloc(1, sizeof(*res));
	struct runner rs[3 + KF_PROFILE_MAX_BASELINES];
	struct kf_base_prep preps[KF_PROFILE_MAX_BASELINES];
	struct kf_compile_opts co = {0};
	struct kf_kfile *ref_kf = NULL;
	struct kf_compiled *cand_c = NULL, *ref_c = NULL;
	const struct kf_shape *shapes;
	size_t n_shapes, n_run;
	enum kf_status st;
	struct kf_err e2 = KF_ERR_INIT;

	*out = NULL;
	if (!res)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	memset(rs, 0, sizeof(rs));
	memset(preps, 0, sizeof(preps));
	res->backend = o->backend;
	snprintf(res->clock, sizeof(res->clock), "%s", o->backend == KF_BACKEND_CUDA ? "gpu" : "cpu");
	snprintf(res->arch, sizeof(res->arch), "%s",
		 o->device && o->device->arch[0] && o->backend == KF_BACKEND_CUDA ? o->device->arch
										  : "sm_90");
	if (o->backend == KF_BACKEND_CUDA && o->device) {
		if (kf_peaks_from_device(o->device->name, o->device->arch, o->device->sm_count,
					 o->device->sm_clock_khz, o->device->mem_clock_khz,
					 o->device->mem_bus_width_bits, &res->peaks, &e2) == KF_OK)
			res->has_peaks = true;
		else {
			const struct kf_peaks *p = kf_peaks_table_guess(o->device->name, o->device->arch);
			if (p) {
				res->peaks = *p;
				res->has_peaks = true;
			}
		}
	}
	/* the cpu backend times the largest public shape: GPU-sized timing shapes take minutes on fibers */
	if (o->backend == KF_BACKEND_CUDA || o->all_timing_shapes) {
		shapes = t->shapes_timing;
		n_shapes = t->n_timing;
	} else {
		size_t best = 0;
		double best_sz = -1;
		for (size_t i = 0; i < t->n_public; i++) {
			double sz = 1;
			for (size_t d = 0; d < t->shapes_public[i].n; d++)
				sz *= (double)t->shapes_public[i].values[d];
			if (sz > best_sz) {
				best_sz = sz;
				best = i;
			}
		}
		shapes = &t->shapes_public[best];
		n_shapes = t->n_public ? 1 : 0;
	}
	co.backend = o->backend;
	co.arch = o->backend == KF_BACKEND_CUDA ? res->arch : NULL;
	if ((st = kf_compile(k, &co, &cand_c, err)))
		goto out;
	if ((st = kf_kfile_load(t->reference, &ref_kf, err)) || (st = kf_kfile_bind(ref_kf, t, err)) ||
	    (st = kf_compile(ref_kf, &co, &ref_c, err))) {
		kf_err_prefix(err, "reference");
		goto out;
	}
	/* every baseline verified (or its cached verdict) before any is timed */
	kf_profile_baselines_prepare(t, o, res->arch, res, preps);
	res->shapes = calloc(n_shapes ? n_shapes : 1, sizeof(*res->shapes));
	if (!res->shapes) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	res->timed_outputs_ok = true;
	for (size_t i = 0; i < n_shapes; i++) {
		struct kf_profile_shape *ps = &res->shapes[i];
		ps->is_timing_shape = shapes == t->shapes_timing;
		rs[0] = (struct runner){.what = "candidate",
					.comp = cand_c,
					.kf = (struct kf_kfile *)k,
					.timed = &ps->cand,
					.base = -1,
					.watch = true};
		rs[1] = (struct runner){
		    .what = "reference", .comp = ref_c, .kf = ref_kf, .timed = &ps->ref, .base = -1};
		n_run = 2;
		for (size_t b = 0; b < res->n_baselines; b++)
			if (preps[b].b && res->baselines[b].status == KF_PROFILE_BASE_TIMED)
				rs[n_run++] = (struct runner){
				    .what = res->baselines[b].name,
				    .comp = preps[b].comp,
				    .kf = preps[b].kf,
				    .lib = preps[b].b->kind == KF_BASELINE_LIBRARY ? preps[b].b : NULL,
				    .base = (int)b,
				    .timed = &ps->bases[b]};
		/* the A/A run's twin of the reference, in its own worker (last: its own place in the order)
		 */
		rs[n_run++] = (struct runner){.what = "reference (A/A)",
					      .comp = ref_c,
					      .kf = ref_kf,
					      .timed = &ps->aa,
					      .base = -1,
					      .aa = true};
		st = profile_shape(t, rs, n_run, o, &shapes[i], false, ps, res, err);
		if (st)
			goto out;
		res->n_shapes++;
		if (!ps->outputs_ok) {
			res->timed_outputs_ok = false;
			continue;
		}
		if (ps->below_floor || ps->speedup.point > 10) {
			res->implausible = true;
			size_t used = strlen(res->flags);
			snprintf(res->flags + used, sizeof(res->flags) - used, "%s%s at shape %zu",
				 used ? "; " : "",
				 ps->below_floor ? "faster than the roofline floor" : "speedup over 10x", i);
			if ((st = retime(t, rs, n_run, o, &shapes[i], ps, res, err)))
				goto out;
		}
	}
	if (n_shapes)
		res->n_launches = kf_profile_static_resources(t, k, &shapes[0], res->arch, &res->launches);
	if (res->n_shapes) {
		struct kf_perf_summary s;
		struct kf_buf b = KF_BUF_INIT(sizeof(res->text) - 1);
		const struct kf_profile_shape *ps = &res->shapes[0];
		memset(&s, 0, sizeof(s));
		s.time_ns = ps->cand.stats.median;
		s.iqr_ns = ps->cand.stats.iqr;
		s.n_samples = ps->cand.n;
		s.timing_source = ps->cand.timing_source;
		s.has_ref = true;
		s.ref_time_ns = ps->ref.stats.median;
		s.has_speedup = true;
		s.speedup = ps->speedup;
		s.has_roofline = ps->has_roof;
		s.roof = ps->roof;
		s.registers = s.spill_bytes = s.smem_bytes = -1;
		if (res->n_launches) {
			s.has_occupancy = res->launches[0].has_occ;
			s.occ = res->launches[0].occ;
			s.registers = res->launches[0].regs;
			s.spill_bytes = res->launches[0].spill_bytes;
			s.smem_bytes = res->launches[0].smem_bytes;
		}
		kf_perf_text(&s, &b);
		snprintf(res->text, sizeof(res->text), "%s", b.data);
		kf_buf_release(&b);
	}
out:
	kf_compiled_free(cand_c);
	kf_compiled_free(ref_c);
	kf_kfile_free(ref_kf);
	kf_profile_baselines_release(preps, KF_PROFILE_MAX_BASELINES);
	if (st) {
		kf_profile_result_free(res);
		return st;
	}
	*out = res;
	return KF_OK;
}

void kf_profile_result_free(struct kf_profile_result *r)
{
	if (!r)
		return;
	free(r->shapes);
	free(r->launches);
	free(r);
}
