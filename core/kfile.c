/* Kernel files (core/kfile.h): finds the `// kforge:` directives with PCRE2 (balanced parentheses by
 * recursion, so `grid=(cdiv(N,256))` parses), finds the extern "C" __global__ kernels of the source,
 * binds directive names to a task and evaluates a launch plan at one shape. Every error carries
 * PATH:LINE, because each is an invalid_launch verdict a person or an LLM has to act on. */
#include "kfile.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "lex.h"
#include "regex.h"

#define KFILE_MAX_BYTES (4u << 20) /* 4 MiB of source: far above any kernel, small enough to scan */
#define KFILE_MAX_LAUNCHES 64
#define KFILE_MAX_SCRATCH 32
#define KFILE_MAX_KERNELS 256

/* ---- regexes -------------------------------------------------------------------------------- */

/* A balanced parenthesised group, by PCRE2 recursion into the named group itself. */
#define BAL(name) "(?<" name ">\\((?:[^()]++|(?&" name "))*\\))"

static const char *const re_src[] = {
    /* 0: launch, applied to the comment text from "//" to the end of the line */
    "^//\\s*kforge:launch\\s+(?<kernel>[A-Za-z_][A-Za-z0-9_]*)\\s+grid\\s*=\\s*" BAL(
	"grid") "\\s*block\\s*=\\s*" BAL("block") "(?:\\s*smem\\s*=\\s*" BAL("smem") ")?"
										     "\\s*args\\s*=\\s*" BAL(
											 "args") "\\s*$",
    /* 1: scratch */
    "^//\\s*kforge:scratch\\s+(?<name>[A-Za-z_][A-Za-z0-9_]*)\\s+(?<dtype>[A-Za-z0-9_]+)\\s*" BAL(
	"count") "\\s*$",
    /* 2: any directive word, for the error message */
    "^//\\s*kforge:(?<word>[A-Za-z0-9_]*)",
    /* 3: extern "C" */
    "\\bextern\\s*\"C\"\\s*",
    /* 4: __global__ */
    "\\b__global__\\b",
    /* 5: long(D) */
    "^long\\s*\\(\\s*(?<dim>[A-Za-z_][A-Za-z0-9_]*)\\s*\\)$",
};
enum { RE_LAUNCH, RE_SCRATCH, RE_WORD, RE_EXTERN, RE_GLOBAL, RE_LONG, RE_COUNT };

static pcre2_code *re[RE_COUNT];
static struct kf_regex_table re_table =
    KF_REGEX_TABLE("directive pattern", RE_COUNT, re_src, sizeof(re_src[0]), NULL, 0, false, 0, 0, re);

static enum kf_status re_ready(struct kf_err *err)
{
	return kf_regex_table_ready(&re_table, err);
}

/* Matches re[i] against s[0..n) from offset start; returns true and fills md on a match. */
static bool re_match(int i, const char *s, size_t n, size_t start, pcre2_match_data *md)
{
	return kf_regex_table_match(&re_table, (size_t)i, s, n, start, md) >= 0;
}

/* Copies named group `name` of the last match into a new string (NULL when unset or on NOMEM). */
static char *re_group(int i, pcre2_match_data *md, const char *s, const char *name, bool *set)
{
	int num = pcre2_substring_number_from_name(re[i], (PCRE2_SPTR)name);
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
	size_t k;
	if (set)
		*set = false;
	if (num < 0)
		return NULL;
	k = 2 * (size_t)num;
	if (ov[k] == PCRE2_UNSET)
		return NULL;
	if (set)
		*set = true;
	return kf_strndup(s + ov[k], ov[k + 1] - ov[k]);
}

/* ---- small string helpers ------------------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Splits "(a, cdiv(b,c), d)" (outer parentheses included) at top-level commas into at most max parts,
 * each trimmed and newly allocated. Returns the count, -1 for too many, -2 on NOMEM. */
static int split_top(const char *group, char **parts, int max)
{
	size_t n = strlen(group);
	char *body = kf_strndup(group + 1, n >= 2 ? n - 2 : 0);
	int depth = 0, count = 0;
	char *start;

	if (!body)
		return -2;
	start = body;
	if (!*trim(body)) {
		free(body);
		return 0;
	}
	for (char *c = body;; c++) {
		if (*c == '(')
			depth++;
		else if (*c == ')')
			depth--;
		if (*c == '\0' || (*c == ',' && depth == 0)) {
			bool end = *c == '\0';
			*c = '\0';
			if (count >= max) {
				for (int i = 0; i < count; i++) {
					free(parts[i]);
					parts[i] = NULL;
				}
				free(body);
				return -1;
			}
			parts[count] = kf_strdup(trim(start));
			if (!parts[count]) {
				for (int i = 0; i < count; i++) {
					free(parts[i]);
					parts[i] = NULL;
				}
				free(body);
				return -2;
			}
			count++;
			if (end)
				break;
			start = c + 1;
		}
	}
	free(body);
	return count;
}

/* ---- freeing -------------------------------------------------------------------------------- */

static void launch_release(struct kf_launch *l)
{
	free(l->kernel);
	for (int i = 0; i < 3; i++) {
		free(l->grid[i]);
		free(l->block[i]);
	}
	free(l->smem);
	for (size_t i = 0; l->args && i < l->n_args; i++)
		free(l->args[i].name);
	free(l->args);
}

