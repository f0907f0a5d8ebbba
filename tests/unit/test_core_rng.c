/* Tests of core's one generator (core/rng.h): the stream is pinned to what the verifier always drew (its
 * reference cache is keyed by INPUTS_VERSION, so a change here must be deliberate), bounded integers stay
 * in range and are uniform, normals have mean 0 and variance 1. */
#include <math.h>

#include "rng.h"
#include "testing.h"

static void test_stream_is_pinned(void)
{
	struct kf_rng r;
	kf_rng_seed(&r, 42);
	/* values of the verifier's generator before it moved to core */
	CHECK(kf_rng_next(&r) == 0xfe89860862f704f9ull);
	CHECK(kf_rng_next(&r) == 0x62c2073ad41e9a8cull);
	CHECK(kf_rng_next(&r) == 0xa351b7cc999402b5ull);
	CHECK_NEAR(kf_rng_uniform(&r), 0.086047146412597253, 0);
	CHECK_NEAR(kf_rng_normal(&r), 0.37204698529506591, 0);
	CHECK_NEAR(kf_rng_normal(&r), 1.055567863675374, 0);
	CHECK(kf_mix64(1) == 0x910a2dec89025cc1ull);
	/* re-seeding restarts the stream and drops a waiting normal */
	kf_rng_seed(&r, 42);
	CHECK(kf_rng_next(&r) == 0xfe89860862f704f9ull && !r.has_spare);
}

static void test_below_uniform(void)
{
	struct kf_rng r;
	int seen[7] = {0}, in_range = 1;
	kf_rng_seed(&r, 7);
	for (int i = 0; i < 70000; i++) {
		uint64_t v = kf_rng_below(&r, 7);
		in_range &= v < 7;
		if (v < 7)
			seen[v]++;
	}
	CHECK(in_range);
	for (int i = 0; i < 7; i++)
		CHECKF(seen[i] > 9500 && seen[i] < 10500, "value %d seen %d times of 70000", i, seen[i]);
	CHECK(kf_rng_below(&r, 1) == 0);
	/* a bound above 2^63 (where a modulo would be biased by half) stays in range */
	uint64_t big = (1ull << 63) + 12345;
	for (int i = 0; i < 1000; i++)
		in_range &= kf_rng_below(&r, big) < big;
	CHECK(in_range);
}

static void test_normal_moments(void)
{
	struct kf_rng r;
	double sum = 0, sum2 = 0;
	const int n = 200000;
	kf_rng_seed(&r, 2024);
	for (int i = 0; i < n; i++) {
		double x = kf_rng_normal(&r);
		sum += x;
		sum2 += x * x;
	}
	/* standard errors: 1/sqrt(n) = 0.0022 for the mean, sqrt(2/n) = 0.0032 for the variance */
	CHECK_NEAR(sum / n, 0, 0.011);
	CHECK_NEAR(sum2 / n - (sum / n) * (sum / n), 1, 0.016);
}

KF_TEST_MAIN(TEST(test_stream_is_pinned), TEST(test_below_uniform), TEST(test_normal_moments))
