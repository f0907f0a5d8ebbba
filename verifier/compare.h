/* Output comparison in the spec's order (verifier-private): NaN/Inf parity, then |got-ref| <= atol +
 * rtol*|ref| (atol scaled by the tensor's rms, see compare.c), then NMSE; guard zones and input integrity are
 * byte checks. */
#ifndef KF_VERIFIER_COMPARE_H
#define KF_VERIFIER_COMPARE_H

#include "verifier.h"

struct kf_cmp {
	enum kf_verdict verdict; /* PASS, NAN_MISMATCH or WRONG_OUTPUT */
	uint64_t n_bad;          /* elements failing the verdict's check */
	int64_t first_bad;
	double got, want;
	double max_abs, max_rel, nmse;
	double atol_scale; /* max(1, rms of the reference): the factor atol was applied with */
};

void kf_compare(const void *got, const void *want, enum kf_dtype dt, size_t numel, const struct kf_tol *tol,
		struct kf_cmp *out);

/* Index of the first byte in buf[0..n) that differs from the repeating 32-bit pattern, or -1. */
int64_t kf_pattern_mismatch(const uint8_t *buf, size_t n, uint32_t pattern);

/* Formats a multi-dimensional index of element i of a tensor at a shape into buf ("[3, 17]"). */
void kf_format_index(const struct kf_task *t, size_t ti, const struct kf_shape *s, int64_t i, char *buf,
		     size_t n);

#endif
