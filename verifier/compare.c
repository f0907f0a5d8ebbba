/* Output comparison (docs/spec/verification.md check 5) and byte-pattern checks for guards and inputs.
 * The comparison never lets a NaN through: every test is written so that NaN makes it fail. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"

/* Element i as a double; inline with a fast path for f32, the common case (kf_elem_get is the general
 * form). */
static inline double elem(const void *buf, enum kf_dtype dt, size_t i)
{
	if (dt == KF_DTYPE_F32)
		return ((const float *)buf)[i];
	return kf_elem_get(buf, dt, i);
}

void kf_compare(const void *got, const void *want, enum kf_dtype dt, size_t numel, const struct kf_tol *tol,
		struct kf_cmp *o)
{
	uint64_t n_parity = 0, n_tol = 0;
	int64_t first_parity = -1, first_tol = -1;
	double num = 0, den = 0, sum_got2 = 0, ss = 0;
	size_t nf = 0;

	memset(o, 0, sizeof(*o));
	o->first_bad = -1;
	/* atol is in units of the tensor's scale: the absolute rounding error of an element (a dot product,
	 * a sum, an atomic accumulation in another order) grows with the magnitude of the values it was
	 * computed from, not with its own value, which cancellation can make arbitrarily small. So atol is
	 * multiplied by max(1, rms of the finite reference values); for outputs of magnitude <= 1 it is
	 * exactly the task's atol. One pass checks against the unscaled atol (stricter) while it gathers
	 * the rms; only elements that failed it are looked at again with the scaled one. */
	for (size_t i = 0; i < numel; i++) {
		double g = elem(got, dt, i), w = elem(want, dt, i);
		if (isfinite(w)) {
			ss += w * w;
			nf++;
		}
		if (!isfinite(w) || !isfinite(g)) {
			/* Parity: both NaN, or the same infinity. Anything else is a mismatch (a NaN or Inf
			 * where the reference is finite, a sign-mismatched Inf, or a finite value where the
			 * reference is not). */
			bool ok =
			    (isnan(w) && isnan(g)) || (isinf(w) && isinf(g) && signbit(w) == signbit(g));
			if (!ok) {
				if (first_parity < 0) {
					first_parity = (int64_t)i;
					o->got = g;
					o->want = w;
				}
				n_parity++;
			}
			continue;
		}
		double d = fabs(g - w), lim = tol->atol + tol->rtol * fabs(w);
		if (d > o->max_abs)
			o->max_abs = d;
		if (fabs(w) > 0 && d / fabs(w) > o->max_rel)
			o->max_rel = d / fabs(w);
		else if (w == 0 && d > 0 && d > o->max_rel)
			o->max_rel = d; /* relative to zero: report the absolute error */
		if (!(d <= lim)) {
			if (first_tol < 0)
				first_tol = (int64_t)i;
			n_tol++;
		}
		num += d * d;
		den += w * w;
		sum_got2 += g * g;
	}
	o->atol_scale = nf ? sqrt(ss / (double)nf) : 0;
	if (!(o->atol_scale >= 1))
		o->atol_scale = 1;
	if (n_tol && o->atol_scale > 1) {
		size_t from = (size_t)first_tol;
		n_tol = 0;
		first_tol = -1;
		for (size_t i = from; i < numel; i++) {
			double g = elem(got, dt, i), w = elem(want, dt, i);
			if (!isfinite(w) || !isfinite(g))
				continue;
			if (!(fabs(g - w) <= tol->atol * o->atol_scale + tol->rtol * fabs(w))) {
				if (first_tol < 0)
					first_tol = (int64_t)i;
				n_tol++;
			}
		}
	}
	/* NMSE in double; an all-zero reference gives 0 when the output is all zero too, else +inf. */
	o->nmse = den > 0 ? num / den : (sum_got2 > 0 ? INFINITY : 0.0);
	if (n_parity) {
		o->verdict = KF_VERDICT_NAN_MISMATCH;
		o->n_bad = n_parity;
		o->first_bad = first_parity;
		return;
	}
	if (n_tol) {
		o->verdict = KF_VERDICT_WRONG_OUTPUT;
		o->n_bad = n_tol;
		o->first_bad = first_tol;
		o->got = elem(got, dt, (size_t)first_tol);
		o->want = elem(want, dt, (size_t)first_tol);
		return;
	}
	if (tol->max_nmse > 0 && !(o->nmse <= tol->max_nmse)) {
		o->verdict = KF_VERDICT_WRONG_OUTPUT;
		o->n_bad = numel;
		return;
	}
	o->verdict = KF_VERDICT_PASS;
}

int64_t kf_pattern_mismatch(const uint8_t *buf, size_t n, uint32_t pattern)
{
	uint8_t p[4];
	memcpy(p, &pattern, 4);
	for (size_t i = 0; i < n; i++)
		if (buf[i] != p[i & 3])
			return (int64_t)i;
	return -1;
}

void kf_format_index(const struct kf_task *t, size_t ti, const struct kf_shape *s, int64_t idx, char *buf,
		     size_t n)
{
	const struct kf_tensor *te = &t->tensors[ti];
	int64_t dims[16] = {0}, rem = idx; /* each dims[k], k < r, is set below; zeroed for cppcheck */
	size_t r = te->rank < 16 ? te->rank : 16, len = 0;

	for (size_t k = 0; k < r; k++)
		if (kf_expr_eval(te->shape[k], s, &dims[k], NULL) != KF_OK || dims[k] <= 0)
			dims[k] = 1;
	int64_t coord[16];
	for (size_t k = r; k-- > 0;) {
		coord[k] = rem % dims[k];
		rem /= dims[k];
	}
	len += (size_t)snprintf(buf + len, n - len, "[");
	for (size_t k = 0; k < r && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)coord[k]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}
