/* The bootstrap interval of a speedup measured through an intermediary: a ratio from one timing session
 * times a ratio from another (a candidate over a baseline timed once per search, through the reference
 * both sessions timed: ref/cand x base/ref). Each session is resampled on its own, in its pairs, and the
 * two resampled ratios are multiplied: the sessions are independent, so their errors compound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

/* One sample of times, sorted once: a resample is then a count per rank and its median a walk over them. */
struct ranked_sample {
	size_t n;
	double *sorted;
	uint32_t *rank;  /* rank[i]: the position of the i-th time in sorted */
	uint32_t *count; /* draws per rank in the current resample */
};

struct idx_val {
	double v;
	uint32_t i;
};

static int cmp_idx_val(const void *a, const void *b)
{
	const struct idx_val *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void sample_release(struct ranked_sample *s)
{
	free(s->sorted);
	free(s->rank);
	free(s->count);
	memset(s, 0, sizeof(*s));
}

static enum kf_status sample_make(const double *x, size_t n, const char *what, struct ranked_sample *s,
				  struct kf_err *err)
{
	struct idx_val *t;
	memset(s, 0, sizeof(*s));
	if (!x || !n)
		return kf_err_set(err, KF_ERR_INVALID, "the %s sample is empty", what);
	if (n > UINT32_MAX)
		return kf_err_set(err, KF_ERR_INVALID, "too many %s samples for the bootstrap", what);
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0) || !isfinite(x[i]))
			return kf_err_set(err, KF_ERR_INVALID, "%s sample %zu is not a positive time", what,
					  i);
	s->n = n;
	s->sorted = malloc(n * sizeof(*s->sorted));
	s->rank = malloc(n * sizeof(*s->rank));
	s->count = malloc(n * sizeof(*s->count));
	t = malloc(n * sizeof(*t));
	if (!s->sorted || !s->rank || !s->count || !t) {
		free(t);
		sample_release(s);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory for the bootstrap");
	}
	for (size_t i = 0; i < n; i++)
		t[i] = (struct idx_val){x[i], (uint32_t)i};
	qsort(t, n, sizeof(*t), cmp_idx_val);
	for (size_t r = 0; r < n; r++) {
		s->sorted[r] = t[r].v;
		s->rank[t[r].i] = (uint32_t)r;
	}
	free(t);
	return KF_OK;
}

/* The type-7 median of the resample that drew count[r] copies of sorted[r] (n draws in all). */
static double counts_median(const struct ranked_sample *s)
{
	size_t lo = (s->n - 1) / 2, hi = s->n / 2, seen = 0;
	double vlo = 0, vhi = 0;
	bool have_lo = false;
	for (size_t r = 0; r < s->n; r++) {
		seen += s->count[r];
		if (!have_lo && seen > lo) {
			vlo = s->sorted[r];
			have_lo = true;
		}
		if (seen > hi) {
			vhi = s->sorted[r];
			break;
		}
	}
	return (vlo + vhi) / 2;
}

/* One resample of a session's ratio median(num) / median(den): paired draws keep (num[j], den[j]) together
 * (both taken A B A B, they share the session's drift). */
static double resample_ratio(struct ranked_sample *num, struct ranked_sample *den, bool paired,
			     struct kf_rng *rng)
{
	memset(num->count, 0, num->n * sizeof(*num->count));
	memset(den->count, 0, den->n * sizeof(*den->count));
	if (paired) {
		for (size_t i = 0; i < num->n; i++) {
			size_t j = (size_t)kf_rng_below(rng, num->n);
			num->count[num->rank[j]]++;
			den->count[den->rank[j]]++;
		}
	} else {
		for (size_t i = 0; i < num->n; i++)
			num->count[kf_rng_below(rng, num->n)]++;
		for (size_t i = 0; i < den->n; i++)
			den->count[kf_rng_below(rng, den->n)]++;
	}
	return counts_median(num) / counts_median(den);
}

static double sorted_median(const struct ranked_sample *s)
{
	return kf_stats_quantile_sorted(s->sorted, s->n, 0.5);
}

enum kf_status kf_boot_ratio_product(const double *a_num, const double *a_den, size_t n_a, size_t n_a_den,
				     const double *b_num, const double *b_den, size_t n_b, size_t n_b_den,
				     const struct kf_boot_opts *opts, struct kf_ci *out, struct kf_err *err)
{
	struct kf_boot_opts o = opts ? *opts : (struct kf_boot_opts){0};
	struct ranked_sample s[4];
	double *prod = NULL;
	struct kf_rng rng;
	enum kf_status st;
	bool pa, pb;

	memset(out, 0, sizeof(*out));
	memset(s, 0, sizeof(s));
	if (o.resamples == 0)
		o.resamples = 10000;
	if (o.level == 0)
		o.level = 0.95;
	if (!(o.level > 0 && o.level < 1))
		return kf_err_set(err, KF_ERR_INVALID, "confidence level %g is not in (0, 1)", o.level);
	/* a session whose two samples differ in length (a kernel dropped out) is resampled unpaired */
	pa = o.paired && n_a == n_a_den;
	pb = o.paired && n_b == n_b_den;
	if ((st = sample_make(a_num, n_a, "first numerator", &s[0], err)) ||
	    (st = sample_make(a_den, n_a_den, "first denominator", &s[1], err)) ||
	    (st = sample_make(b_num, n_b, "second numerator", &s[2], err)) ||
	    (st = sample_make(b_den, n_b_den, "second denominator", &s[3], err)))
		goto out;
	if (!(prod = malloc((size_t)o.resamples * sizeof(*prod)))) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory for the bootstrap");
		goto out;
	}
	out->level = o.level;
	out->point =
	    sorted_median(&s[0]) / sorted_median(&s[1]) * (sorted_median(&s[2]) / sorted_median(&s[3]));
	kf_rng_seed(&rng, o.seed);
	for (uint32_t r = 0; r < o.resamples; r++) {
		double a = resample_ratio(&s[0], &s[1], pa, &rng);
		prod[r] = a * resample_ratio(&s[2], &s[3], pb, &rng);
	}
	qsort(prod, o.resamples, sizeof(*prod), cmp_double);
	out->lo = kf_stats_quantile_sorted(prod, o.resamples, (1.0 - o.level) / 2.0);
	out->hi = kf_stats_quantile_sorted(prod, o.resamples, (1.0 + o.level) / 2.0);
out:
	for (size_t i = 0; i < KF_ARRAY_SIZE(s); i++)
		sample_release(&s[i]);
	free(prod);
	return st;
}
