/* The parent choice of the two search strategies (agent/search.h). Pure bookkeeping over the candidate
 * list: no I/O, no LLM, so the same observations and the same seed always give the same choices (the
 * replay and resume guarantees rest on that). */
#include "agent/search.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "suggest.h"

/* The defaults of struct kf_search_params (agent/search.h says what each does):
 * - a failed kernel gets repaired (its feedback shown to the LLM) while the chain of failures it ends is at
 *   most REPAIR_MAX_DEPTH long; past that the search goes back to correct parents;
 * - evo: every MIGRATE_EVERY added candidates, each island's best correct kernel joins the next island;
 *   the parent is the island's best with p 0.6 (exploit), the elite of a random occupied MAP-Elites cell
 *   with p 0.25 (explore, up to P_EXPLORE), else a random correct member;
 * - mcts: UCT's exploration constant (rewards are log2 speedups clipped to [-2, 2], failures -1), and the
 *   widening cap;
 * - patience: at least PATIENCE_MIN attempts without a significant improvement, or this share of the
 *   budget;
 * - schedule: about SCHED_SEED_SHARE of the calls are seeds (fresh implementations of a strategy), three
 *   quarters of them at the start and the rest kept for when refinement stalls (half the patience without
 *   a significant improvement); failures are repaired while their chain is at most SCHED_REPAIR_MAX_DEPTH
 *   long and they are promising (a seed's, or a child of a top kernel). */
#define ISLANDS 2
#define REPAIR_MAX_DEPTH 2
#define MIGRATE_EVERY 5
#define P_EXPLOIT 0.6
#define P_EXPLORE 0.85
#define UCT_C 1.0
#define MCTS_MAX_CHILDREN 4
#define PATIENCE_MIN 8
#define PATIENCE_SHARE 0.3
#define SCHED_SEED_SHARE 0.2
#define SCHED_REPAIR_MAX_DEPTH 3
/* MAP-Elites grid: 8 technique-tag buckets x 6 code-length bands. */
#define TAG_BUCKETS 8
#define LEN_BANDS 6
#define N_CELLS (TAG_BUCKETS * LEN_BANDS)
#define DEFAULT_BUDGET 20
/* Schedule: refinement draws from the top kernels with these weights. */
#define SCHED_TOP 3
static const double sched_top_w[SCHED_TOP] = {0.6, 0.25, 0.15};

/* ---- parameters ------------------------------------------------------------------------------ */

struct kf_search_params kf_search_params_default(void)
{
	struct kf_search_params p = {
	    .islands = ISLANDS,
	    .migrate_every = MIGRATE_EVERY,
	    .p_exploit = P_EXPLOIT,
	    .p_explore = P_EXPLORE,
	    .uct_c = UCT_C,
	    .mcts_max_children = MCTS_MAX_CHILDREN,
	    .patience_min = PATIENCE_MIN,
	    .patience_share = PATIENCE_SHARE,
	    .repair_max_depth = REPAIR_MAX_DEPTH,
	    .schedule_seed_share = SCHED_SEED_SHARE,
	    .schedule_repair_max_depth = SCHED_REPAIR_MAX_DEPTH,
	};
	return p;
}

/* Each parameter: its name, where it lives, its kind and range (lo excluded when lo_open). */
static const struct param_def {
	const char *name;
	size_t off;
	bool integer;
	double lo, hi;
	bool lo_open;
} defs[KF_SEARCH_N_PARAMS] = {
    {"islands", offsetof(struct kf_search_params, islands), true, 1, 32, false},
    {"migrate_every", offsetof(struct kf_search_params, migrate_every), true, 1, 1000, false},
    {"p_exploit", offsetof(struct kf_search_params, p_exploit), false, 0, 1, false},
    {"p_explore", offsetof(struct kf_search_params, p_explore), false, 0, 1, false},
    {"uct_c", offsetof(struct kf_search_params, uct_c), false, 0, 100, false},
    {"mcts_max_children", offsetof(struct kf_search_params, mcts_max_children), true, 1, 64, false},
    {"patience_min", offsetof(struct kf_search_params, patience_min), true, 1, 1000000, false},
    {"patience_share", offsetof(struct kf_search_params, patience_share), false, 0, 1, true},
    {"repair_max_depth", offsetof(struct kf_search_params, repair_max_depth), true, 0, 16, false},
    {"schedule_seed_share", offsetof(struct kf_search_params, schedule_seed_share), false, 0, 1, true},
    {"schedule_repair_max_depth", offsetof(struct kf_search_params, schedule_repair_max_depth), true, 0, 16,
     false},
};

