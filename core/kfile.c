/* Kernel files (core/kfile.h): finds the `// kforge:` directives with PCRE2 (balanced parentheses by
 * recursion, so `grid=(cdiv(N,256))` parses; template arguments in balanced angle brackets), finds the
 * extern "C" __global__ kernels and the __global__ templates of the source, binds directive names to a
 * task, checks arguments against the kernels' parameter types, and evaluates a launch plan (launches and
 * zero operations) at one shape. Every error carries PATH:LINE, because each is an invalid_launch verdict
 * a person or an LLM has to act on. */
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
#define KFILE_MAX_ZEROS 64 /* as many as the worker protocol carries (KF_MAX_ZEROS) */

/* ---- regexes -------------------------------------------------------------------------------- */

/* A balanced parenthesised group, by PCRE2 recursion into the named group itself. */
#define BAL(name) "(?<" name ">\\((?:[^()]++|(?&" name "))*\\))"

static const char *const re_src[] = {
    /* 0: launch, applied to the comment text from "//" to the end of the line; the kernel is a name,
     * optionally followed by template arguments in balanced angle brackets */
    "^//\\s*kforge:launch\\s+(?<kernel>[A-Za-z_][A-Za-z0-9_]*)(?:\\s*(?<targs><(?:[^<>]++|(?&targs))*>))?"
    "\\s+grid\\s*=\\s*" BAL("grid") "\\s*block\\s*=\\s*" BAL("block") "(?:\\s*smem\\s*=\\s*" BAL(
	"smem") ")?"
		"\\s*args\\s*=\\s*" BAL("args") "\\s*$",
    /* 1: scratch */
    "^//\\s*kforge:scratch\\s+(?<name>[A-Za-z_][A-Za-z0-9_]*)\\s+(?<dtype>[A-Za-z0-9_]+)\\s*" BAL(
	"count") "\\s*$",
    /* 2: any directive word, for the error message */
    "^//\\s*kforge:(?<word>[A-Za-z0-9_]*)",
    /* 3: extern "C" */
    "\\bextern\\s*\"C\"\\s*",
    /* 4: __global__ */
    "\\b__global__\\b",
    /* 5: zero */
    "^//\\s*kforge:zero\\s+(?<name>[A-Za-z_][A-Za-z0-9_]*)(?:\\s+byte\\s*=\\s*(?<byte>[0-9A-Za-z]+))?\\s*$",
    /* 6: the start of a template declaration */
    "\\btemplate\\s*<",
};
enum { RE_LAUNCH, RE_SCRATCH, RE_WORD, RE_EXTERN, RE_GLOBAL, RE_ZERO, RE_TEMPLATE, RE_COUNT };

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
	free(l->base);
	free(l->targs);
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
	for (size_t i = 0; k->zeros && i < k->n_zeros; i++)
		free(k->zeros[i].name);
	free(k->zeros);
	for (size_t i = 0; k->templates && i < k->n_templates; i++) {
		free(k->templates[i]);
		free(k->template_params[i]);
		free(k->template_tparams[i]);
	}
	free(k->templates);
	free(k->template_params);
	free(k->template_tparams);
	free(k->template_overloaded);
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

/* The index after the '>' that closes the '<' at code[i], counting angle brackets only outside
 * parentheses (a default argument may hold `1 << 4`); len when it does not close before a ';' or '{'. */
static size_t skip_angle(const char *code, size_t len, size_t i)
{
	int depth = 0, paren = 0;
	for (; i < len; i++) {
		char c = code[i];
		if (c == ';' || c == '{')
			return len;
		if (c == '(')
			paren++;
		else if (c == ')')
			paren--;
		else if (paren == 0 && c == '<')
			depth++;
		else if (paren == 0 && c == '>' && --depth == 0)
			return i + 1;
	}
	return len;
}

/* Number of top-level comma-separated items of a parameter or argument list text ("" and "void": 0). */
static size_t count_items(const char *p)
{
	size_t n = 1;
	int depth = 0;
	if (!*p || !strcmp(p, "void"))
		return 0;
	for (; *p; p++) {
		if (*p == '(' || *p == '<' || *p == '[' || *p == '{')
			depth++;
		else if (*p == ')' || *p == '>' || *p == ']' || *p == '}')
			depth--;
		else if (*p == ',' && depth == 0)
			n++;
	}
	return n;
}

/* Takes ownership of name, params and tparams (each may be NULL). A template declared twice (prototype,
 * then definition) keeps the first readable lists; declarations whose lists differ in length are
 * overloads, and nothing about them can be checked. */
