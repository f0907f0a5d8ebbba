/* Private to eval/: the task's baselines in an outcome (eval/baselines.c), which eval.c's pipeline fills
 * once the candidate is timed. */
#ifndef KF_EVAL_INT_H
#define KF_EVAL_INT_H

#include "eval/eval.h"

/* out->baselines[] and n_baselines: the candidate profile's list, or o->baselines_once's when set. */
void kf_eval_baselines_status(struct kf_eval_outcome *out, const struct kf_eval_opts *o);
/* t->baselines[] at the shape ps (the shape_no-th timed one) of the candidate's profile: its own baseline
 * times, or with o->baselines_once the chained speedups over the baselines timed there at the same shape.
 * Errors are the bootstrap's (KF_ERR_NOMEM, KF_ERR_INVALID for a non-positive time). */
enum kf_status kf_eval_baselines_at(const struct kf_eval_outcome *out, const struct kf_eval_opts *o,
				    const struct kf_profile_shape *ps, size_t shape_no,
				    struct kf_eval_timing *t, struct kf_err *err);

#endif
