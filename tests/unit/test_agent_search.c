/* Tests of the search strategies' parent choice (agent/search.c): evo repairs, exploitation, MAP-Elites
 * cells, migration and seed reproducibility; MCTS virtual visits, progressive widening, UCT preference,
 * failure penalties and the equivalence of a live tree with one rebuilt from records (what --resume does). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/search.h"
#include "json.h"
#include "testing.h"

static struct kf_search_cand mk(int parent, bool correct, double speedup, int island, int cell)
{
	struct kf_search_cand c = {0};
	c.parent = parent;
	c.correct = correct;
	c.failed = !correct;
	c.speedup = correct ? speedup : 0;
	c.island = island;
	c.cell = cell;
	return c;
}

static struct kf_search *with_root(enum kf_strategy s)
{
	struct kf_search *x = kf_search_new(s, NULL);
	struct kf_search_cand root = {.parent = -1};
	CHECK(x != NULL);
	CHECK_EQ_INT(kf_search_add(x, &root, false), 0);
	return x;
}

static void test_strategy_names(void)
{
	enum kf_strategy s;
	CHECK(kf_strategy_parse("evo", &s) && s == KF_STRATEGY_EVO);
	CHECK(kf_strategy_parse("mcts", &s) && s == KF_STRATEGY_MCTS);
	CHECK(!kf_strategy_parse("annealing", &s));
	CHECK(kf_strategy_parse("schedule", &s) && s == KF_STRATEGY_SCHEDULE);
	CHECK(!kf_strategy_parse(NULL, &s));
	CHECK_STR(kf_strategy_name(KF_STRATEGY_MCTS), "mcts");
	CHECK_STR(kf_strategy_name(KF_STRATEGY_EVO), "evo");
}

static void test_cells(void)
{
	CHECK_EQ_INT(kf_search_cell("shared_memory,loop_unroll", 1000),
		     kf_search_cell("shared_memory,loop_unroll", 1020));
	CHECK(kf_search_cell("shared_memory", 300) != kf_search_cell("shared_memory", 9000));
	int c = kf_search_cell(NULL, 0);
	CHECK(c >= 0 && c < 48);
}

static void test_evo_repair_then_exploit(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_EVO);
	struct kf_search_pick p;
	struct kf_rng rng;
	kf_rng_seed(&rng, 1);
	kf_search_pick(s, 0, &rng, &p);
	CHECK_EQ_INT(p.parent, 0); /* only the reference exists */
	struct kf_search_cand f1 = mk(0, false, 0, 0, 0);
	CHECK_EQ_INT(kf_search_add(s, &f1, true), 1);
	kf_search_pick(s, 1, &rng, &p);
	CHECK_EQ_INT(p.parent, 1);
	CHECK_STR(p.why, "repair");
	CHECK_EQ_INT(p.island, 0);
	/* a failure of the repair is repaired once more (chain of 2), a third failure in a row is not */
	struct kf_search_cand f2 = mk(1, false, 0, 0, 0);
	CHECK_EQ_INT(kf_search_add(s, &f2, true), 2);
	CHECK_EQ_INT(kf_search_at(s, 2)->fail_depth, 2);
	kf_search_pick(s, 2, &rng, &p);
	CHECK_EQ_INT(p.parent, 2);
	struct kf_search_cand f3 = mk(2, false, 0, 0, 0);
	CHECK_EQ_INT(kf_search_add(s, &f3, true), 3);
	kf_search_pick(s, 3, &rng, &p);
	CHECK(p.parent != 3);
	CHECK(strcmp(p.why, "repair") != 0);
	/* correct kernels: exploitation returns the island's best */
	struct kf_search_cand a = mk(0, true, 1.5, 0, 3), b = mk(0, true, 2.5, 0, 7),
			      c = mk(0, true, 0.7, 1, 3);
	kf_search_add(s, &a, false);
	kf_search_add(s, &b, false);
	kf_search_add(s, &c, false);
	int exploit = 0;
	for (uint64_t k = 0; k < 200; k += 2) { /* even requests go to island 0 */
		kf_rng_seed(&rng, 99 + k);
		kf_search_pick(s, k, &rng, &p);
		CHECK(p.parent == 0 || p.parent == 4 || p.parent == 5); /* island 0's correct members */
		if (!strcmp(p.why, "exploit")) {
			CHECK_EQ_INT(p.parent, 5);
			exploit++;
		}
	}
	CHECK(exploit > 40 && exploit < 80); /* p = 0.6 of 100 draws */
	kf_search_free(s);
}

