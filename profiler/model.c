/* The cost pass: see model.h. Each kernel runs in its own worker with its instrumented module (the same
 * sandbox as the sanitizer pass), once, with the counters on; nothing it writes is read back (a sampled
 * launch's outputs are incomplete), so the pass never decides a verdict: verification did. */
#include "profiler/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "verifier/verifier.h"

void kf_model_opts_init(struct kf_model_opts *o)
{
	memset(o, 0, sizeof(*o));
}

static uint64_t shape_bytes(const struct kf_task *t, const struct kf_shape *s)
{
	uint64_t total = 0;
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t ne;
		struct kf_err e = KF_ERR_INIT;
		if (kf_task_numel(t, i, s, &ne, &e))
			return UINT64_MAX;
		total += (uint64_t)ne * kf_dtype_size(t->tensors[i].dtype);
	}
	return total;
}

/* The task's first timing shape; the largest public one when there is none or it is too large here. */
static const struct kf_shape *pick_shape(const struct kf_task *t, bool *is_timing)
{
	*is_timing = false;
	if (t->n_timing && shape_bytes(t, &t->shapes_timing[0]) <= KF_MODEL_MAX_TENSOR_BYTES) {
		*is_timing = true;
		return &t->shapes_timing[0];
	}
	const struct kf_shape *best = NULL;
	uint64_t best_b = 0;
	for (size_t i = 0; i < t->n_public; i++) {
		uint64_t b = shape_bytes(t, &t->shapes_public[i]);
		if (b <= KF_MODEL_MAX_TENSOR_BYTES && (!best || b > best_b)) {
			best = &t->shapes_public[i];
			best_b = b;
		}
	}
	return best;
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

struct run {
	struct kf_compiled *mod;
	struct kf_plan *plan;
};

/* The instrumented run of kf at shape: counts into mk. */
static enum kf_status run_kernel(const struct kf_task *t, const struct kf_kfile *kf, const char *what,
				 const struct kf_shape *shape, const struct kf_model_opts *o,
				 uint64_t sample_seed, struct kf_model_kernel *mk, struct run *keep,
				 struct kf_err *err)
{
	struct kf_compile_opts co = {.backend = KF_BACKEND_CPU, .arch = o->target->arch, .instrument = true};
	struct kf_session *s = NULL;
	struct kf_step_result *r = NULL;
	struct kf_step step;
	int64_t in_off[KF_MAX_BUFFERS];
	uint64_t numel[KF_MAX_BUFFERS];
	enum kf_status st;
	double t0 = kf_now_ms();

	memset(keep, 0, sizeof(*keep));
	if ((st = kf_compile(kf, &co, &keep->mod, err))) {
		if (keep->mod && keep->mod->log[0])
			kf_err_set(err, st, "the instrumented build failed: %.300s", keep->mod->log);
		goto out;
	}
	if ((st = kf_plan_make(kf, t, shape, &keep->plan, err)))
		goto out;
	if (keep->plan->n_launches > KF_COST_MAX_LAUNCHES) {
		st = kf_err_set(err, KF_ERR_INVALID, "a plan of %zu launches (the model takes %d)",
				keep->plan->n_launches, KF_COST_MAX_LAUNCHES);
		goto out;
	}
	/* the arena: every input once (outputs are never read back) */
	size_t arena = 0;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		in_off[b] = -1;
		numel[b] = 0;
		if (b >= t->n_tensors)
			continue;
		int64_t ne;
		if ((st = kf_task_numel(t, b, shape, &ne, err)))
			goto out;
		numel[b] = (uint64_t)ne;
		if (t->tensors[b].role != KF_ROLE_OUTPUT) {
			in_off[b] = (int64_t)arena;
			arena += round_up((size_t)ne * kf_dtype_size(t->tensors[b].dtype), 64);
		}
	}
	struct kf_worker_opts wo = {.backend = KF_BACKEND_CPU,
				    .worker_path = o->worker_path,
				    .start_timeout_ms = 30000,
				    .deadline_ms = o->deadline_ms};
	if ((st = kf_session_start(&wo, keep->mod, keep->plan, arena ? arena : 4096, &s, err)))
		goto out;
	uint8_t *a = kf_session_arena(s);
	struct kf_rng rng;
	kf_rng_seed(&rng, kf_mix64(o->seed ^ 0xc057));
	for (size_t b = 0; b < t->n_tensors && b < KF_MAX_BUFFERS; b++)
		if (in_off[b] >= 0)
			kf_inputs_fill(a + in_off[b], t->tensors[b].dtype, (size_t)numel[b], &t->tensors[b],
				       KF_INPUT_INIT, &rng);
	memset(&step, 0, sizeof(step));
	step.flags = KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COST;
	step.reps = 1;
	step.poison = 0x7fc07fc0u;
	step.canary = 0xc3a55a3cu;
	step.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 120000;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		step.in_off[b] = in_off[b];
		step.out_off[b] = -1;
	}
	step.cost.enable = 1;
	step.cost.l2_ways = 16;
	step.cost.l2_bytes = (uint64_t)o->target->l2_bytes;
	step.cost.access_budget = o->access_budget ? o->access_budget : KF_MODEL_DEFAULT_BUDGET;
	step.cost.sample_seed = sample_seed;
	if (!(r = malloc(sizeof(*r)))) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	if ((st = kf_session_step(s, &step, r, err)))
		goto out;
	if (r->status != KF_OK) {
		st = kf_err_set(err, r->status == KF_ERR_UNSUPPORTED ? KF_ERR_UNAVAILABLE : KF_ERR_RUNTIME,
				"the %s's instrumented run: %s: %.400s", what, kf_status_name(r->status),
				r->msg);
		goto out;
	}
	if (r->n_cost != keep->plan->n_launches) {
		st = kf_err_set(err, KF_ERR_PARSE, "the %s's worker counted %u launches of %zu", what,
				r->n_cost, keep->plan->n_launches);
		goto out;
	}
	mk->n = r->n_cost;
	memcpy(mk->counts, r->cost, mk->n * sizeof(mk->counts[0]));
	/* registers and static shared memory for the occupancy: the NVRTC compile for the target */
	struct kf_launch_res *lr = NULL;
	size_t nr = kf_profile_static_resources(t, kf, shape, o->target->arch, &lr);
	mk->has_res = nr == mk->n;
	for (size_t i = 0; i < mk->n; i++) {
		if (mk->has_res)
			mk->res[i] = lr[i];
		else {
			memset(&mk->res[i], 0, sizeof(mk->res[i]));
			snprintf(mk->res[i].kernel, sizeof(mk->res[i].kernel), "%s",
				 keep->plan->launches[i].kernel);
			mk->res[i].regs = -1;
			mk->res[i].smem_static_bytes = -1;
		}
	}
	free(lr);
	struct kf_cost_launch_in in[KF_COST_MAX_LAUNCHES];
	for (size_t i = 0; i < mk->n; i++)
		in[i] = (struct kf_cost_launch_in){.c = &mk->counts[i],
						   .regs = mk->res[i].regs,
						   .static_smem_bytes = mk->res[i].smem_static_bytes,
						   .kernel = keep->plan->launches[i].kernel};
	st = kf_cost_predict(o->target, in, mk->n, &mk->pred, err);
	if (st)
		kf_err_prefix(err, "%s", what);
