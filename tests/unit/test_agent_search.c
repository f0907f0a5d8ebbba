/* Tests of the search strategies' parent choice (agent/search.c): evo repairs, exploitation, MAP-Elites
 * cells, migration and seed reproducibility; MCTS virtual visits, progressive widening, UCT preference,
 * failure penalties and the equivalence of a live tree with one rebuilt from records (what --resume does). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/search.h"
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
	struct kf_search *x = kf_search_new(s, 2);
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

KF_TEST_MAIN(TEST(test_strategy_names), TEST(test_cells), TEST(test_evo_repair_then_exploit),
	     TEST(test_evo_migration), TEST(test_evo_reproducible), TEST(test_mcts_tree))