static void test_evo_migration(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_EVO);
	struct kf_search_cand best0 = mk(0, true, 3.0, 0, 1);
	kf_search_add(s, &best0, false);
	CHECK(!(kf_search_at(s, 1)->islands & 2u));
	for (int i = 0; i < 4; i++) {
		struct kf_search_cand x = mk(0, true, 1.1, i % 2, 2);
		kf_search_add(s, &x, false);
	}
	/* 5 added: island 0's best now also lives on island 1 */
	CHECK(kf_search_at(s, 1)->islands & 2u);
	kf_search_free(s);
}

/* Two searches fed the same observations and seeds choose the same parents. */
static void test_evo_reproducible(void)
{
	int picks[2][60];
	for (int run = 0; run < 2; run++) {
		struct kf_search *s = with_root(KF_STRATEGY_EVO);
		for (int i = 0; i < 60; i++) {
			struct kf_rng rng;
			struct kf_search_pick p;
			kf_rng_seed(&rng, 1234 ^ kf_mix64((uint64_t)i + 1));
			kf_search_pick(s, (uint64_t)i, &rng, &p);
			picks[run][i] = p.parent;
			struct kf_search_cand c =
			    mk(p.parent, i % 7 != 3, 1.0 + (i * 37 % 11) / 10.0, p.island, i % 5);
			kf_search_add(s, &c, true);
		}
		kf_search_free(s);
	}
	CHECK(!memcmp(picks[0], picks[1], sizeof(picks[0])));
	int distinct = 0;
	for (int i = 1; i < 60; i++)
		distinct += picks[0][i] != picks[0][i - 1];
	CHECK(distinct > 10); /* not one parent over and over */
}

static void test_mcts_tree(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_MCTS);
	struct kf_search_pick p;
	struct kf_rng rng;
	kf_rng_seed(&rng, 5);
	kf_search_pick(s, 0, &rng, &p);
	CHECK_EQ_INT(p.parent, 0);
	CHECK_EQ_INT(kf_search_at(s, 0)->visits, 1); /* virtual visit */
	struct kf_search_cand fail = mk(0, false, 0, 0, 0);
	kf_search_add(s, &fail, true);
	CHECK_NEAR(kf_search_at(s, 0)->value, -1.0, 1e-12); /* the failure's penalty reached the root */
	/* root (1 visit) may have 1 child: the failed child gets its one repair */
	kf_search_pick(s, 1, &rng, &p);
	CHECK_EQ_INT(p.parent, 1);
	CHECK_STR(p.why, "repair");
	struct kf_search_cand fixed = mk(1, true, 4.0, 0, 0);
	kf_search_add(s, &fixed, true);
	CHECK_NEAR(kf_search_at(s, 2)->value, 2.0, 1e-12); /* log2(4) */
	CHECK_NEAR(kf_search_at(s, 0)->value, 1.0, 1e-12);
	CHECK_EQ_INT(kf_search_at(s, 0)->visits, 2);
	/* the next pick descends to the fast kernel and refines it */
	kf_search_pick(s, 2, &rng, &p);
	CHECK_EQ_INT(p.parent, 2);
	CHECK_STR(p.why, "uct");
	struct kf_search_cand slow = mk(2, true, 0.25, 0, 0);
	kf_search_add(s, &slow, true);
	CHECK_NEAR(kf_search_at(s, 3)->value, -2.0, 1e-12);
	/* widening: with more visits the root takes a second child */
	for (int k = 3; k < 12; k++) {
		kf_search_pick(s, (uint64_t)k, &rng, &p);
		struct kf_search_cand c = mk(p.parent, true, 1.2, 0, 0);
		kf_search_add(s, &c, true);
	}
	int root_children = kf_search_at(s, 0)->n_children;
	CHECK(root_children >= 2 && root_children <= 4);

	/* a tree rebuilt from the records (no virtual visits) has the same statistics */
	struct kf_search *r = with_root(KF_STRATEGY_MCTS);
	for (size_t i = 1; i < kf_search_count(s); i++) {
		struct kf_search_cand c = *kf_search_at(s, i);
		kf_search_add(r, &c, false);
	}
	for (size_t i = 0; i < kf_search_count(s); i++) {
		CHECK_EQ_INT(kf_search_at(r, i)->visits, kf_search_at(s, i)->visits);
		CHECK_NEAR(kf_search_at(r, i)->value, kf_search_at(s, i)->value, 1e-9);
	}
	kf_search_free(r);
	kf_search_free(s);
}