static enum kf_status add_template(struct kf_kfile *k, char *name, char *params, char *tparams,
				   struct kf_err *err)
{
	char **nt, **np, **nq;
	unsigned char *no;
	for (size_t i = 0; i < k->n_templates; i++) {
		if (strcmp(k->templates[i], name))
			continue;
		if (!k->template_overloaded[i]) {
			bool differ = (params && k->template_params[i] &&
				       count_items(params) != count_items(k->template_params[i])) ||
				      (tparams && k->template_tparams[i] &&
				       count_items(tparams) != count_items(k->template_tparams[i]));
			if (differ) {
				k->template_overloaded[i] = 1;
				free(k->template_params[i]);
				free(k->template_tparams[i]);
				k->template_params[i] = k->template_tparams[i] = NULL;
			} else {
				if (!k->template_params[i])
					k->template_params[i] = params, params = NULL;
				if (!k->template_tparams[i])
					k->template_tparams[i] = tparams, tparams = NULL;
			}
		}
		free(name);
		free(params);
		free(tparams);
		return KF_OK;
	}
	if (k->n_templates >= KFILE_MAX_KERNELS) {
		free(name);
		free(params);
		free(tparams);
		return kf_err_set(err, KF_ERR_LIMIT, "%s: more than %d kernel templates", k->path,
				  KFILE_MAX_KERNELS);
	}
	nt = realloc(k->templates, (k->n_templates + 1) * sizeof(*nt));
	if (nt)
		k->templates = nt;
	np = nt ? realloc(k->template_params, (k->n_templates + 1) * sizeof(*np)) : NULL;
	if (np)
		k->template_params = np;
	nq = np ? realloc(k->template_tparams, (k->n_templates + 1) * sizeof(*nq)) : NULL;
	if (nq)
		k->template_tparams = nq;
	no = nq ? realloc(k->template_overloaded, k->n_templates + 1) : NULL;
	if (no)
		k->template_overloaded = no;
	if (!no) {
		free(name);
		free(params);
		free(tparams);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	k->templates[k->n_templates] = name;
	k->template_params[k->n_templates] = params;
	k->template_tparams[k->n_templates] = tparams;
	k->template_overloaded[k->n_templates] = 0;
	k->n_templates++;
	return KF_OK;
}

/* Finds `template <...> ... __global__ ... NAME(...)` declarations in code (comments blanked): the
 * entry points a launch can instantiate. Explicit specialisations (`template <>`) declare no new one. */
static enum kf_status find_templates(struct kf_kfile *k, const char *code, size_t len, struct kf_err *err)
{
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re[RE_TEMPLATE], NULL);
	pcre2_match_data *mg = pcre2_match_data_create_from_pattern(re[RE_GLOBAL], NULL);
	enum kf_status st = KF_OK;
	size_t pos = 0;

	if (!md || !mg) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	while (!st && pos < len && re_match(RE_TEMPLATE, code, len, pos, md)) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		size_t lt = ov[1] - 1, close = skip_angle(code, len, lt), end;
		char *tparams, *params = NULL, *name;
		pos = ov[1];
		if (close >= len)
			continue;
		tparams = param_text(code, lt, close - 1);
		if (tparams && !*tparams) {
			free(tparams);
			continue;
		}
		for (end = close; end < len && code[end] != '{' && code[end] != ';';)
			end++;
		if (!re_match(RE_GLOBAL, code, end, close, mg)) {
			free(tparams);
			continue;
		}
		name = name_after_global(code, len, pcre2_get_ovector_pointer(mg)[1], &params);
		if (name)
			st = add_template(k, name, params, tparams, err);
		else {
			free(params);
			free(tparams);
		}
		pos = close;
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
	uint64_t v = 0;
	bool neg = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return false;
	}
	if (v > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
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

/* "long(E)" as the whole argument: returns a new string holding E (trimmed), or NULL with *bad set
 * when `long` is used some other way (`long(N)*2`), or NULL with nothing set when s is not one. */
static char *long_inner(const char *s, bool *bad, bool *nomem)
{
	const char *p = s + 4;
	int depth = 0;
	*bad = *nomem = false;
	if (strncmp(s, "long", 4) || is_id(s[4]))
		return NULL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '(') {
		*bad = true;
		return NULL;
	}
	for (const char *q = p; *q; q++) {
		if (*q == '(')
			depth++;
		else if (*q == ')' && --depth == 0) {
			const char *r = q + 1;
			char *in;
			while (*r == ' ' || *r == '\t')
				r++;
			if (*r) {
				*bad = true;
				return NULL;
			}
			in = kf_strndup(p + 1, (size_t)(q - p - 1));
			if (!in) {
				*nomem = true;
				return NULL;
			}
			memmove(in, trim(in), strlen(trim(in)) + 1);
			return in;
		}
	}
	*bad = true;
	return NULL;
}

/* One argument: a name, long(E), an integer literal or an integer expression. */
static enum kf_status parse_arg(struct kf_kfile *k, struct kf_launch *l, int i, const char *s,
				struct kf_arg *a, struct kf_err *err)
{
	struct kf_err e = KF_ERR_INIT;
	bool bad, nomem;
	char *in = long_inner(s, &bad, &nomem);
	int64_t v;

	if (nomem)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (bad)
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"args[%d]: bad argument '%s' (long(E) must be the whole argument)", i, s);
	if (in) {
		a->is_long = true;
		a->name = in;
		if (!*in || kf_expr_check(in, NULL, 0, &e))
			return line_err(k, l->line, err, KF_ERR_INVALID, "args[%d]: long(%s): %s", i, in,
					*in ? e.msg : "empty expression");
		if (!is_ident(in))
			a->kind = KF_ARG_EXPR_LONG;
		return KF_OK;
	}
	if (!(a->name = kf_strdup(s)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (is_ident(s))
		return KF_OK;
	if (parse_literal(s, &v)) {
		a->kind = KF_ARG_LITERAL;
		a->literal = v;
		return KF_OK;
	}
	if (kf_expr_check(s, NULL, 0, &e))
		return line_err(
		    k, l->line, err, KF_ERR_INVALID,
		    "args[%d]: bad argument '%s' (expected a tensor, scratch, param or dim name, an "
		    "integer expression over dims or long(E)): %s",
		    i, s, e.msg);
	a->kind = KF_ARG_EXPR;
	return KF_OK;
}

static enum kf_status parse_args(struct kf_kfile *k, struct kf_launch *l, const char *group,
				 struct kf_err *err)
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
		l->n_args = (size_t)i + 1;
		a->kind = KF_ARG_UNBOUND;
		a->index = -1;
		if (!st)
			st = parse_arg(k, l, i, parts[i], a, err);
		free(parts[i]);
	}
	return st;
}