const char *kf_search_param_name(size_t i)
{
	return i < KF_SEARCH_N_PARAMS ? defs[i].name : NULL;
}

double kf_search_param_get(const struct kf_search_params *p, size_t i)
{
	if (i >= KF_SEARCH_N_PARAMS)
		return 0;
	const char *at = (const char *)p + defs[i].off;
	if (defs[i].integer) {
		int v;
		memcpy(&v, at, sizeof(v));
		return v;
	}
	double d;
	memcpy(&d, at, sizeof(d));
	return d;
}

static void param_set(struct kf_search_params *p, size_t i, double v)
{
	char *at = (char *)p + defs[i].off;
	if (defs[i].integer) {
		int n = (int)v;
		memcpy(at, &n, sizeof(n));
	} else {
		memcpy(at, &v, sizeof(v));
	}
}

/* "an integer 1..32", "a number in (0, 1]" */
static void param_range(size_t i, char *buf, size_t n)
{
	const struct param_def *d = &defs[i];
	if (d->integer)
		snprintf(buf, n, "an integer %.0f..%.0f", d->lo, d->hi);
	else
		snprintf(buf, n, "a number in %c%g, %g]", d->lo_open ? '(' : '[', d->lo, d->hi);
}

static bool param_ok(size_t i, double v)
{
	const struct param_def *d = &defs[i];
	if (!isfinite(v) || (d->integer && v != floor(v)))
		return false;
	return (d->lo_open ? v > d->lo : v >= d->lo) && v <= d->hi;
}

enum kf_status kf_search_params_check(const struct kf_search_params *p, struct kf_err *err)
{
	char range[64];
	for (size_t i = 0; i < KF_SEARCH_N_PARAMS; i++) {
		double v = kf_search_param_get(p, i);
		if (!param_ok(i, v)) {
			param_range(i, range, sizeof(range));
			return kf_err_set(err, KF_ERR_INVALID, "%s: expected %s, got %.15g", defs[i].name,
					  range, v);
		}
	}
	if (p->p_exploit > p->p_explore)
		return kf_err_set(err, KF_ERR_INVALID,
				  "p_explore: expected a number in [p_exploit, 1] (p_exploit is %g), got %g",
				  p->p_exploit, p->p_explore);
	return KF_OK;
}

enum kf_status kf_search_params_parse(const cJSON *obj, struct kf_search_params *p, uint32_t *found,
				      struct kf_jpath *path, struct kf_err *err)
{
	char range[64], got[64];
	uint32_t seen = 0;
	enum kf_status st = KF_OK;
	if (!cJSON_IsObject(obj))
		return kf_jpath_err(path, err, KF_ERR_INVALID, "expected an object, got %s",
				    kf_json_type_name(obj));
	for (const cJSON *c = obj->child; c && !st; c = c->next) {
		const char *key = c->string ? c->string : "";
		size_t i = 0;
		while (i < KF_SEARCH_N_PARAMS && strcmp(key, defs[i].name))
			i++;
		if (i == KF_SEARCH_N_PARAMS) {
			struct kf_suggest g;
			kf_suggest_init(&g);
			for (size_t k = 0; k < KF_SEARCH_N_PARAMS; k++)
				kf_suggest_try(&g, key, defs[k].name);
			if (g.best)
				return kf_jpath_err(path, err, KF_ERR_INVALID,
						    "unknown key '%s'; did you mean '%s'?", key, g.best);
			return kf_jpath_err(path, err, KF_ERR_INVALID, "unknown key '%s'", key);
		}
		size_t mark = kf_jpath_push_key(path, key);
		if (!cJSON_IsNumber(c) || !param_ok(i, c->valuedouble)) {
			char *text = cJSON_PrintUnformatted(c);
			snprintf(got, sizeof(got), "%s", text ? text : kf_json_type_name(c));
			free(text);
			param_range(i, range, sizeof(range));
			st = kf_jpath_err(path, err, KF_ERR_INVALID, "expected %s, got %s", range, got);
		} else {
			param_set(p, i, c->valuedouble);
			seen |= 1u << i;
		}
		kf_jpath_pop(path, mark);
	}
	if (!st && p->p_exploit > p->p_explore) {
		size_t mark = kf_jpath_push_key(path, seen >> 3 & 1u ? "p_explore" : "p_exploit");
		st = kf_jpath_err(path, err, KF_ERR_INVALID,
				  "p_exploit (%g) must not be above p_explore (%g): they split one draw",
				  p->p_exploit, p->p_explore);
		kf_jpath_pop(path, mark);
	}
	if (!st && found)
		*found = seen;
	return st;
}

