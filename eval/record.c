/* An evaluation outcome as knowledge-base rows (eval/eval.h, kf_eval_record): the evaluation with the
 * standing verification's shape rows and one timing row per timed shape, in kb.h's vocabulary: clock
 * "cupti" | "cuda_event" | "cpu" | "model" (the cost model's prediction, docs/cost-model.md),
 * ci_lo_ms/ci_hi_ms the bootstrap interval of the candidate's median time, speedup_ci_lo/hi the interval of
 * the speedup, the toolchain the compiler id, shapes as compact JSON. */
#include <stdlib.h>

#include "eval/eval.h"
#include "json.h"
#include "kb/kb.h"

/* A shape of KF_MAX_DIMS dims with KF_NAME_MAX names and 64-bit values as JSON fits. */
#define SHAPE_JSON_MAX (KF_MAX_DIMS * (KF_NAME_MAX + 24) + 4)

/* Every baseline of the task at timing x, in the task's order: the timed ones with their times. Strings
 * are borrowed from o. */
static size_t timing_baselines(const struct kf_eval_outcome *o, const struct kf_eval_timing *x,
			       struct kf_kb_timing_baseline *out)
{
	size_t n = o->n_baselines < KF_PROFILE_MAX_BASELINES ? o->n_baselines : KF_PROFILE_MAX_BASELINES;
	for (size_t b = 0; b < n; b++) {
		const struct kf_profile_baseline *pb = &o->baselines[b];
		const struct kf_eval_baseline_time *bt = NULL;
		for (size_t j = 0; j < x->n_baselines; j++)
			if (x->baselines[j].index == b)
				bt = &x->baselines[j];
		out[b] = (struct kf_kb_timing_baseline){.name = pb->name,
							.kind = pb->library ? "library" : "kernel",
							.status = kf_profile_base_status_name(pb->status),
							.reason = pb->reason};
		if (bt) {
			out[b].median_ms = bt->median_ns / 1e6;
			out[b].speedup = bt->speedup.point;
			out[b].speedup_ci_lo = bt->speedup.lo;
			out[b].speedup_ci_hi = bt->speedup.hi;
			out[b].significant = bt->significant;
			out[b].method = bt->chained ? "chained" : "interleaved";
		} else if (pb->status == KF_PROFILE_BASE_TIMED) {
			out[b].status = "skipped";
			out[b].reason = "not timed at this shape";
		}
	}
	return n;
}

enum kf_status kf_eval_record(struct kf_kb *kb, const struct kf_task *t, const struct kf_eval_outcome *o,
			      const struct kf_kb_candidate *cand, int64_t *cand_id, int64_t *eval_id,
			      struct kf_err *err)
{
	const struct kf_verify_result *vr = kf_eval_verification(o);
	struct kf_kb_shape_row *rows = calloc(vr->n_shapes + 1, sizeof(*rows));
	struct kf_kb_timing *tm = calloc(o->n_timings + 2, sizeof(*tm));
	struct kf_kb_timing_baseline(*bl)[KF_PROFILE_MAX_BASELINES] = calloc(o->n_timings + 1, sizeof(*bl));
	char(*dims)[SHAPE_JSON_MAX] = calloc(vr->n_shapes + o->n_timings + 2, sizeof(*dims));
	struct kf_kb_eval ke = {0};
	enum kf_status st;

	if (!rows || !tm || !dims || !bl) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < vr->n_shapes; i++) {
		const struct kf_shape_report *s = &vr->shapes[i];
		kf_json_shape_text(&s->shape, dims[i], sizeof(dims[i]));
		rows[i] = (struct kf_kb_shape_row){dims[i], kf_verdict_name(s->status), s->max_abs,
						   s->max_rel, s->detail};
	}
	for (size_t i = 0; i < o->n_timings; i++) {
		const struct kf_eval_timing *x = &o->timings[i];
		char *shape = dims[vr->n_shapes + i];
		kf_json_shape_text(&x->shape, shape, sizeof(dims[0]));
		tm[i] = (struct kf_kb_timing){.shape = shape,
					      .clock = x->source,
					      .n_samples = (int)x->n_samples,
					      .median_ms = x->median_ns / 1e6,
					      .iqr_ms = x->iqr_ns / 1e6,
					      .ci_lo_ms = x->median_ci.lo / 1e6,
					      .ci_hi_ms = x->median_ci.hi / 1e6,
					      .ref_median_ms = x->ref_median_ns / 1e6,
					      .speedup = x->speedup.point,
					      .speedup_ci_lo = x->speedup.lo,
					      .speedup_ci_hi = x->speedup.hi,
					      .noise_band = x->speedup.band,
					      .aa_lo = x->aa.lo,
					      .aa_hi = x->aa.hi};
		tm[i].n_baselines = timing_baselines(o, x, bl[i]);
		tm[i].baselines = bl[i];
	}
	/* the model clock's prediction, after the CPU clock's rows (the last row is the fitness's): times
	 * are the predicted ones, the interval is the point (a prediction has no sampling interval), the
	 * band and A/A are the model's own calibration (docs/cost-model.md) */
	size_t n_tm = o->n_timings;
	if (o->timed && o->model) {
		const struct kf_model_result *m = o->model;
		char *shape = dims[vr->n_shapes + n_tm];
		kf_json_shape_text(&m->shape, shape, sizeof(dims[0]));
		tm[n_tm++] = (struct kf_kb_timing){.shape = shape,
						   .clock = "model",
						   .n_samples = 1,
						   .median_ms = m->cand.pred.total_ns / 1e6,
						   .ci_lo_ms = m->cand.pred.total_ns / 1e6,
						   .ci_hi_ms = m->cand.pred.total_ns / 1e6,
						   .ref_median_ms = m->ref.pred.total_ns / 1e6,
						   .speedup = m->speedup,
						   .speedup_ci_lo = m->speedup,
						   .speedup_ci_hi = m->speedup,
						   .noise_band = m->band,
						   .aa_lo = m->aa,
						   .aa_hi = m->aa};
	}
	ke.backend = kf_backend_name(o->backend);
	ke.arch = o->arch;
	ke.toolchain = o->toolchain;
	ke.device = o->device;
	ke.dtype = kf_eval_task_dtype(t);
	ke.verdict = kf_verdict_name(o->verdict);
	ke.reason = o->reason;
	ke.seed = (int64_t)o->seed;
	ke.speedup = o->timed ? o->speedup : 0;
	ke.wall_ms = o->wall_ms;
	ke.n_shapes = vr->n_shapes;
	ke.shapes = rows;
	st = kf_kb_record_step(kb, cand, &ke, tm, n_tm, cand_id, eval_id, err);
out:
	free(rows);
	free(tm);
	free(bl);
	free(dims);
	return st;
}