/* Template arguments as written ("<128, 8, float>", brackets included) in canonical form: no brackets,
 * whitespace kept only between two identifier characters ("unsigned int"). Only the characters of
 * integer constant expressions and type names are accepted: the text reaches a compiler as code. */
static enum kf_status canon_targs(const struct kf_kfile *k, int line, const char *raw, char **out,
				  struct kf_err *err)
{
	size_t n = strlen(raw);
	char *c = malloc(n + 1), *o = c;
	bool space = false;

	*out = NULL;
	if (!c)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 1; i + 1 < n; i++) {
		char ch = raw[i];
		if (ch == ' ' || ch == '\t') {
			space = true;
			continue;
		}
		if (!is_id(ch) && !strchr(",<>()+-*/%:.", ch)) {
			free(c);
			return line_err(
			    k, line, err, KF_ERR_INVALID,
			    "template arguments %s: '%c' is not allowed (integer constants, constant "
			    "expressions and type names only)",
			    raw, ch);
		}
		if (space && o > c && is_id(o[-1]) && is_id(ch))
			*o++ = ' ';
		space = false;
		*o++ = ch;
	}
	*o = '\0';
	*out = c;
	return KF_OK;
}

static enum kf_status parse_launch(struct kf_kfile *k, int line, const char *text, pcre2_match_data *md,
				   struct kf_err *err)
{
	struct kf_launch *l, *nl;
	char *grid = NULL, *block = NULL, *smem = NULL, *args = NULL, *targs = NULL;
	enum kf_status st = KF_OK;
	bool smem_set, targs_set;

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
	l->base = re_group(RE_LAUNCH, md, text, "kernel", NULL);
	targs = re_group(RE_LAUNCH, md, text, "targs", &targs_set);
	grid = re_group(RE_LAUNCH, md, text, "grid", NULL);
	block = re_group(RE_LAUNCH, md, text, "block", NULL);
	smem = re_group(RE_LAUNCH, md, text, "smem", &smem_set);
	args = re_group(RE_LAUNCH, md, text, "args", NULL);
	if (!l->base || !grid || !block || !args || (smem_set && !smem) || (targs_set && !targs)) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (targs_set) {
		size_t n;
		if ((st = canon_targs(k, line, targs, &l->targs, err)))
			goto out;
		n = strlen(l->base) + strlen(l->targs) + 3;
		if (!(l->kernel = malloc(n))) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto out;
		}
		snprintf(l->kernel, n, "%s<%s>", l->base, l->targs);
	} else if (!(l->kernel = kf_strdup(l->base))) {
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
	st = parse_args(k, l, args, err);
out:
	free(targs);
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

/* `// kforge:zero NAME [byte=V]`: V is 0..255, decimal or 0x hex. It applies before the launch that
 * follows it in the file (before the plan when no launch precedes it). */
static enum kf_status parse_zero(struct kf_kfile *k, int line, const char *text, pcre2_match_data *md,
				 struct kf_err *err)
{
	struct kf_zero *z, *nz;
	char *byte = NULL;
	bool byte_set;
	enum kf_status st = KF_OK;

	if (k->n_zeros >= KFILE_MAX_ZEROS)
		return line_err(k, line, err, KF_ERR_INVALID, "more than %d zero directives",
				KFILE_MAX_ZEROS);
	nz = realloc(k->zeros, (k->n_zeros + 1) * sizeof(*nz));
	if (!nz)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	k->zeros = nz;
	z = &k->zeros[k->n_zeros++];
	memset(z, 0, sizeof(*z));
	z->line = line;
	z->before = k->n_launches;
	z->index = -1;
	z->name = re_group(RE_ZERO, md, text, "name", NULL);
	byte = re_group(RE_ZERO, md, text, "byte", &byte_set);
	if (!z->name || (byte_set && !byte)) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	} else if (byte_set) {
		char *end = NULL;
		unsigned long v =
		    strtoul(byte, &end, byte[0] == '0' && (byte[1] == 'x' || byte[1] == 'X') ? 16 : 10);
		if (!*byte || *end || v > 255 || byte[0] == '-' || byte[0] == '+')
			st = line_err(k, line, err, KF_ERR_INVALID,
				      "zero '%s': byte=%s is not a byte value (0..255, decimal or 0x hex)",
				      z->name, byte);
		z->byte = (uint8_t)v;
	}
	free(byte);
	return st;
}

/* A directive is a line comment whose text begins with "kforge:", on a line of its own. A comment that
 * only mentions the word elsewhere ("// Exercises kforge:scratch") is prose and means nothing; a
 * block comment or a trailing comment whose text begins with it is an error, because it reads like a
 * directive that would silently not be one. */
