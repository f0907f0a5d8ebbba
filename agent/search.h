/* The search strategies behind kf_optimize (agent/optimize.c): evo (islands, MAP-Elites cells, an elite
 * archive, explore/exploit/random parent choice, migration), mcts (UCT over a tree whose first level is the
 * proposed strategies and whose other nodes are kernels) and schedule (a budget schedule: about a fifth of
 * the calls on diverse seeds, repairs only of promising failures, the rest serial refinement of the top
 * kernels). All see the same list of candidates, in recording order, and only choose parents (and which
 * proposed strategy a prompt follows); they never touch the LLM or the knowledge base, so a resume rebuilds
 * them by observing the recorded candidates again, and bench/bench_search.c can drive them with a
 * simulated model. The patience rule (stop after this many attempts without a significant improvement)
 * lives here too, for the same reason. */
#ifndef KF_AGENT_SEARCH_H
#define KF_AGENT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/optimize.h"
#include "rng.h"

/* One candidate as the strategies see it. Index 0 is the reference (the root of every lineage). */
struct kf_search_cand {
	int parent;       /* index, -1 for the reference */
	bool correct;     /* verified and its timed outputs re-checked */
	bool failed;      /* evaluated and rejected (parse errors are not candidates) */
	double speedup;   /* over the reference, correct ones only (reference: 1) */
	int fail_depth;   /* failed ancestors in a row, itself included (0 when correct) */
	int island;       /* evo island */
	uint32_t islands; /* evo: islands it belongs to (its own, plus where it migrated) */
	int cell;         /* MAP-Elites cell of its behaviour features */
	int depth;        /* edges from the reference */
	/* mcts */
	int visits;
	double value; /* sum of rewards below and at this node */
	int n_children;
	int pending;   /* expansions in flight */
	bool repaired; /* a failed node gets one repair expansion */
	/* set by the caller with the evaluation */
	double lo;       /* lower bound of the speedup interval (correct ones; 0 unknown) */
	double band;     /* the A/A noise band lo must clear (0: none measured) */
	int strategy;    /* the proposed strategy its lineage follows, -1 none (the pick's strategy) */
	bool repairable; /* a failure whose feedback can guide a fix (not "unsupported on this backend") */
};

/* A parent choice. */
struct kf_search_pick {
	int parent;
	int island;
	int strategy;    /* the proposed strategy the prompt asks to follow, -1 none */
	const char *why; /* "seed", "repair", "exploit", "explore", "random", "uct", "refine" */
};

/* The knobs of the strategies (docs/config.md: a config file's optimize.search). The defaults are what the
 * search always used; a run records the ones it searched with, and a resume takes them from that record. */
struct kf_search_params {
	int islands;                   /* evo: islands, 1..32 (2) */
	int migrate_every;             /* evo: each island's best joins the next one every this many added
					  candidates, 1..1000 (5) */
	double p_exploit;              /* evo: the parent is the island's best with this probability (0.6) */
	double p_explore;              /* evo: ... else a MAP-Elites cell's elite below this one, else a
					  random member; p_exploit <= p_explore <= 1 (0.85) */
	double uct_c;                  /* mcts: UCT's exploration constant, 0..100 (1) */
	int mcts_max_children;         /* mcts: progressive widening stops at this many children, 1..64 (4) */
	int patience_min;              /* stop after at least this many attempts without a significant
					  improvement, 1..1000000 (8) ... */
	double patience_share;         /* ... or this share of the call budget when more, (0, 1] (0.3) */
	int repair_max_depth;          /* evo, mcts: a failure is repaired while its chain of failures is at
					  most this long, 0..16 (2) */
	double schedule_seed_share;    /* schedule: this share of the calls are seeds, (0, 1] (0.2) */
	int schedule_repair_max_depth; /* schedule: repair_max_depth of the schedule, 0..16 (3) */
};
#define KF_SEARCH_N_PARAMS 11
struct kf_search_params kf_search_params_default(void);
/* The parameters by index (0..KF_SEARCH_N_PARAMS-1), in the order of the struct: the name a config file
 * and a run record use ("islands"), and the value as a double (integers exactly). */
