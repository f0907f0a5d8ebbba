/* Unit tests of the verifier's parent-side pieces: comparison order and NaN handling, half-precision
 * conversions, input distributions (the structured ones too), edge and residue shapes, and shape
 * descriptions that never show a hidden value. The end-to-end protocol is tested in
 * tests/integration/verify_*.sh against real workers. */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

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

/* ---- structured inputs ---------------------------------------------------------------------- */

enum { ROWS = 16, ROW = 300 };

static void test_inputs_structured(void)
{
	static float x[ROWS * ROW];
	struct kf_tensor t = mk_tensor(KF_DTYPE_F32);
	struct kf_rng r;
	t.init.dist = KF_DIST_NORMAL;
	t.init.a = 0;
	t.init.b = 1;
	kf_rng_seed(&r, 11);
	for (int d = KF_INPUT_OUTLIER; d < KF_INPUT_DIST_COUNT; d++)
		CHECKF(kf_inputs_dist_allowed(&t, (enum kf_input_dist)d), "%s",
		       kf_input_dist_name((enum kf_input_dist)d));
	CHECK(!kf_input_dist_structured(KF_INPUT_LARGE) && kf_input_dist_structured(KF_INPUT_ZEROS));
	CHECK_STR(kf_input_dist_name(KF_INPUT_OFFSET), "offset");

	/* outliers: every row has a positive one of 100 among values of the init distribution */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_OUTLIER, &r);
	for (int row = 0; row < ROWS; row++) {
		int pos = 0, typical = 0;
		for (int i = 0; i < ROW; i++) {
			float v = x[row * ROW + i];
			pos += v == 100.0f;
			typical += fabsf(v) < 10;
		}
		CHECKF(pos >= 1 && typical >= ROW - ROW / 64 - 1, "row %d: %d outliers, %d typical", row, pos,
		       typical);
	}
	/* offset: mean 300 std (either sign), std still 1 */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_OFFSET, &r);
	{
		double m = 0, v = 0;
		for (int i = 0; i < ROWS * ROW; i++)
			m += x[i];
		m /= ROWS * ROW;
		for (int i = 0; i < ROWS * ROW; i++)
			v += (x[i] - m) * (x[i] - m);
		v /= ROWS * ROW;
		CHECKF(fabs(fabs(m) - 300) < 0.2 && fabs(sqrt(v) - 1) < 0.1, "offset mean %g std %g", m,
		       sqrt(v));
	}
	/* ties: at most four distinct values per row, every fourth row constant */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_TIES, &r);
	for (int row = 0; row < ROWS; row++) {
		float seen[ROW];
		int n = 0;
		for (int i = 0; i < ROW; i++) {
			int k = 0;
			while (k < n && seen[k] != x[row * ROW + i])
				k++;
			if (k == n)
				seen[n++] = x[row * ROW + i];
		}
		CHECKF(n <= 4 && (row % 4 || n == 1) && (row % 4 == 0 || n > 1), "row %d has %d values", row,
		       n);
	}
	/* sorted: ascending rows then descending ones, spanning the large range */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_SORTED, &r);
	for (int row = 0; row < ROWS; row++) {
		bool ok = true;
		for (int i = 1; i < ROW; i++)
			ok &= row % 2 ? x[row * ROW + i] <= x[row * ROW + i - 1]
				      : x[row * ROW + i] >= x[row * ROW + i - 1];
		CHECKF(ok, "row %d not sorted", row);
		CHECK(fabsf(x[row * ROW] - x[row * ROW + ROW - 1]) > 150);
	}
	/* zeros and denormals: +0, -0 and subnormals of both signs among typical values */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_ZEROS, &r);
	{
		int pz = 0, nz = 0, den_p = 0, den_n = 0;
		for (int i = 0; i < ROWS * ROW; i++) {
			pz += x[i] == 0 && !signbit(x[i]);
			nz += x[i] == 0 && signbit(x[i]);
			den_p += fpclassify(x[i]) == FP_SUBNORMAL && x[i] > 0;
			den_n += fpclassify(x[i]) == FP_SUBNORMAL && x[i] < 0;
		}
		CHECKF(pz > 100 && nz > 100 && den_p > 50 && den_n > 50, "zeros %d/%d denormals %d/%d", pz,
		       nz, den_p, den_n);
	}
	/* f16 denormals are f16 subnormals */
	{
		uint16_t h[512];
		int sub = 0;
		struct kf_tensor th = mk_tensor(KF_DTYPE_F16);
		kf_inputs_fill_rows(h, KF_DTYPE_F16, 512, 512, &th, KF_INPUT_ZEROS, &r);
		for (int i = 0; i < 512; i++)
			sub += (h[i] & 0x7c00) == 0 && (h[i] & 0x3ff) != 0;
		CHECK(sub > 20);
	}
	/* domains: a positive domain forbids zeros and keeps outliers inside it; a narrow one forbids
	 * outliers; an offset needs room for 300 spreads */
	t.has_domain = true;
	t.domain_lo = 0.01;
	t.domain_hi = 100;
	CHECK(!kf_inputs_dist_allowed(&t, KF_INPUT_ZEROS));
	CHECK(!kf_inputs_dist_allowed(&t, KF_INPUT_OFFSET));
	CHECK(kf_inputs_dist_allowed(&t, KF_INPUT_OUTLIER));
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_OUTLIER, &r);
	for (int i = 0; i < ROWS * ROW; i++)
		if (!(x[i] >= 0.01f && x[i] <= 100)) {
			CHECKF(0, "x[%d] = %g outside the domain", i, x[i]);
			break;
		}
	t.domain_lo = 0;
	t.domain_hi = 1;
	CHECK(!kf_inputs_dist_allowed(&t, KF_INPUT_OUTLIER));
	CHECK(kf_inputs_dist_allowed(&t, KF_INPUT_ZEROS));
	t.domain_lo = 0;
	t.domain_hi = 1000;
	CHECK(kf_inputs_dist_allowed(&t, KF_INPUT_OFFSET)); /* the positive side: 300 +- 6 fits */
	kf_inputs_fill_rows(x, KF_DTYPE_F32, ROWS * ROW, ROW, &t, KF_INPUT_OFFSET, &r);
	CHECK(x[0] > 290 && x[0] < 310);
	/* index tensors get their init only */
	t.has_domain = false;
	t.init.dist = KF_DIST_RANDINT;
	for (int d = KF_INPUT_OUTLIER; d < KF_INPUT_DIST_COUNT; d++)
		CHECK(!kf_inputs_dist_allowed(&t, (enum kf_input_dist)d));
	/* i8 has no room for an offset of 300 spreads */
	{
		struct kf_tensor ti = mk_tensor(KF_DTYPE_I8), tj = mk_tensor(KF_DTYPE_I32);
		CHECK(!kf_inputs_dist_allowed(&ti, KF_INPUT_OFFSET));
		CHECK(kf_inputs_dist_allowed(&tj, KF_INPUT_OFFSET));
	}
	/* what the fallback judges by NMSE, and what it does not */
	CHECK(kf_verify_nmse_fallback(KF_INPUT_INIT, KF_DTYPE_F32) == 0);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_MIXED, KF_DTYPE_F32) == 0);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_ZEROS, KF_DTYPE_F32) == 0);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_OFFSET, KF_DTYPE_F32) == 1e-6);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_LARGE, KF_DTYPE_F32) == 1e-8);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_OUTLIER, KF_DTYPE_F32) == 1e-6);
	CHECK(kf_verify_nmse_fallback(KF_INPUT_OUTLIER, KF_DTYPE_I32) == 0);
}

