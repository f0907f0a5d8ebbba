/* "Did you mean": the known name a mistyped one most likely meant, by one rule for every place that
 * suggests (unknown commands and options in cli/main.c, unknown keys of a config file in agent/config.c):
 * at most two edits away (insertions, deletions, substitutions, adjacent swaps), and fewer edits than half
 * the known name. */
#ifndef KF_SUGGEST_H
#define KF_SUGGEST_H

#include <stddef.h>

/* Edit distance between two short words; 99 when either is longer than 31 characters. */
size_t kf_suggest_distance(const char *a, const char *b);

/* The closest name so far: kf_suggest_init, kf_suggest_try for each known name, then best (NULL: none is
 * close). best is borrowed from the names tried. */
struct kf_suggest {
	const char *best;
	size_t d;
};
void kf_suggest_init(struct kf_suggest *s);
void kf_suggest_try(struct kf_suggest *s, const char *typed, const char *name);

#endif