void kf_kfile_free(struct kf_kfile *k)
{
	if (!k)
		return;
	free(k->path);
	free(k->source);
	for (size_t i = 0; k->launches && i < k->n_launches; i++)
		launch_release(&k->launches[i]);
	free(k->launches);
	for (size_t i = 0; k->scratch && i < k->n_scratch; i++) {
		free(k->scratch[i].name);
		free(k->scratch[i].count);
	}
	free(k->scratch);
	for (size_t i = 0; k->kernels && i < k->n_kernels; i++) {
		free(k->kernels[i]);
		if (k->kernel_params)
			free(k->kernel_params[i]);
	}
	free(k->kernels);
	free(k->kernel_params);
	free(k);
}

/* ---- comments ------------------------------------------------------------------------------- */

/* ---- kernel names --------------------------------------------------------------------------- */

static bool is_id(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Skips a balanced (...) or [...] starting at code[i]; returns the index after it. */
static size_t skip_balanced(const char *code, size_t len, size_t i)
{
	char open = code[i], close = open == '(' ? ')' : open == '[' ? ']' : '>';
	int depth = 0;
	for (; i < len; i++) {
		if (code[i] == open)
			depth++;
		else if (code[i] == close && --depth == 0)
			return i + 1;
		else if (code[i] == ';' || code[i] == '{')
			return i;
	}
	return len;
}

/* The parameter list code[open..close] (both parentheses) with whitespace collapsed; NULL when it
 * holds a preprocessor line (its meaning depends on macros) or on NOMEM. */
static char *param_text(const char *code, size_t open, size_t close)
{
	char *out = malloc(close - open + 1), *o = out;
	bool space = false;
	if (!out)
		return NULL;
	for (size_t i = open + 1; i < close; i++) {
		char c = code[i];
		if (c == '#') {
			free(out);
			return NULL;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = o != out;
			continue;
		}
		if (space)
			*o++ = ' ';
		space = false;
		*o++ = c;
	}
	*o = '\0';
	return out;
}

/* The function name of the declaration that follows a `__global__` at code[i..): the last identifier
 * before the parameter list, skipping __launch_bounds__(...) and other attributes. *params gets the
 * parameter list text (see param_text) or NULL. */
static char *name_after_global(const char *code, size_t len, size_t i, char **params)
{
	static const char *const attrs[] = {"__launch_bounds__", "__maxnreg__",  "__cluster_dims__",
					    "__attribute__",     "__declspec",   "alignas",
					    "__align__",         "__noinline__", "__forceinline__"};
	size_t last_a = 0, last_n = 0;
	while (i < len) {
		char c = code[i];
		if (c == ';' || c == '{' || c == '=')
			return NULL;
		if (is_id(c)) {
			size_t a = i;
			bool attr = false;
			while (i < len && is_id(code[i]))
				i++;
			for (size_t k = 0; k < KF_ARRAY_SIZE(attrs); k++)
				attr |= strlen(attrs[k]) == i - a && !strncmp(code + a, attrs[k], i - a);
			if (attr) {
				size_t j = i;
				while (j < len && (code[j] == ' ' || code[j] == '\t' || code[j] == '\n' ||
						   code[j] == '\r'))
					j++;
				if (j < len && code[j] == '(')
					i = skip_balanced(code, len, j);
				last_n = 0;
			} else {
				last_a = a, last_n = i - a;
			}
			continue;
		}
		if (c == '[' && i + 1 < len && code[i + 1] == '[') {
			i = skip_balanced(code, len, i);
			continue;
		}
		if (c == '(') {
			size_t close;
			int depth = 0;
			if (!last_n)
				return NULL;
			for (close = i; close < len; close++) {
				if (code[close] == '(')
					depth++;
				else if (code[close] == ')' && --depth == 0)
					break;
			}
			*params = close < len ? param_text(code, i, close) : NULL;
			return kf_strndup(code + last_a, last_n);
		}
		i++;
	}
	return NULL;
}

/* Takes ownership of name and params (may be NULL). A kernel declared twice (prototype, then
 * definition) keeps the first readable parameter list. */
static enum kf_status add_kernel(struct kf_kfile *k, char *name, char *params, struct kf_err *err)
{
	char **nk, **np;
	for (size_t i = 0; i < k->n_kernels; i++) {
		if (!strcmp(k->kernels[i], name)) {
			if (!k->kernel_params[i]) {
				k->kernel_params[i] = params;
				params = NULL;
			}
			free(name);
			free(params);
			return KF_OK;
		}
	}
	if (k->n_kernels >= KFILE_MAX_KERNELS) {
		free(name);
		free(params);
		return kf_err_set(err, KF_ERR_LIMIT, "%s: more than %d kernels", k->path, KFILE_MAX_KERNELS);
	}
	nk = realloc(k->kernels, (k->n_kernels + 1) * sizeof(*nk));
	if (nk)
		k->kernels = nk;
	np = nk ? realloc(k->kernel_params, (k->n_kernels + 1) * sizeof(*np)) : NULL;
	if (np)
		k->kernel_params = np;
	if (!nk || !np) {
		free(name);
		free(params);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	k->kernels[k->n_kernels] = name;
	k->kernel_params[k->n_kernels] = params;
	k->n_kernels++;
	return KF_OK;
}

/* Finds extern "C" __global__ functions in code (the source with comments blanked out): single
 * declarations, those with __launch_bounds__ before the name, and `extern "C" { ... }` blocks. */
static enum kf_status find_kernels(struct kf_kfile *k, const char *code, size_t len, struct kf_err *err)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re[RE_EXTERN], NULL);
	pcre2_match_data *mg = pcre2_match_data_create_from_pattern(re[RE_GLOBAL], NULL);
	enum kf_status st = KF_OK;
	size_t pos = 0;

	if (!md || !mg) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	while (!st && pos < len && re_match(RE_EXTERN, code, len, pos, md)) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		size_t after = ov[1], end;
		pos = after > ov[0] ? after : ov[0] + 1;
		if (after < len && code[after] == '{') {
			/* extern "C" { ... }: every __global__ inside the block */
			int depth = 0;
			for (end = after; end < len; end++) {
				if (code[end] == '{')
					depth++;
				else if (code[end] == '}' && --depth == 0)
					break;
			}
		} else {
			/* one declaration: up to its body or its semicolon */
			end = after;
			while (end < len && code[end] != '{' && code[end] != ';')
				end++;
		}
		for (size_t g = after; !st && g < end && re_match(RE_GLOBAL, code, end, g, mg);) {
			PCRE2_SIZE *og = pcre2_get_ovector_pointer(mg);
			char *params = NULL;
			char *name = name_after_global(code, len, og[1], &params);
			g = og[1];
			if (name)
				st = add_kernel(k, name, params, err);
			else
				free(params);
		}
	}
