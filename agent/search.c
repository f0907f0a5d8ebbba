/* The parent choice of the two search strategies (agent/search.h). Pure bookkeeping over the candidate
 * list: no I/O, no LLM, so the same observations and the same seed always give the same choices (the
 * replay and resume guarantees rest on that). */
#include "agent/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A failed kernel gets repaired (its feedback shown to the LLM) while the chain of failures it ends is at
 * most this long; past that the search goes back to correct parents. */
#define REPAIR_MAX_DEPTH 2
/* Evo: every MIGRATE_EVERY added candidates, each island's best correct kernel joins the next island. */
#define MIGRATE_EVERY 5
/* Evo parent choice: exploit (the island's best) with p 0.6, explore (the elite of a random occupied
 * MAP-Elites cell) with p 0.25, else a random correct member. */
#define P_EXPLOIT 0.6
#define P_EXPLORE 0.85
/* MAP-Elites grid: 8 technique-tag buckets x 6 code-length bands. */
#define TAG_BUCKETS 8
#define LEN_BANDS 6
#define N_CELLS (TAG_BUCKETS * LEN_BANDS)
/* MCTS exploration constant of UCT (rewards are log2 speedups clipped to [-2, 2], failures -1). */
#define UCT_C 1.0
#define MCTS_MAX_CHILDREN 4

struct kf_search {
	enum kf_strategy strategy;
	int n_islands;
	size_t n, cap;
	struct kf_search_cand *v;
	int64_t added; /* candidates added after the reference (migration clock) */
};

struct kf_search *kf_search_new(enum kf_strategy st, int n_islands)
{
	struct kf_search *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->strategy = st;
	s->n_islands = n_islands < 1 ? 1 : n_islands > 32 ? 32 : n_islands;
	return s;
}

void kf_search_free(struct kf_search *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

size_t kf_search_count(const struct kf_search *s)
{
	return s->n;
}

struct kf_search_cand *kf_search_at(struct kf_search *s, size_t i)
{
	return i < s->n ? &s->v[i] : NULL;
}

int kf_search_cell(const char *tags, size_t source_len)
{
	uint32_t h = 2166136261u; /* FNV-1a of the tag list: the same technique set, the same bucket */
	for (const char *p = tags ? tags : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	int band = 0;
	for (size_t l = source_len / 512; l && band < LEN_BANDS - 1; l /= 2)
		band++;
	return (int)(h % TAG_BUCKETS) * LEN_BANDS + band;
}

/* Reward of a node for MCTS: log-scale speedup, a penalty for failures. */
static double reward(const struct kf_search_cand *c)
{
	if (!c->correct)
		return -1.0;
	double r = log2(c->speedup > 0 ? c->speedup : 1e-9);
	return r < -2 ? -2 : r > 2 ? 2 : r;
}

static int best_member(const struct kf_search *s, int island)
{
	int best = 0;
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i].correct && (s->v[i].islands >> island & 1u) &&
		    s->v[i].speedup > s->v[best].speedup)
			best = (int)i;
	return best;
}

static void migrate(struct kf_search *s)
{
	if (s->n_islands < 2)
		return;
	int bests[32];
	for (int i = 0; i < s->n_islands; i++)
		bests[i] = best_member(s, i);
	for (int i = 0; i < s->n_islands; i++)
		s->v[bests[i]].islands |= 1u << ((i + 1) % s->n_islands);
}

int kf_search_add(struct kf_search *s, const struct kf_search_cand *c, bool in_flight)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct kf_search_cand *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	struct kf_search_cand *x = &s->v[s->n];
	*x = *c;
	x->visits = 1;
	x->n_children = 0;
	x->pending = 0;
	x->repaired = false;
	if (x->parent < 0 || (size_t)x->parent >= s->n) {
		/* the reference: a member of every island, the root of the tree */
		x->parent = -1;
		x->correct = true;
		x->failed = false;
		x->speedup = 1.0;
		x->islands = s->n_islands >= 32 ? 0xffffffffu : (1u << s->n_islands) - 1;
		x->visits = 0;
		x->value = 0;
		x->depth = 0;
		x->fail_depth = 0;
		return (int)s->n++;
	}
	struct kf_search_cand *p = &s->v[x->parent];
	x->depth = p->depth + 1;
	x->fail_depth = x->correct ? 0 : p->fail_depth + 1;
	x->island = x->island % s->n_islands;
	x->islands = 1u << x->island;
	x->value = reward(x);
	p->n_children++;
	if (p->failed)
		p->repaired = true; /* (a resume learns this from the lineage) */
	if (in_flight && p->pending > 0)
		p->pending--;
	/* backpropagate: the new node's reward to every ancestor; visits were counted at pick time when the
	 * request was in flight (virtual visits keep concurrent picks apart) */
	for (int a = x->parent; a >= 0; a = s->v[a].parent) {
		s->v[a].value += x->value;
		if (!in_flight)
			s->v[a].visits++;
	}
	s->n++;
	s->added++;
	if (s->strategy == KF_STRATEGY_EVO && s->added % MIGRATE_EVERY == 0)
		migrate(s);
	return (int)(s->n - 1);
}