bool kf_search_params_json(const struct kf_search_params *p, cJSON *obj)
{
	for (size_t i = 0; i < KF_SEARCH_N_PARAMS; i++) {
		double v = kf_search_param_get(p, i);
		if (!(defs[i].integer ? kf_json_add_int(obj, defs[i].name, (int64_t)v)
				      : kf_json_add_number(obj, defs[i].name, v)))
			return false;
	}
	return true;
}

/* ---- the search -------------------------------------------------------------------------------- */

struct kf_search {
	enum kf_strategy strategy;
	struct kf_search_params p;
	int n_islands;
	size_t n, cap;
	struct kf_search_cand *v;
	int64_t added; /* candidates added after the reference (migration clock) */
	int n_strategies;
	int64_t budget;
	double sig_level;  /* point speedup of the last significant improvement (1: the reference) */
	int64_t since_sig; /* attempts since */
	int64_t seeds;     /* seed picks (schedule) */
	int iseeds[32];    /* seed picks per island (evo's strategy turn) */
	/* mcts: one virtual node per strategy between the root and the seeds that implement it */
	int svisits[KF_SEARCH_MAX_STRATEGIES], spending[KF_SEARCH_MAX_STRATEGIES];
	int schildren[KF_SEARCH_MAX_STRATEGIES];
	double svalue[KF_SEARCH_MAX_STRATEGIES];
};

struct kf_search *kf_search_new(enum kf_strategy st, const struct kf_search_params *params)
{
	struct kf_search *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->strategy = st;
	s->p = params ? *params : kf_search_params_default();
	if (s->p.migrate_every < 1)
		s->p.migrate_every = 1;
	s->n_islands = s->p.islands < 1 ? 1 : s->p.islands > 32 ? 32 : s->p.islands;
	s->budget = DEFAULT_BUDGET;
	s->sig_level = 1.0;
	return s;
}

void kf_search_set_strategies(struct kf_search *s, int n)
{
	s->n_strategies = n < 0 ? 0 : n > KF_SEARCH_MAX_STRATEGIES ? KF_SEARCH_MAX_STRATEGIES : n;
}

int kf_search_strategies(const struct kf_search *s)
{
	return s->n_strategies;
}

void kf_search_set_budget(struct kf_search *s, int64_t calls)
{
	s->budget = calls > 0 ? calls : DEFAULT_BUDGET;
}

int64_t kf_search_patience(const struct kf_search *s)
{
	int64_t p = (int64_t)ceil(s->p.patience_share * (double)s->budget);
	return p > s->p.patience_min ? p : s->p.patience_min;
}

bool kf_search_stagnant(const struct kf_search *s)
{
	return s->since_sig >= kf_search_patience(s);
}

void kf_search_note_unusable(struct kf_search *s)
{
	s->since_sig++;
}

void kf_search_reset_patience(struct kf_search *s)
{
	s->since_sig = 0;
}

