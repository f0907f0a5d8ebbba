/* The shapes a candidate is checked at: the task's public and hidden shapes, then shapes derived from
 * them — edge shapes (every free dim at its smallest value, at a prime, one past a power of two) and
 * residue shapes drawn per run from the secret seed, which together give every free dim every residue
 * mod 32 (so mod 2, 4, 8 and 16 too) its range and constraints allow. Derived values never pass the
 * largest value the task declares for a dim, always satisfy its `constraints`, and never touch a
 * fixed_dims dim. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier.h"

#define RESIDUE_MOD 32
#define RESIDUE_BUDGET_DIV 8 /* a residue shape costs at most 1/8 of the smallest public shape */

static bool is_prime(int64_t n)
{
	if (n < 2)
		return false;
	for (int64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
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

struct shape_list {
	struct kf_checked_shape *v;
	size_t n, cap;
};

static enum kf_status push(struct shape_list *l, const struct kf_shape *s, enum kf_shape_kind kind,
			   bool residue, bool dedup)
{
	if (dedup)
		for (size_t i = 0; i < l->n; i++)
			if (same_shape(&l->v[i].shape, s))
				return KF_OK;
	struct kf_checked_shape *nv = kf_grow(l->v, l->n, &l->cap, sizeof(*l->v), 16);
	if (!nv)
		return KF_ERR_NOMEM;
	l->v = nv;
	l->v[l->n].shape = *s;
	l->v[l->n].kind = kind;
	l->v[l->n].residue = residue;
	l->n++;
	return KF_OK;
}

/* The range a derived value of dim d may take: [lo, hi] stepping by m (constraints), hi never above the
 * largest value the task declares for the dim. */
struct dim_range {
	bool free;
	int64_t lo, hi, m;
};

static int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

/* The allowed value nearest to v: the smallest one >= v, or the largest one when none is. */
static int64_t snap(const struct dim_range *r, int64_t v)
{
	int64_t up = round_up(v < r->lo ? r->lo : v, r->m), down = r->hi / r->m * r->m;
	return up <= r->hi ? up : down;
}

/* The smallest allowed value of r congruent to res mod RESIDUE_MOD, or -1 when there is none. */
static int64_t first_with_residue(const struct dim_range *r, int64_t res)
{
	int64_t v = round_up(r->lo, r->m);
	for (int k = 0; k < RESIDUE_MOD && v <= r->hi; k++, v += r->m)
		if (v % RESIDUE_MOD == res)
			return v;
	return -1;
}

static int64_t gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Cost of a shape for the cpu backend: the elements of every tensor, and the flops when declared. */
static void shape_cost(const struct kf_task *t, const struct kf_shape *s, double *elems, double *flops)
{
	*elems = 0;
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t n;
		if (kf_task_numel(t, i, s, &n, NULL) == KF_OK)
			*elems += (double)n;
		else
			*elems = 1e300; /* undefined there: treated as over any budget */
	}
	if (!kf_task_flops(t, s, flops))
		*flops = 0;
}

static uint64_t draw(struct kf_rng *rng, uint64_t n)
{
	return n ? kf_rng_next(rng) % n : 0;
}

/* A prime in [hi/2, hi] drawn from rng (the largest prime <= hi when the draw finds none quickly),
 * snapped to the dim's constraint. */
static int64_t drawn_prime(const struct dim_range *r, struct kf_rng *rng)
{
	int64_t lo = r->hi / 2 > r->lo ? r->hi / 2 : r->lo;
	if (r->m == 1) {
		for (int tries = 0; tries < 64 && r->hi >= 2; tries++) {
			int64_t v = lo + (int64_t)draw(rng, (uint64_t)(r->hi - lo + 1));
			if (is_prime(v))
				return v;
		}
		for (int64_t v = r->hi; v >= 2 && v >= r->lo; v--)
			if (is_prime(v))
				return v;
	}
	/* no prime is allowed (multiple_of > 1) or none lies in range: the nearest allowed value */
	return snap(r, lo + (int64_t)draw(rng, (uint64_t)(r->hi - lo + 1)));
}

enum kf_status kf_verify_shapes(const struct kf_task *t, bool edges, bool timing, bool strict, uint64_t seed,
				struct kf_checked_shape **out, size_t *n, struct kf_err *err)
{
	struct shape_list l = {0};
	struct dim_range R[KF_MAX_DIMS];
	enum kf_status st = KF_OK;
	size_t n_declared;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n_public && !st; i++)
		st = push(&l, &t->shapes_public[i], KF_SHAPE_PUBLIC, false, false);
	for (size_t i = 0; i < t->n_hidden && !st; i++)
		st = push(&l, &t->shapes_hidden[i], KF_SHAPE_HIDDEN, false, false);
	n_declared = l.n;

	if (!st && edges && t->n_public) {
		const struct kf_shape *base = &t->shapes_public[0];
		struct kf_rng rng;
		double budget_elems = 0, budget_flops = 0;
		size_t n_res = 0;
		int64_t res[KF_MAX_DIMS][RESIDUE_MOD];
		size_t n_r[KF_MAX_DIMS];

		kf_rng_seed(&rng, kf_mix64(seed ^ 0x7265736964756573ull)); /* "residues" */
		for (size_t d = 0; d < t->n_dims && d < KF_MAX_DIMS; d++) {
			const struct kf_dim_constraint *c = &t->constraints[d];
			int64_t maxv = 0, b;
			for (size_t i = 0; i < n_declared; i++) {
				int64_t v;
				if (kf_shape_get(&l.v[i].shape, t->dims[d], &v) && v > maxv)
					maxv = v;
			}
			R[d].free = !kf_task_dim_fixed(t, d) && kf_shape_get(base, t->dims[d], &b);
			R[d].m = c->set ? c->multiple_of : 1;
			R[d].lo = c->set ? c->min : 1;
			R[d].hi = c->set && c->max < maxv ? c->max : maxv;
			/* a declared value satisfies the constraints, so the range holds one at least */
			if (R[d].hi < R[d].lo)
				R[d].free = false;
			n_r[d] = 0;
			for (int64_t r = 0; R[d].free && r < RESIDUE_MOD; r++)
				if (first_with_residue(&R[d], r) >= 0)
					res[d][n_r[d]++] = r;
			if (n_r[d] > n_res)
				n_res = n_r[d];
		}
		/* the budget of a residue shape: an eighth of the smallest public shape (the cheapest size
		 * the task itself proposes for the cpu backend), so the 32 of them together cost about four
		 * public shapes; they exist for the tails, which small sizes reach as well */
		for (size_t i = 0; i < t->n_public; i++) {
			double e, f;
			shape_cost(t, &t->shapes_public[i], &e, &f);
			if (!i || e < budget_elems)
				budget_elems = e;
			if (!i || f < budget_flops)
				budget_flops = f;
		}
		budget_elems /= RESIDUE_BUDGET_DIV;
		budget_flops /= RESIDUE_BUDGET_DIV;

		/* Edge shapes, all free dims at once: the smallest values, primes, one past a power of two.
		 */
		for (int which = 0; which < 3 && !st; which++) {
			struct kf_shape s = *base;
			bool any = false;
			for (size_t d = 0; d < t->n_dims; d++) {
				int64_t b, v;
				if (!R[d].free)
					continue;
				kf_shape_get(base, t->dims[d], &b);
				if (which == 0)
					v = snap(&R[d], R[d].lo);
				else if (which == 1)
					v = drawn_prime(&R[d], &rng);
				else
					v = snap(&R[d],
						 pow2_plus1_at_most(b * 2 < R[d].hi ? b * 2 : R[d].hi));
				kf_shape_set(&s, t->dims[d], v);
				any = true;
			}
			if (any)
				st = push(&l, &s, KF_SHAPE_EDGE, false, true);
		}
		/* Strict (plausibility re-check): also each dim alone at those values. */
		for (size_t d = 0; strict && d < t->n_dims && !st; d++) {
			int64_t b;
			if (!R[d].free)
				continue;
			kf_shape_get(base, t->dims[d], &b);
			for (int which = 0; which < 3 && !st; which++) {
				struct kf_shape s = *base;
				int64_t v =
				    which == 0 ? snap(&R[d], R[d].lo)
				    : which == 1
					? drawn_prime(&R[d], &rng)
					: snap(&R[d], pow2_plus1_at_most(b * 2 < R[d].hi ? b * 2 : R[d].hi));
				kf_shape_set(&s, t->dims[d], v);
				st = push(&l, &s, KF_SHAPE_EDGE, false, true);
			}
		}

		/* Residue shapes: n_res of them (32 when any free dim spans 32 allowed values). In shape j
		 * each free dim takes residue perm_d[j] mod 32, where perm_d runs through the dim's reachable
		 * residues (cycled to n_res) in an order drawn from the seed, so every dim meets every
		 * residue while the dims vary together. The value is the first allowed one of that residue
		 * plus a drawn number of whole periods, shrunk until the shape costs no more than an
		 * eighth of the smallest public shape (elements, and flops when the task declares them). */
		if (n_res > 1) {
			size_t perm[KF_MAX_DIMS][RESIDUE_MOD];
			for (size_t d = 0; d < t->n_dims; d++) {
				if (!R[d].free || !n_r[d])
					continue;
				for (size_t j = 0; j < n_res; j++)
					perm[d][j] = j % n_r[d];
				for (size_t j = n_res; j > 1; j--) {
					size_t k = (size_t)draw(&rng, j), tmp = perm[d][j - 1];
					perm[d][j - 1] = perm[d][k];
					perm[d][k] = tmp;
				}
			}
			for (size_t j = 0; j < n_res && !st; j++) {
				struct kf_shape s = *base;
				int64_t first[KF_MAX_DIMS], step[KF_MAX_DIMS], periods[KF_MAX_DIMS];
				for (size_t d = 0; d < t->n_dims; d++) {
					int64_t r, room;
					periods[d] = 0;
					if (!R[d].free || !n_r[d])
						continue;
					r = res[d][perm[d][j]];
					first[d] = first_with_residue(&R[d], r);
					step[d] = RESIDUE_MOD / gcd(RESIDUE_MOD, R[d].m) * R[d].m;
					room = (R[d].hi - first[d]) / step[d];
					periods[d] = room > 0 ? (int64_t)draw(&rng, (uint64_t)room + 1) : 0;
				}
				for (int shrink = 0; shrink < 64; shrink++) {
					double e, f;
					size_t big = KF_MAX_DIMS;
					for (size_t d = 0; d < t->n_dims; d++)
						if (R[d].free && n_r[d])
							kf_shape_set(&s, t->dims[d],
								     first[d] + periods[d] * step[d]);
					shape_cost(t, &s, &e, &f);
					if (e <= budget_elems && (!budget_flops || f <= budget_flops))
						break;
					for (size_t d = 0; d < t->n_dims; d++)
						if (R[d].free && n_r[d] && periods[d] > 0 &&
						    (big == KF_MAX_DIMS ||
						     periods[d] * step[d] > periods[big] * step[big]))
							big = d;
					if (big == KF_MAX_DIMS)
						break; /* every dim at its first value of the residue: as
							  small as it gets */
					periods[big] /= 2;
				}
				st = push(&l, &s, KF_SHAPE_EDGE, true, true);
			}
		}
	}
	for (size_t i = 0; timing && i < t->n_timing && !st; i++)
		st = push(&l, &t->shapes_timing[i], KF_SHAPE_TIMING, false, true);

	if (st) {
		free(l.v);
		return kf_err_set(err, st, "out of memory building shapes");
	}
	*out = l.v;
	*n = l.n;
	return KF_OK;
}