out:
	pcre2_match_data_free(md);
	pcre2_match_data_free(mg);
	return st;
}

/* ---- directives ----------------------------------------------------------------------------- */

static enum kf_status line_err(const struct kf_kfile *k, int line, struct kf_err *err, enum kf_status code,
			       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static enum kf_status line_err(const struct kf_kfile *k, int line, struct kf_err *err, enum kf_status code,
			       const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return kf_err_set(err, code, "%s:%d: %s", k->path, line, msg);
}

/* Parses "(E[,E[,E]])" into exprs; what names the field for messages ("grid"). */
static enum kf_status parse_dims3(const struct kf_kfile *k, int line, const char *group, const char *what,
				  char **exprs, size_t *rank, struct kf_err *err)
{
	int n = split_top(group, exprs, 3);
	if (n == -2)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (n == -1 || n == 0)
		return line_err(k, line, err, KF_ERR_INVALID, "%s=%s: needs 1 to 3 expressions", what, group);
	*rank = (size_t)n;
	for (int i = 0; i < n; i++) {
		struct kf_err e = KF_ERR_INIT;
		if (kf_expr_check(exprs[i], NULL, 0, &e))
			return line_err(k, line, err, KF_ERR_INVALID, "%s[%d]: %s", what, i, e.msg);
	}
	return KF_OK;
}

static bool parse_literal(const char *s, int64_t *out)
{
	const char *p = s;
	int64_t v = 0;
	bool neg = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return false;
	}
	*out = neg ? -v : v;
	return true;
}

static bool is_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!is_id(*s))
			return false;
	return true;
}

static enum kf_status parse_args(struct kf_kfile *k, struct kf_launch *l, const char *group,
				 pcre2_match_data *ml, struct kf_err *err)
{
	char *parts[KF_PLAN_MAX_ARGS];
	int n = split_top(group, parts, KF_PLAN_MAX_ARGS);
	enum kf_status st = KF_OK;

	if (n == -2)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (n == -1)
		return line_err(k, l->line, err, KF_ERR_INVALID, "more than %d arguments", KF_PLAN_MAX_ARGS);
	l->args = calloc(n ? (size_t)n : 1, sizeof(*l->args));
	if (!l->args) {
		for (int i = 0; i < n; i++)
			free(parts[i]);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		struct kf_arg *a = &l->args[i];
		const char *s = parts[i];
		int64_t v;
		l->n_args = (size_t)i + 1;
		a->kind = KF_ARG_UNBOUND;
		a->index = -1;
		if (st) {
			free(parts[i]);
			continue;
		}
		if (re_match(RE_LONG, s, strlen(s), 0, ml)) {
			a->is_long = true;
			a->name = re_group(RE_LONG, ml, s, "dim", NULL);
			if (!a->name)
				st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		} else if (is_ident(s)) {
			if (!(a->name = kf_strdup(s)))
				st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		} else if (parse_literal(s, &v)) {
			if (v < INT32_MIN || v > INT32_MAX)
				st = line_err(k, l->line, err, KF_ERR_INVALID,
					      "args[%d]: literal %s does not fit in an int", i, s);
			a->kind = KF_ARG_LITERAL;
			a->literal = v;
			if (!st && !(a->name = kf_strdup(s)))
				st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		} else {
			st = line_err(
			    k, l->line, err, KF_ERR_INVALID,
			    "args[%d]: bad argument '%s' (expected a tensor, scratch, param or dim name, "
			    "long(DIM) or an integer literal)",
			    i, s);
		}
		free(parts[i]);
	}
	return st;
}

static enum kf_status parse_launch(struct kf_kfile *k, int line, const char *text, size_t n,
				   pcre2_match_data *md, pcre2_match_data *ml, struct kf_err *err)
{
	struct kf_launch *l, *nl;
	char *grid = NULL, *block = NULL, *smem = NULL, *args = NULL;
	enum kf_status st = KF_OK;
	bool smem_set;

	(void)n;
	if (k->n_launches >= KFILE_MAX_LAUNCHES)
		return line_err(k, line, err, KF_ERR_INVALID, "more than %d launch directives",
				KFILE_MAX_LAUNCHES);
	nl = realloc(k->launches, (k->n_launches + 1) * sizeof(*nl));
	if (!nl)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	k->launches = nl;
	l = &k->launches[k->n_launches++];
	memset(l, 0, sizeof(*l));
	l->line = line;
	l->kernel = re_group(RE_LAUNCH, md, text, "kernel", NULL);
	grid = re_group(RE_LAUNCH, md, text, "grid", NULL);
	block = re_group(RE_LAUNCH, md, text, "block", NULL);
	smem = re_group(RE_LAUNCH, md, text, "smem", &smem_set);
	args = re_group(RE_LAUNCH, md, text, "args", NULL);
	if (!l->kernel || !grid || !block || !args || (smem_set && !smem)) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (strlen(l->kernel) >= sizeof(((struct kf_plan_launch *)0)->kernel)) {
		st = line_err(k, line, err, KF_ERR_INVALID, "kernel name '%.40s...' is too long", l->kernel);
		goto out;
	}
	if ((st = parse_dims3(k, line, grid, "grid", l->grid, &l->grid_rank, err)) ||
	    (st = parse_dims3(k, line, block, "block", l->block, &l->block_rank, err)))
		goto out;
	if (smem_set) {
		char *parts[2] = {NULL, NULL};
		int c = split_top(smem, parts, 1);
		struct kf_err e = KF_ERR_INIT;
		if (c == -2) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto out;
		}
		if (c != 1) {
			st = line_err(k, line, err, KF_ERR_INVALID, "smem=%s: needs exactly one expression",
				      smem);
			goto out;
		}
		l->smem = parts[0];
		if (kf_expr_check(l->smem, NULL, 0, &e)) {
			st = line_err(k, line, err, KF_ERR_INVALID, "smem: %s", e.msg);
			goto out;
		}
	}
	st = parse_args(k, l, args, ml, err);
