/* kforge regress: the regression decision. A kernel is slower than its baseline only when the whole 95%
 * bootstrap interval of (current median / baseline - 1) lies above the threshold, so run-to-run noise
 * cannot fail a build while a real slowdown beyond the threshold does. Pure: no I/O, no device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/profiler.h"
#include "regress.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum kf_status kf_regress_compare(const double *samples_ns, size_t n, const struct kf_regress_baseline *b,
				  double threshold, uint64_t seed, uint32_t resamples,
				  struct kf_regress_cmp *out, struct kf_err *err)
{
	struct kf_profiler_rng rng;
	double *draw, *scratch, *meds, base_ns, base_lo_ns, base_hi_ns;
	const double level = 0.95;

	memset(out, 0, sizeof(*out));
	if (!samples_ns || n < 5)
		return kf_err_set(err, KF_ERR_INVALID, "a regression check needs at least 5 samples, got %zu",
				  n);
	if (!b || !(b->median_us > 0) || !isfinite(b->median_us))
		return kf_err_set(err, KF_ERR_INVALID, "the baseline median must be a positive number");
	if (!(threshold >= 0) || !isfinite(threshold))
		return kf_err_set(err, KF_ERR_INVALID, "the threshold must be a non-negative number");
	for (size_t i = 0; i < n; i++)
		if (!(samples_ns[i] > 0) || !isfinite(samples_ns[i]))
			return kf_err_set(err, KF_ERR_INVALID, "sample %zu is not a positive time", i);
	if (!resamples)
		resamples = 4000;
	draw = malloc(n * sizeof(*draw));
	scratch = malloc(n * sizeof(*scratch));
	meds = malloc((size_t)resamples * sizeof(*meds));
	if (!draw || !scratch || !meds) {
		free(draw);
		free(scratch);
		free(meds);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory for %u bootstrap resamples", resamples);
	}
	out->median_ns = kf_stats_median_scratch(samples_ns, n, scratch);
	kf_profiler_rng_seed(&rng, seed);
	for (uint32_t r = 0; r < resamples; r++) {
		for (size_t i = 0; i < n; i++)
			draw[i] = samples_ns[kf_profiler_rng_below(&rng, n)];
		meds[r] = kf_stats_median_scratch(draw, n, scratch);
	}
	qsort(meds, resamples, sizeof(*meds), cmp_double);
	out->med_lo_ns = kf_stats_quantile_sorted(meds, resamples, (1 - level) / 2);
	out->med_hi_ns = kf_stats_quantile_sorted(meds, resamples, (1 + level) / 2);
	free(draw);
	free(scratch);
	free(meds);

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
