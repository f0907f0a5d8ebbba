/* Integer expressions of the directive grammar: a recursive-descent parser that evaluates as it parses
 * (64-bit, + - * / %, unary minus, parentheses, cdiv/min/max, dim names, decimal literals). Every
 * overflow and every division by zero is a KF_ERR_RANGE error caught with __builtin_*_overflow: never UB.
 *
 * Semantics (documented here because kernels and tasks depend on them):
 *  - `/` truncates toward zero and `%` takes the sign of the dividend, as in C.
 *  - cdiv(a, b) is the mathematical ceiling of a/b for every sign combination:
 *    cdiv(7,2)=4, cdiv(-7,2)=-3, cdiv(7,-2)=-3, cdiv(-7,-2)=4, cdiv(6,3)=2. b=0 is an error.
 *  - INT64_MIN / -1 and INT64_MIN % -1 are overflow errors (the quotient does not fit). */
#include "expr.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Deep nesting only comes from hostile input; 64 levels is far beyond any real launch expression and
 * keeps the recursion's stack use to a few KiB. */
#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_LEN 4096

bool kf_shape_get(const struct kf_shape *s, const char *name, int64_t *out)
{
	if (!s || !name)
		return false;
	for (size_t i = 0; i < s->n && i < KF_MAX_DIMS; i++) {
		if (!strcmp(s->names[i], name)) {
			if (out)
				*out = s->values[i];
			return true;
		}
	}
	return false;
}

enum kf_status kf_shape_set(struct kf_shape *s, const char *name, int64_t value)
{
	size_t len = strlen(name);

	if (len == 0 || len >= KF_NAME_MAX)
		return KF_ERR_INVALID;
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->names[i], name)) {
			s->values[i] = value;
			return KF_OK;
		}
	}
	if (s->n >= KF_MAX_DIMS)
		return KF_ERR_LIMIT;
	memcpy(s->names[s->n], name, len + 1);
	s->values[s->n] = value;
	s->n++;
	return KF_OK;
}

void kf_shape_format(const struct kf_shape *s, char *buf, size_t n)
{
	size_t used = 0;

	if (!n)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < s->n && i < KF_MAX_DIMS; i++) {
		int w = snprintf(buf + used, n - used, "%s%s=%lld", i ? " " : "", s->names[i],
				 (long long)s->values[i]);
		if (w < 0 || (size_t)w >= n - used) {
			buf[n - 1] = '\0';
			return;
		}
		used += (size_t)w;
	}
}

/* ---- the parser ------------------------------------------------------------------------------ */

struct parser {
	const char *src;
	size_t pos;
	int depth;
	const struct kf_shape *bind; /* eval mode: values of names */
	const char *const *names;    /* check mode: allowed names (NULL with check: syntax only) */
	size_t n_names;
	bool check; /* check mode: syntax and names only, nothing is computed */
	struct kf_err *err;
};

static void skip_ws(struct parser *p)
{
	while (p->src[p->pos] && isspace((unsigned char)p->src[p->pos]))
		p->pos++;
}

static bool is_ident_start(char c)
{
	return c == '_' || isalpha((unsigned char)c);
}

static bool is_ident_char(char c)
{
	return c == '_' || isalnum((unsigned char)c);
}

/* The text of src[a..b) trimmed, for messages. */
static void span(const struct parser *p, size_t a, size_t b, char *out, size_t n)
{
	while (a < b && isspace((unsigned char)p->src[a]))
		a++;
	while (b > a && isspace((unsigned char)p->src[b - 1]))
		b--;
	snprintf(out, n, "%.*s", (int)(b - a), p->src + a);
}

static enum kf_status syntax_error(struct parser *p, const char *what)
{
	skip_ws(p);
	if (!p->src[p->pos])
		return kf_err_set(p->err, KF_ERR_PARSE, "unexpected end of expression in '%s' (expected %s)",
				  p->src, what);
	if (is_ident_start(p->src[p->pos]) || isdigit((unsigned char)p->src[p->pos])) {
		size_t e = p->pos;
		while (is_ident_char(p->src[e]))
			e++;
		return kf_err_set(p->err, KF_ERR_PARSE,
				  "unexpected '%.*s' at column %zu in '%s' (expected %s)", (int)(e - p->pos),
				  p->src + p->pos, p->pos + 1, p->src, what);
	}
	return kf_err_set(p->err, KF_ERR_PARSE, "unexpected '%c' at column %zu in '%s' (expected %s)",
			  p->src[p->pos], p->pos + 1, p->src, what);
}