out:
	free(grid);
	free(block);
	free(smem);
	free(args);
	return st;
}

static enum kf_status parse_scratch(struct kf_kfile *k, int line, const char *text, pcre2_match_data *md,
				    struct kf_err *err)
{
	struct kf_scratch *s, *ns;
	char *dtype = NULL, *count = NULL, *parts[2] = {NULL, NULL};
	struct kf_err e = KF_ERR_INIT;
	enum kf_status st = KF_OK;
	int c;

	if (k->n_scratch >= KFILE_MAX_SCRATCH)
		return line_err(k, line, err, KF_ERR_INVALID, "more than %d scratch directives",
				KFILE_MAX_SCRATCH);
	ns = realloc(k->scratch, (k->n_scratch + 1) * sizeof(*ns));
	if (!ns)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	k->scratch = ns;
	s = &k->scratch[k->n_scratch++];
	memset(s, 0, sizeof(*s));
	s->line = line;
	s->name = re_group(RE_SCRATCH, md, text, "name", NULL);
	dtype = re_group(RE_SCRATCH, md, text, "dtype", NULL);
	count = re_group(RE_SCRATCH, md, text, "count", NULL);
	if (!s->name || !dtype || !count) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (strlen(s->name) >= KF_NAME_MAX) {
		st = line_err(k, line, err, KF_ERR_INVALID, "scratch name '%.40s...' is too long", s->name);
		goto out;
	}
	for (size_t i = 0; i + 1 < k->n_scratch; i++) {
		if (!strcmp(k->scratch[i].name, s->name)) {
			st =
			    line_err(k, line, err, KF_ERR_INVALID, "scratch '%s' already declared on line %d",
				     s->name, k->scratch[i].line);
			goto out;
		}
	}
	if (!kf_dtype_parse(dtype, &s->dtype)) {
		st = line_err(
		    k, line, err, KF_ERR_INVALID,
		    "scratch '%s': unknown dtype '%s' (expected one of f64 f32 f16 bf16 i64 i32 i16 i8 u8)",
		    s->name, dtype);
		goto out;
	}
	c = split_top(count, parts, 1);
	if (c == -2) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (c != 1) {
		st = line_err(k, line, err, KF_ERR_INVALID,
			      "scratch '%s': count %s needs exactly one expression", s->name, count);
		goto out;
	}
	s->count = parts[0];
	if (kf_expr_check(s->count, NULL, 0, &e))
		st = line_err(k, line, err, KF_ERR_INVALID, "scratch '%s': %s", s->name, e.msg);
out:
	free(dtype);
	free(count);
	return st;
}

/* A line whose comment mentions "kforge:" must be a well-formed directive on its own line. */
static enum kf_status parse_line(struct kf_kfile *k, int line, const char *ls, size_t n,
				 const unsigned char *cm, pcre2_match_data *md, pcre2_match_data *ml,
				 struct kf_err *err)
{
	char *text;
	size_t i = 0, tn;
	bool in_comment = false;
	enum kf_status st;

	for (size_t j = 0; j + 7 <= n && !in_comment; j++)
		in_comment = cm[j] && !memcmp(ls + j, "kforge:", 7);
	if (!in_comment)
		return KF_OK;
	if (line == 1 && n >= 3 && !memcmp(ls, "\xEF\xBB\xBF", 3))
		i = 3; /* a UTF-8 byte-order mark some editors write */
	while (i < n && (ls[i] == ' ' || ls[i] == '\t'))
		i++;
	if (!(i + 1 < n && ls[i] == '/' && ls[i + 1] == '/' && cm[i]))
		return line_err(k, line, err, KF_ERR_INVALID,
				"'kforge:' directives must be '//' comments on a line of their own");
	tn = n - i;
	while (tn && (ls[i + tn - 1] == '\r' || ls[i + tn - 1] == ' ' || ls[i + tn - 1] == '\t'))
		tn--;
	text = kf_strndup(ls + i, tn);
	if (!text)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (re_match(RE_LAUNCH, text, tn, 0, md)) {
		st = parse_launch(k, line, text, tn, md, ml, err);
	} else if (re_match(RE_SCRATCH, text, tn, 0, md)) {
		st = parse_scratch(k, line, text, md, err);
	} else if (re_match(RE_WORD, text, tn, 0, md)) {
		char *word = re_group(RE_WORD, md, text, "word", NULL);
		if (!word)
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		else if (!strcmp(word, "launch"))
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "malformed launch directive (expected '// kforge:launch KERNEL grid=(E[,E[,E]]) "
			    "block=(E[,E[,E]]) [smem=(E)] args=(ARG, ...)' with balanced parentheses)");
		else if (!strcmp(word, "scratch"))
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "malformed scratch directive (expected '// kforge:scratch NAME DTYPE (E)')");
		else
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "unknown directive 'kforge:%s' (expected kforge:launch or kforge:scratch)", word);
		free(word);
	} else {
		st = line_err(
		    k, line, err, KF_ERR_INVALID,
		    "comment mentions 'kforge:' but is not a directive (expected '// kforge:launch ...' or "
		    "'// kforge:scratch ...')");
	}
	free(text);
	return st;
}