out:
	free(r);
	kf_session_end(s, NULL);
	mk->run_ms = kf_now_ms() - t0;
	return st;
}

/* Sentences about what the candidate's counters show, worst first: uncoalesced global accesses, bank
 * conflicts, low occupancy in a latency-bound launch, hot atomics. Lines come from the module's debug
 * information (a sandboxed addr2line), when it can say. */
static void notes_for(const struct kf_kfile *kf, const struct run *run, struct kf_model_kernel *mk)
{
	char *o = mk->notes;
	size_t cap = sizeof(mk->notes), used = 0;
	int said = 0;
	o[0] = '\0';
	for (size_t i = 0; i < mk->n && said < 4; i++) {
		const struct kf_rt_cost *c = &mk->counts[i];
		const struct kf_cost_launch_pred *p = &mk->pred.launches[i];
		for (uint32_t k = 0; k < c->n_sites && k < KF_RT_COST_MAX_SITES && said < 4; k++) {
			const struct kf_rt_cost_site *si = &c->sites[k];
			if (!si->requests)
				continue;
			double per = (double)si->units / (double)si->requests;
			double bpr = (double)si->bytes / (double)si->requests;
			bool global = si->region == KF_RT_SAN_GLOBAL;
			double ideal = global ? ceil(bpr / 32.0) : 1.0;
			if (ideal < 1)
				ideal = 1;
			if (per < 2 * ideal && !(!global && per >= 2))
				continue;
			char where[96] = "";
			struct kf_rt_san_finding f;
			struct kf_san_where w;
			struct kf_err e = KF_ERR_INIT;
			memset(&f, 0, sizeof(f));
			f.kind = KF_RT_SAN_OOB;
			f.region = KF_RT_SAN_NOWHERE;
			f.cur.pc[0] = si->pc;
			if (!kf_cpu_san_locate(run->mod, kf->path ? kf->path : "kernel.cu", &f, &w, &e) &&
			    w.line > 0)
				snprintf(where, sizeof(where), " (line %d)", w.line);
			const char *what = si->op == KF_RT_SAN_STORE    ? "stores"
					   : si->op == KF_RT_SAN_ATOMIC ? "atomics"
									: "loads";
			int n;
			if (global) {
				const char *buf = si->index >= 0 && (size_t)si->index < run->plan->n_buffers
						      ? run->plan->buffers[si->index].name
						      : "?";
				n = snprintf(
				    o + used, cap - used,
				    "%s%s of `%s`%s use %.1f sectors per request where %.0f would do: "
				    "uncoalesced.",
				    used ? " " : "", what, buf, where, per, ideal);
			} else {
				n = snprintf(
				    o + used, cap - used,
				    "%sshared-memory %s%s take %.1f wavefronts per request: a %.0f-way bank "
				    "conflict.",
				    used ? " " : "", what, where, per, per);
			}
			if (n < 0 || (size_t)n >= cap - used)
				return;
			used += (size_t)n;
			said++;
		}
		if (p->bind == KF_COST_LATENCY && p->occupancy < 0.5 && said < 4) {
			int n = snprintf(o + used, cap - used,
					 "%slaunch %zu is latency-bound at %.0f%% occupancy (limited by %s).",
					 used ? " " : "", i + 1, 100 * p->occupancy, p->occ_limiter);
			if (n < 0 || (size_t)n >= cap - used)
				return;
			used += (size_t)n;
			said++;
		}
		if (p->bind == KF_COST_ATOMIC && said < 4) {
			int n = snprintf(o + used, cap - used,
					 "%slaunch %zu is bound by atomics (%.0f on its hottest address).",
					 used ? " " : "", i + 1, (double)c->atom_hot * p->scale);
			if (n < 0 || (size_t)n >= cap - used)
				return;
			used += (size_t)n;
			said++;
		}
	}
}

