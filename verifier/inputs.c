/* Input generation in the trusted parent: the task's distribution plus the adversarial ones (mixed sign,
 * large magnitude) and the structured ones (outliers, offset, ties and constant rows, sorted runs, zeros
 * and denormals) drawn from core's seeded generator (rng.h), f16/bf16 conversions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verifier.h"

/* ---- f16 / bf16, round to nearest even (matches __float2half_rn / __float2bfloat16_rn) ---- */

uint16_t kf_f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000u;
		int shift = 14 - e;
		uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent, which is the correct rounding to the next binade/inf */
	return (uint16_t)h;
}

float kf_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
	float f;
	if (exp == 0) {
		if (!man) {
			x = sign;
		} else {
			int e = -1;
			do {
				e++;
				man <<= 1;
			} while (!(man & 0x400u));
			x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
		}
	} else if (exp == 31) {
		x = sign | 0x7f800000u | (man << 13);
	} else {
		x = sign | ((exp - 15 + 127) << 23) | (man << 13);
	}
	memcpy(&f, &x, 4);
	return f;
}

uint16_t kf_f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}

float kf_bf16_to_f32(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

double kf_elem_get(const void *buf, enum kf_dtype dt, size_t i)
{
	switch (dt) {
	case KF_DTYPE_F64:
		return ((const double *)buf)[i];
	case KF_DTYPE_F32:
		return ((const float *)buf)[i];
	case KF_DTYPE_F16:
		return kf_f16_to_f32(((const uint16_t *)buf)[i]);
	case KF_DTYPE_BF16:
		return kf_bf16_to_f32(((const uint16_t *)buf)[i]);
	case KF_DTYPE_I64:
		return (double)((const int64_t *)buf)[i];
	case KF_DTYPE_I32:
		return ((const int32_t *)buf)[i];
	case KF_DTYPE_I16:
		return ((const int16_t *)buf)[i];
	case KF_DTYPE_I8:
		return ((const int8_t *)buf)[i];
	case KF_DTYPE_U8:
		return ((const uint8_t *)buf)[i];
	default:
		return NAN;
	}
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void kf_elem_set(void *buf, enum kf_dtype dt, size_t i, double v)
{
	switch (dt) {
	case KF_DTYPE_F64:
		((double *)buf)[i] = v;
		break;
	case KF_DTYPE_F32:
		((float *)buf)[i] = (float)v;
		break;
	case KF_DTYPE_F16:
		((uint16_t *)buf)[i] = kf_f32_to_f16((float)v);
		break;
	case KF_DTYPE_BF16:
		((uint16_t *)buf)[i] = kf_f32_to_bf16((float)v);
		break;
	case KF_DTYPE_I64:
		((int64_t *)buf)[i] = (int64_t)clampd(v, -9.2e18, 9.2e18);
		break;
	case KF_DTYPE_I32:
		((int32_t *)buf)[i] = (int32_t)clampd(v, INT32_MIN, INT32_MAX);
		break;
	case KF_DTYPE_I16:
		((int16_t *)buf)[i] = (int16_t)clampd(v, INT16_MIN, INT16_MAX);
		break;
	case KF_DTYPE_I8:
		((int8_t *)buf)[i] = (int8_t)clampd(v, INT8_MIN, INT8_MAX);
		break;
	case KF_DTYPE_U8:
		((uint8_t *)buf)[i] = (uint8_t)clampd(v, 0, UINT8_MAX);
		break;
	default:
		break;
	}
}

/* The magnitude of the large-magnitude distribution: enough that exp() without max subtraction or a
 * narrow accumulator overflows (spec: at least ±100 for f32/f64, ±10 for f16/bf16). */
static double large_bound(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F16:
	case KF_DTYPE_BF16:
		return 10.0;
	case KF_DTYPE_I8:
		return 100.0;
	case KF_DTYPE_U8:
		return 255.0;
	case KF_DTYPE_I16:
		return 10000.0;
	case KF_DTYPE_I32:
	case KF_DTYPE_I64:
		return 100000.0;
	default:
		return 100.0;
	}
}

/* Outliers: 100 for every float width (f16 and bf16 hold it too): a hundred spreads above a row's
 * typical values, so a softmax stabilised by anything but the row's true maximum overflows exp (x - m >
 * 88 in f32 arithmetic), while logits built from them (a GEMM or an attention score with an outlier
 * on both sides) stay within about 1e4, where fp32 rounding of a correct kernel is still far below the
 * tolerance. Integers: their large-magnitude bound within the dtype. */
static double outlier_bound(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_I8:
		return 127.0;
	case KF_DTYPE_U8:
		return 255.0;
	case KF_DTYPE_I16:
		return 10000.0;
	case KF_DTYPE_I32:
	case KF_DTYPE_I64:
		return 100000.0;
	default:
		return 100.0;
	}
}