enum kf_status kf_kfile_parse(const char *path, const char *source, size_t len, struct kf_kfile **out,
			      struct kf_err *err)
{
	struct kf_kfile *k;
	pcre2_match_data *md = NULL, *ml = NULL;
	unsigned char *cm = NULL;
	char *code = NULL;
	enum kf_status st;
	int line = 1;

	*out = NULL;
	if ((st = re_ready(err)))
		return st;
	if (len > KFILE_MAX_BYTES)
		return kf_err_set(err, KF_ERR_LIMIT, "%s: larger than %u bytes", path, KFILE_MAX_BYTES);
	if (memchr(source, '\0', len))
		return kf_err_set(err, KF_ERR_INVALID, "%s: contains a NUL byte (not a source file)", path);
	k = calloc(1, sizeof(*k));
	if (!k || !(k->path = kf_strdup(path ? path : "<kernel>")) ||
	    !(k->source = kf_strndup(source, len))) {
		kf_kfile_free(k);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	k->source_len = len;
	cm = kf_lex_comment_mask(source, len);
	code = kf_strndup(source, len);
	md = pcre2_match_data_create(32, NULL);
	ml = pcre2_match_data_create(8, NULL);
	if (!cm || !code || !md || !ml) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto fail;
	}
	for (size_t pos = 0; pos < len; line++) {
		const char *nl = memchr(source + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (source + pos)) : len - pos;
		if ((st = parse_line(k, line, source + pos, n, cm + pos, md, ml, err)))
			goto fail;
		pos += n + 1;
	}
	/* Kernels are searched in the source with comments blanked, so a commented-out kernel is not one. */
	for (size_t i = 0; i < len; i++)
		if (cm[i] && code[i] != '\n')
			code[i] = ' ';
	if ((st = find_kernels(k, code, len, err)))
		goto fail;
	if (!k->n_launches) {
		st = kf_err_set(err, KF_ERR_INVALID,
				"%s: no '// kforge:launch' directive (a kernel file says how to "
				"launch itself)",
				k->path);
		goto fail;
	}
	free(cm);
	free(code);
	pcre2_match_data_free(md);
	pcre2_match_data_free(ml);
	*out = k;
	return KF_OK;
fail:
	free(cm);
	free(code);
	pcre2_match_data_free(md);
	pcre2_match_data_free(ml);
	kf_kfile_free(k);
	return st;
}

enum kf_status kf_kfile_load(const char *path, struct kf_kfile **out, struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(KFILE_MAX_BYTES);
	enum kf_status st = kf_buf_read_file(&b, path, err);
	*out = NULL;
	if (!st)
		st = kf_kfile_parse(path, b.data, b.len, out, err);
	kf_buf_release(&b);
	return st;
}

/* ---- binding -------------------------------------------------------------------------------- */

static int scratch_index(const struct kf_kfile *k, const char *name)
{
	for (size_t i = 0; i < k->n_scratch; i++)
		if (!strcmp(k->scratch[i].name, name))
			return (int)i;
	return -1;
}

static enum kf_status check_expr(const struct kf_kfile *k, const struct kf_task *t, int line,
				 const char *what, const char *e, struct kf_err *err)
{
	struct kf_err e2 = KF_ERR_INIT;
	if (kf_expr_check(e, (const char *const *)t->dims, t->n_dims, &e2))
		return line_err(k, line, err, KF_ERR_INVALID, "%s: %s", what, e2.msg);
	return KF_OK;
}

/* What a kernel parameter or a directive argument is, as far as the launch is concerned. */
enum pclass { PC_UNKNOWN, PC_MACRO, PC_PTR, PC_I32, PC_I64, PC_F32, PC_F64 };

static const char *pclass_name(enum pclass c)
{
	switch (c) {
	case PC_PTR:
		return "a device pointer";
	case PC_I32:
		return "an int (4 bytes)";
	case PC_I64:
		return "a long long (8 bytes)";
	case PC_F32:
		return "a float";
	case PC_F64:
		return "a double";
	default:
		return "something else";
	}
}

static bool is_type_word(const char *w, size_t n)
{
	static const char *const words[] = {"int",    "long",     "short",  "char", "float",
					    "double", "unsigned", "signed", "bool", "void"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !strncmp(w, words[i], n))
			return true;
	return false;
}

/* Classifies one parameter declaration ("const float *__restrict__ x", "int N", "long long n").
 * Unknown types (typedefs, __half, structs) are PC_UNKNOWN and never cause an error; a lone unknown
 * word is PC_MACRO (a macro may stand for several parameters, so counts cannot be trusted). */
