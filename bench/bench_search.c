/* Search efficiency, offline: the search strategies of agent/search.c (evo, mcts, schedule) driven by a
 * simulated model that answers from a seeded library of candidate kernels with known verdicts and true
 * speedups, timed with seeded noise, against random sampling (independent seeds from the reference) at the
 * same call budget. Prints, per budget, the mean true speedup of the kernel each search reports as best
 * (the one with the best measured speedup) and its ratio to random sampling. Exits 1 when the schedule is
 * not ahead of random sampling at a budget of 20 calls or more.
 *
 * The library is a model of the search problem, not a measurement of an LLM: 8 approaches ("families"),
 * each with a first-try speedup, a pass rate, and diminishing gains per refinement step (6 steps); each
 * (approach, step) holds 6 candidate kernels (some fail verification, the rest spread around the step's
 * speedup). A seed implements the approach its strategy names (random sampling: a random approach); a
 * refinement answers with a kernel one step further in its parent's approach; a repair with another kernel
 * of the failed one's step, more often correct; 8% of the replies are unusable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search.h"

#define FAMILIES 8
#define LEVELS 6
#define VARIANTS 6
#define STRATEGIES 4 /* proposed by the strategy call (one call of the budget) */
#define TRIALS 300
#define NOISE_SIGMA 0.08 /* log-normal timing noise of one measured speedup */
#define P_UNUSABLE 0.08
#define LIB_SEED 2026

struct entry {
	bool pass;
	double speedup; /* true */
};

struct library {
	double p_pass[FAMILIES];
	struct entry e[FAMILIES][LEVELS][VARIANTS];
};

struct sim_cand {
	int family, level;
	double true_speedup, measured;
	bool pass;
};

static void library_make(struct library *lib)
{
	struct kf_rng r;
	kf_rng_seed(&r, LIB_SEED);
	for (int f = 0; f < FAMILIES; f++) {
		double base = exp(0.5 * kf_rng_normal(&r)) * 0.9;
		base = base < 0.3 ? 0.3 : base > 3.0 ? 3.0 : base;
		lib->p_pass[f] = 0.35 + 0.5 * kf_rng_uniform(&r);
		double level = base;
		for (int l = 0; l < LEVELS; l++) {
			if (l) {
				double g = 0.15 + 0.1 * kf_rng_normal(&r);
				level *= 1.0 + (g > 0 ? g : 0) * pow(0.75, l - 1);
			}
			for (int v = 0; v < VARIANTS; v++) {
				struct entry *e = &lib->e[f][l][v];
				e->pass = kf_rng_uniform(&r) < lib->p_pass[f];
				e->speedup = level * exp(0.15 * kf_rng_normal(&r));
			}
		}
	}
}

/* A kernel of (f, l): a pass with probability p (drawn among the entries of that verdict). */
static struct sim_cand answer(const struct library *lib, int f, int l, double p, struct kf_rng *r)
{
	struct sim_cand c = {f, l, 0, 0, false};
	bool want = kf_rng_uniform(r) < p;
	int start = (int)(kf_rng_next(r) % VARIANTS), v = start;
	for (int i = 0; i < VARIANTS; i++) {
		v = (start + i) % VARIANTS;
		if (lib->e[f][l][v].pass == want)
			break;
	}
	c.pass = lib->e[f][l][v].pass;
	c.true_speedup = lib->e[f][l][v].speedup;
	c.measured = c.true_speedup * exp(NOISE_SIGMA * kf_rng_normal(r));
	return c;
}

/* The true speedup of the kernel the search reports (best measured; the reference when none passed). */
static double reported(const struct sim_cand *v, size_t n)
{
	double best_m = 0, true_s = 1.0;
	for (size_t i = 0; i < n; i++)
		if (v[i].pass && v[i].measured > best_m) {
			best_m = v[i].measured;
			true_s = v[i].true_speedup;
		}
	return best_m > 1.0 ? true_s : 1.0; /* a measured loss is not shipped: the reference stands */
}

static double run_random(const struct library *lib, int budget, uint64_t seed)
{
	struct sim_cand v[256];
	struct kf_rng r;
	kf_rng_seed(&r, seed);
	for (int k = 0; k < budget; k++) {
		if (kf_rng_uniform(&r) < P_UNUSABLE) {
			v[k].pass = false;
			continue;
		}
		int f = (int)(kf_rng_next(&r) % FAMILIES);
		v[k] = answer(lib, f, 0, lib->p_pass[f], &r);
	}
	return reported(v, (size_t)budget);
}