/* The typical centre and spread of a tensor's init distribution. */
static void init_scale(const struct kf_tensor *t, double *center, double *spread)
{
	bool is_float = kf_dtype_is_float(t->dtype);
	switch (t->init.dist) {
	case KF_DIST_NORMAL:
		*center = t->init.a;
		*spread = t->init.b > 0 ? t->init.b : 1.0;
		break;
	case KF_DIST_UNIFORM:
		*center = (t->init.a + t->init.b) / 2;
		*spread = (t->init.b - t->init.a) / sqrt(12.0);
		if (!(*spread > 0))
			*spread = 1.0;
		break;
	default:
		*center = 0;
		*spread = is_float ? 1.0 : 4.0;
		break;
	}
}

/* The offset distribution's mean: 300 spreads away from the init's centre, on the side the domain and
 * the dtype allow (0 when neither side holds 300 +- 6 spreads). */
#define OFFSET_SPREADS 300.0
static double offset_mean(const struct kf_tensor *t)
{
	double c, s, lo = -INFINITY, hi = INFINITY;
	init_scale(t, &c, &s);
	if (!kf_dtype_is_float(t->dtype)) {
		lo = -large_bound(t->dtype) * 10, hi = -lo;
		if (t->dtype == KF_DTYPE_U8)
			lo = 0, hi = 255;
		else if (t->dtype == KF_DTYPE_I8)
			lo = -128, hi = 127;
	} else if (t->dtype == KF_DTYPE_F16) {
		lo = -65504, hi = 65504;
	}
	if (t->has_domain) {
		lo = fmax(lo, t->domain_lo);
		hi = fmin(hi, t->domain_hi);
	}
	for (int sign = 1; sign >= -1; sign -= 2) {
		double m = c + sign * OFFSET_SPREADS * s;
		if (m - 6 * s >= lo && m + 6 * s <= hi)
			return m;
	}
	return 0;
}

static bool is_structured(enum kf_input_dist d)
{
	return d >= KF_INPUT_OUTLIER && d < KF_INPUT_DIST_COUNT;
}

bool kf_input_dist_structured(enum kf_input_dist d)
{
	return is_structured(d);
}

bool kf_inputs_dist_allowed(const struct kf_tensor *t, enum kf_input_dist d)
{
	if (d == KF_INPUT_INIT)
		return true;
	/* Index-like tensors (a randint init) are defined by their init range: feeding other values would
	 * test the task, not the kernel. */
	if (t->init.dist == KF_DIST_RANDINT)
		return false;
	switch (d) {
	case KF_INPUT_OFFSET:
		return offset_mean(t) != 0;
	case KF_INPUT_TIES:
	case KF_INPUT_SORTED:
		return true; /* values of the init distribution (or of the large range, where allowed) */
	case KF_INPUT_ZEROS:
		return !t->has_domain || (t->domain_lo <= 0 && t->domain_hi >= 0);
	case KF_INPUT_OUTLIER:
	case KF_INPUT_LARGE:
		/* only when the domain reaches beyond the typical range */
		return !t->has_domain || t->domain_hi - t->domain_lo > 8.0;
	case KF_INPUT_MIXED:
		return !t->has_domain || (t->domain_lo < 0 && t->domain_hi > 0);
	default:
		return false;
	}
}