/* The most recent failure still worth a repair (its feedback goes into the prompt). */
static int repair_target(struct kf_search *s, int island)
{
	for (size_t i = s->n; i-- > 1;) {
		struct kf_search_cand *c = &s->v[i];
		if (c->failed && !c->repaired && !c->pending && c->fail_depth <= REPAIR_MAX_DEPTH &&
		    (island < 0 || c->island == island))
			return (int)i;
	}
	return -1;
}

static void pick_evo(struct kf_search *s, uint64_t k, struct kf_rng *rng, struct kf_search_pick *out)
{
	int island = (int)(k % (uint64_t)s->n_islands);
	int r = repair_target(s, -1);
	double u = kf_rng_uniform(rng); /* drawn every time so the stream per request is fixed */
	if (r >= 0) {
		s->v[r].repaired = true;
		out->parent = r;
		out->island = s->v[r].island;
		out->why = "repair";
		return;
	}
	out->island = island;
	if (u < P_EXPLOIT) {
		out->parent = best_member(s, island);
		out->why = "exploit";
		return;
	}
	if (u < P_EXPLORE) {
		/* MAP-Elites: the elite (highest speedup) of each occupied cell among the island's members */
		int elite[N_CELLS], n_occ = 0, occ[N_CELLS];
		for (int c = 0; c < N_CELLS; c++)
			elite[c] = -1;
		for (size_t i = 1; i < s->n; i++) {
			const struct kf_search_cand *c = &s->v[i];
			if (!c->correct || !(c->islands >> island & 1u) || c->cell < 0 || c->cell >= N_CELLS)
				continue;
			if (elite[c->cell] < 0 || c->speedup > s->v[elite[c->cell]].speedup)
				elite[c->cell] = (int)i;
		}
		for (int c = 0; c < N_CELLS; c++)
			if (elite[c] >= 0)
				occ[n_occ++] = elite[c];
		out->parent = n_occ ? occ[kf_rng_next(rng) % (uint64_t)n_occ] : 0;
		out->why = "explore";
		return;
	}
	int members[1024], n_m = 0;
	for (size_t i = 0; i < s->n && n_m < 1024; i++)
		if (s->v[i].correct && (s->v[i].islands >> island & 1u))
			members[n_m++] = (int)i;
	out->parent = n_m ? members[kf_rng_next(rng) % (uint64_t)n_m] : 0;
	out->why = "random";
}

/* How many children a node may have now: correct nodes widen with their visits (progressive widening),
 * a failed node gets one repair while its failure chain is short. */
static int max_children(const struct kf_search_cand *c)
{
	if (!c->correct)
		return c->fail_depth <= REPAIR_MAX_DEPTH ? 1 : 0;
	int m = 1 + (int)floor(sqrt((double)c->visits) / 2);
	return m > MCTS_MAX_CHILDREN ? MCTS_MAX_CHILDREN : m;
}

static void pick_mcts(struct kf_search *s, struct kf_rng *rng, struct kf_search_pick *out)
{
	int v = 0;
	for (int steps = 0; steps < 1000; steps++) {
		struct kf_search_cand *c = &s->v[v];
		if (c->n_children + c->pending < max_children(c))
			break;
		/* UCT over the children; a small seeded jitter breaks ties reproducibly */
		int best = -1;
		double best_u = -INFINITY, lnN = log((double)(c->visits > 0 ? c->visits : 1) + 1);
		for (size_t i = 1; i < s->n; i++) {
			const struct kf_search_cand *ch = &s->v[i];
			if (ch->parent != v)
				continue;
			double n = ch->visits > 0 ? ch->visits : 1;
			double u = ch->value / n + UCT_C * sqrt(lnN / n) + 1e-9 * kf_rng_uniform(rng);
			if (u > best_u) {
				best_u = u;
				best = (int)i;
			}
		}
		if (best < 0) { /* a dead leaf (a failure past its repairs): widen the root instead */
			v = 0;
			break;
		}
		v = best;
	}
	out->parent = v;
	out->island = 0;
	out->why = s->v[v].correct ? "uct" : "repair";
	if (!s->v[v].correct)
		s->v[v].repaired = true;
	s->v[v].pending++;
	for (int a = v; a >= 0; a = s->v[a].parent)
		s->v[a].visits++; /* virtual visit, the reward follows in kf_search_add */
}

void kf_search_pick(struct kf_search *s, uint64_t k, struct kf_rng *rng, struct kf_search_pick *out)
{
	memset(out, 0, sizeof(*out));
	if (s->strategy == KF_STRATEGY_MCTS)
		pick_mcts(s, rng, out);
	else
		pick_evo(s, k, rng, out);
}