static enum kf_status parse_line(struct kf_kfile *k, int line, const char *ls, size_t n,
				 const unsigned char *cm, pcre2_match_data *md, struct kf_err *err)
{
	char *text;
	size_t i = 0, tn, at = n;
	enum kf_status st;

	if (line == 1 && n >= 3 && !memcmp(ls, "\xEF\xBB\xBF", 3))
		i = 3; /* a UTF-8 byte-order mark some editors write */
	for (size_t j = i; j + 1 < n && at == n; j++) {
		size_t p;
		if (cm[j] != KF_LEX_LINE_START && cm[j] != KF_LEX_BLOCK_START)
			continue;
		for (p = j + 2; p < n && (ls[p] == ' ' || ls[p] == '\t');)
			p++;
		if (!(p + 7 <= n && !memcmp(ls + p, "kforge:", 7)))
			continue;
		if (cm[j] == KF_LEX_BLOCK_START)
			return line_err(k, line, err, KF_ERR_INVALID,
					"'kforge:' directives must be '//' comments on a line of their own");
		at = j;
	}
	if (at == n)
		return KF_OK;
	for (size_t j = i; j < at; j++)
		if (ls[j] != ' ' && ls[j] != '\t')
			return line_err(k, line, err, KF_ERR_INVALID,
					"'kforge:' directives must be '//' comments on a line of their own");
	tn = n - at;
	while (tn && (ls[at + tn - 1] == '\r' || ls[at + tn - 1] == ' ' || ls[at + tn - 1] == '\t'))
		tn--;
	text = kf_strndup(ls + at, tn);
	if (!text)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (re_match(RE_LAUNCH, text, tn, 0, md)) {
		st = parse_launch(k, line, text, md, err);
	} else if (re_match(RE_SCRATCH, text, tn, 0, md)) {
		st = parse_scratch(k, line, text, md, err);
	} else if (re_match(RE_ZERO, text, tn, 0, md)) {
		st = parse_zero(k, line, text, md, err);
	} else if (re_match(RE_WORD, text, tn, 0, md)) {
		char *word = re_group(RE_WORD, md, text, "word", NULL);
		if (!word)
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		else if (!strcmp(word, "launch"))
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "malformed launch directive (expected '// kforge:launch KERNEL[<TARGS>] "
			    "grid=(E[,E[,E]]) block=(E[,E[,E]]) [smem=(E)] args=(ARG, ...)' with balanced "
			    "parentheses)");
		else if (!strcmp(word, "scratch"))
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "malformed scratch directive (expected '// kforge:scratch NAME DTYPE (E)')");
		else if (!strcmp(word, "zero"))
			st = line_err(k, line, err, KF_ERR_INVALID,
				      "malformed zero directive (expected '// kforge:zero NAME [byte=V]')");
		else
			st = line_err(
			    k, line, err, KF_ERR_INVALID,
			    "unknown directive 'kforge:%s' (expected kforge:launch, kforge:scratch or "
			    "kforge:zero)",
			    word);
		free(word);
	} else {
		st = line_err(k, line, err, KF_ERR_INVALID, "unreadable 'kforge:' directive");
	}
	free(text);
	return st;
}

enum kf_status kf_kfile_parse(const char *path, const char *source, size_t len, struct kf_kfile **out,
			      struct kf_err *err)
{
	struct kf_kfile *k;
	pcre2_match_data *md = NULL;
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
	cm = kf_lex_comment_marks(source, len);
	code = kf_strndup(source, len);
	md = pcre2_match_data_create(32, NULL);
	if (!cm || !code || !md) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto fail;
	}
	for (size_t pos = 0; pos < len; line++) {
		const char *nl = memchr(source + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (source + pos)) : len - pos;
		if ((st = parse_line(k, line, source + pos, n, cm + pos, md, err)))
			goto fail;
		pos += n + 1;
	}
	/* Kernels are searched in the source with comments blanked, so a commented-out kernel is not one. */
	for (size_t i = 0; i < len; i++)
		if (cm[i] && code[i] != '\n')
			code[i] = ' ';
	if ((st = find_kernels(k, code, len, err)) || (st = find_templates(k, code, len, err)))
		goto fail;
	if (!k->n_launches) {
		st = kf_err_set(err, KF_ERR_INVALID,
				"%s: no '// kforge:launch' directive (a kernel file says how to "
				"launch itself)",
				k->path);
		goto fail;
	}
	for (size_t i = 0; i < k->n_zeros; i++) {
		if (k->zeros[i].before >= k->n_launches) {
			st = line_err(
			    k, k->zeros[i].line, err, KF_ERR_INVALID,
			    "zero '%s' follows the last launch line: nothing runs after it (place it "
			    "before the launch it is for)",
			    k->zeros[i].name);
			goto fail;
		}
	}
	free(cm);
	free(code);
	pcre2_match_data_free(md);
	*out = k;
	return KF_OK;
fail:
	free(cm);
	free(code);
	pcre2_match_data_free(md);
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

/* What a kernel parameter or a directive argument is, as far as the launch is concerned. PC_INT is a
 * literal: it takes the width of whatever integer parameter it meets. */
enum pclass { PC_UNKNOWN, PC_MACRO, PC_PTR, PC_I32, PC_U32, PC_I64, PC_U64, PC_F32, PC_F64, PC_INT };

static const char *pclass_name(enum pclass c)
{
	switch (c) {
	case PC_PTR:
		return "a device pointer";
	case PC_I32:
		return "an int (4 bytes)";
	case PC_U32:
		return "an unsigned int (4 bytes)";
	case PC_I64:
		return "a long long (8 bytes)";
	case PC_U64:
		return "an unsigned 64-bit integer (8 bytes)";
	case PC_F32:
		return "a float";
	case PC_F64:
		return "a double";
	case PC_INT:
		return "an integer literal";
	default:
		return "something else";
	}
}