int64_t kf_search_since_improvement(const struct kf_search *s)
{
	return s->since_sig;
}

bool kf_search_significant(const struct kf_search_cand *c, double level)
{
	return c->correct && c->lo > level * (1.0 + (c->band > 0 ? c->band : 0));
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
	struct kf_search_cand *v = kf_grow(s->v, s->n, &s->cap, sizeof(*s->v), 64);
	if (!v)
		return -1;
	s->v = v;
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
	if (x->strategy >= s->n_strategies)
		x->strategy = -1;
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
	/* the strategy node above the node's first-level ancestor (mcts with strategies) */
	{
		int top = (int)s->n;
		while (s->v[top].parent > 0)
			top = s->v[top].parent;
		int st = top == (int)s->n ? x->strategy : s->v[top].strategy;
		if (st >= 0 && st < s->n_strategies) {
			/* a strategy is judged by its working kernels: a failed implementation costs it a
			 * visit, not a penalty (the kernel node below still takes the -1) */
			s->svalue[st] += x->correct ? x->value : 0;
			if (!in_flight)
				s->svisits[st]++;
			if (x->parent == 0) {
				s->schildren[st]++;
				if (in_flight && s->spending[st] > 0)
					s->spending[st]--;
			}
		}
	}
	if (x->parent == 0 && !in_flight) { /* a rebuild learns the seeds made from the records */
		s->seeds++;
		s->iseeds[x->island]++;
	}
	if (kf_search_significant(x, s->sig_level)) {
		s->sig_level = x->speedup;
		s->since_sig = 0;
	} else {
		s->since_sig++;
	}
	s->n++;
	s->added++;
	if (s->strategy == KF_STRATEGY_EVO && s->added % s->p.migrate_every == 0)
		migrate(s);
	return (int)(s->n - 1);
}