/* ---- describing a shape without its values ---------------------------------------------------- */

/* Does value v of dim d occur in a shape the LLM is shown (public, or timing that is not hidden)? */
static bool value_public(const struct kf_task *t, const char *dim, int64_t v)
{
	for (size_t i = 0; i < t->n_public; i++) {
		int64_t x;
		if (kf_shape_get(&t->shapes_public[i], dim, &x) && x == v)
			return true;
	}
	for (size_t i = 0; i < t->n_timing; i++) {
		int64_t x;
		bool hidden = false;
		for (size_t h = 0; h < t->n_hidden && !hidden; h++)
			hidden = same_shape(&t->shapes_timing[i], &t->shapes_hidden[h]);
		if (!hidden && kf_shape_get(&t->shapes_timing[i], dim, &x) && x == v)
			return true;
	}
	return false;
}

void kf_shape_describe_hidden(const struct kf_task *t, const struct kf_shape *s, char *buf, size_t n)
{
	struct kf_buf b = KF_BUF_INIT(n ? n - 1 : 0);
	bool first = true;

	if (!n)
		return;
	for (size_t d = 0; d < t->n_dims; d++) {
		int64_t v;
		int k = 0;
		if (!kf_shape_get(s, t->dims[d], &v))
			continue;
		kf_buf_adds(&b, first ? "" : "; ");
		first = false;
		if (value_public(t, t->dims[d], v)) {
			kf_buf_addf(&b, "%s=%lld (as in a shown shape)", t->dims[d], (long long)v);
			continue;
		}
		if (v == 1) {
			kf_buf_addf(&b, "%s = 1", t->dims[d]);
			continue;
		}
		while (k < 62 && ((int64_t)1 << (k + 1)) <= v)
			k++;
		/* 2^k <= v < 2^(k+1): the size class, written as powers so the value itself never appears */
		kf_buf_addf(&b, "2^%d <= %s < 2^%d", k, t->dims[d], k + 1);
		/* below 64 a residue mod 32 plus the size class would give the value away: parity only */
		if (v >= 2 * RESIDUE_MOD)
			kf_buf_addf(&b, ", %s %% %d == %lld", t->dims[d], RESIDUE_MOD,
				    (long long)(v % RESIDUE_MOD));
		else
			kf_buf_addf(&b, ", %s %s", t->dims[d], v % 2 ? "odd" : "even");
		if (v > 3 && is_prime(v))
			kf_buf_addf(&b, ", %s prime", t->dims[d]);
	}
	snprintf(buf, n, "%s", b.data ? b.data : "");
	kf_buf_release(&b);
}