const char *kf_search_param_name(size_t i);
double kf_search_param_get(const struct kf_search_params *p, size_t i);
/* KF_ERR_INVALID naming the parameter when one is out of its range: "islands: expected an integer 1..32,
 * got 40". */
enum kf_status kf_search_params_check(const struct kf_search_params *p, struct kf_err *err);
/* Reads the parameters an object sets (a config file's optimize.search, a run record's "search") over *p:
 * every key must be a parameter (else "unknown key 'x'; did you mean 'y'?"), every value a number in its
 * range; errors read "FILE: PATH.KEY: expected an integer 1..32, got "x"" (path: where obj is). found (may
 * be NULL) gets bit i set for each parameter i the object sets. */
struct cJSON;
struct kf_jpath;
enum kf_status kf_search_params_parse(const struct cJSON *obj, struct kf_search_params *p, uint32_t *found,
				      struct kf_jpath *path, struct kf_err *err);
/* Adds every parameter to obj (integers as integers); false when out of memory. */
bool kf_search_params_json(const struct kf_search_params *p, struct cJSON *obj);

struct kf_search;

/* A search with params (NULL: the defaults), which the caller checked with kf_search_params_check (what
 * memory safety needs is clamped anyway: islands to 1..32, migrate_every to >= 1). NULL when out of
 * memory. */
struct kf_search *kf_search_new(enum kf_strategy s, const struct kf_search_params *params);
void kf_search_free(struct kf_search *s);
/* Candidates are stored by the search (index = recording order); add the reference first. */
size_t kf_search_count(const struct kf_search *s);
struct kf_search_cand *kf_search_at(struct kf_search *s, size_t i);
/* Adds a candidate (its evaluation already known) and updates the strategy's state: archive, islands,
 * migration, the tree's statistics. in_flight: the parent's path was counted at pick time (virtual
 * visits), so only rewards are added now; false when rebuilding from the knowledge base. */
int kf_search_add(struct kf_search *s, const struct kf_search_cand *c, bool in_flight);
/* Chooses the parent of request k with rng (seeded per request by the caller). Marks the pick as
 * pending (mcts virtual visit, evo repair taken). */
void kf_search_pick(struct kf_search *s, uint64_t k, struct kf_rng *rng, struct kf_search_pick *out);
/* Releases a pick that produced no candidate (an unusable reply, a failed call): its parent may be chosen
 * again (mcts: the pending expansion is dropped; the virtual visit stays, as the attempt was made). */
void kf_search_pick_void(struct kf_search *s, const struct kf_search_pick *p);
/* The MAP-Elites cell of a kernel: technique-tag set x code-length band. */
int kf_search_cell(const char *tags, size_t source_len);

/* The strategies proposed for the run (0: none; at most KF_SEARCH_MAX_STRATEGIES): seeds take them in
 * turn, islands keep theirs, MCTS makes them its first level. Set before the first pick. */
#define KF_SEARCH_MAX_STRATEGIES 8
void kf_search_set_strategies(struct kf_search *s, int n);
int kf_search_strategies(const struct kf_search *s);
/* The run's call budget (schedule's seed share, patience); 0: 20. */
void kf_search_set_budget(struct kf_search *s, int64_t calls);

/* Patience: stop after max(patience_min, patience_share x the budget) (by default max(8, 30%)) candidates and
 * unusable replies in a row without a significant improvement. */
int64_t kf_search_patience(const struct kf_search *s);
/* True once the patience is used up. */
bool kf_search_stagnant(const struct kf_search *s);
/* A reply that gave nothing to evaluate still costs patience. */
void kf_search_note_unusable(struct kf_search *s);
/* A fresh window (a resumed run). */
void kf_search_reset_patience(struct kf_search *s);
/* Attempts since the last significant improvement. */
int64_t kf_search_since_improvement(const struct kf_search *s);
/* The one definition of a significant improvement: c is correct and its speedup interval lies above
 * level (the point speedup of the last significant best; 1 for the reference) by more than its A/A noise
 * band: lo > level x (1 + band) (docs/spec/verification.md). */
bool kf_search_significant(const struct kf_search_cand *c, double level);

#endif