static struct kf_search_cand mkr(int parent, bool correct, double speedup, int strategy)
{
	struct kf_search_cand c = mk(parent, correct, speedup, 0, 0);
	c.lo = correct ? speedup * 0.95 : 0;
	c.strategy = strategy;
	c.repairable = true;
	return c;
}

/* The budget schedule: seeds first, one per strategy in turn, then repairs only of promising failures
 * (a seed's, or a child of a top kernel; at most 3 deep), then refinement of the top kernels. */
static void test_schedule(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_SCHEDULE);
	struct kf_search_pick p;
	struct kf_rng rng;
	kf_search_set_budget(s, 20); /* 4 seeds, 3 of them up front */
	kf_search_set_strategies(s, 4);
	for (int i = 0; i < 3; i++) {
		kf_rng_seed(&rng, (uint64_t)i);
		kf_search_pick(s, (uint64_t)i, &rng, &p);
		CHECK_EQ_INT(p.parent, 0);
		CHECK_STR(p.why, "seed");
		CHECK_EQ_INT(p.strategy, i);
		struct kf_search_cand c = mkr(0, i != 1, 1.0 + i, p.strategy); /* seed 1 fails */
		kf_search_add(s, &c, true);
	}
	/* the failed seed is promising (its strategy has no working version yet): repaired first */
	kf_search_pick(s, 3, &rng, &p);
	CHECK_EQ_INT(p.parent, 2);
	CHECK_STR(p.why, "repair");
	CHECK_EQ_INT(p.strategy, 1);
	struct kf_search_cand f = mkr(2, false, 0, 1);
	kf_search_add(s, &f, true);
	/* a failure under a slow kernel that is not among the top 3 is not repaired */
	struct kf_search_cand a = mkr(1, true, 1.5, 0), b = mkr(3, true, 3.5, 2), slow = mkr(1, true, 0.5, 0);
	kf_search_add(s, &a, true);
	kf_search_add(s, &b, true);
	kf_search_add(s, &slow, true);
	struct kf_search_cand bad_child = mkr(7, false, 0, 0); /* child of the 0.5x kernel */
	int bc = kf_search_add(s, &bad_child, true);
	int refine_best = 0;
	for (uint64_t k = 10; k < 60; k++) {
		kf_rng_seed(&rng, k);
		kf_search_pick(s, k, &rng, &p);
		CHECK(p.parent != bc);
		CHECK(p.parent != 0 || !strcmp(p.why, "seed"));
		if (!strcmp(p.why, "refine")) {
			CHECK(p.parent == 6 || p.parent == 3 ||
			      p.parent == 5); /* the top 3: 3.5x, 3.0x, 1.5x */
			refine_best += p.parent == 6;
			CHECK_EQ_INT(p.strategy, kf_search_at(s, (size_t)p.parent)->strategy);
		}
		/* (in flight: a repair is not picked twice) */
	}
	CHECK(refine_best > 15); /* the best gets most of the refinement */
	/* a repair chain stops at 3 failures in a row */
	struct kf_search *r = with_root(KF_STRATEGY_SCHEDULE);
	kf_search_set_budget(r, 10);
	struct kf_search_cand top = mkr(0, true, 2.0, -1);
	kf_search_add(r, &top, true);
	int last = 1;
	for (int d = 1; d <= 4; d++) {
		struct kf_search_cand x = mkr(last, false, 0, -1);
		last = kf_search_add(r, &x, true);
		CHECK_EQ_INT(kf_search_at(r, (size_t)last)->fail_depth, d);
	}
	bool repaired_deep = false;
	for (uint64_t k = 0; k < 20; k++) {
		kf_rng_seed(&rng, k);
		kf_search_pick(r, k, &rng, &p);
		repaired_deep |= p.parent == last; /* depth 4 */
		kf_search_pick_void(r, &p);
	}
	CHECK(!repaired_deep);
	kf_search_free(r);
	kf_search_free(s);
}