/* The most recent failure still worth a repair (its feedback goes into the prompt). */
static int repair_target(struct kf_search *s, int island)
{
	for (size_t i = s->n; i-- > 1;) {
		struct kf_search_cand *c = &s->v[i];
		if (c->failed && !c->repaired && !c->pending && c->fail_depth <= s->p.repair_max_depth &&
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
	if (u < s->p.p_exploit) {
		out->parent = best_member(s, island);
		out->why = "exploit";
		return;
	}
	if (u < s->p.p_explore) {
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

static int widen(const struct kf_search *s, int visits)
{
	int m = 1 + (int)floor(sqrt((double)visits) / 2);
	return m > s->p.mcts_max_children ? s->p.mcts_max_children : m;
}

/* How many children a node may have now: correct nodes widen with their visits (progressive widening),
 * a failed node gets one repair while its failure chain is short. */
static int max_children(const struct kf_search *s, const struct kf_search_cand *c)
{
	if (!c->correct)
		return c->fail_depth <= s->p.repair_max_depth ? 1 : 0;
	return widen(s, c->visits);
}

/* UCT over the children of v (those in strategy st when st >= 0 and v is the root); -1 when none. */
static int uct_child(const struct kf_search *s, int v, int st, int parent_visits, struct kf_rng *rng)
{
	int best = -1;
	double best_u = -INFINITY, lnN = log((double)(parent_visits > 0 ? parent_visits : 1) + 1);
	for (size_t i = 1; i < s->n; i++) {
		const struct kf_search_cand *ch = &s->v[i];
		if (ch->parent != v || (st >= 0 && ch->strategy != st))
			continue;
		double n = ch->visits > 0 ? ch->visits : 1;
		double u = ch->value / n + s->p.uct_c * sqrt(lnN / n) + 1e-9 * kf_rng_uniform(rng);
		if (u > best_u) {
			best_u = u;
			best = (int)i;
		}
	}
	return best;
}

/* With strategies, the tree has two node kinds: strategy nodes (virtual, one per proposed strategy, the
 * root's children; expanding one = a fresh implementation of it from the reference) and implementation
 * nodes (kernels; expanding one = a refinement, or the repair of a failure). A failed implementation
 * penalises its strategy node but the node keeps widening, so one bad seed does not end a strategy. */
static void pick_mcts(struct kf_search *s, struct kf_rng *rng, struct kf_search_pick *out)
{
	int v = 0, st = -1;
	if (s->n_strategies > 0) {
		st = 0;
		/* UCT over the strategy nodes, unvisited first in order */
		double best_u = -INFINITY, lnN = log((double)(s->v[0].visits > 0 ? s->v[0].visits : 1) + 1);
		for (int i = 0; i < s->n_strategies; i++) {
			double n = s->svisits[i] > 0 ? s->svisits[i] : 0;
			double u = n == 0 ? 1e9 - i
					  : s->svalue[i] / n + s->p.uct_c * sqrt(lnN / n) +
						1e-9 * kf_rng_uniform(rng);
			if (u > best_u) {
				best_u = u;
				st = i;
			}
		}
		if (s->schildren[st] + s->spending[st] < widen(s, s->svisits[st])) {
			v = 0; /* expand the strategy node: a new implementation */
		} else {
			int c = uct_child(s, 0, st, s->svisits[st], rng);
			v = c < 0 ? 0 : c;
		}
	}
	for (int steps = 0; v > 0 && steps < 1000; steps++) {
		struct kf_search_cand *c = &s->v[v];
		if (c->n_children + c->pending < max_children(s, c))
			break;
		int best = uct_child(s, v, -1, c->visits, rng);
		if (best < 0) { /* a dead leaf (a failure past its repairs): widen above instead */
			v = 0;
			break;
		}
		v = best;
	}
	if (s->n_strategies == 0 && v == 0) {
		/* the plain tree: descend from the root as before */
		for (int steps = 0; steps < 1000; steps++) {
			struct kf_search_cand *c = &s->v[v];
			if (c->n_children + c->pending < max_children(s, c))
				break;
			int best = uct_child(s, v, -1, c->visits, rng);
			if (best < 0) {
				v = 0;
				break;
			}
			v = best;
		}
	}
	out->parent = v;
	out->island = 0;
	out->strategy = v > 0 ? s->v[v].strategy : st;
	out->why = v == 0 && st >= 0 ? "seed" : s->v[v].correct ? "uct" : "repair";
	if (!s->v[v].correct)
		s->v[v].repaired = true;
	s->v[v].pending++;
	if (v == 0 && st >= 0)
		s->spending[st]++;
	if (st >= 0)
		s->svisits[st]++; /* virtual visit of the strategy node */
	for (int a = v; a >= 0; a = s->v[a].parent)
		s->v[a].visits++; /* virtual visit, the reward follows in kf_search_add */
}

/* ---- the budget schedule --------------------------------------------------------------------- */

/* A failure worth a repair: its chain is short, its feedback can guide a fix, and it is promising: a seed
 * (its strategy has no working version yet: a failed implementation must not kill it) or a child of one of
 * the top kernels. */
static bool promising(const struct kf_search *s, const struct kf_search_cand *c, const int *top, int n_top)
{
	if (!c->failed || c->repaired || c->pending || !c->repairable ||
	    c->fail_depth > s->p.schedule_repair_max_depth)
		return false;
	int root = (int)(c - s->v);
	while (root > 0 && !s->v[root].correct)
		root = s->v[root].parent; /* the correct kernel this chain of failures started from */
	if (root <= 0)
		return true;
	for (int i = 0; i < n_top; i++)
		if (top[i] == root)
			return true;
	return false;
}

/* The n best correct kernels (not the reference), best first; ties by index. */
static int top_kernels(const struct kf_search *s, int *top, int n)
{
	int m = 0;
	for (size_t i = 1; i < s->n; i++) {
		if (!s->v[i].correct)
			continue;
		int j = m;
		if (m < n)
			m++;
		else if (s->v[top[n - 1]].speedup >= s->v[i].speedup)
			continue;
		else
			j = n - 1;
		top[j] = (int)i;
		for (; j > 0 && s->v[top[j - 1]].speedup < s->v[top[j]].speedup; j--) {
			int t = top[j - 1];
			top[j - 1] = top[j];
			top[j] = t;
		}
	}
	return m;
}

static void pick_schedule(struct kf_search *s, uint64_t k, struct kf_rng *rng, struct kf_search_pick *out)
{
	int top[SCHED_TOP] = {0, 0, 0};
	int n_top = top_kernels(s, top, SCHED_TOP);
	if (n_top > SCHED_TOP)
		n_top = SCHED_TOP;
	double u = kf_rng_uniform(rng); /* drawn every time so the stream per request is fixed */
	int64_t n_seeds = (int64_t)floor(s->p.schedule_seed_share * (double)s->budget + 0.5);
	if (n_seeds < 2)
		n_seeds = 2;
	int64_t upfront = (3 * n_seeds + 3) / 4;
	(void)k;
	out->island = 0;
	/* seeds first (one per strategy in turn), then a reserved seed whenever refinement stalls */
	if (s->seeds < upfront || (s->seeds < n_seeds && s->since_sig >= kf_search_patience(s) / 2) ||
	    n_top == 0) {
		/* nothing correct yet: repair a promising failed seed before trying yet another seed */
		for (size_t i = s->n; n_top == 0 && s->seeds >= upfront && i-- > 1;)
			if (promising(s, &s->v[i], top, 0)) {
				s->v[i].repaired = true;
				out->parent = (int)i;
				out->strategy = s->v[i].strategy;
				out->why = "repair";
				return;
			}
		out->parent = 0;
		out->strategy = s->n_strategies ? (int)(s->seeds % s->n_strategies) : -1;
		out->why = "seed";
		s->seeds++;
		if (s->since_sig >= kf_search_patience(s) / 2 && s->seeds > upfront)
			s->since_sig = 0; /* a fresh line of attack gets its own patience */
		return;
	}
	for (size_t i = s->n; i-- > 1;)
		if (promising(s, &s->v[i], top, n_top)) {
			s->v[i].repaired = true;
			out->parent = (int)i;
			out->strategy = s->v[i].strategy;
			out->why = "repair";
			return;
		}
	double acc = 0, wsum = 0;
	for (int i = 0; i < n_top; i++)
		wsum += sched_top_w[i];
	out->parent = top[0];
	for (int i = 0; i < n_top; i++) {
		acc += sched_top_w[i] / wsum;
		if (u < acc) {
			out->parent = top[i];
			break;
		}
	}
	out->strategy = s->v[out->parent].strategy;
	out->why = "refine";
}

void kf_search_pick_void(struct kf_search *s, const struct kf_search_pick *p)
{
	struct kf_search_cand *c = kf_search_at(s, (size_t)p->parent);
	if (!c)
		return;
	if (c->pending > 0)
		c->pending--;
	if (c->failed)
		c->repaired = false; /* the repair was not made */
	if (s->strategy == KF_STRATEGY_MCTS && p->parent == 0 && p->strategy >= 0 &&
	    p->strategy < s->n_strategies && s->spending[p->strategy] > 0)
		s->spending[p->strategy]--;
}

void kf_search_pick(struct kf_search *s, uint64_t k, struct kf_rng *rng, struct kf_search_pick *out)
{
	memset(out, 0, sizeof(*out));
	out->strategy = -1;
	if (s->strategy == KF_STRATEGY_MCTS) {
		pick_mcts(s, rng, out);
	} else if (s->strategy == KF_STRATEGY_SCHEDULE) {
		pick_schedule(s, k, rng, out);
	} else {
		pick_evo(s, k, rng, out);
		if (out->parent > 0) {
			out->strategy = s->v[out->parent].strategy;
		} else if (s->n_strategies) {
			/* island i's seeds take strategies i, i + islands, ... in turn: islands keep theirs
			 */
			int i = out->island;
			out->strategy = (i + s->n_islands * s->iseeds[i]) % s->n_strategies;
			s->iseeds[i]++;
			out->why = "seed";
		}
	}
}
