/* kforge regress: the regression decision. A kernel is slower than its baseline only when the whole 95%
 * bootstrap interval of (current median / baseline - 1) lies above the threshold, so run-to-run noise
 * cannot fail a build while a real slowdown beyond the threshold does. Pure: no I/O, no device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/profiler.h"
#include "regress/regress.h"

enum kf_status kf_regress_compare(const double *samples_ns, size_t n, const struct kf_regress_baseline *b,
				  double threshold, uint64_t seed, uint32_t resamples,
				  struct kf_regress_cmp *out, struct kf_err *err)
{
	struct kf_boot_opts bo = {resamples, seed, 0.95, false};
	struct kf_ci med;
	double base_ns, base_lo_ns, base_hi_ns;
	enum kf_status st;

	memset(out, 0, sizeof(*out));
	if (!samples_ns || n < 5)
		return kf_err_set(err, KF_ERR_INVALID, "a regression check needs at least 5 samples, got %zu",
				  n);
	if (!b || !(b->median_us > 0) || !isfinite(b->median_us))
		return kf_err_set(err, KF_ERR_INVALID, "the baseline median must be a positive number");
	if (!(threshold >= 0) || !isfinite(threshold))
		return kf_err_set(err, KF_ERR_INVALID, "the threshold must be a non-negative number");
	if ((st = kf_boot_median(samples_ns, n, &bo, &med, err)))
		return st;
	out->median_ns = med.point;
	out->med_lo_ns = med.lo;
	out->med_hi_ns = med.hi;

	/* A baseline recorded with its interval is uncertain too: pair the fast end of one with the slow end
	 * of the other so the interval of the change covers both runs' noise (conservative for failing). */
	base_ns = b->median_us * 1e3;
	base_lo_ns = base_hi_ns = base_ns;
	if (b->has_ci && b->ci_lo_us > 0 && b->ci_lo_us <= b->median_us && b->ci_hi_us >= b->median_us) {
		base_lo_ns = b->ci_lo_us * 1e3;
		base_hi_ns = b->ci_hi_us * 1e3;
	}
	out->change = out->median_ns / base_ns - 1;
	out->change_lo = out->med_lo_ns / base_hi_ns - 1;
	out->change_hi = out->med_hi_ns / base_lo_ns - 1;
	out->regression = out->change_lo > threshold;
	out->improvement = out->change_hi < 0;
	return KF_OK;
}