/* Patience scales with the budget and counts only significant improvements: a win inside the noise does
 * not reset it. */
static void test_patience(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_EVO);
	kf_search_set_budget(s, 20);
	CHECK_EQ_INT(kf_search_patience(s), 8);
	kf_search_set_budget(s, 100);
	CHECK_EQ_INT(kf_search_patience(s), 30);
	kf_search_set_budget(s, 20);
	struct kf_search_cand win = mk(0, true, 2.0, 0, 0);
	win.lo = 1.6; /* significant over the reference */
	kf_search_add(s, &win, true);
	CHECK_EQ_INT(kf_search_since_improvement(s), 0);
	for (int i = 0; i < 7; i++) {
		struct kf_search_cand noisy = mk(1, true, 2.05 + 0.01 * i, 0, 0);
		noisy.lo = 1.9; /* faster on its point, but not above 2.0: noise */
		kf_search_add(s, &noisy, true);
	}
	kf_search_note_unusable(s);
	CHECK_EQ_INT(kf_search_since_improvement(s), 8);
	CHECK(kf_search_stagnant(s));
	struct kf_search_cand real = mk(1, true, 3.0, 0, 0);
	real.lo = 2.5;
	CHECK(kf_search_significant(&real, 2.0));
	/* with the A/A band: the lower bound must clear the best by the band, 2.0 x 1.3 = 2.6 here */
	real.band = 0.3;
	CHECK(!kf_search_significant(&real, 2.0));
	real.band = 0.2;
	CHECK(kf_search_significant(&real, 2.0));
	real.band = 0;
	kf_search_add(s, &real, true);
	CHECK(!kf_search_stagnant(s));
	kf_search_reset_patience(s);
	CHECK_EQ_INT(kf_search_since_improvement(s), 0);
	kf_search_free(s);
}

/* MCTS with strategies: the first level is the strategies (each expanded by a seed that implements it),
 * below them the kernels; a failed seed does not stop its strategy from widening. */
static void test_mcts_strategies(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_MCTS);
	struct kf_search_pick p;
	struct kf_rng rng;
	kf_search_set_strategies(s, 3);
	int seen[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		kf_rng_seed(&rng, (uint64_t)i);
		kf_search_pick(s, (uint64_t)i, &rng, &p);
		CHECK_EQ_INT(p.parent, 0);
		CHECK_STR(p.why, "seed");
		CHECK(p.strategy >= 0 && p.strategy < 3);
		seen[p.strategy]++;
		struct kf_search_cand c = mkr(0, p.strategy != 0, p.strategy == 2 ? 1.3 : 1.1, p.strategy);
		kf_search_add(s, &c, true);
	}
	CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1); /* every strategy tried once first */
	int under2 = 0, repair0 = 0;
	for (uint64_t k = 3; k < 40; k++) {
		kf_rng_seed(&rng, k);
		kf_search_pick(s, k, &rng, &p);
		if (p.strategy == 2)
			under2++;
		if (p.strategy == 0 && !strcmp(p.why, "repair"))
			repair0++;
		struct kf_search_cand c = mkr(p.parent, true, p.strategy == 2 ? 1.35 : 1.0, p.strategy);
		kf_search_add(s, &c, true);
	}
	CHECK(under2 > 12);       /* the better strategy gets the most expansions */
	CHECK_EQ_INT(repair0, 1); /* the failed seed of strategy 0 got its repair */
	/* rebuilt from the records, the same statistics */
	struct kf_search *r = with_root(KF_STRATEGY_MCTS);
	kf_search_set_strategies(r, 3);
	for (size_t i = 1; i < kf_search_count(s); i++) {
		struct kf_search_cand c = *kf_search_at(s, i);
		kf_search_add(r, &c, false);
	}
	for (size_t i = 0; i < kf_search_count(s); i++)
		CHECK_EQ_INT(kf_search_at(r, i)->visits, kf_search_at(s, i)->visits);
	kf_search_free(r);
	kf_search_free(s);
}