static enum pclass classify_param(const char *d, size_t n)
{
	static const char *const quals[] = {"const",    "volatile", "__restrict__", "__restrict",
					    "restrict", "register", "std"};
	static const struct {
		const char *type;
		enum pclass c;
	} types[] = {
	    {"int", PC_I32},
	    {"signed", PC_I32},
	    {"signed int", PC_I32},
	    {"unsigned", PC_I32},
	    {"unsigned int", PC_I32},
	    {"int32_t", PC_I32},
	    {"uint32_t", PC_I32},
	    {"long", PC_I64},
	    {"long int", PC_I64},
	    {"unsigned long", PC_I64},
	    {"long long", PC_I64},
	    {"long long int", PC_I64},
	    {"unsigned long long", PC_I64},
	    {"unsigned long long int", PC_I64},
	    {"int64_t", PC_I64},
	    {"uint64_t", PC_I64},
	    {"size_t", PC_I64},
	    {"ptrdiff_t", PC_I64},
	    {"float", PC_F32},
	    {"double", PC_F64},
	};
	const char *tok[16];
	size_t tlen[16], nt = 0;
	char type[128];
	size_t used = 0;

	for (size_t i = 0; i < n; i++)
		if (d[i] == '*' || d[i] == '[' || d[i] == '&')
			return PC_PTR;
	for (size_t i = 0; i < n;) {
		if (is_id(d[i]) && !(d[i] >= '0' && d[i] <= '9')) {
			size_t a = i;
			bool q = false;
			while (i < n && is_id(d[i]))
				i++;
			for (size_t k = 0; k < KF_ARRAY_SIZE(quals); k++)
				q |= strlen(quals[k]) == i - a && !strncmp(d + a, quals[k], i - a);
			if (!q) {
				if (nt == KF_ARRAY_SIZE(tok))
					return PC_UNKNOWN;
				tok[nt] = d + a, tlen[nt++] = i - a;
			}
		} else {
			i++;
		}
	}
	if (nt == 0)
		return PC_UNKNOWN;
	if (nt == 1 && !is_type_word(tok[0], tlen[0])) {
		for (size_t k = 0; k < KF_ARRAY_SIZE(types); k++)
			if (strlen(types[k].type) == tlen[0] && !strncmp(tok[0], types[k].type, tlen[0]))
				return types[k].c; /* a prototype without a name: "size_t" */
		return PC_MACRO;
	}
	if (nt >= 2 && !is_type_word(tok[nt - 1], tlen[nt - 1]))
		nt--; /* the parameter's name */
	for (size_t i = 0; i < nt; i++) {
		int w =
		    snprintf(type + used, sizeof(type) - used, "%s%.*s", i ? " " : "", (int)tlen[i], tok[i]);
		if (w < 0 || (size_t)w >= sizeof(type) - used)
			return PC_UNKNOWN;
		used += (size_t)w;
	}
	for (size_t k = 0; k < KF_ARRAY_SIZE(types); k++)
		if (!strcmp(type, types[k].type))
			return types[k].c;
	return PC_UNKNOWN;
}

static enum pclass arg_class(const struct kf_task *t, const struct kf_arg *a)
{
	switch (a->kind) {
	case KF_ARG_TENSOR:
	case KF_ARG_SCRATCH:
		return PC_PTR;
	case KF_ARG_DIM_INT:
	case KF_ARG_LITERAL:
		return PC_I32;
	case KF_ARG_DIM_LONG:
		return PC_I64;
	case KF_ARG_PARAM:
		switch (t->params[a->index].dtype) {
		case KF_DTYPE_F32:
			return PC_F32;
		case KF_DTYPE_F64:
			return PC_F64;
		case KF_DTYPE_I32:
			return PC_I32;
		default:
			return PC_I64;
		}
	default:
		return PC_UNKNOWN;
	}
}

/* Checks a bound launch against its kernel's parameter list (when readable). */
static enum kf_status check_signature(const struct kf_kfile *k, const struct kf_task *t,
				      const struct kf_launch *l, const char *params, struct kf_err *err)
{
	size_t starts[KF_PLAN_MAX_ARGS + 1], lens[KF_PLAN_MAX_ARGS + 1], n = 0, a = 0;
	int depth = 0;
	size_t len = strlen(params);

	if (!len || !strcmp(params, "void")) {
		n = 0;
	} else {
		for (size_t i = 0; i <= len; i++) {
			char c = params[i];
			if (c == '(' || c == '<' || c == '[' || c == '{')
				depth++;
			else if (c == ')' || c == '>' || c == ']' || c == '}')
				depth--;
			if (c == '\0' || (c == ',' && depth == 0)) {
				if (n > KF_PLAN_MAX_ARGS)
					return KF_OK; /* more than any launch can pass: leave it to the
							 compiler */
				starts[n] = a, lens[n] = i - a, n++;
				a = i + 1;
			}
		}
		for (size_t i = 0; i < n; i++)
			if (classify_param(params + starts[i], lens[i]) == PC_MACRO)
				return KF_OK;
	}
	if (n != l->n_args)
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"kernel '%s' takes %zu parameter%s but the directive passes %zu argument%s",
				l->kernel, n, n == 1 ? "" : "s", l->n_args, l->n_args == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		enum pclass want = classify_param(params + starts[i], lens[i]);
		enum pclass have = arg_class(t, &l->args[i]);
		if (want == PC_UNKNOWN || have == PC_UNKNOWN || want == have)
			continue;
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"args[%zu]: '%s' is passed as %s but parameter %zu of '%s' is '%.*s' (%s)", i,
				l->args[i].name, pclass_name(have), i + 1, l->kernel, (int)lens[i],
				params + starts[i] + (params[starts[i]] == ' '), pclass_name(want));
	}
	return KF_OK;
}

enum kf_status kf_kfile_bind(struct kf_kfile *k, const struct kf_task *t, struct kf_err *err)
{
	enum kf_status st;
	char what[64];

