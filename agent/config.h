/* kforge-config/1 files (docs/config.md): the settings of `kforge optimize` kept in a file, ./kforge.json or
 * --config FILE. The module reads and checks a file (every error names the file and the dotted key) and
 * says which value is in force for a key: a command-line flag, else the file's, else the environment's,
 * else the built-in default (NULL here: the caller's default applies). */
#ifndef KF_AGENT_CONFIG_H
#define KF_AGENT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/search.h"
#include "kf.h"

#define KF_CONFIG_FORMAT "kforge-config/1"
#define KF_CONFIG_DEFAULT_FILE "kforge.json" /* read from the current folder when --config is not given */

/* The keys of the file's "optimize" object (its "search" object is struct kf_search_params). */
enum kf_config_key {
	KF_CONFIG_STRATEGY,
	KF_CONFIG_PROVIDER,
	KF_CONFIG_MODEL,
	KF_CONFIG_BASE_URL,
	KF_CONFIG_MAX_TOKENS,
	KF_CONFIG_REASONING_EFFORT,
	KF_CONFIG_THINKING_BUDGET,
	KF_CONFIG_TEMPERATURE,
	KF_CONFIG_TIMEOUT_MS,
	KF_CONFIG_BUDGET_CALLS,
	KF_CONFIG_BUDGET_USD,
	KF_CONFIG_TIME_LIMIT_S,
	KF_CONFIG_CONCURRENCY,
	KF_CONFIG_BACKEND,
	KF_CONFIG_SEED,
	KF_CONFIG_KEEP_BEST,
	KF_CONFIG_PROMPTS,
	KF_CONFIG_N_KEYS
};
const char *kf_config_key_name(enum kf_config_key k); /* "budget_calls"; NULL out of range */

/* Where a value in force came from. */
enum kf_config_source {
	KF_CONFIG_FROM_DEFAULT,
	KF_CONFIG_FROM_ENV,
	KF_CONFIG_FROM_FILE,
	KF_CONFIG_FROM_FLAG
};
const char *kf_config_source_name(enum kf_config_source s); /* "default", "env", "file", "flag" */

struct kf_config {
	char *path; /* the file read (malloc'd), NULL when none */
	/* each key the file sets, spelt as its flag takes it ("20", "0.5", "true"; prompts resolved against
	 * the file's folder), malloc'd; NULL when the file does not set it */
	char *value[KF_CONFIG_N_KEYS];
	struct kf_search_params search; /* the file's optimize.search over the defaults */
	uint32_t search_set;            /* bit i: the file sets search parameter i (kf_search_param_name) */
};

/* An empty configuration (no file: every value NULL, the default search parameters). */
void kf_config_init(struct kf_config *c);
/* Frees what c holds and leaves it as kf_config_init does; safe on an initialised c. */
void kf_config_release(struct kf_config *c);

/* Reads path into c (initialised; on failure left empty). KF_ERR_NOTFOUND/KF_ERR_IO when it cannot be
 * read, KF_ERR_PARSE "FILE:LINE:COL: invalid JSON", KF_ERR_INVALID for the rest: "FILE: format: ...",
 * "FILE: optimize: unknown key 'x'; did you mean 'y'?", "FILE: optimize.budget_calls: expected an integer
 * 1..1000000, got "x"". */
enum kf_status kf_config_read(const char *path, struct kf_config *c, struct kf_err *err);
/* The file in force: flag (--config's value; NULL when not given) names it ("none": no file at all); else
 * ./kforge.json when it exists; else none (c left empty, KF_OK). A named file that is missing is
 * KF_ERR_NOTFOUND. */
enum kf_status kf_config_load(const char *flag, struct kf_config *c, struct kf_err *err);

/* The value in force for key k: flag when not NULL, else the file's, else $env_var when set and not empty
 * (env_var NULL: no variable), else NULL (the built-in default); *src says which (may be NULL). Borrowed
 * from flag, c or the environment. */
const char *kf_config_resolve(const struct kf_config *c, enum kf_config_key k, const char *flag,
			      const char *env_var, enum kf_config_source *src);

#endif
