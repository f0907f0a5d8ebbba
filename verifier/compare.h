/* Verifier-private checks beside the public comparison (kf_compare in verifier.h): guard zones and input
 * integrity are byte checks; indices are formatted per tensor for the evidence. */
#ifndef KF_VERIFIER_COMPARE_H
#define KF_VERIFIER_COMPARE_H

#include "verifier.h"

/* Index of the first byte in buf[0..n) that differs from the repeating 32-bit pattern, or -1. */
int64_t kf_pattern_mismatch(const uint8_t *buf, size_t n, uint32_t pattern);

/* Formats a multi-dimensional index of element i of a tensor at a shape into buf ("[3, 17]"). */
void kf_format_index(const struct kf_task *t, size_t ti, const struct kf_shape *s, int64_t i, char *buf,
		     size_t n);

#endif