static void dist_range(const struct kf_tensor *t, enum kf_input_dist d, double *lo, double *hi)
{
	double L = large_bound(t->dtype);
	if (d == KF_INPUT_MIXED) {
		*lo = -2.0;
		*hi = 2.0;
	} else {
		*lo = -L;
		*hi = L;
	}
	if (t->has_domain) {
		if (*lo < t->domain_lo)
			*lo = t->domain_lo;
		if (*hi > t->domain_hi)
			*hi = t->domain_hi;
		if (*hi < *lo)
			*hi = *lo;
	}
}

/* One draw of the tensor's init distribution (not yet clamped to its domain). */
static double init_value(const struct kf_tensor *t, enum kf_dtype dt, struct kf_rng *rng)
{
	const struct kf_init *in = &t->init;
	double v;
	switch (in->dist) {
	case KF_DIST_NORMAL:
		return in->a + in->b * kf_rng_normal(rng);
	case KF_DIST_UNIFORM:
		return in->a + (in->b - in->a) * kf_rng_uniform(rng);
	case KF_DIST_RANDINT: {
		double span = in->b - in->a;
		return span >= 1 ? in->a + floor(kf_rng_uniform(rng) * span) : in->a;
	}
	default:
		/* No init declared: floats standard normal, ints a small mixed-sign range. */
		v = kf_dtype_is_float(dt) ? kf_rng_normal(rng) : floor(kf_rng_uniform(rng) * 17.0) - 8.0;
		return dt == KF_DTYPE_U8 ? fabs(v) : v;
	}
}

static void put(void *data, enum kf_dtype dt, size_t i, double v)
{
	if (dt == KF_DTYPE_F32)
		((float *)data)[i] = (float)v;
	else
		kf_elem_set(data, dt, i, v);
}

static double clamp_domain(const struct kf_tensor *t, double v)
{
	return t->has_domain ? clampd(v, t->domain_lo, t->domain_hi) : v;
}