/* ---- shapes -------------------------------------------------------------------------------- */

static struct kf_task *load_task(const char *json)
{
	char dir[] = "/tmp/kf-verifier-XXXXXX", path[64];
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	FILE *f;
	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/task.json", dir);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(json, f);
	fclose(f);
	CHECKF(kf_task_load(path, KF_TASK_NO_FILES, NULL, &t, &err) == KF_OK, "%s", err.msg);
	unlink(path);
	rmdir(dir);
	return t;
}

#define TASK_HEAD                                                                                            \
	"{\"format\": \"kforge-task/1\", \"name\": \"t\", \"title\": \"t\", \"category\": \"test\", "        \
	"\"level\": 1, \"description\": \"d\", \"dims\": [\"B\", \"N\", \"D\"], "

static const char *SHAPE_TASK = TASK_HEAD
    "\"fixed_dims\": [\"D\"],"
    " \"shapes\": {\"public\": [{\"B\": 8, \"N\": 1000, \"D\": 64}, {\"B\": 4, \"N\": 2048, \"D\": 64}],"
    "            \"hidden\": [{\"B\": 13, \"N\": 4099, \"D\": 64}]},"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\", "
    "\"D\"]},"
    "              {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}],"
    " \"reference\": \"r.cu\"}";

static const char *CONSTRAINED_TASK = TASK_HEAD
    "\"constraints\": {\"N\": {\"multiple_of\": 8, \"min\": 16}, \"B\": {\"max\": 6}},"
    " \"shapes\": {\"public\": [{\"B\": 4, \"N\": 1024, \"D\": 3}], \"hidden\": [{\"B\": 5, \"N\": 264, "
    "\"D\": 7}]},"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\", "
    "\"D\"]},"
    "              {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}],"
    " \"reference\": \"r.cu\"}";

