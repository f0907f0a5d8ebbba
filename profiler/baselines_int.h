/* Private to the profiler: the baselines of a profile (profiler/baselines.c) verified, cached and made
 * into modules before timing.c times them beside the candidate and the reference. */
#ifndef KF_PROFILER_BASELINES_INT_H
#define KF_PROFILER_BASELINES_INT_H

#include "timing.h"

/* A baseline ready to time: its module, and its kernel file (NULL for a library call). */
struct kf_base_prep {
	const struct kf_baseline *b; /* NULL: not timed (see the result's status) */
	struct kf_compiled *comp;
	struct kf_kfile *kf;
};

/* Fills res->n_baselines and res->baselines[] (name, call, status) for every baseline of t, and
 * preps[i] for each that passed verification and built; never fails as a whole: a baseline that cannot
 * be used says why in its status. */
void kf_profile_baselines_prepare(const struct kf_task *t, const struct kf_profile_opts *o, const char *arch,
				  struct kf_profile_result *res, struct kf_base_prep *preps);
void kf_profile_baselines_release(struct kf_base_prep *preps, size_t n);

#endif