static enum kf_status range_error(struct parser *p, const char *what, size_t a, size_t b)
{
	char text[256];
	span(p, a, b, text, sizeof(text));
	if (strcmp(text, p->src) != 0 && strlen(p->src) < 200)
		return kf_err_set(p->err, KF_ERR_RANGE, "%s in '%s' (in '%s')", what, text, p->src);
	return kf_err_set(p->err, KF_ERR_RANGE, "%s in '%s'", what, text);
}

static bool accept(struct parser *p, char c)
{
	skip_ws(p);
	if (p->src[p->pos] == c) {
		p->pos++;
		return true;
	}
	return false;
}

static enum kf_status parse_sum(struct parser *p, int64_t *out);

/* Applies a binary operator with every overflow and zero divisor reported over src[a..b). */
static enum kf_status apply(struct parser *p, char op, int64_t x, int64_t y, int64_t *out, size_t a, size_t b)
{
	if (p->check) {
		*out = 1;
		return KF_OK;
	}
	switch (op) {
	case '+':
		if (__builtin_add_overflow(x, y, out))
			return range_error(p, "overflow", a, b);
		return KF_OK;
	case '-':
		if (__builtin_sub_overflow(x, y, out))
			return range_error(p, "overflow", a, b);
		return KF_OK;
	case '*':
		if (__builtin_mul_overflow(x, y, out))
			return range_error(p, "overflow", a, b);
		return KF_OK;
	case '/':
	case '%':
	case 'c': /* cdiv */
		if (y == 0)
			return range_error(p, op == '%' ? "modulo by zero" : "division by zero", a, b);
		if (x == INT64_MIN && y == -1)
			return range_error(p, "overflow", a, b);
		if (op == '/') {
			*out = x / y;
		} else if (op == '%') {
			*out = x % y;
		} else {
			/* Ceiling: the truncated quotient is one too small exactly when there is a remainder
			 * and the true quotient is positive (remainder and divisor have the same sign). */
			int64_t q = x / y, r = x % y;
			if (r != 0 && ((r > 0) == (y > 0)))
				q++; /* cannot overflow: |q| < |x| here */
			*out = q;
		}
		return KF_OK;
	case 'm': /* min */
		*out = x < y ? x : y;
		return KF_OK;
	case 'M': /* max */
		*out = x > y ? x : y;
		return KF_OK;
	}
	return kf_err_set(p->err, KF_ERR_INTERNAL, "unknown operator '%c'", op);
}

static enum kf_status lookup(struct parser *p, const char *name, size_t a, int64_t *out)
{
	if (p->check) {
		*out = 1;
		if (!p->names)
			return KF_OK;
		for (size_t i = 0; i < p->n_names; i++)
			if (p->names[i] && !strcmp(p->names[i], name))
				return KF_OK;
		return kf_err_set(p->err, KF_ERR_INVALID, "unknown dim '%s' in '%s'", name, p->src);
	}
	if (kf_shape_get(p->bind, name, out))
		return KF_OK;
	(void)a;
	return kf_err_set(p->err, KF_ERR_INVALID, "unknown name '%s' in '%s'", name, p->src);
}

static enum kf_status parse_primary(struct parser *p, int64_t *out)
{
	enum kf_status st;
	size_t start;
	char c;