static int64_t dim_of(const struct kf_shape *s, const char *d)
{
	int64_t v = -1;
	kf_shape_get(s, d, &v);
	return v;
}

static void test_residue_shapes(void)
{
	struct kf_task *t = load_task(SHAPE_TASK), *c = load_task(CONSTRAINED_TASK);
	struct kf_checked_shape *a = NULL, *b = NULL, *o = NULL;
	size_t na = 0, nb = 0, no = 0;
	struct kf_err err = KF_ERR_INIT;

	if (!t || !c)
		return;
	CHECK_EQ_INT(kf_verify_shapes(t, true, false, false, 42, &a, &na, &err), KF_OK);
	CHECK_EQ_INT(kf_verify_shapes(t, true, false, false, 42, &b, &nb, &err), KF_OK);
	CHECK_EQ_INT(kf_verify_shapes(t, true, false, false, 43, &o, &no, &err), KF_OK);
	/* the same seed gives the same shapes; another seed others */
	CHECK(na == nb && !memcmp(a, b, na * sizeof(*a)));
	CHECK(na != no || memcmp(a, o, na * sizeof(*a)));
	{
		bool seen_b[32] = {0}, seen_n[32] = {0};
		size_t n_res = 0;
		double budget = (1000.0 * 8 * 64 + 8 * 1000) / 8; /* an eighth of the smallest public shape */
		CHECK(a[0].kind == KF_SHAPE_PUBLIC && a[2].kind == KF_SHAPE_HIDDEN && !a[0].residue);
		for (size_t i = 3; i < na; i++) {
			int64_t B = dim_of(&a[i].shape, "B"), N = dim_of(&a[i].shape, "N");
			CHECK(a[i].kind == KF_SHAPE_EDGE);
			CHECKF(dim_of(&a[i].shape, "D") == 64, "a fixed dim varied in shape %zu", i);
			CHECKF(B >= 1 && B <= 13 && N >= 1 && N <= 4099,
			       "shape %zu: B=%lld N=%lld beyond the declared", i, (long long)B, (long long)N);
			if (!a[i].residue)
				continue;
			n_res++;
			seen_b[B % 32] = true;
			seen_n[N % 32] = true;
			CHECKF((double)B * N * 64 + B * N <= budget,
			       "shape %zu costs more than the smallest public", i);
		}
		CHECK_EQ_INT(n_res, 32);
		for (int r = 0; r < 32; r++) {
			CHECKF(seen_n[r], "no residue shape has N %% 32 == %d", r);
			/* B only reaches 13: residues 1..13 */
			CHECKF(seen_b[r] == (r >= 1 && r <= 13), "B %% 32 == %d: %d", r, seen_b[r]);
		}
		/* the classic edges: all free dims at 1, at primes, one past a power of two */
		CHECK(dim_of(&a[3].shape, "B") == 1 && dim_of(&a[3].shape, "N") == 1);
		CHECK(dim_of(&a[4].shape, "N") > 2 && dim_of(&a[4].shape, "N") % 2 == 1);
		CHECK_EQ_INT(dim_of(&a[5].shape, "N"), 1025);
	}
	free(a);
	free(b);
	free(o);

	/* constraints: every derived shape keeps them; N reaches every multiple of 8 mod 32 */
	CHECK_EQ_INT(kf_verify_shapes(c, true, false, true, 7, &a, &na, &err), KF_OK);
	{
		bool seen[32] = {0};
		size_t n_res = 0;
		for (size_t i = 0; i < na; i++) {
			for (size_t d = 0; d < c->n_dims; d++)
				CHECKF(kf_task_dim_allows(c, d, dim_of(&a[i].shape, c->dims[d])),
				       "shape %zu breaks a constraint of %s", i, c->dims[d]);
			if (a[i].residue) {
				seen[dim_of(&a[i].shape, "N") % 32] = true;
				n_res++;
			}
		}
		for (size_t i = 0; i < na; i++)
			seen[dim_of(&a[i].shape, "N") % 32] = true;
		for (int r = 0; r < 32; r++)
			CHECKF(seen[r] == (r % 8 == 0), "N %% 32 == %d: %d", r, seen[r]);
		/* D spans 1..7 (7 residues), N 4, B 5: seven residue shapes (fewer when one coincides with
		 * another shape, which then covers its residues) */
		CHECK(n_res >= 1 && n_res <= 7);
		/* the smallest-value edge is at the constraint's minimum, not 1 */
		CHECK_EQ_INT(dim_of(&a[2].shape, "N"), 16);
	}
	free(a);
	/* no edges asked: the declared shapes only */
	CHECK_EQ_INT(kf_verify_shapes(c, false, false, false, 7, &a, &na, &err), KF_OK);
	CHECK_EQ_INT(na, 2);
	free(a);
	kf_task_free(t);
	kf_task_free(c);
}