static void make_text(struct kf_model_result *m)
{
	char tc[32], tr[32];
	kf_format_ns(m->cand.pred.total_ns, tc, sizeof(tc));
	kf_format_ns(m->ref.pred.total_ns, tr, sizeof(tr));
	const struct kf_cost_launch_pred *p = &m->cand.pred.launches[0];
	for (size_t i = 1; i < m->cand.pred.n; i++)
		if (m->cand.pred.launches[i].total_ns > p->total_ns)
			p = &m->cand.pred.launches[i];
	snprintf(
	    m->text, sizeof(m->text),
	    "model time (cost model v%d for %s: predicted, not measured) %s; reference %s; predicted "
	    "speedup %.2fx (%s: A/A %.3fx, band %.0f%%); bound by %s; occupancy %.0f%%; %.1f sectors per "
	    "global load%s%s",
	    m->version, m->target->name, tc, tr, m->speedup,
	    m->significant ? "significant" : "not significant", m->aa, 100 * m->band,
	    kf_cost_limit_name(m->cand.pred.bind), 100 * p->occupancy, p->sectors_per_load,
	    m->cand.notes[0] ? "\n" : "", m->cand.notes);
}

enum kf_status kf_model_run(const struct kf_task *t, const struct kf_kfile *k, const struct kf_model_opts *o,
			    struct kf_model_result **out, struct kf_err *err)
{
	struct kf_model_opts oo = *o;
	struct kf_kfile *ref = NULL;
	struct run rc = {0}, rr = {0};
	enum kf_status st;
	double t0 = kf_now_ms();

