/* The shapes a candidate is checked at: the task's public and hidden shapes, then edge shapes derived
 * from them (dims of 1, primes, one past a power of two), bounded by what the task declares. */
#include <stdlib.h>
#include <string.h>

#include "verifier.h"

static bool is_prime(int64_t n)
{
	if (n < 2)
		return false;
	for (int64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

static int64_t prime_at_most(int64_t n)
{
	for (int64_t p = n; p >= 2; p--)
		if (is_prime(p))
			return p;
	return 1;
}

/* The largest 2^k + 1 that is <= n (and >= 3), else n. */
static int64_t pow2_plus1_at_most(int64_t n)
{
	int64_t best = 0;
	for (int64_t p = 2; p + 1 <= n && p < ((int64_t)1 << 40); p *= 2)
		best = p + 1;
	return best ? best : n;
}

static bool same_shape(const struct kf_shape *a, const struct kf_shape *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		int64_t v;
		if (!kf_shape_get(b, a->names[i], &v) || v != a->values[i])
			return false;
	}
	return true;
}

static bool is_fixed(const struct kf_task *t, const char *dim)
{
	for (size_t i = 0; i < t->n_fixed; i++)
		if (!strcmp(t->fixed_dims[i], dim))
			return true;
	return false;
}

struct shape_list {
	struct kf_shape *v;
	enum kf_shape_kind *k;
	size_t n, cap;
};

static enum kf_status push(struct shape_list *l, const struct kf_shape *s, enum kf_shape_kind kind,
			   bool dedup)
{
	if (dedup)
		for (size_t i = 0; i < l->n; i++)
			if (same_shape(&l->v[i], s))
				return KF_OK;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		struct kf_shape *nv = realloc(l->v, nc * sizeof(*nv));
		enum kf_shape_kind *nk;
		if (!nv)
			return KF_ERR_NOMEM;
		l->v = nv;
		nk = realloc(l->k, nc * sizeof(*nk));
		if (!nk)
			return KF_ERR_NOMEM;
		l->k = nk;
		l->cap = nc;
	}
	l->v[l->n] = *s;
	l->k[l->n] = kind;
	l->n++;
	return KF_OK;
}

/* Edge variants of dim value base with declared maximum max. */
static int64_t edge_value(int which, int64_t base, int64_t max)
{
	switch (which) {
	case 0:
		return 1;
	case 1:
		return prime_at_most(base >= 2 ? base : max);
	default: {
		int64_t lim = base * 2 < max ? base * 2 : max;
		return pow2_plus1_at_most(lim);
	}
	}
}

enum kf_status kf_verify_shapes(const struct kf_task *t, bool edges, bool timing, bool strict,
				struct kf_shape **shapes, enum kf_shape_kind **kinds, size_t *n,
				struct kf_err *err)
{
	struct shape_list l = {0};
	int64_t maxv[KF_MAX_DIMS];
	enum kf_status st = KF_OK;

	for (size_t i = 0; i < t->n_public && !st; i++)
		st = push(&l, &t->shapes_public[i], KF_SHAPE_PUBLIC, false);
	for (size_t i = 0; i < t->n_hidden && !st; i++)
		st = push(&l, &t->shapes_hidden[i], KF_SHAPE_HIDDEN, false);

	if (!st && edges && t->n_public) {
		const struct kf_shape *base = &t->shapes_public[0];
		for (size_t d = 0; d < t->n_dims; d++) {
			maxv[d] = 0;
			for (size_t i = 0; i < l.n; i++) {
				int64_t v;
				if (kf_shape_get(&l.v[i], t->dims[d], &v) && v > maxv[d])
					maxv[d] = v;
			}
		}
		/* All varying dims at once: 1s, primes, 2^k+1. */
		for (int which = 0; which < 3 && !st; which++) {
			struct kf_shape s = *base;
			bool any = false;
			for (size_t d = 0; d < t->n_dims; d++) {
				int64_t b, v;
				if (is_fixed(t, t->dims[d]) || !kf_shape_get(base, t->dims[d], &b))
					continue;
				v = edge_value(which, b, maxv[d]);
				if (v > maxv[d])
					v = maxv[d];
				if (v < 1)
					v = 1;
				kf_shape_set(&s, t->dims[d], v);
				any = true;
			}
			if (any)
				st = push(&l, &s, KF_SHAPE_EDGE, true);
		}
		/* Strict (plausibility re-check): also each dim alone at 1 and at a prime. */
		for (size_t d = 0; strict && d < t->n_dims && !st; d++) {
			int64_t b;
			if (is_fixed(t, t->dims[d]) || !kf_shape_get(base, t->dims[d], &b))
				continue;
			for (int which = 0; which < 3 && !st; which++) {
				struct kf_shape s = *base;
				int64_t v = edge_value(which, b, maxv[d]);
				kf_shape_set(&s, t->dims[d], v > maxv[d] ? maxv[d] : v);
				st = push(&l, &s, KF_SHAPE_EDGE, true);
			}
		}
	}
	for (size_t i = 0; timing && i < t->n_timing && !st; i++)
		st = push(&l, &t->shapes_timing[i], KF_SHAPE_TIMING, true);

	if (st) {
		free(l.v);
		free(l.k);
		return kf_err_set(err, st, "out of memory building shapes");
	}
	*shapes = l.v;
	*kinds = l.k;
	*n = l.n;
	return KF_OK;
}