static bool pclass_is_int(enum pclass c)
{
	return c == PC_I32 || c == PC_U32 || c == PC_I64 || c == PC_U64;
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
	    {"unsigned", PC_U32},
	    {"unsigned int", PC_U32},
	    {"int32_t", PC_I32},
	    {"uint32_t", PC_U32},
	    {"long", PC_I64},
	    {"long int", PC_I64},
	    {"unsigned long", PC_U64},
	    {"unsigned long int", PC_U64},
	    {"long long", PC_I64},
	    {"long long int", PC_I64},
	    {"unsigned long long", PC_U64},
	    {"unsigned long long int", PC_U64},
	    {"int64_t", PC_I64},
	    {"uint64_t", PC_U64},
	    {"size_t", PC_U64},
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
	case KF_ARG_EXPR:
		return PC_I32;
	case KF_ARG_LITERAL:
		return PC_INT;
	case KF_ARG_DIM_LONG:
	case KF_ARG_EXPR_LONG:
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

/* Does an argument of class have fit a parameter of class want? Integers must agree in width (a
 * signed argument may go to an unsigned parameter: its value is range-checked at every shape). */
static bool pclass_fits(enum pclass want, enum pclass have)
{
	if (want == PC_UNKNOWN || have == PC_UNKNOWN || want == have)
		return true;
	if (have == PC_INT)
		return pclass_is_int(want);
	if (have == PC_I32)
		return want == PC_U32;
	if (have == PC_I64)
		return want == PC_U64;
	return false;
}

/* Splits a top-level comma list (parameters, template arguments) into [starts, lens); returns the
 * count, or max + 1 when there are more than max. A parameter list "void" is empty; a template
 * argument list "void" is one argument (is_params tells which). */
static size_t split_list(const char *s, bool is_params, size_t *starts, size_t *lens, size_t max)
{
	size_t len = strlen(s), n = 0, a = 0;
	int depth = 0;
	if (!len || (is_params && !strcmp(s, "void")))
		return 0;
	for (size_t i = 0; i <= len; i++) {
		char c = s[i];
		if (c == '(' || c == '<' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == '>' || c == ']' || c == '}')
			depth--;
		if (c == '\0' || (c == ',' && depth == 0)) {
			if (n >= max)
				return max + 1;
			starts[n] = a, lens[n] = i - a, n++;
			a = i + 1;
		}
	}
	return n;
}

/* Sets width/sign of the integer arguments of l from their parameters' classes (want[i], or
 * PC_UNKNOWN when the list is unreadable) and rejects a literal that cannot be passed. */
static enum kf_status type_args(const struct kf_kfile *k, struct kf_launch *l, const enum pclass *want,
				struct kf_err *err)
{
	for (size_t i = 0; i < l->n_args; i++) {
		struct kf_arg *a = &l->args[i];
		enum pclass w = want ? want[i] : PC_UNKNOWN;
		bool is_int = pclass_is_int(w);
		switch (a->kind) {
		case KF_ARG_LITERAL:
			a->typed = is_int;
			a->width = (w == PC_I64 || w == PC_U64) ? 8 : 4;
			a->is_unsigned = w == PC_U32 || w == PC_U64;
			if (a->is_unsigned && a->literal < 0)
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"args[%zu]: literal %s is negative but its parameter is %s",
						i, a->name, pclass_name(w));
			if (a->width == 4 &&
			    (a->is_unsigned ? a->literal > UINT32_MAX
					    : (a->literal < INT32_MIN || a->literal > INT32_MAX)))
				return line_err(k, l->line, err, KF_ERR_INVALID,
						"args[%zu]: literal %s does not fit in %s%s", i, a->name,
						a->typed ? pclass_name(w) : "an int",
						a->typed ? "" : " (pass long(...) for a 64-bit parameter)");
			break;
		case KF_ARG_DIM_INT:
		case KF_ARG_EXPR:
			a->typed = is_int;
			a->width = 4;
			a->is_unsigned = w == PC_U32;
			break;
		case KF_ARG_DIM_LONG:
		case KF_ARG_EXPR_LONG:
			a->typed = is_int;
			a->width = 8;
			a->is_unsigned = w == PC_U64;
			break;
		default:
			a->width = 0;
			a->typed = false;
			a->is_unsigned = false;
			break;
		}
	}
	return KF_OK;
}

/* Checks a bound launch against its kernel's parameter list (when readable) and types its integer
 * arguments. */
static enum kf_status check_signature(const struct kf_kfile *k, const struct kf_task *t, struct kf_launch *l,
				      const char *params, struct kf_err *err)
{
	size_t starts[KF_PLAN_MAX_ARGS + 1], lens[KF_PLAN_MAX_ARGS + 1], n;
	enum pclass want[KF_PLAN_MAX_ARGS];

	if (!params)
		return type_args(k, l, NULL, err);
	n = split_list(params, true, starts, lens, KF_PLAN_MAX_ARGS);
	if (n > KF_PLAN_MAX_ARGS)
		return type_args(k, l, NULL, err); /* more than any launch can pass: the compiler's */
	for (size_t i = 0; i < n; i++)
		if ((want[i] = classify_param(params + starts[i], lens[i])) == PC_MACRO)
			return type_args(k, l, NULL, err);
	if (n != l->n_args)
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"kernel '%s' takes %zu parameter%s but the directive passes %zu argument%s",
				l->kernel, n, n == 1 ? "" : "s", l->n_args, l->n_args == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		enum pclass have = arg_class(t, &l->args[i]);
		const char *hint = "";
		if (pclass_fits(want[i], have))
			continue;
		if (have == PC_I32 && (want[i] == PC_I64 || want[i] == PC_U64))
			hint = "; pass long(...) for a 64-bit parameter";
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"args[%zu]: '%s' is passed as %s but parameter %zu of '%s' is '%.*s' (%s)%s",
				i, l->args[i].name, pclass_name(have), i + 1, l->kernel, (int)lens[i],
				params + starts[i] + (params[starts[i]] == ' '), pclass_name(want[i]), hint);
	}
	return type_args(k, l, want, err);
}

