/* Unit tests of the verifier's parent-side pieces: comparison order and NaN handling, half-precision
 * conversions, input distributions, edge shapes. The end-to-end protocol is tested in
 * tests/integration/verify_*.sh against real workers. */
#include <math.h>
#include <stdint.h>

#include "testing.h"
#include "verifier/compare.h"
#include "verifier/verifier.h"

static void test_compare_nan_never_passes(void)
{
	float want[4] = {1, 2, 3, 4}, got[4] = {1, 2, NAN, 4};
	struct kf_tol tol = {1e-5, 1e-5, 0};
	struct kf_cmp c;
	kf_compare(got, want, KF_DTYPE_F32, 4, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_NAN_MISMATCH);
	CHECK_EQ_INT(c.first_bad, 2);
	CHECK_EQ_INT(c.n_bad, 1);
	/* NaN where the reference is NaN is parity, not an error */
	want[2] = NAN;
	kf_compare(got, want, KF_DTYPE_F32, 4, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_PASS);
	/* a finite value where the reference is NaN is a mismatch */
	got[2] = 3;
	kf_compare(got, want, KF_DTYPE_F32, 4, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_NAN_MISMATCH);
}

static void test_compare_inf_sign(void)
{
	float want[2] = {INFINITY, 1}, got[2] = {-INFINITY, 1};
	struct kf_tol tol = {1e-5, 1e-5, 0};
	struct kf_cmp c;
	kf_compare(got, want, KF_DTYPE_F32, 2, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_NAN_MISMATCH);
	got[0] = INFINITY;
	kf_compare(got, want, KF_DTYPE_F32, 2, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_PASS);
}

static void test_compare_tolerance(void)
{
	double want[3] = {100, -1, 0}, got[3] = {100.0005, -1, 1e-7};
	struct kf_tol tol = {1e-6, 1e-5, 0};
	struct kf_cmp c;
	kf_compare(got, want, KF_DTYPE_F64, 3, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_PASS); /* 5e-4 <= 1e-6 + 1e-3 */
	got[1] = -1.01;
	kf_compare(got, want, KF_DTYPE_F64, 3, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_WRONG_OUTPUT);
	CHECK_EQ_INT(c.first_bad, 1);
	CHECK_NEAR(c.got, -1.01, 1e-12);
	CHECK_NEAR(c.want, -1, 1e-12);
	CHECK_NEAR(c.max_abs, 0.01, 1e-9);
}

static void test_compare_nmse_and_zero_reference(void)
{
	float want[4] = {0, 0, 0, 0}, got[4] = {0, 0, 0, 0};
	struct kf_tol tol = {1e-3, 0, 1e-6};
	struct kf_cmp c;
	kf_compare(got, want, KF_DTYPE_F32, 4, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_PASS);
	CHECK(c.nmse == 0);
	got[1] = 1e-4f; /* within atol, but the NMSE of an all-zero reference is infinite */
	kf_compare(got, want, KF_DTYPE_F32, 4, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_WRONG_OUTPUT);
}

static void test_compare_ints_exact(void)
{
	int32_t want[3] = {1, 2, 3}, got[3] = {1, 2, 4};
	struct kf_tol tol = {0, 0, 0};
	struct kf_cmp c;
	kf_compare(got, want, KF_DTYPE_I32, 3, &tol, &c);
	CHECK_EQ_INT(c.verdict, KF_VERDICT_WRONG_OUTPUT);
	CHECK_EQ_INT(c.first_bad, 2);
}