static double run_search(const struct library *lib, enum kf_strategy st, int budget, uint64_t seed,
			 int *calls)
{
	struct sim_cand v[256];
	size_t n = 1;
	int strat[STRATEGIES];
	struct kf_rng r;
	struct kf_search *s = kf_search_new(st, NULL);
	struct kf_search_cand root = {.parent = -1};

	kf_rng_seed(&r, seed);
	kf_search_add(s, &root, false);
	kf_search_set_budget(s, budget);
	/* the strategy call: the model proposes distinct approaches (not necessarily the best ones) */
	for (int i = 0; i < STRATEGIES; i++) {
		bool dup;
		do {
			strat[i] = (int)(kf_rng_next(&r) % FAMILIES);
			dup = false;
			for (int j = 0; j < i; j++)
				dup |= strat[j] == strat[i];
		} while (dup);
	}
	kf_search_set_strategies(s, STRATEGIES);
	memset(&v[0], 0, sizeof(v[0]));
	int k;
	for (k = 1; k < budget && !kf_search_stagnant(s); k++) {
		struct kf_search_pick p;
		struct kf_rng pr;
		kf_rng_seed(&pr, seed ^ kf_mix64((uint64_t)k + 1));
		kf_search_pick(s, (uint64_t)k, &pr, &p);
		if (kf_rng_uniform(&r) < P_UNUSABLE) {
			kf_search_note_unusable(s);
			kf_search_pick_void(s, &p);
			continue;
		}
		struct sim_cand c;
		const struct sim_cand *par = &v[p.parent];
		if (p.parent == 0) {
			int f = p.strategy >= 0 ? strat[p.strategy] : (int)(kf_rng_next(&r) % FAMILIES);
			c = answer(lib, f, 0, lib->p_pass[f], &r);
		} else if (!par->pass) {
			double pf = lib->p_pass[par->family] + 0.25;
			c = answer(lib, par->family, par->level, pf > 0.9 ? 0.9 : pf, &r);
		} else {
			int l = par->level + 1 < LEVELS ? par->level + 1 : par->level;
			c = answer(lib, par->family, l, lib->p_pass[par->family], &r);
		}
		struct kf_search_cand sc = {0};
		sc.parent = p.parent;
		sc.island = p.island;
		sc.strategy = p.strategy;
		sc.correct = c.pass;
		sc.failed = !c.pass;
		sc.speedup = c.pass ? c.measured : 0;
		sc.lo = c.pass ? c.measured * exp(-2.0 * NOISE_SIGMA) : 0;
		sc.repairable = true;
		sc.cell = c.family * 6 + c.level;
		kf_search_add(s, &sc, true);
		v[n++] = c;
	}
	*calls = k;
	kf_search_free(s);
	return reported(v + 1, n - 1);
}

int main(void)
{
	static const int budgets[] = {10, 20, 40, 80};
	static const enum kf_strategy strategies[] = {KF_STRATEGY_EVO, KF_STRATEGY_MCTS,
						      KF_STRATEGY_SCHEDULE};
	struct library lib;
	int rc = 0;
	double t0 = kf_now_ms();

	library_make(&lib);
	printf(
	    "search efficiency: simulated model, library of %d approaches x %d steps x %d kernels, %d trials "
	    "per cell, timing noise sigma %.2f\n",
	    FAMILIES, LEVELS, VARIANTS, TRIALS, NOISE_SIGMA);
	{
		/* what the library holds: the best correct kernel at the first try and at the last step */
		double f0 = 0, fl = 0;
		for (int f = 0; f < FAMILIES; f++)
			for (int v = 0; v < VARIANTS; v++) {
				if (lib.e[f][0][v].pass && lib.e[f][0][v].speedup > f0)
					f0 = lib.e[f][0][v].speedup;
				if (lib.e[f][LEVELS - 1][v].pass && lib.e[f][LEVELS - 1][v].speedup > fl)
					fl = lib.e[f][LEVELS - 1][v].speedup;
			}
		printf(
		    "library: best correct first try %.2fx, best correct kernel after %d refinements %.2fx\n",
		    f0, LEVELS - 1, fl);
	}
	printf("mean true speedup of the reported best kernel (ratio to random sampling at the same budget; "
	       "calls used: mean, the rest left by the patience stop)\n");
	printf("%8s %14s", "budget", "random");
	for (size_t i = 0; i < KF_ARRAY_SIZE(strategies); i++)
		printf(" %26s", kf_strategy_name(strategies[i]));
	printf("\n");
	for (size_t b = 0; b < KF_ARRAY_SIZE(budgets); b++) {
		double rnd = 0;
		for (int t = 0; t < TRIALS; t++)
			rnd += run_random(&lib, budgets[b], 1000003ull * (uint64_t)t + 17);
		rnd /= TRIALS;
		printf("%8d %13.3fx", budgets[b], rnd);
		for (size_t i = 0; i < KF_ARRAY_SIZE(strategies); i++) {
			double acc = 0, used = 0;
			for (int t = 0; t < TRIALS; t++) {
				int calls = 0;
				acc += run_search(&lib, strategies[i], budgets[b],
						  1000003ull * (uint64_t)t + 17, &calls);
				used += calls;
			}
			acc /= TRIALS;
			printf(" %8.3fx (%5.2f, %5.1f calls)", acc, acc / rnd, used / TRIALS);
			if (strategies[i] == KF_STRATEGY_SCHEDULE && budgets[b] >= 20 && acc <= rnd) {
				fprintf(stderr,
					"bench_search: the schedule is not ahead of random sampling at %d "
					"calls\n",
					budgets[b]);
				rc = 1;
			}
		}
		printf("\n");
	}
	printf("(%.0f ms)\n", kf_now_ms() - t0);
	return rc;
}