/* ---- templates -------------------------------------------------------------------------------- */

struct tparam {
	bool is_type, is_pack, has_default;
	char name[KF_NAME_MAX];
};

/* Reads one template parameter ("int BM", "typename T = float", "class... Ts", "const int N = 4"). */
static void read_tparam(const char *s, size_t n, struct tparam *p)
{
	size_t i = 0, eq = n, last_a = 0, last_n = 0;
	int depth = 0;
	memset(p, 0, sizeof(*p));
	for (size_t j = 0; j < n; j++) {
		if (s[j] == '(' || s[j] == '<')
			depth++;
		else if (s[j] == ')' || s[j] == '>')
			depth--;
		else if (s[j] == '=' && depth == 0 && eq == n)
			eq = j;
		if (j + 2 < n && !memcmp(s + j, "...", 3))
			p->is_pack = true;
	}
	p->has_default = eq < n;
	while (i < eq && (s[i] == ' ' || s[i] == '\t'))
		i++;
	p->is_type = (eq - i >= 8 && !strncmp(s + i, "typename", 8) && !is_id(s[i + 8])) ||
		     (eq - i >= 5 && !strncmp(s + i, "class", 5) && !is_id(s[i + 5]));
	for (size_t j = i; j < eq;) {
		if (is_id(s[j]) && !(s[j] >= '0' && s[j] <= '9')) {
			size_t a = j;
			while (j < eq && is_id(s[j]))
				j++;
			last_a = a, last_n = j - a;
		} else {
			j++;
		}
	}
	if (last_n && last_n < sizeof(p->name) &&
	    !((last_n == 8 && !strncmp(s + last_a, "typename", 8)) ||
	      (last_n == 5 && !strncmp(s + last_a, "class", 5))))
		snprintf(p->name, sizeof(p->name), "%.*s", (int)last_n, s + last_a);
}

/* params with every identifier that names a type parameter replaced by its template argument: the
 * parameter list of this instantiation. A new string, or NULL on NOMEM. */
static char *subst_params(const char *params, const struct tparam *tp, size_t n_tp, const char *targs,
			  const size_t *ts, const size_t *tl, size_t n_targs)
{
	struct kf_buf b = KF_BUF_INIT(8192);
	for (const char *p = params; *p;) {
		if (is_id(*p) && !(*p >= '0' && *p <= '9')) {
			const char *a = p;
			size_t k, n;
			while (is_id(*p))
				p++;
			n = (size_t)(p - a);
			for (k = 0; k < n_tp && k < n_targs; k++)
				if (tp[k].is_type && strlen(tp[k].name) == n && !strncmp(tp[k].name, a, n))
					break;
			if (k < n_tp && k < n_targs) {
				if (kf_buf_add(&b, targs + ts[k], tl[k]))
					goto fail;
			} else if (kf_buf_add(&b, a, n)) {
				goto fail;
			}
		} else if (kf_buf_addch(&b, *p++)) {
			goto fail;
		}
	}
	return kf_buf_detach(&b, NULL);
fail:
	kf_buf_release(&b);
	return NULL;
}

/* Checks a template launch's arguments against the template's parameter list (counts, no dims) and
 * gives the parameter list of the instantiation in *params (NULL when it cannot be read). */
static enum kf_status check_template(const struct kf_kfile *k, const struct kf_task *t,
				     const struct kf_launch *l, size_t ti, char **params, struct kf_err *err)
{
	struct tparam tp[KF_PLAN_MAX_ARGS];
	size_t ps[KF_PLAN_MAX_ARGS + 1], pl[KF_PLAN_MAX_ARGS + 1], ts[KF_PLAN_MAX_ARGS + 1],
	    tl[KF_PLAN_MAX_ARGS + 1], n_tp = 0, n_targs, required = 0;
	bool pack = false;
	const char *tparams = k->template_tparams[ti];

	*params = NULL;
	/* template arguments are compile-time: a dim has no value until a shape is chosen */
	for (const char *p = l->targs; *p;) {
		if (is_id(*p) && !(*p >= '0' && *p <= '9')) {
			const char *a = p;
			char name[KF_NAME_MAX];
			while (is_id(*p))
				p++;
			if ((size_t)(p - a) < sizeof(name)) {
				snprintf(name, sizeof(name), "%.*s", (int)(p - a), a);
				if (kf_task_dim_index(t, name) >= 0)
					return line_err(
					    k, l->line, err, KF_ERR_INVALID,
					    "template arguments of '%s': '%s' is a dim of the task; template "
					    "arguments are fixed at compile time (pass the dim as an "
					    "argument)",
					    l->base, name);
			}
		} else {
			p++;
		}
	}
	n_targs = split_list(l->targs, false, ts, tl, KF_PLAN_MAX_ARGS);
	if (!tparams || k->template_overloaded[ti] || n_targs > KF_PLAN_MAX_ARGS)
		return KF_OK;
	n_tp = split_list(tparams, false, ps, pl, KF_PLAN_MAX_ARGS);
	if (n_tp > KF_PLAN_MAX_ARGS)
		return KF_OK;
	for (size_t i = 0; i < n_tp; i++) {
		read_tparam(tparams + ps[i], pl[i], &tp[i]);
		pack |= tp[i].is_pack;
		if (!tp[i].has_default && !tp[i].is_pack)
			required = i + 1;
	}
	if ((!pack && n_targs > n_tp) || n_targs < required)
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"'%s' is given %zu template argument%s but template '%s' takes %s%zu (<%s>)",
				l->kernel, n_targs, n_targs == 1 ? "" : "s", l->base,
				required < n_tp ? "at most " : "", n_targs > n_tp ? n_tp : required, tparams);
	if (pack || !k->template_params[ti])
		return KF_OK;
	for (size_t i = n_targs; i < n_tp; i++)
		if (tp[i].is_type)
			return KF_OK; /* a defaulted type parameter: its type is not read here */
	*params = subst_params(k->template_params[ti], tp, n_tp, l->targs, ts, tl, n_targs);
	if (!*params)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	return KF_OK;
}