static void swap_elems(void *data, size_t es, size_t a, size_t b)
{
	unsigned char tmp[8];
	memcpy(tmp, (char *)data + a * es, es);
	memcpy((char *)data + a * es, (char *)data + b * es, es);
	memcpy((char *)data + b * es, tmp, es);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A subnormal of the dtype, of random magnitude and sign (0 for integers). */
static double denormal(enum kf_dtype dt, struct kf_rng *rng)
{
	double sign = kf_rng_next(rng) & 1 ? -1.0 : 1.0;
	switch (dt) {
	case KF_DTYPE_F64:
		return sign * ldexp((double)(1 + kf_rng_next(rng) % ((1ull << 52) - 1)), -1074);
	case KF_DTYPE_F32:
		return sign * ldexp((double)(1 + kf_rng_next(rng) % ((1u << 23) - 1)), -149);
	case KF_DTYPE_F16:
		return sign * ldexp((double)(1 + kf_rng_next(rng) % 1023), -24);
	case KF_DTYPE_BF16:
		return sign * ldexp((double)(1 + kf_rng_next(rng) % 127), -133);
	default:
		return 0;
	}
}

/* The structured distributions, row by row (row elements each; the last row may be shorter). */
static void fill_structured(void *data, enum kf_dtype dt, size_t numel, size_t row, const struct kf_tensor *t,
			    enum kf_input_dist dist, struct kf_rng *rng)
{
	bool is_float = kf_dtype_is_float(dt);
	double lo, hi;

	if (!row || row > numel)
		row = numel;
	dist_range(t, KF_INPUT_LARGE, &lo, &hi);
	for (size_t r0 = 0, ri = 0; r0 < numel; r0 += row, ri++) {
		size_t len = numel - r0 < row ? numel - r0 : row;
		switch (dist) {
		case KF_INPUT_OUTLIER: {
			/* typical values, then max(1, len/64) outliers at drawn positions; the first of
			 * each row is positive, the others of either sign */
			double big = outlier_bound(dt);
			size_t k = len / 64 ? len / 64 : 1;
			for (size_t i = 0; i < len; i++)
				put(data, dt, r0 + i, clamp_domain(t, init_value(t, dt, rng)));
			for (size_t j = 0; j < k; j++) {
				double sign = j == 0 || (kf_rng_next(rng) & 1) ? 1.0 : -1.0;
				size_t at = r0 + (size_t)(kf_rng_next(rng) % len);
				put(data, dt, at, clamp_domain(t, sign * big));
			}
			break;
		}
		case KF_INPUT_OFFSET: {
			double c, s, m = offset_mean(t);
			init_scale(t, &c, &s);
			for (size_t i = 0; i < len; i++) {
				double v = m + s * kf_rng_normal(rng);
				put(data, dt, r0 + i, clamp_domain(t, is_float ? v : floor(v)));
			}
			break;
		}
		case KF_INPUT_TIES: {
			/* four values of the init distribution, each element one of them; every fourth row
			 * constant */
			double set[4];
			for (int j = 0; j < 4; j++)
				set[j] = clamp_domain(t, init_value(t, dt, rng));
			for (size_t i = 0; i < len; i++)
				put(data, dt, r0 + i, ri % 4 == 0 ? set[0] : set[kf_rng_next(rng) % 4]);
			break;
		}
		case KF_INPUT_SORTED: {
			/* the large range where it is allowed (a row's start is then far below its end),
			 * else the init distribution; ascending rows and descending rows alternate */
			double *tmp = malloc(len * sizeof(double));
			bool large = kf_inputs_dist_allowed(t, KF_INPUT_LARGE);
			for (size_t i = 0; i < len; i++) {
				double v =
				    large ? lo + (hi - lo) * kf_rng_uniform(rng) : init_value(t, dt, rng);
				v = clamp_domain(t, is_float ? v : floor(v));
				if (tmp)
					tmp[i] = v;
				else
					put(data, dt, r0 + i, v);
			}
			if (tmp) {
				qsort(tmp, len, sizeof(double), cmp_double);
				for (size_t i = 0; i < len; i++)
					put(data, dt, r0 + i, tmp[ri % 2 ? len - 1 - i : i]);
				free(tmp);
			}
			break;
		}
		case KF_INPUT_ZEROS:
		default:
			/* typical values with a quarter exact zeros (half of them -0.0) and, for floats, an
			 * eighth subnormals of either sign */
			for (size_t i = 0; i < len; i++) {
				uint64_t u = kf_rng_next(rng) % 8;
				double v;
				if (u < 2)
					v = u == 1 && is_float ? -0.0 : 0.0;
				else if (u == 2 && is_float)
					v = denormal(dt, rng);
				else
					v = clamp_domain(t, init_value(t, dt, rng));
				put(data, dt, r0 + i, v);
			}
			break;
		}
	}
}

void kf_inputs_fill(void *data, enum kf_dtype dt, size_t numel, const struct kf_tensor *t,
		    enum kf_input_dist dist, struct kf_rng *rng)
{
	kf_inputs_fill_rows(data, dt, numel, numel, t, dist, rng);
}

void kf_inputs_fill_rows(void *data, enum kf_dtype dt, size_t numel, size_t row, const struct kf_tensor *t,
			 enum kf_input_dist dist, struct kf_rng *rng)
{
	bool is_float = kf_dtype_is_float(dt);
	double lo, hi;

	if (dist == KF_INPUT_INIT || !kf_inputs_dist_allowed(t, dist)) {
		for (size_t i = 0; i < numel; i++)
			put(data, dt, i, clamp_domain(t, init_value(t, dt, rng)));
		return;
	}
	if (is_structured(dist)) {
		fill_structured(data, dt, numel, row, t, dist, rng);
		return;
	}
	dist_range(t, dist, &lo, &hi);
	for (size_t i = 0; i < numel; i++) {
		double v = lo + (hi - lo) * kf_rng_uniform(rng);
		if (dist == KF_INPUT_LARGE && numel >= 4 && i < 2)
			v = i == 0 ? hi : lo; /* make sure the extremes are reached */
		if (!is_float)
			v = floor(v);
		put(data, dt, i, v);
	}
	if (dist == KF_INPUT_LARGE && numel >= 4) {
		/* put the extremes at random positions, not always first */
		for (size_t k = 0; k < 2; k++)
			swap_elems(data, kf_dtype_size(dt), k, (size_t)(kf_rng_next(rng) % numel));
	}
}