static void test_half_conversions(void)
{
	CHECK_EQ_INT(kf_f32_to_f16(1.0f), 0x3c00);
	CHECK_EQ_INT(kf_f32_to_f16(-2.0f), 0xc000);
	CHECK_EQ_INT(kf_f32_to_f16(65504.0f), 0x7bff);
	CHECK_EQ_INT(kf_f32_to_f16(65520.0f), 0x7c00);               /* rounds to inf */
	CHECK_EQ_INT(kf_f32_to_f16(5.960464477539063e-08f), 0x0001); /* smallest subnormal */
	CHECK_EQ_INT(kf_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);     /* tie to even */
	CHECK_EQ_INT(kf_f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
	CHECK(isnan(kf_f16_to_f32(kf_f32_to_f16(NAN))));
	for (uint32_t h = 0; h < 0x7c00; h++)
		if (kf_f32_to_f16(kf_f16_to_f32((uint16_t)h)) != h) {
			CHECKF(0, "f16 round trip of 0x%04x", h);
			break;
		}
	CHECK_EQ_INT(kf_f32_to_bf16(1.0f), 0x3f80);
	CHECK_EQ_INT(kf_f32_to_bf16(1.00390625f), 0x3f80); /* 1 + 2^-8: tie, to even */
	CHECK_EQ_INT(kf_f32_to_bf16(1.01171875f), 0x3f82); /* 1 + 3*2^-8: tie, to even (up) */
	CHECK_NEAR(kf_bf16_to_f32(0xc040), -3.0, 0);
}

static void test_pattern_mismatch(void)
{
	uint8_t buf[64];
	uint32_t p = 0xc3a55a3c;
	for (size_t i = 0; i < sizeof(buf); i += 4)
		memcpy(buf + i, &p, 4);
	CHECK_EQ_INT(kf_pattern_mismatch(buf, sizeof(buf), p), -1);
	buf[37] ^= 1;
	CHECK_EQ_INT(kf_pattern_mismatch(buf, sizeof(buf), p), 37);
}

static struct kf_tensor mk_tensor(enum kf_dtype dt)
{
	struct kf_tensor t;
	memset(&t, 0, sizeof(t));
	t.name = "x";
	t.dtype = dt;
	t.role = KF_ROLE_INPUT;
	return t;
}

static void test_inputs_distributions(void)
{
	float x[4096];
	struct kf_tensor t = mk_tensor(KF_DTYPE_F32);
	struct kf_rng r;
	double lo = 1e9, hi = -1e9;

	kf_rng_seed(&r, 42);
	kf_inputs_fill(x, KF_DTYPE_F32, 4096, &t, KF_INPUT_LARGE, &r);
	for (int i = 0; i < 4096; i++) {
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	CHECK(lo <= -100 && hi >= 100); /* the large distribution reaches +-100 for f32 */
	kf_inputs_fill(x, KF_DTYPE_F32, 4096, &t, KF_INPUT_MIXED, &r);
	lo = 1e9, hi = -1e9;
	for (int i = 0; i < 4096; i++) {
		lo = fmin(lo, x[i]);
		hi = fmax(hi, x[i]);
	}
	CHECK(lo < 0 && hi > 0);
	/* a positive domain forbids mixed sign and is respected by every distribution */
	t.has_domain = true;
	t.domain_lo = 0.5;
	t.domain_hi = 1000;
	CHECK(!kf_inputs_dist_allowed(&t, KF_INPUT_MIXED));
	CHECK(kf_inputs_dist_allowed(&t, KF_INPUT_LARGE));
	kf_inputs_fill(x, KF_DTYPE_F32, 4096, &t, KF_INPUT_LARGE, &r);
	for (int i = 0; i < 4096; i++)
		if (!(x[i] >= 0.5f && x[i] <= 1000)) {
			CHECKF(0, "x[%d] = %g outside the domain", i, x[i]);
			break;
		}
	/* same seed, same data: verdicts replay */
	float a[64], b[64];
	struct kf_rng r1, r2;
	kf_rng_seed(&r1, 7);
	kf_rng_seed(&r2, 7);
	kf_inputs_fill(a, KF_DTYPE_F32, 64, &t, KF_INPUT_INIT, &r1);
	kf_inputs_fill(b, KF_DTYPE_F32, 64, &t, KF_INPUT_INIT, &r2);
	CHECK(!memcmp(a, b, sizeof(a)));
}

static void test_inputs_randint_index(void)
{
	int32_t idx[1000];
	struct kf_tensor t = mk_tensor(KF_DTYPE_I32);
	struct kf_rng r;
	t.init.dist = KF_DIST_RANDINT;
	t.init.a = 0;
	t.init.b = 17;
	kf_rng_seed(&r, 1);
	CHECK(!kf_inputs_dist_allowed(&t, KF_INPUT_LARGE));
	kf_inputs_fill(idx, KF_DTYPE_I32, 1000, &t, KF_INPUT_LARGE, &r);
	for (int i = 0; i < 1000; i++)
		if (idx[i] < 0 || idx[i] >= 17) {
			CHECKF(0, "index %d out of randint range", idx[i]);
			break;
		}
}

KF_TEST_MAIN(TEST(test_compare_nan_never_passes), TEST(test_compare_inf_sign), TEST(test_compare_tolerance),
	     TEST(test_compare_nmse_and_zero_reference), TEST(test_compare_ints_exact),
	     TEST(test_half_conversions), TEST(test_pattern_mismatch), TEST(test_inputs_distributions),
	     TEST(test_inputs_randint_index))
