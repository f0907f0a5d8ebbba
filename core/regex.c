/* core/regex.h: compile-once under a mutex; the state flag makes every later call lock-free. */
#include "regex.h"

#include <stdio.h>

static const char *pattern_at(const struct kf_regex_table *t, size_t i)
{
	return *(const char *const *)(const void *)((const char *)t->first + i * t->stride);
}

static int compile_all(struct kf_regex_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		int ec;
		PCRE2_SIZE off;
		uint32_t opt = t->all_options | (t->options ? t->options[i] : 0);
		t->code[i] =
		    pcre2_compile((PCRE2_SPTR)pattern_at(t, i), PCRE2_ZERO_TERMINATED, opt, &ec, &off, NULL);
		if (!t->code[i]) {
			PCRE2_UCHAR msg[160];
			pcre2_get_error_message(ec, msg, sizeof(msg));
			snprintf(t->error, sizeof(t->error), "%s %zu at offset %zu: %s", t->what, i,
				 (size_t)off, (const char *)msg);
			return 2;
		}
		if (t->jit)
			pcre2_jit_compile(t->code[i], PCRE2_JIT_COMPLETE);
	}
	if (t->match_limit || t->depth_limit) {
		if (!(t->mctx = pcre2_match_context_create(NULL))) {
			snprintf(t->error, sizeof(t->error), "%s: out of memory", t->what);
			return 2;
		}
		if (t->match_limit)
			pcre2_set_match_limit(t->mctx, t->match_limit);
		if (t->depth_limit)
			pcre2_set_depth_limit(t->mctx, t->depth_limit);
	}
	return 1;
}

enum kf_status kf_regex_table_ready(struct kf_regex_table *t, struct kf_err *err)
{
	int s = atomic_load_explicit(&t->state, memory_order_acquire);
	if (!s) {
		pthread_mutex_lock(&t->lock);
		s = atomic_load_explicit(&t->state, memory_order_relaxed);
		if (!s) {
			s = compile_all(t);
			atomic_store_explicit(&t->state, s, memory_order_release);
		}
		pthread_mutex_unlock(&t->lock);
	}
	return s == 1 ? KF_OK : kf_err_set(err, KF_ERR_INTERNAL, "%s", t->error);
}

int kf_regex_table_match(const struct kf_regex_table *t, size_t i, const char *s, size_t len, size_t start,
			 pcre2_match_data *md)
{
	return pcre2_match(t->code[i], (PCRE2_SPTR)s, len, start, 0, md, t->mctx);
}