/* Does buf hold v as a number of its own (not an exponent "2^13", not part of a longer number)? */
static bool has_number(const char *buf, long long v)
{
	char num[32];
	size_t n = (size_t)snprintf(num, sizeof(num), "%lld", v);
	for (const char *p = strstr(buf, num); p; p = strstr(p + 1, num)) {
		bool before = p > buf && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '^');
		bool after = p[n] >= '0' && p[n] <= '9';
		if (!before && !after)
			return true;
	}
	return false;
}

/* Descriptions for prompts: size classes and residues, never a value only a hidden or edge shape has. */
static void test_describe_hidden(void)
{
	struct kf_task *t = load_task(SHAPE_TASK);
	struct kf_shape s = {0};
	char buf[512];
	if (!t)
		return;
	kf_shape_set(&s, "B", 13);
	kf_shape_set(&s, "N", 4099);
	kf_shape_set(&s, "D", 64);
	kf_shape_describe_hidden(t, &s, buf, sizeof(buf));
	CHECK_STR(
	    buf,
	    "2^3 <= B < 2^4, B odd, B prime; 2^12 <= N < 2^13, N % 32 == 3, N prime; D=64 (as in a shown "
	    "shape)");
	CHECK(!has_number(buf, 4099) && !has_number(buf, 13));
	kf_shape_set(&s, "B", 1);
	kf_shape_set(&s, "N", 2048); /* a public value may be named */
	kf_shape_describe_hidden(t, &s, buf, sizeof(buf));
	CHECK_STR(buf, "B = 1; N=2048 (as in a shown shape); D=64 (as in a shown shape)");
	kf_shape_set(&s, "N", 4098);
	kf_shape_describe_hidden(t, &s, buf, sizeof(buf));
	CHECK_CONTAINS(buf, "N % 32 == 2");
	CHECK(!has_number(buf, 4098) && !strstr(buf, "prime"));
	/* feedback about a failing report: verdict, tensor, distribution, kind and description only */
	{
		struct kf_shape_report r;
		char fb[1024];
		memset(&r, 0, sizeof(r));
		r.shape = s; /* B=1 N=4098 D=64 */
		r.kind = KF_SHAPE_EDGE;
		r.status = KF_VERDICT_NAN_MISMATCH;
		r.dist = KF_INPUT_OFFSET;
		snprintf(r.tensor, sizeof(r.tensor), "y");
		snprintf(r.detail, sizeof(r.detail), "output 'y' [0, 4097]: got nan, want 1");
		kf_shape_report_feedback(t, &r, fb, sizeof(fb));
		CHECK_STR(
		    fb,
		    "nan_mismatch in 'y' with offset inputs at a shape you are not shown (an edge shape the "
		    "verifier derives): B = 1; 2^12 <= N < 2^13, N % 32 == 2; D=64 (as in a shown shape). "
		    "Make "
		    "the kernel correct for every value of the dims.");
		r.kind = KF_SHAPE_HIDDEN;
		r.dist = KF_INPUT_INIT;
		r.tensor[0] = '\0';
		r.status = KF_VERDICT_RUNTIME_ERROR;
		kf_shape_report_feedback(t, &r, fb, sizeof(fb));
		CHECK_CONTAINS(fb, "runtime_error with typical inputs at a shape you are not shown (a hidden "
				   "shape of the task)");
		CHECK(!has_number(fb, 4098) && !has_number(fb, 4097));
		/* from a recorded reason (a resumed run): the same, or the reason itself for a public shape
		 */
		kf_verify_reason_feedback(
		    t,
		    "wrong_output at B=13 N=4099 D=64 (hidden shape, sorted inputs, case seed "
		    "0x00000000000000ab): output 'y' [12, 4098]: got 1, want 2",
		    fb, sizeof(fb));
		CHECK_STR(fb, "wrong_output in 'y' with sorted inputs at a shape you are not shown (a hidden "
			      "shape of the "
			      "task): 2^3 <= B < 2^4, B odd, B prime; 2^12 <= N < 2^13, N % 32 == 3, N "
			      "prime; D=64 (as in a "
			      "shown shape). Make the kernel correct for every value of the dims.");
		kf_verify_reason_feedback(
		    t,
		    "wrong_output at B=8 N=1000 D=64 (public shape, init inputs, case seed 0x1): output "
		    "'y' [0, 5]: got 1, want 2",
		    fb, sizeof(fb));
		CHECK_CONTAINS(fb, "at B=8 N=1000 D=64 (public shape");
		kf_verify_reason_feedback(t, "the kernel does not compile: x.cu(3): error", fb, sizeof(fb));
		CHECK_STR(fb, "the kernel does not compile: x.cu(3): error");
		kf_verify_reason_feedback(t, "odd at (edge shape, x inputs", fb, 8);
		CHECK(strlen(fb) < 8);
	}
	/* a bounded buffer is cut, never overrun */
	kf_shape_describe_hidden(t, &s, buf, 12);
	CHECK(strlen(buf) < 12);
	kf_task_free(t);
}

KF_TEST_MAIN(TEST(test_compare_nan_never_passes), TEST(test_compare_inf_sign), TEST(test_compare_tolerance),
	     TEST(test_compare_nmse_and_zero_reference), TEST(test_compare_ints_exact),
	     TEST(test_half_conversions), TEST(test_pattern_mismatch), TEST(test_inputs_distributions),
	     TEST(test_inputs_randint_index), TEST(test_inputs_structured), TEST(test_residue_shapes),
	     TEST(test_describe_hidden))