	for (size_t i = 0; i < k->n_scratch; i++) {
		struct kf_scratch *s = &k->scratch[i];
		const char *clash = kf_task_tensor_index(t, s->name) >= 0  ? "tensor"
				    : kf_task_param_index(t, s->name) >= 0 ? "param"
				    : kf_task_dim_index(t, s->name) >= 0   ? "dim"
									   : NULL;
		if (clash)
			return line_err(k, s->line, err, KF_ERR_INVALID,
					"scratch '%s' has the name of a task %s", s->name, clash);
		snprintf(what, sizeof(what), "scratch '%s'", s->name);
		if ((st = check_expr(k, t, s->line, what, s->count, err)))
			return st;
	}
	for (size_t li = 0; li < k->n_launches; li++) {
		struct kf_launch *l = &k->launches[li];
		bool found = false;
		const char *params = NULL;
		for (size_t i = 0; i < k->n_kernels && !found; i++) {
			found = !strcmp(k->kernels[i], l->kernel);
			if (found)
				params = k->kernel_params[i];
		}
		if (!found)
			return line_err(k, l->line, err, KF_ERR_INVALID,
					"unknown kernel '%s': no extern \"C\" __global__ function of that "
					"name in the file",
					l->kernel);
		for (size_t i = 0; i < l->grid_rank; i++) {
			snprintf(what, sizeof(what), "grid[%zu]", i);
			if ((st = check_expr(k, t, l->line, what, l->grid[i], err)))
				return st;
		}
		for (size_t i = 0; i < l->block_rank; i++) {
			snprintf(what, sizeof(what), "block[%zu]", i);
			if ((st = check_expr(k, t, l->line, what, l->block[i], err)))
				return st;
		}
		if (l->smem && (st = check_expr(k, t, l->line, "smem", l->smem, err)))
			return st;
		for (size_t i = 0; i < l->n_args; i++) {
			struct kf_arg *a = &l->args[i];
			int idx;
			if (a->kind == KF_ARG_LITERAL)
				continue;
			if (a->is_long) {
				if ((idx = kf_task_dim_index(t, a->name)) < 0)
					return line_err(k, l->line, err, KF_ERR_INVALID,
							"args[%zu]: long(%s): '%s' is not a dim of the task",
							i, a->name, a->name);
				a->kind = KF_ARG_DIM_LONG;
			} else if ((idx = kf_task_tensor_index(t, a->name)) >= 0) {
				a->kind = KF_ARG_TENSOR;
			} else if ((idx = scratch_index(k, a->name)) >= 0) {
				a->kind = KF_ARG_SCRATCH;
			} else if ((idx = kf_task_param_index(t, a->name)) >= 0) {
				a->kind = KF_ARG_PARAM;
			} else if ((idx = kf_task_dim_index(t, a->name)) >= 0) {
				a->kind = KF_ARG_DIM_INT;
			} else {
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"unknown argument '%s' (not a tensor, scratch, param or dim)",
						a->name);
			}
			a->index = idx;
		}
		if (params && (st = check_signature(k, t, l, params, err)))
			return st;
	}
	return KF_OK;
}

/* ---- plans ---------------------------------------------------------------------------------- */

void kf_plan_free(struct kf_plan *p)
{
	if (!p)
		return;
	free(p->launches);
	free(p->buffers);
	free(p);
}

static enum kf_status eval_at(const struct kf_kfile *k, int line, const char *what, const char *e,
			      const struct kf_shape *s, int64_t *v, struct kf_err *err)
{
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st = kf_expr_eval(e, s, v, &e2);
	if (st)
		return line_err(k, line, err, st == KF_ERR_RANGE ? KF_ERR_INVALID : st, "%s: %s", what,
				e2.msg);
	return KF_OK;
}

static void put_scalar(struct kf_parg *a, const void *v, uint32_t size)
{
	a->kind = KF_PARG_SCALAR;
	a->size = size;
	memset(a->bytes, 0, sizeof(a->bytes));
	memcpy(a->bytes, v, size);
}