/* evo: island i's seeds take strategies i, i + 2, ...; a refinement keeps its parent's. */
static void test_evo_strategies(void)
{
	struct kf_search *s = with_root(KF_STRATEGY_EVO);
	struct kf_search_pick p;
	struct kf_rng rng;
	kf_search_set_strategies(s, 4);
	kf_rng_seed(&rng, 1);
	kf_search_pick(s, 0, &rng, &p);
	CHECK(p.parent == 0 && p.island == 0 && p.strategy == 0);
	kf_search_pick(s, 1, &rng, &p);
	CHECK(p.parent == 0 && p.island == 1 && p.strategy == 1);
	kf_search_pick(s, 2, &rng, &p);
	CHECK(p.parent == 0 && p.island == 0 && p.strategy == 2);
	struct kf_search_cand c = mkr(0, true, 2.0, 2);
	c.island = 0;
	kf_search_add(s, &c, true);
	for (uint64_t k = 4; k < 40; k += 2) {
		kf_rng_seed(&rng, k);
		kf_search_pick(s, k, &rng, &p);
		if (p.parent == 1)
			CHECK_EQ_INT(p.strategy, 2);
	}
	kf_search_free(s);
}

/* The parameters: the defaults are the values the search always had, the check names the key that is out of
 * range, and the parser reads a config file's object with the file and key in every error. */
static void test_params_check(void)
{
	struct kf_search_params p = kf_search_params_default(), q;
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(p.islands, 2);
	CHECK_EQ_INT(p.migrate_every, 5);
	CHECK_NEAR(p.p_exploit, 0.6, 0);
	CHECK_NEAR(p.p_explore, 0.85, 0);
	CHECK_NEAR(p.uct_c, 1.0, 0);
	CHECK_EQ_INT(p.mcts_max_children, 4);
	CHECK_EQ_INT(p.patience_min, 8);
	CHECK_NEAR(p.patience_share, 0.3, 0);
	CHECK_EQ_INT(p.repair_max_depth, 2);
	CHECK_NEAR(p.schedule_seed_share, 0.2, 0);
	CHECK_EQ_INT(p.schedule_repair_max_depth, 3);
	CHECK_EQ_INT(kf_search_params_check(&p, &err), KF_OK);
	CHECK_STR(kf_search_param_name(0), "islands");
	CHECK_STR(kf_search_param_name(KF_SEARCH_N_PARAMS - 1), "schedule_repair_max_depth");
	CHECK(kf_search_param_name(KF_SEARCH_N_PARAMS) == NULL);
	CHECK_NEAR(kf_search_param_get(&p, 7), 0.3, 0); /* patience_share */
	CHECK_EQ_INT((int)kf_search_param_get(&p, 6), 8);

	q = p;
	q.islands = 33;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "islands: expected an integer 1..32, got 33");
	q = p;
	q.islands = 0;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	q = p;
	q.islands = 32;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_OK);
	q = p;
	q.patience_min = 0;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "patience_min: ");
	q = p;
	q.patience_share = 0; /* (0, 1]: no patience at all is not a share */
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "patience_share: expected a number in (0, 1], got 0");
	q.patience_share = 1;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_OK);
	q = p;
	q.schedule_seed_share = 1.5;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "schedule_seed_share: ");
	q = p;
	q.p_exploit = 0.9; /* above p_explore: the two split one draw */
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "p_explore: ");
	q = p;
	q.p_explore = -0.1;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	q = p;
	q.uct_c = NAN;
	CHECK_EQ_INT(kf_search_params_check(&q, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "uct_c: ");
}

static enum kf_status parse_text(const char *text, struct kf_search_params *p, uint32_t *found,
				 struct kf_err *err)
{
	cJSON *j = cJSON_Parse(text);
	struct kf_jpath path;
	kf_jpath_init(&path, "k.json");
	kf_jpath_push_key(&path, "optimize");
	kf_jpath_push_key(&path, "search");
	enum kf_status st = kf_search_params_parse(j, p, found, &path, err);
	CHECK_STR(kf_jpath_str(&path), "optimize.search"); /* left as it was */
	cJSON_Delete(j);
	return st;
}