	if (++p->depth > EXPR_MAX_DEPTH)
		return kf_err_set(p->err, KF_ERR_PARSE, "expression nested too deeply in '%.80s'", p->src);
	skip_ws(p);
	start = p->pos;
	c = p->src[p->pos];
	if (c == '(') {
		p->pos++;
		st = parse_sum(p, out);
		if (st)
			return st;
		if (!accept(p, ')'))
			return syntax_error(p, "')'");
	} else if (c == '-' || c == '+') {
		/* unary sign: binds tighter than * so -a*b is (-a)*b, as in C */
		int64_t v = 0;
		p->pos++;
		st = parse_primary(p, &v);
		if (st)
			return st;
		if (c == '-' && !p->check) {
			if (__builtin_sub_overflow((int64_t)0, v, out))
				return range_error(p, "overflow", start, p->pos);
		} else {
			*out = p->check ? 1 : v;
		}
	} else if (isdigit((unsigned char)c)) {
		int64_t v = 0;
		while (isdigit((unsigned char)p->src[p->pos])) {
			if (__builtin_mul_overflow(v, (int64_t)10, &v) ||
			    __builtin_add_overflow(v, (int64_t)(p->src[p->pos] - '0'), &v)) {
				while (isdigit((unsigned char)p->src[p->pos]))
					p->pos++;
				return range_error(p, "integer literal out of range", start, p->pos);
			}
			p->pos++;
		}
		if (is_ident_char(p->src[p->pos]))
			return syntax_error(p, "an operator after a number");
		*out = v;
	} else if (is_ident_start(c)) {
		char name[KF_NAME_MAX];
		size_t len;
		while (is_ident_char(p->src[p->pos]))
			p->pos++;
		len = p->pos - start;
		if (len >= KF_NAME_MAX)
			return kf_err_set(p->err, KF_ERR_PARSE, "name '%.*s...' too long in expression", 32,
					  p->src + start);
		memcpy(name, p->src + start, len);
		name[len] = '\0';
		skip_ws(p);
		if (p->src[p->pos] == '(') {
			char op = !strcmp(name, "cdiv")  ? 'c'
				  : !strcmp(name, "min") ? 'm'
				  : !strcmp(name, "max") ? 'M'
							 : 0;
			int64_t x = 0, y = 0;
			if (!op)
				return kf_err_set(p->err, KF_ERR_PARSE,
						  "unknown function '%s' in '%s' (only cdiv, min, max)", name,
						  p->src);
			p->pos++;
			st = parse_sum(p, &x);
			if (st)
				return st;
			if (!accept(p, ','))
				return syntax_error(p, "',' (these functions take two arguments)");
			st = parse_sum(p, &y);
			if (st)
				return st;
			if (!accept(p, ')'))
				return syntax_error(p, "')'");
			st = apply(p, op, x, y, out, start, p->pos);
			if (st)
				return st;
		} else {
			st = lookup(p, name, start, out);
			if (st)
				return st;
		}
	} else {
		return syntax_error(p, "a number, a name or '('");
	}
	p->depth--;
	return KF_OK;
}

static enum kf_status parse_product(struct parser *p, int64_t *out)
{
	size_t start;
	enum kf_status st;

	skip_ws(p);
	start = p->pos;
	st = parse_primary(p, out);
	while (!st) {
		char op;
		int64_t rhs = 0;
		skip_ws(p);
		op = p->src[p->pos];
		if (op != '*' && op != '/' && op != '%')
			break;
		p->pos++;
		st = parse_primary(p, &rhs);
		if (!st)
			st = apply(p, op, *out, rhs, out, start, p->pos);
	}
	return st;
}

static enum kf_status parse_sum(struct parser *p, int64_t *out)
{
	size_t start;
	enum kf_status st;

	skip_ws(p);
	start = p->pos;
	st = parse_product(p, out);
	while (!st) {
		char op;
		int64_t rhs = 0;
		skip_ws(p);
		op = p->src[p->pos];
		if (op != '+' && op != '-')
			break;
		p->pos++;
		st = parse_product(p, &rhs);
		if (!st)
			st = apply(p, op, *out, rhs, out, start, p->pos);
	}
	return st;
}

static enum kf_status run(struct parser *p, int64_t *out)
{
	enum kf_status st;
	int64_t v = 0;

	if (!p->src)
		return kf_err_set(p->err, KF_ERR_PARSE, "empty expression");
	if (strlen(p->src) > EXPR_MAX_LEN)
		return kf_err_set(p->err, KF_ERR_PARSE, "expression longer than %d characters", EXPR_MAX_LEN);
	skip_ws(p);
	if (!p->src[p->pos])
		return kf_err_set(p->err, KF_ERR_PARSE, "empty expression");
	st = parse_sum(p, &v);
	if (st)
		return st;
	skip_ws(p);
	if (p->src[p->pos])
		return syntax_error(p, "an operator");
	if (out)
		*out = v;
	return KF_OK;
}

enum kf_status kf_expr_eval(const char *src, const struct kf_shape *bind, int64_t *out, struct kf_err *err)
{
	struct parser p = {.src = src, .bind = bind, .err = err};
	return run(&p, out);
}

enum kf_status kf_expr_check(const char *src, const char *const *names, size_t n_names, struct kf_err *err)
{
	struct parser p = {.src = src, .names = names, .n_names = n_names, .check = true, .err = err};
	return run(&p, NULL);
}