size_t kf_kfile_name_exprs(const struct kf_kfile *k, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < k->n_launches; i++) {
		bool seen = false;
		if (!k->launches[i].targs)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = k->launches[j].targs && !strcmp(k->launches[j].kernel, k->launches[i].kernel);
		if (seen)
			continue;
		if (n < max)
			out[n] = k->launches[i].kernel;
		n++;
	}
	return n;
}

/* ---- binding ---------------------------------------------------------------------------------- */

static enum kf_status bind_arg(const struct kf_kfile *k, const struct kf_task *t, const struct kf_launch *l,
			       size_t i, struct kf_arg *a, struct kf_err *err)
{
	struct kf_err e = KF_ERR_INIT;
	int idx = -1;

	switch (a->kind) {
	case KF_ARG_LITERAL:
		return KF_OK;
	case KF_ARG_EXPR:
	case KF_ARG_EXPR_LONG:
		if (kf_expr_check(a->name, (const char *const *)t->dims, t->n_dims, &e)) {
			/* say what the offending name is when it is not a dim */
			const char *q = strstr(e.msg, "unknown dim '");
			char name[KF_NAME_MAX] = "";
			if (q) {
				q += strlen("unknown dim '");
				snprintf(name, sizeof(name), "%.*s", (int)strcspn(q, "'"), q);
			}
			const char *what = kf_task_tensor_index(t, name) >= 0  ? "a tensor"
					   : scratch_index(k, name) >= 0       ? "a scratch buffer"
					   : kf_task_param_index(t, name) >= 0 ? "a param"
									       : NULL;
			if (what)
				return line_err(
				    k, l->line, err, KF_ERR_INVALID,
				    "args[%zu]: '%s': '%s' is %s; an expression argument is over dims "
				    "and integer literals only",
				    i, a->name, name, what);
			return line_err(k, l->line, err, KF_ERR_INVALID, "args[%zu]: %s", i, e.msg);
		}
		return KF_OK;
	default:
		break;
	}
	if (a->is_long) {
		if ((idx = kf_task_dim_index(t, a->name)) < 0)
			return line_err(k, l->line, err, KF_ERR_INVALID,
					"args[%zu]: long(%s): '%s' is not a dim of the task", i, a->name,
					a->name);
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
				"unknown argument '%s' (not a tensor, scratch, param or dim)", a->name);
	}
	a->index = idx;
	return KF_OK;
}