static enum kf_status plan_launch(const struct kf_kfile *k, const struct kf_task *t, const struct kf_shape *s,
				  const struct kf_launch *l, struct kf_plan_launch *pl, struct kf_err *err)
{
	/* Generic CUDA limits (all compute capabilities we target); device-specific ones (shared memory,
	 * registers) are the backend's to check. */
	static const int64_t block_max[3] = {1024, 1024, 64};
	static const int64_t grid_max[3] = {2147483647, 65535, 65535};
	int64_t prod = 1, v;
	enum kf_status st;
	char what[32];

	snprintf(pl->kernel, sizeof(pl->kernel), "%s", l->kernel);
	pl->line = l->line;
	for (int i = 0; i < 3; i++) {
		pl->grid[i] = pl->block[i] = 1;
		if ((size_t)i < l->grid_rank) {
			snprintf(what, sizeof(what), "grid[%d]", i);
			if ((st = eval_at(k, l->line, what, l->grid[i], s, &v, err)))
				return st;
			if (v < 1 || v > grid_max[i])
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"grid[%d] = '%s' = %lld is outside 1..%lld", i, l->grid[i],
						(long long)v, (long long)grid_max[i]);
			pl->grid[i] = (uint32_t)v;
		}
		if ((size_t)i < l->block_rank) {
			snprintf(what, sizeof(what), "block[%d]", i);
			if ((st = eval_at(k, l->line, what, l->block[i], s, &v, err)))
				return st;
			if (v < 1 || v > block_max[i])
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"block[%d] = '%s' = %lld is outside 1..%lld", i, l->block[i],
						(long long)v, (long long)block_max[i]);
			pl->block[i] = (uint32_t)v;
			prod *= v;
		}
	}
	if (prod > 1024)
		return line_err(k, l->line, err, KF_ERR_INVALID, "block has %lld threads; at most 1024",
				(long long)prod);
	pl->smem_bytes = 0;
	if (l->smem) {
		if ((st = eval_at(k, l->line, "smem", l->smem, s, &v, err)))
			return st;
		if (v < 0 || v > UINT32_MAX)
			return line_err(k, l->line, err, KF_ERR_INVALID,
					"smem = '%s' = %lld bytes is out of range", l->smem, (long long)v);
		pl->smem_bytes = (uint32_t)v;
	}
	if (l->n_args > KF_PLAN_MAX_ARGS)
		return line_err(k, l->line, err, KF_ERR_INVALID, "more than %d arguments", KF_PLAN_MAX_ARGS);
	pl->n_args = (uint32_t)l->n_args;
	for (size_t i = 0; i < l->n_args; i++) {
		const struct kf_arg *a = &l->args[i];
		struct kf_parg *pa = &pl->args[i];
		switch (a->kind) {
		case KF_ARG_TENSOR:
			pa->kind = KF_PARG_BUFFER;
			pa->buffer = (uint32_t)a->index;
			break;
		case KF_ARG_SCRATCH:
			pa->kind = KF_PARG_BUFFER;
			pa->buffer = (uint32_t)(t->n_tensors + (size_t)a->index);
			break;
		case KF_ARG_DIM_INT:
		case KF_ARG_DIM_LONG:
			if (!kf_shape_get(s, a->name, &v))
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"args[%zu]: dim '%s' is not bound", i, a->name);
			if (a->kind == KF_ARG_DIM_LONG) {
				long long ll = v;
				put_scalar(pa, &ll, 8);
			} else {
				int32_t iv;
				if (v < INT32_MIN || v > INT32_MAX)
					return line_err(
					    k, l->line, err, KF_ERR_INVALID,
					    "args[%zu]: dim %s = %lld does not fit in an int; pass long(%s)",
					    i, a->name, (long long)v, a->name);
				iv = (int32_t)v;
				put_scalar(pa, &iv, 4);
			}
			break;
		case KF_ARG_PARAM: {
			const struct kf_param *q = &t->params[a->index];
			if (q->dtype == KF_DTYPE_F32) {
				float f = (float)q->value;
				put_scalar(pa, &f, 4);
			} else if (q->dtype == KF_DTYPE_F64) {
				put_scalar(pa, &q->value, 8);
			} else if (q->dtype == KF_DTYPE_I32) {
				int32_t iv = (int32_t)q->ivalue;
				put_scalar(pa, &iv, 4);
			} else {
				int64_t lv = q->ivalue;
				put_scalar(pa, &lv, 8);
			}
			break;
		}
		case KF_ARG_LITERAL: {
			int32_t iv = (int32_t)a->literal;
			put_scalar(pa, &iv, 4);
			break;
		}
		case KF_ARG_UNBOUND:
		default:
			return line_err(k, l->line, err, KF_ERR_INTERNAL,
					"argument '%s' is not bound (call kf_kfile_bind first)", a->name);
		}
	}
	return KF_OK;
}

enum kf_status kf_plan_make(const struct kf_kfile *k, const struct kf_task *t, const struct kf_shape *s,
			    struct kf_plan **out, struct kf_err *err)
{
	struct kf_plan *p;
	enum kf_status st = KF_OK;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	p->shape = *s;
	p->n_launches = k->n_launches;
	p->n_buffers = t->n_tensors + k->n_scratch;
	p->launches = calloc(k->n_launches ? k->n_launches : 1, sizeof(*p->launches));
	p->buffers = calloc(p->n_buffers ? p->n_buffers : 1, sizeof(*p->buffers));
	if (!p->launches || !p->buffers) {
		kf_plan_free(p);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_tensors && !st; i++) {
		struct kf_plan_buffer *b = &p->buffers[i];
		int64_t n;
		snprintf(b->name, sizeof(b->name), "%s", t->tensors[i].name);
		b->dtype = t->tensors[i].dtype;
		b->role = t->tensors[i].role;
		if ((st = kf_task_numel(t, i, s, &n, err)))
			break;
		b->numel = (uint64_t)n;
		if (__builtin_mul_overflow(b->numel, (uint64_t)kf_dtype_size(b->dtype), &b->n_bytes))
			st = kf_err_set(err, KF_ERR_RANGE, "tensor '%s': size overflows 64 bits", b->name);
	}
	for (size_t i = 0; i < k->n_scratch && !st; i++) {
		const struct kf_scratch *sc = &k->scratch[i];
		struct kf_plan_buffer *b = &p->buffers[t->n_tensors + i];
		int64_t n;
		snprintf(b->name, sizeof(b->name), "%s", sc->name);
		b->dtype = sc->dtype;
		b->role = KF_ROLE_OUTPUT;
		b->is_scratch = true;
		if ((st = eval_at(k, sc->line, "scratch count", sc->count, s, &n, err)))
			break;
		if (n < 1) {
			st = line_err(k, sc->line, err, KF_ERR_INVALID,
				      "scratch '%s' has %lld elements; needs at least 1", sc->name,
				      (long long)n);
			break;
		}
		b->numel = (uint64_t)n;
		if (__builtin_mul_overflow(b->numel, (uint64_t)kf_dtype_size(b->dtype), &b->n_bytes))
			st = line_err(k, sc->line, err, KF_ERR_INVALID,
				      "scratch '%s': size overflows 64 bits", sc->name);
	}
	for (size_t i = 0; i < k->n_launches && !st; i++)
		st = plan_launch(k, t, s, &k->launches[i], &p->launches[i], err);
	if (st) {
		kf_plan_free(p);
		return st;
	}
	*out = p;
	return KF_OK;
}