	*out = NULL;
	const char *why = kf_cpu_sanitizer_unavailable();
	if (why)
		return kf_err_set(err, KF_ERR_UNAVAILABLE, "no model clock: %s", why);
	if (!oo.target)
		oo.target = kf_cost_target_default();
	struct kf_model_result *m = calloc(1, sizeof(*m));
	if (!m)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	snprintf(m->clock, sizeof(m->clock), "model");
	m->version = KF_COST_MODEL_VERSION;
	m->target = oo.target;
	const struct kf_shape *shape = pick_shape(t, &m->is_timing_shape);
	if (!shape) {
		st = kf_err_set(err, KF_ERR_INVALID, "the task has no shape small enough for the cost pass");
		goto out;
	}
	m->shape = *shape;
	/* the sampled blocks' positions: the parent's secret, the same for candidate and reference */
	uint64_t sample_seed = oo.sample_seed;
	if (!sample_seed && getrandom(&sample_seed, sizeof(sample_seed), 0) != (ssize_t)sizeof(sample_seed))
		sample_seed = kf_now_ns() ^ 0x5a3f;
	if ((st = run_kernel(t, k, "candidate", shape, &oo, sample_seed, &m->cand, &rc, err)))
		goto out;
	if ((st = kf_kfile_load(t->reference, &ref, err)) || (st = kf_kfile_bind(ref, t, err))) {
		kf_err_prefix(err, "reference");
		goto out;
	}
	if ((st = run_kernel(t, ref, "reference", shape, &oo, sample_seed, &m->ref, &rr, err)))
		goto out;
	/* the A/A twin: other blocks sampled, other inputs */
	struct run ra = {0};
	struct kf_model_opts o2 = oo;
	o2.seed = kf_mix64(oo.seed ^ 0xa1a1);
	st = run_kernel(t, ref, "reference (A/A)", shape, &o2, kf_mix64(sample_seed ^ 0xa1a1), &m->ref_aa,
			&ra, err);
	kf_compiled_free(ra.mod);
	kf_plan_free(ra.plan);
	if (st)
		goto out;
	m->speedup = m->cand.pred.total_ns > 0 ? m->ref.pred.total_ns / m->cand.pred.total_ns : 0;
	m->aa = m->ref_aa.pred.total_ns > 0 ? m->ref.pred.total_ns / m->ref_aa.pred.total_ns : 0;
	m->band = fabs(m->aa - 1.0) > KF_MODEL_BAND_FLOOR ? fabs(m->aa - 1.0) : KF_MODEL_BAND_FLOOR;
	m->significant = m->speedup > 1.0 + m->band;
	notes_for(k, &rc, &m->cand);
	notes_for(ref, &rr, &m->ref);
	make_text(m);
out:
	kf_compiled_free(rc.mod);
	kf_plan_free(rc.plan);
	kf_compiled_free(rr.mod);
	kf_plan_free(rr.plan);
	kf_kfile_free(ref);
	m->ms = kf_now_ms() - t0;
	if (st) {
		free(m);
		return st;
	}
	*out = m;
	return KF_OK;
}

void kf_model_result_free(struct kf_model_result *r)
{
	free(r);
}