static void test_params_parse(void)
{
	struct kf_search_params p = kf_search_params_default();
	struct kf_err err = KF_ERR_INIT;
	uint32_t found = 0;
	CHECK_EQ_INT(parse_text("{\"islands\": 4, \"patience_share\": 0.5, \"uct_c\": 2}", &p, &found, &err),
		     KF_OK);
	CHECK_EQ_INT(p.islands, 4);
	CHECK_NEAR(p.patience_share, 0.5, 0);
	CHECK_NEAR(p.uct_c, 2.0, 0);
	CHECK_EQ_INT(p.migrate_every, 5); /* what the object leaves out stays */
	CHECK_EQ_INT(found, (1u << 0) | (1u << 7) | (1u << 4));

	p = kf_search_params_default();
	CHECK_EQ_INT(parse_text("{\"island\": 4}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search: unknown key 'island'; did you mean 'islands'?");
	CHECK_EQ_INT(parse_text("{\"temperature\": 1}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search: unknown key 'temperature'");
	CHECK_EQ_INT(parse_text("{\"islands\": \"x\"}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search.islands: expected an integer 1..32, got \"x\"");
	CHECK_EQ_INT(parse_text("{\"islands\": 2.5}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search.islands: expected an integer 1..32, got 2.5");
	CHECK_EQ_INT(parse_text("{\"patience_min\": 0}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search.patience_min: expected an integer 1..1000000, got 0");
	CHECK_EQ_INT(parse_text("{\"p_exploit\": true}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search.p_exploit: expected a number in [0, 1], got true");
	CHECK_EQ_INT(parse_text("{\"p_explore\": 0.5}", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "k.json: optimize.search.p_explore: p_exploit (0.6) must not be above");
	CHECK_EQ_INT(parse_text("[1]", &p, NULL, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "k.json: optimize.search: expected an object, got an array");

	/* what kf_search_params_json writes reads back the same */
	struct kf_search_params a = kf_search_params_default(), b = kf_search_params_default();
	a.islands = 7;
	a.p_explore = 0.95;
	a.schedule_seed_share = 0.35;
	cJSON *j = cJSON_CreateObject();
	CHECK(kf_search_params_json(&a, j));
	char *text = cJSON_PrintUnformatted(j);
	CHECK_CONTAINS(text, "\"islands\":7,");
	CHECK_EQ_INT(parse_text(text, &b, &found, &err), KF_OK);
	CHECK_EQ_INT(found, (1u << KF_SEARCH_N_PARAMS) - 1);
	for (size_t i = 0; i < KF_SEARCH_N_PARAMS; i++)
		CHECKF(kf_search_param_get(&a, i) == kf_search_param_get(&b, i), "%s",
		       kf_search_param_name(i));
	free(text);
	cJSON_Delete(j);
}

/* Parameters other than the defaults change the choices: the island of a request, the patience, where
 * evo's draw goes, how wide mcts grows, how many seeds the schedule makes. */
static void test_params_behaviour(void)
{
	struct kf_search_params p = kf_search_params_default();
	struct kf_search_cand root = {.parent = -1};
	struct kf_search_pick pk;
	struct kf_rng rng;

	/* islands: request k goes to island k mod islands */
	int seen[2] = {0, 0};
	for (int run = 0; run < 2; run++) {
		p.islands = run ? 4 : 1;
		struct kf_search *s = kf_search_new(KF_STRATEGY_EVO, &p);
		kf_search_add(s, &root, false);
		for (uint64_t k = 0; k < 8; k++) {
			kf_rng_seed(&rng, k);
			kf_search_pick(s, k, &rng, &pk);
			if (pk.island > seen[run])
				seen[run] = pk.island;
		}
		CHECK_EQ_INT(kf_search_at(s, 0)->islands, run ? 0xfu : 0x1u); /* the reference is on each */
		kf_search_free(s);
	}
	CHECK_EQ_INT(seen[0], 0);
	CHECK_EQ_INT(seen[1], 3);

	/* patience: max(patience_min, ceil(patience_share x budget)) */
	p = kf_search_params_default();
	p.patience_min = 12;
	struct kf_search *s = kf_search_new(KF_STRATEGY_SCHEDULE, &p);
	kf_search_add(s, &root, false);
	kf_search_set_budget(s, 20);
	CHECK_EQ_INT(kf_search_patience(s), 12); /* the default gives 8 (test_patience) */
	kf_search_free(s);
	p.patience_share = 0.5;
	s = kf_search_new(KF_STRATEGY_SCHEDULE, &p);
	kf_search_add(s, &root, false);
	kf_search_set_budget(s, 100);
	CHECK_EQ_INT(kf_search_patience(s), 50);
	kf_search_free(s);

	/* evo: p_exploit 1 always takes the island's best; 0 with p_explore 0 never does */
	for (int run = 0; run < 2; run++) {
		p = kf_search_params_default();
		p.islands = 1;
		p.p_exploit = run ? 0 : 1;
		p.p_explore = run ? 0 : 1;
		s = kf_search_new(KF_STRATEGY_EVO, &p);
		kf_search_add(s, &root, false);
		struct kf_search_cand a = mk(0, true, 2.0, 0, 1), b = mk(0, true, 1.2, 0, 2);
		kf_search_add(s, &a, false);
		kf_search_add(s, &b, false);
		int exploit = 0;
		for (uint64_t k = 0; k < 20; k++) {
			kf_rng_seed(&rng, 77 + k);
			kf_search_pick(s, k, &rng, &pk);
			exploit += !strcmp(pk.why, "exploit");
		}
		CHECK_EQ_INT(exploit, run ? 0 : 20);
		kf_search_free(s);
	}

	/* migration every migrate_every added candidates: 2 here, so island 0's best reaches island 1 after
	 * two (the default, 5, leaves it at home: test_evo_migration) */
	p = kf_search_params_default();
	p.migrate_every = 2;
	s = kf_search_new(KF_STRATEGY_EVO, &p);
	kf_search_add(s, &root, false);
	struct kf_search_cand b0 = mk(0, true, 3.0, 0, 1), x = mk(0, true, 1.1, 1, 2);
	kf_search_add(s, &b0, false);
	CHECK(!(kf_search_at(s, 1)->islands & 2u));
	kf_search_add(s, &x, false);
	CHECK(kf_search_at(s, 1)->islands & 2u);
	kf_search_free(s);

	/* mcts: the root widens to at most mcts_max_children */
	for (int run = 0; run < 2; run++) {
		p = kf_search_params_default();
		p.mcts_max_children = run ? 1 : 4;
		s = kf_search_new(KF_STRATEGY_MCTS, &p);
		kf_search_add(s, &root, false);
		for (uint64_t k = 0; k < 40; k++) {
			kf_rng_seed(&rng, k);
			kf_search_pick(s, k, &rng, &pk);
			struct kf_search_cand c = mk(pk.parent, true, 1.1, 0, 0);
			kf_search_add(s, &c, true);
		}
		int rc = kf_search_at(s, 0)->n_children;
		CHECKF(run ? rc == 1 : rc > 1, "root children %d", rc);
		kf_search_free(s);
	}

	/* schedule: the seed share decides how many of the first picks are seeds (20 calls: 0.2 -> 4 seeds,
	 * 3 up front; 0.5 -> 10, 8 up front) */
	for (int run = 0; run < 2; run++) {
		p = kf_search_params_default();
		p.schedule_seed_share = run ? 0.5 : 0.2;
		s = kf_search_new(KF_STRATEGY_SCHEDULE, &p);
		kf_search_add(s, &root, false);
		kf_search_set_budget(s, 20);
		int seeds = 0;
		for (uint64_t k = 0; k < 10; k++) {
			kf_rng_seed(&rng, k);
			kf_search_pick(s, k, &rng, &pk);
			seeds += !strcmp(pk.why, "seed");
			struct kf_search_cand c = mkr(pk.parent, true, 1.5 + (double)k, pk.strategy);
			kf_search_add(s, &c, true);
		}
		CHECK_EQ_INT(seeds, run ? 8 : 3);
		kf_search_free(s);
	}
}

KF_TEST_MAIN(TEST(test_params_check), TEST(test_params_parse), TEST(test_params_behaviour),
	     TEST(test_strategy_names), TEST(test_cells), TEST(test_evo_repair_then_exploit),
	     TEST(test_evo_migration), TEST(test_evo_reproducible), TEST(test_mcts_tree), TEST(test_schedule),
	     TEST(test_patience), TEST(test_mcts_strategies), TEST(test_evo_strategies))
