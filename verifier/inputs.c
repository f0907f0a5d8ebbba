/* Input generation in the trusted parent: the task's distribution plus the adversarial ones (mixed sign,
 * large magnitude) drawn from core's seeded generator (rng.h), f16/bf16 conversions. */
#include <math.h>
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

bool kf_inputs_dist_allowed(const struct kf_tensor *t, enum kf_input_dist d)
{
	if (d == KF_INPUT_INIT)
		return true;
	/* Index-like tensors (a randint init) are defined by their init range: feeding other values would
	 * test the task, not the kernel. */
	if (t->init.dist == KF_DIST_RANDINT)
		return false;
	if (!t->has_domain)
		return true;
	if (d == KF_INPUT_MIXED)
		return t->domain_lo < 0 && t->domain_hi > 0;
	/* large: only when the domain reaches beyond the typical range */
	return t->domain_hi - t->domain_lo > 8.0;
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

void kf_inputs_fill(void *data, enum kf_dtype dt, size_t numel, const struct kf_tensor *t,
		    enum kf_input_dist dist, struct kf_rng *rng)
{
	bool is_float = kf_dtype_is_float(dt);
	double lo, hi;

	if (dist == KF_INPUT_INIT || !kf_inputs_dist_allowed(t, dist)) {
		const struct kf_init *in = &t->init;
		for (size_t i = 0; i < numel; i++) {
			double v;
			switch (in->dist) {
			case KF_DIST_NORMAL:
				v = in->a + in->b * kf_rng_normal(rng);
				break;
			case KF_DIST_UNIFORM:
				v = in->a + (in->b - in->a) * kf_rng_uniform(rng);
				break;
			case KF_DIST_RANDINT: {
				double span = in->b - in->a;
				v = span >= 1 ? in->a + floor(kf_rng_uniform(rng) * span) : in->a;
				break;
			}
			default:
				/* No init declared: floats standard normal, ints a small mixed-sign range. */
				v = is_float ? kf_rng_normal(rng) : floor(kf_rng_uniform(rng) * 17.0) - 8.0;
				if (dt == KF_DTYPE_U8)
					v = fabs(v);
				break;
			}
			if (t->has_domain)
				v = clampd(v, t->domain_lo, t->domain_hi);
			if (dt == KF_DTYPE_F32)
				((float *)data)[i] = (float)v;
			else
				kf_elem_set(data, dt, i, v);
		}
		return;
	}
	dist_range(t, dist, &lo, &hi);
	for (size_t i = 0; i < numel; i++) {
		double v = lo + (hi - lo) * kf_rng_uniform(rng);
		if (dist == KF_INPUT_LARGE && numel >= 4 && i < 2)
			v = i == 0 ? hi : lo; /* make sure the extremes are reached */
		if (!is_float)
			v = floor(v);
		if (dt == KF_DTYPE_F32)
			((float *)data)[i] = (float)v;
		else
			kf_elem_set(data, dt, i, v);
	}
	if (dist == KF_INPUT_LARGE && numel >= 4) {
		/* put the extremes at random positions, not always first */
		for (size_t k = 0; k < 2; k++) {
			size_t j = (size_t)(kf_rng_next(rng) % numel);
			size_t es = kf_dtype_size(dt);
			unsigned char tmp[8];
			memcpy(tmp, (char *)data + k * es, es);
			memcpy((char *)data + k * es, (char *)data + j * es, es);
			memcpy((char *)data + j * es, tmp, es);
		}
	}
}