static const char *kind_phrase(enum kf_shape_kind k)
{
	switch (k) {
	case KF_SHAPE_HIDDEN:
		return "a hidden shape of the task";
	case KF_SHAPE_EDGE:
		return "an edge shape the verifier derives";
	case KF_SHAPE_TIMING:
		return "a timing shape";
	default:
		return "a public shape";
	}
}

static void feedback_text(const struct kf_task *t, const char *verdict, const char *tensor, const char *dist,
			  enum kf_shape_kind kind, const struct kf_shape *s, char *buf, size_t n)
{
	char d[512], in[KF_NAME_MAX + 16] = "", with[48] = "";
	kf_shape_describe_hidden(t, s, d, sizeof(d));
	if (tensor && *tensor)
		snprintf(in, sizeof(in), " in '%s'", tensor);
	if (dist && *dist)
		snprintf(with, sizeof(with), " with %s inputs", strcmp(dist, "init") ? dist : "typical");
	snprintf(buf, n,
		 "%s%s%s at a shape you are not shown (%s): %s. Make the kernel correct for every value of "
		 "the dims.",
		 verdict, in, with, kind_phrase(kind), d);
}

void kf_shape_report_feedback(const struct kf_task *t, const struct kf_shape_report *r, char *buf, size_t n)
{
	if (!n)
		return;
	feedback_text(t, kf_verdict_name(r->status), r->tensor, kf_input_dist_name(r->dist), r->kind,
		      &r->shape, buf, n);
}

