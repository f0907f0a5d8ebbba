/* The search strategies behind kf_optimize (agent/optimize.c): evo (islands, MAP-Elites cells, an elite
 * archive, explore/exploit/random parent choice, migration) and mcts (UCT over a tree of kernels). Both
 * see the same list of candidates, in recording order, and only choose parents; they never touch the LLM
 * or the knowledge base, so a resume rebuilds them by observing the recorded candidates again. */
#ifndef KF_AGENT_SEARCH_H
#define KF_AGENT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/optimize.h"
#include "verifier/verifier.h"

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
};

/* A parent choice. */
struct kf_search_pick {
	int parent;
	int island;
	const char *why; /* "repair", "exploit", "explore", "random", "uct" */
};

struct kf_search;

struct kf_search *kf_search_new(enum kf_strategy s, int n_islands);
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
/* The MAP-Elites cell of a kernel: technique-tag set x code-length band. */
int kf_search_cell(const char *tags, size_t source_len);

#endif
