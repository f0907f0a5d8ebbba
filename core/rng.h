/* The one deterministic generator: xoshiro256** seeded through the splitmix64 finalizer, with unbiased
 * bounded integers (Lemire) and normals by Marsaglia's polar method. The verifier draws every input from it
 * (bit for bit what it always drew: the reference cache's INPUTS_VERSION stands), and so do the bootstrap
 * intervals, the search's choices and the tests' synthetic samples. Same seed, same stream, everywhere. */
#ifndef KF_RNG_H
#define KF_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct kf_rng {
	uint64_t s[4];
	bool has_spare; /* the polar method makes normals in pairs; the second waits here */
	double spare;
};

uint64_t kf_mix64(uint64_t x); /* the splitmix64 finalizer: a well-mixed 64-bit hash */
void kf_rng_seed(struct kf_rng *r, uint64_t seed);
uint64_t kf_rng_next(struct kf_rng *r);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t kf_rng_below(struct kf_rng *r, uint64_t n);
double kf_rng_uniform(struct kf_rng *r); /* [0, 1) with 53 random bits */
double kf_rng_normal(struct kf_rng *r);  /* standard normal */

#endif
