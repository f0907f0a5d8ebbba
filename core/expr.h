/* Integer expressions of the directive grammar (docs/spec/task-format.md): 64-bit, + - * / %, parentheses,
 * cdiv(a,b), min(a,b), max(a,b), over dim names and integer literals. Overflow and division by zero
 * are errors, never undefined behaviour. */
#ifndef KF_EXPR_H
#define KF_EXPR_H

#include "kf.h"

#define KF_MAX_DIMS 16
#define KF_NAME_MAX 64

/* A binding of dim names to values: one shape of a task. */
struct kf_shape {
	size_t n;
	char names[KF_MAX_DIMS][KF_NAME_MAX];
	int64_t values[KF_MAX_DIMS];
};

/* Looks a dim up; returns true and sets *out when bound. */
bool kf_shape_get(const struct kf_shape *s, const char *name, int64_t *out);
/* Sets (adds or replaces) a binding; KF_ERR_LIMIT past KF_MAX_DIMS. */
enum kf_status kf_shape_set(struct kf_shape *s, const char *name, int64_t value);
/* "B=64 N=1000" into buf. */
void kf_shape_format(const struct kf_shape *s, char *buf, size_t n);

/* Semantics: `/` truncates toward zero and `%` takes the sign of the dividend (as in C); cdiv(a,b) is
 * the mathematical ceiling of a/b for every sign (cdiv(-7,2) = -3, cdiv(-7,-2) = 4); INT64_MIN / -1
 * is an overflow error. */
/* Evaluates src under the bindings (NULL: no names allowed). Errors name the offending token:
 * "unknown name 'Q'", "division by zero in 'N/(B-B)'", "overflow in '...'" (KF_ERR_PARSE for syntax,
 * KF_ERR_INVALID for unknown names, KF_ERR_RANGE for overflow/division by zero). */
enum kf_status kf_expr_eval(const char *src, const struct kf_shape *bind, int64_t *out, struct kf_err *err);

/* Checks syntax and that every name is in names[0..n_names); used to validate without values.
 * names == NULL: syntax only, any name accepted (kernel-file parsing, before a task is known).
 * An unknown name is KF_ERR_INVALID "unknown dim 'Q' in 'Q*2'". */
enum kf_status kf_expr_check(const char *src, const char *const *names, size_t n_names, struct kf_err *err);

#endif