void kf_verify_reason_feedback(const struct kf_task *t, const char *reason, char *buf, size_t n)
{
	/* result_reason's form: "VERDICT at D=V D=V (KIND shape, DIST inputs, case seed 0x...): DETAIL" */
	const char *at = strstr(reason, " at "), *open = at ? strstr(at, " (") : NULL, *kind_end, *dist_end;
	char verdict[32], kind[16], dist[16], tensor[KF_NAME_MAX] = "";
	struct kf_shape s = {0};
	enum kf_shape_kind k = KF_SHAPE_PUBLIC;

	if (!n)
		return;
	kind_end = open ? strstr(open, " shape, ") : NULL;
	dist_end = kind_end ? strstr(kind_end, " inputs") : NULL;
	if (!at || !open || !kind_end || !dist_end || at - reason >= (ptrdiff_t)sizeof(verdict) ||
	    kind_end - open - 2 >= (ptrdiff_t)sizeof(kind) ||
	    dist_end - kind_end - 8 >= (ptrdiff_t)sizeof(dist)) {
		snprintf(buf, n, "%s", reason);
		return;
	}
	snprintf(verdict, sizeof(verdict), "%.*s", (int)(at - reason), reason);
	snprintf(kind, sizeof(kind), "%.*s", (int)(kind_end - open - 2), open + 2);
	snprintf(dist, sizeof(dist), "%.*s", (int)(dist_end - kind_end - 8), kind_end + 8);
	if (!strcmp(kind, "public")) {
		snprintf(buf, n, "%s", reason);
		return;
	}
	k = !strcmp(kind, "hidden")   ? KF_SHAPE_HIDDEN
	    : !strcmp(kind, "timing") ? KF_SHAPE_TIMING
				      : KF_SHAPE_EDGE;
	/* the shape: NAME=VALUE pairs between " at " and " (" */
	for (const char *p = at + 4; p < open;) {
		char name[KF_NAME_MAX];
		size_t len = strcspn(p, "=");
		long long v;
		char *end;
		if (p + len >= open || len == 0 || len >= sizeof(name))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		v = strtoll(p + len + 1, &end, 10);
		kf_shape_set(&s, name, v);
		p = end;
		while (p < open && *p == ' ')
			p++;
	}
	{
		const char *o = strstr(dist_end, "output '");
		if (o) {
			o += 8;
			snprintf(tensor, sizeof(tensor), "%.*s", (int)strcspn(o, "'"), o);
		}
	}
	feedback_text(t, verdict, tensor, dist, k, &s, buf, n);
}