static enum kf_status bind_zero(const struct kf_kfile *k, const struct kf_task *t, struct kf_zero *z,
				struct kf_err *err)
{
	int idx;
	for (size_t j = 0; j < k->n_zeros && &k->zeros[j] != z; j++)
		if (k->zeros[j].before == z->before && !strcmp(k->zeros[j].name, z->name))
			return line_err(k, z->line, err, KF_ERR_INVALID,
					"zero '%s' already given on line %d for the same launch", z->name,
					k->zeros[j].line);
	if ((idx = scratch_index(k, z->name)) >= 0) {
		z->is_scratch = true;
		z->index = idx;
		return KF_OK;
	}
	if ((idx = kf_task_tensor_index(t, z->name)) >= 0) {
		if (t->tensors[idx].role == KF_ROLE_INPUT)
			return line_err(
			    k, z->line, err, KF_ERR_INVALID,
			    "zero '%s': '%s' is an input tensor (the harness owns inputs; only output, "
			    "inout and scratch buffers can be zeroed)",
			    z->name, z->name);
		z->is_scratch = false;
		z->index = idx;
		return KF_OK;
	}
	return line_err(k, z->line, err, KF_ERR_INVALID,
			"zero '%s': no output, inout or scratch buffer of that name", z->name);
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
	for (size_t i = 0; i < k->n_zeros; i++)
		if ((st = bind_zero(k, t, &k->zeros[i], err)))
			return st;
	for (size_t li = 0; li < k->n_launches; li++) {
		struct kf_launch *l = &k->launches[li];
		int kernel = -1, tmpl = -1;
		char *params = NULL;
		for (size_t i = 0; i < k->n_kernels && kernel < 0; i++)
			if (!strcmp(k->kernels[i], l->base))
				kernel = (int)i;
		for (size_t i = 0; i < k->n_templates && tmpl < 0; i++)
			if (!strcmp(k->templates[i], l->base))
				tmpl = (int)i;
		if (!l->targs && kernel < 0 && tmpl >= 0)
			return line_err(
			    k, l->line, err, KF_ERR_INVALID,
			    "'%s' is a __global__ template: launch an instantiation of it ('%s<...>')",
			    l->base, l->base);
		if (l->targs && tmpl < 0)
			return line_err(
			    k, l->line, err, KF_ERR_INVALID,
			    kernel >= 0 ? "'%s' is an extern \"C\" kernel, not a template: launch it "
					  "without template arguments"
					: "unknown kernel template '%s': no __global__ function template of "
					  "that name in the file",
			    l->base);
		if (!l->targs && kernel < 0)
			return line_err(k, l->line, err, KF_ERR_INVALID,
					"unknown kernel '%s': no extern \"C\" __global__ function of that "
					"name in the file",
					l->kernel);
		if (l->targs && (st = check_template(k, t, l, (size_t)tmpl, &params, err)))
			return st;
		for (size_t i = 0; i < l->grid_rank; i++) {
			snprintf(what, sizeof(what), "grid[%zu]", i);
			if ((st = check_expr(k, t, l->line, what, l->grid[i], err)))
				goto fail;
		}
		for (size_t i = 0; i < l->block_rank; i++) {
			snprintf(what, sizeof(what), "block[%zu]", i);
			if ((st = check_expr(k, t, l->line, what, l->block[i], err)))
				goto fail;
		}
		if (l->smem && (st = check_expr(k, t, l->line, "smem", l->smem, err)))
			goto fail;
		for (size_t i = 0; i < l->n_args; i++)
			if ((st = bind_arg(k, t, l, i, &l->args[i], err)))
				goto fail;
		st = check_signature(k, t, l, l->targs ? params : k->kernel_params[kernel], err);
	fail:
		free(params);
		if (st)
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
	free(p->zeros);
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

/* An integer argument's value at a shape, checked against its parameter's range and stored at its
 * width (binding set both; an int unless the parameter says otherwise). */
static enum kf_status put_int(const struct kf_kfile *k, const struct kf_launch *l, size_t i,
			      const struct kf_arg *a, int64_t v, struct kf_parg *pa, struct kf_err *err)
{
	const char *type = a->width == 8 ? (a->is_unsigned ? "an unsigned 64-bit parameter" : "a long long")
			   : a->is_unsigned ? "an unsigned int"
					    : "an int";
	bool bad = a->is_unsigned ? v < 0 : false;
	if (a->width != 8) /* 4, or 0 for an argument bound before it was typed: an int */
		bad = a->is_unsigned ? (v < 0 || v > UINT32_MAX) : (v < INT32_MIN || v > INT32_MAX);
	if (bad) {
		if (a->kind == KF_ARG_DIM_INT && !a->is_unsigned)
			return line_err(k, l->line, err, KF_ERR_INVALID,
					"args[%zu]: dim %s = %lld does not fit in an int; pass long(%s)", i,
					a->name, (long long)v, a->name);
		return line_err(k, l->line, err, KF_ERR_INVALID,
				"args[%zu]: '%s' = %lld does not fit in %s%s", i, a->name, (long long)v, type,
				a->width != 8 && v > 0
				    ? (a->is_long ? "" : "; pass long(...) for a 64-bit parameter")
				    : "");
	}
	if (a->width == 8) {
		long long ll = v;
		put_scalar(pa, &ll, 8);
	} else if (a->is_unsigned) {
		uint32_t u = (uint32_t)v;
		put_scalar(pa, &u, 4);
	} else {
		int32_t iv = (int32_t)v;
		put_scalar(pa, &iv, 4);
	}
	return KF_OK;
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
		case KF_ARG_EXPR:
		case KF_ARG_EXPR_LONG:
			snprintf(what, sizeof(what), "args[%zu]", i);
			if ((st = eval_at(k, l->line, what, a->name, s, &v, err)))
				return st;
			if ((st = put_int(k, l, i, a, v, pa, err)))
				return st;
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
		case KF_ARG_LITERAL:
			if ((st = put_int(k, l, i, a, a->literal, pa, err)))
				return st;
			break;
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
	p->n_zeros = k->n_zeros;
	p->launches = calloc(k->n_launches ? k->n_launches : 1, sizeof(*p->launches));
	p->buffers = calloc(p->n_buffers ? p->n_buffers : 1, sizeof(*p->buffers));
	p->zeros = calloc(k->n_zeros ? k->n_zeros : 1, sizeof(*p->zeros));
	if (!p->launches || !p->buffers || !p->zeros) {
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
	for (size_t i = 0; i < k->n_zeros && !st; i++) {
		const struct kf_zero *z = &k->zeros[i];
		if (z->index < 0) {
			st = line_err(k, z->line, err, KF_ERR_INTERNAL,
				      "zero '%s' is not bound (call kf_kfile_bind first)", z->name);
			break;
		}
		p->zeros[i].buffer =
		    (uint32_t)(z->is_scratch ? t->n_tensors + (size_t)z->index : (size_t)z->index);
		p->zeros[i].before = (uint32_t)z->before;
		p->zeros[i].byte = z->byte;
		p->zeros[i].line = z->line;
	}
	if (st) {
		kf_plan_free(p);
		return st;
	}
	*out = p;
	return KF_OK;
}
