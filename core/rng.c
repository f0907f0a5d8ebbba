/* core/rng.h: xoshiro256** (Blackman and Vigna, 2018) and its helpers. */
#include "rng.h"

#include <math.h>

uint64_t kf_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void kf_rng_seed(struct kf_rng *r, uint64_t seed)
{
	r->has_spare = false;
	r->spare = 0;
	for (int i = 0; i < 4; i++) {
		seed = kf_mix64(seed + (uint64_t)i);
		r->s[i] = seed ? seed : 1;
	}
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t kf_rng_next(struct kf_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t kf_rng_below(struct kf_rng *r, uint64_t n)
{
	/* Lemire 2019: the high word of x*n is uniform once the low word clears the threshold. */
	unsigned __int128 m = (unsigned __int128)kf_rng_next(r) * n;
	uint64_t lo = (uint64_t)m;
	if (lo < n) {
		uint64_t thresh = -n % n;
		while (lo < thresh) {
			m = (unsigned __int128)kf_rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double kf_rng_uniform(struct kf_rng *r)
{
	return (double)(kf_rng_next(r) >> 11) * 0x1.0p-53;
}

double kf_rng_normal(struct kf_rng *r)
{
	double u, v, q, f;
	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	/* Marsaglia's polar method: two normals per accepted pair, no trigonometry. */
	do {
		u = 2.0 * kf_rng_uniform(r) - 1.0;
		v = 2.0 * kf_rng_uniform(r) - 1.0;
		q = u * u + v * v;
	} while (q >= 1.0 || q == 0.0);
	f = sqrt(-2.0 * log(q) / q);
	r->spare = v * f;
	r->has_spare = true;
	return u * f;
}
