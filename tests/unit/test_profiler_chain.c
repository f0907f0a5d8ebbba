/* profiler/chain.c: the bootstrap interval of a speedup through an intermediary (a candidate over a baseline
 * timed once per search: ref/cand x base/ref). The point is the product of the two sessions' median ratios;
 * the interval covers the true product at about its level over many simulated searches, is wider than
 * either session's own, is the same for the same seed, and bad samples are refused. */
#include "profiler/profiler.h"
#include "testing.h"

/* n times around mean with a relative spread (log-normal-ish noise plus an occasional slow outlier). */
static void times(struct kf_rng *r, double *x, size_t n, double mean, double spread)
{
	for (size_t i = 0; i < n; i++) {
		double v = mean * exp(spread * kf_rng_normal(r));
		if (kf_rng_below(r, 20) == 0)
			v *= 1.5; /* a preempted sample */
		x[i] = v;
	}
}

static void test_point_is_the_product(void)
{
	double ref1[] = {100, 102, 98, 101, 99}, cand[] = {50, 51, 49, 50, 50};
	double base[] = {80, 81, 79, 80, 80}, ref0[] = {100, 100, 100, 100, 100};
	struct kf_boot_opts bo = {2000, 7, 0.95, true};
	struct kf_ci ci;
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_boot_ratio_product(ref1, cand, 5, 5, base, ref0, 5, 5, &bo, &ci, &err) == KF_OK, "%s",
	       err.msg);
	/* medians: 100/50 x 80/100 */
	CHECK_NEAR(ci.point, 1.6, 1e-12);
	CHECK(ci.lo <= ci.point && ci.point <= ci.hi);
	CHECK(ci.lo > 1.4 && ci.hi < 1.8);
	CHECK_NEAR(ci.level, 0.95, 1e-12);
}

static void test_deterministic_and_wider_than_each_session(void)
{
	struct kf_rng r;
	double ref1[30], cand[30], base[30], ref0[30];
	struct kf_boot_opts bo = {4000, 11, 0.95, true};
	struct kf_ci a, b, one, two;
	struct kf_err err = KF_ERR_INIT;
	kf_rng_seed(&r, 3);
	times(&r, ref1, 30, 100, 0.05);
	times(&r, cand, 30, 40, 0.05);
	times(&r, base, 30, 60, 0.05);
	times(&r, ref0, 30, 100, 0.05);
	CHECK(kf_boot_ratio_product(ref1, cand, 30, 30, base, ref0, 30, 30, &bo, &a, &err) == KF_OK);
	CHECK(kf_boot_ratio_product(ref1, cand, 30, 30, base, ref0, 30, 30, &bo, &b, &err) == KF_OK);
	CHECK(a.lo == b.lo && a.hi == b.hi && a.point == b.point);
	/* each session alone, through the ordinary speedup bootstrap */
	CHECK(kf_boot_speedup(ref1, 30, cand, 30, &bo, &one, &err) == KF_OK);
	CHECK(kf_boot_speedup(base, 30, ref0, 30, &bo, &two, &err) == KF_OK);
	CHECK_NEAR(a.point, one.point * two.point, 1e-9 * a.point);
	double w = log(a.hi / a.lo), w1 = log(one.hi / one.lo), w2 = log(two.hi / two.lo);
	CHECKF(w > w1 && w > w2, "chained %g, sessions %g and %g (log widths)", w, w1, w2);
	CHECKF(w < w1 + w2 + 1e-9, "chained %g wider than the sum %g", w, w1 + w2);
}

/* 200 simulated searches: the true product is 0.4 x 0.6 / 1 ... here base/cand = 60/40 = 1.5. */
static void test_coverage(void)
{
	struct kf_rng r;
	size_t covered = 0, trials = 200;
	kf_rng_seed(&r, 99);
	for (size_t t = 0; t < trials; t++) {
		double ref1[25], cand[25], base[25], ref0[25];
		struct kf_boot_opts bo = {1500, 1000 + t, 0.95, true};
		struct kf_ci ci;
		struct kf_err err = KF_ERR_INIT;
		times(&r, ref1, 25, 100, 0.08);
		times(&r, cand, 25, 40, 0.08);
		times(&r, base, 25, 60, 0.08);
		times(&r, ref0, 25, 100, 0.08);
		if (kf_boot_ratio_product(ref1, cand, 25, 25, base, ref0, 25, 25, &bo, &ci, &err) != KF_OK)
			break;
		/* the truth: the medians of the distributions (outliers shift both sessions' alike) */
		covered += ci.lo <= 1.5 && 1.5 <= ci.hi;
	}
	CHECKF(covered >= trials * 88 / 100, "the 95%% interval covered the truth in %zu of %zu", covered,
	       trials);
}

static void test_unpaired_and_bad_samples(void)
{
	double a[] = {10, 11, 12}, b[] = {5, 5}, ok[] = {1, 1, 1}, bad[] = {1, 0, 1}, nan_[] = {1, NAN, 1};
	struct kf_boot_opts bo = {500, 1, 0.95, true};
	struct kf_ci ci;
	struct kf_err err = KF_ERR_INIT;
	/* a session whose samples differ in length is resampled unpaired, not refused */
	CHECK(kf_boot_ratio_product(a, b, 3, 2, ok, ok, 3, 3, &bo, &ci, &err) == KF_OK);
	CHECK_NEAR(ci.point, 11.0 / 5.0, 1e-12);
	CHECK(kf_boot_ratio_product(a, ok, 3, 3, bad, ok, 3, 3, &bo, &ci, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "second numerator sample 1 is not a positive time");
	CHECK(kf_boot_ratio_product(a, nan_, 3, 3, ok, ok, 3, 3, &bo, &ci, &err) == KF_ERR_INVALID);
	CHECK(kf_boot_ratio_product(a, ok, 0, 3, ok, ok, 3, 3, &bo, &ci, &err) == KF_ERR_INVALID);
	bo.level = 1.5;
	CHECK(kf_boot_ratio_product(a, ok, 3, 3, ok, ok, 3, 3, &bo, &ci, &err) == KF_ERR_INVALID);
}

int main(int argc, char **argv)
{
	static const struct kf_test_case cases[] = {
	    TEST(test_point_is_the_product),
	    TEST(test_deterministic_and_wider_than_each_session),
	    TEST(test_coverage),
	    TEST(test_unpaired_and_bad_samples),
	};
	return kf_test_run(cases, KF_ARRAY_SIZE(cases), argc, argv);
}
