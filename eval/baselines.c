/* The task's baselines in an evaluation outcome (eval/eval.h): what became of each one, and at every timed
 * shape the candidate's speedup over each baseline that was timed, either interleaved with the candidate
 * (kforge profile, regress, bench --from-dir) or, in a search, chained through the reference from one
 * session that timed the baselines for the whole run (kf_eval_baselines_time): ref/cand from the
 * candidate's session times base/ref from the baselines' session, with a two-session bootstrap interval
 * (kf_boot_ratio_product). */
#include <stdio.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/eval_int.h"

/* The one decision "the candidate is significantly faster than this baseline", for interleaved and chained
 * intervals alike, at the candidate's timed shape ps (the reference's is eval.c's fill_timings). Today the
 * interval's rule; the A/A-calibrated noise band of ps replaces it here. */
static bool faster_than(const struct kf_ci *speedup, const struct kf_profile_shape *ps)
{
	(void)ps;
	return kf_ci_significant(speedup);
}

enum kf_status kf_eval_baselines_time(const struct kf_task *t, const struct kf_eval_opts *o,
				      struct kf_profile_result **out, struct kf_err *err)
{
	struct kf_profile_opts po;
	struct kf_kfile *kf = NULL;
	enum kf_status st;

	*out = NULL;
	kf_profile_opts_init(&po);
	po.backend = o->backend;
	po.device = o->backend == KF_BACKEND_CUDA ? o->device : NULL;
	po.seed = o->seed ? o->seed : 1;
	po.worker_path = o->worker_path;
	po.rule = o->rule;
	if (po.rule.min_samples) {
		/* one session for the whole run: every candidate's interval over a baseline carries its
		 * noise, so it takes three times a candidate's samples (the profiler's defaults otherwise: on
		 * a GPU they go to 400 samples already) */
		po.rule.min_samples *= 3;
		po.rule.min_total_ns *= 3;
		po.rule.max_samples = po.rule.max_samples * 3 < KF_PROFILE_MAX_SAMPLES
					  ? po.rule.max_samples * 3
					  : KF_PROFILE_MAX_SAMPLES;
		po.rule.max_total_ns *= 3;
	}
	po.all_timing_shapes = o->all_timing_shapes;
	/* the reference as the candidate: its session holds reference, reference and every baseline */
	if ((st = kf_kfile_load(t->reference, &kf, err)) || (st = kf_kfile_bind(kf, t, err))) {
		kf_kfile_free(kf);
		return kf_err_prefix(err, "reference");
	}
	st = kf_profile_run(t, kf, &po, out, err);
	kf_kfile_free(kf);
	return st;
}

void kf_eval_baselines_status(struct kf_eval_outcome *out, const struct kf_eval_opts *o)
{
	const struct kf_profile_result *from = o->baselines_once ? o->baselines_once : out->profile;
	out->baselines_chained = o->baselines_once != NULL;
	out->n_baselines = 0;
	if (!from)
		return;
	out->n_baselines = from->n_baselines;
	memcpy(out->baselines, from->baselines, from->n_baselines * sizeof(out->baselines[0]));
}

static bool same_shape(const struct kf_shape *a, const struct kf_shape *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->names[i], b->names[i]) || a->values[i] != b->values[i])
			return false;
	return true;
}

enum kf_status kf_eval_baselines_at(const struct kf_eval_outcome *out, const struct kf_eval_opts *o,
				    const struct kf_profile_shape *ps, size_t shape_no,
				    struct kf_eval_timing *t, struct kf_err *err)
{
	const struct kf_profile_result *once = o->baselines_once;
	const struct kf_profile_shape *ps0 = NULL;

	t->n_baselines = 0;
	if (!once) {
		for (size_t b = 0; b < out->n_baselines; b++) {
			struct kf_eval_baseline_time *x;
			if (!ps->base_timed[b])
				continue;
			x = &t->baselines[t->n_baselines++];
			*x = (struct kf_eval_baseline_time){out->baselines[b].name,
							    out->baselines[b].library,
							    b,
							    ps->bases[b].stats.median,
							    ps->speedup_bases[b],
							    faster_than(&ps->speedup_bases[b], ps),
							    false};
		}
		return KF_OK;
	}
	for (size_t i = 0; i < once->n_shapes && !ps0; i++)
		if (same_shape(&once->shapes[i].shape, &ps->shape))
			ps0 = &once->shapes[i];
	if (!ps0)
		return KF_OK; /* the baselines were not timed at this shape */
	for (size_t b = 0; b < out->n_baselines; b++) {
		struct kf_boot_opts bo = {0, kf_mix64(out->seed ^ (0xba5e11e5ull + 16 * shape_no + b)), 0.95,
					  true};
		struct kf_eval_baseline_time *x;
		struct kf_ci ci;
		enum kf_status st;
		if (!ps0->base_timed[b])
			continue;
		/* base/cand = (ref/cand, this session) x (base/ref, the baselines' session) */
		st = kf_boot_ratio_product(ps->ref.samples, ps->cand.samples, ps->ref.n, ps->cand.n,
					   ps0->bases[b].samples, ps0->ref.samples, ps0->bases[b].n,
					   ps0->ref.n, &bo, &ci, err);
		if (st)
			return st;
		x = &t->baselines[t->n_baselines++];
		/* its time through the reference, in this session's terms, so that the kernel's time x the
		 * speedup is the baseline's: the other session's absolute time was taken at another moment */
		*x = (struct kf_eval_baseline_time){out->baselines[b].name,
						    out->baselines[b].library,
						    b,
						    ps->ref.stats.median *
							(ps0->bases[b].stats.median / ps0->ref.stats.median),
						    ci,
						    faster_than(&ci, ps),
						    true};
	}
	return KF_OK;
}
