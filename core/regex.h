/* A table of PCRE2 patterns compiled once per process, on first use from any thread, with optional JIT and
 * match limits: the scaffold the kernel-file parser, the reply parser, the technique tagger, the secret
 * detector, the unsupported-construct scan and the ptxas log reader share. A table is a static object the
 * caller declares with KF_REGEX_TABLE; its compiled patterns live for the process. */
#ifndef KF_REGEX_H
#define KF_REGEX_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kf.h"

struct kf_regex_table {
	const char *what;          /* names the table in errors: "directive pattern" */
	size_t n;                  /* patterns */
	const char *const *first;  /* the first pattern; the others follow every stride bytes */
	size_t stride;             /* sizeof(char *) for an array of patterns, sizeof(row) inside a table */
	const uint32_t *options;   /* per-pattern pcre2_compile options, or NULL */
	uint32_t all_options;      /* or'ed into every pattern's */
	bool jit;                  /* also JIT-compile (an optimisation: the interpreter serves without) */
	uint32_t match_limit;      /* > 0: a match context with this match limit ... */
	uint32_t depth_limit;      /* ... and this depth limit (for patterns run on outside text) */
	pcre2_code **code;         /* n slots, the caller's: code[i] is pattern i once ready */
	pcre2_match_context *mctx; /* the match context when limits are set, else NULL */
	pthread_mutex_t lock;
	atomic_int state; /* 0 not compiled yet, 1 ready, 2 failed */
	char error[256];
};

/* A static table of n patterns at first, stride bytes apart, compiled into code[0..n). */
#define KF_REGEX_TABLE(what, n, first, stride, options, all_options, jit, match_limit, depth_limit, code)    \
	{                                                                                                    \
		(what), (n), (first), (stride), (options), (all_options), (jit), (match_limit),              \
		    (depth_limit), (code), NULL, PTHREAD_MUTEX_INITIALIZER, 0, ""                            \
	}

/* Compiles the table unless done; KF_OK when every pattern compiled, else KF_ERR_INTERNAL (a bug in a
 * pattern: "WHAT N at offset O: message") or KF_ERR_NOMEM, the same answer on every later call. */
enum kf_status kf_regex_table_ready(struct kf_regex_table *t, struct kf_err *err);

/* pcre2_match of pattern i (the table ready) on s[0..len) from start, with the table's limits. */
int kf_regex_table_match(const struct kf_regex_table *t, size_t i, const char *s, size_t len, size_t start,
			 pcre2_match_data *md);

#endif
