/* The include rules, checked on a kernel's source before either compiler sees it: an #include (and
 * #include_next, #import, #embed, __has_include) must name a relative path with no "..", no backslash
 * and nothing under proc/ or dev/, written as a literal ("x.h" or <x.h>), never a macro (a
 * computed include, NVRTC's stringified one included, could name /proc/self/environ); `#pragma GCC
 * dependency`, its _Pragma form and the assembler's .incbin/.include are refused outright.
 * The check errs on the side of refusing: every physical line (line splices joined, GCC's backslash-
 * space-newline included) that starts like a directive is checked, even inside a comment or a raw
 * string, so no state the scanner could get wrong hides a directive from it. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

struct text {
	char *t;      /* the source with line splices joined */
	size_t *line; /* line[i]: the physical line (1-based) t[i] came from */
	size_t n;
};

/* A backslash (or the trigraph ??/) followed by blanks up to the end of the line joins two lines. */
static size_t splice_len(const char *s, size_t i, size_t len)
{
	size_t j = i;
	if (s[j] == '\\')
		j++;
	else if (j + 2 < len && s[j] == '?' && s[j + 1] == '?' && s[j + 2] == '/')
		j += 3;
	else
		return 0;
	while (j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\f' || s[j] == '\v'))
		j++;
	return j < len && s[j] == '\n' ? j + 1 - i : 0;
}

static bool join_lines(const char *src, size_t len, struct text *T)
{
	size_t k = 0, line = 1, i = 0;
	T->t = calloc(len + 1, 1);
	T->line = calloc(len + 1, sizeof(*T->line));
	if (!T->t || !T->line) {
		free(T->t);
		free(T->line);
		return false;
	}
	/* A UTF-8 byte order mark opens the file as whitespace would. */
	if (len >= 3 && (unsigned char)src[0] == 0xef && (unsigned char)src[1] == 0xbb &&
	    (unsigned char)src[2] == 0xbf)
		i = 3;
	for (; i < len; i++) {
		size_t sp = splice_len(src, i, len);
		if (sp) {
			i += sp - 1;
			line++;
			continue;
		}
		T->t[k] = src[i];
		T->line[k++] = line;
		if (src[i] == '\n')
			line++;
	}
	T->t[k] = '\0';
	T->line[k] = line;
	T->n = k;
	return true;
}

/* Blanks and whole comments (a block comment that ends on the line, a line comment to its end). */
static const char *skip_space(const char *p, const char *end)
{
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\v' || *p == '\f' || *p == '\r'))
			p++;
		if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			const char *c = p + 2;
			while (c + 1 < end && !(c[0] == '*' && c[1] == '/'))
				c++;
			if (c + 1 >= end)
				return end;
			p = c + 2;
			continue;
		}
		return p;
	}
}

/* Why a header name is refused; NULL when it is allowed. */
static const char *bad_path(const char *p, size_t n)
{
	if (n == 0)
		return "an empty file name";
	if (p[0] == '/')
		return "an absolute path";
	if (p[0] == '~')
		return "a path from a home directory";
	if (memchr(p, '\\', n))
		return "a backslash in the path";
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j] != '/')
			j++;
		if (j - i == 2 && p[i] == '.' && p[i + 1] == '.')
			return "'..' in the path";
		/* (sys/ is where <sys/stat.h> lives: relative, it is a system header like any other) */
		if (i == 0 && ((j == 4 && !memcmp(p, "proc", 4)) || (j == 3 && !memcmp(p, "dev", 3))))
			return "a path into proc/ or dev/";
		i = j + 1;
	}
	return NULL;
}

/* The operand of an include-like directive or of __has_include: "…" or <…>, else computed. */
static const char *check_operand(const char *p, const char *end, char *name, size_t name_n)
{
	const char *q;
	char close;
	p = skip_space(p, end);
	if (p >= end || (*p != '"' && *p != '<'))
		return "a computed file name (a macro); write it as \"file.h\" or <file.h>";
	close = *p == '"' ? '"' : '>';
	q = memchr(p + 1, close, (size_t)(end - p - 1));
	if (!q)
		return "an unterminated file name";
	snprintf(name, name_n, "%.*s", (int)(q - p - 1), p + 1);
	return bad_path(p + 1, (size_t)(q - p - 1));
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static bool word_at(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(end - p) >= n && !memcmp(p, w, n) && (p + n == end || !is_ident(p[n]));
}

static enum kf_status reject(struct kf_buf *log, const char *file, size_t line, const char *what,
			     const char *name, const char *why)
{
	bool named = name && *name;
	kf_buf_addf(log,
		    "%s:%zu: error: %s%s%s%s is not allowed: %s (kforge's include rules: literal relative "
		    "paths only, no '..', no proc/, dev/ or absolute paths, no computed includes)\n",
		    file, line, what, named ? " \"" : "", named ? name : "", named ? "\"" : "", why);
	return KF_ERR_COMPILE;
}

/* A directive starting at p (after blanks and comments), if any. */
static enum kf_status check_directive(const char *p, const char *le, const char *file, size_t line,
				      struct kf_buf *log)
{
	static const char *const directives[] = {"include", "include_next", "import", "embed"};
	char name[256] = "";

	p = skip_space(p, le);
	/* A directive: '#', the digraph '%:' or the trigraph '??='. */
	if (p < le && (*p == '#' || (p + 1 < le && p[0] == '%' && p[1] == ':') ||
		       (p + 2 < le && p[0] == '?' && p[1] == '?' && p[2] == '='))) {
		p += *p == '#' ? 1 : *p == '%' ? 2 : 3;
		p = skip_space(p, le);
		for (size_t i = 0; i < KF_ARRAY_SIZE(directives); i++) {
			if (word_at(p, le, directives[i])) {
				const char *why =
				    check_operand(p + strlen(directives[i]), le, name, sizeof(name));
				char what[32];
				snprintf(what, sizeof(what), "#%s", directives[i]);
				if (why)
					return reject(log, file, line, what, name, why);
			}
		}
		if (word_at(p, le, "pragma")) {
			const char *q = skip_space(p + 6, le);
			if (word_at(q, le, "GCC") && word_at(skip_space(q + 3, le), le, "dependency"))
				return reject(log, file, line, "#pragma GCC dependency", NULL,
					      "it reads another file");
		}
	}
	return KF_OK;
}

static enum kf_status check_line(const char *ls, const char *le, const char *file, size_t line,
				 struct kf_buf *log)
{
	char name[256] = "";
	enum kf_status st = check_directive(ls, le, file, line, log);

	/* A block comment that began on an earlier line ends here: what follows it starts the line as
	 * the preprocessor sees it ("/ * ...\n* / #include" is a directive). */
	for (const char *c = ls; !st && (c = memmem(c, (size_t)(le - c), "*/", 2)) != NULL; c += 2)
		st = check_directive(c + 2, le, file, line, log);
	if (st)
		return st;
	/* __has_include(…) (in #if lines) and _Pragma("GCC dependency …") anywhere on the line. */
	for (const char *q = ls; q < le; q++) {
		if (q > ls && is_ident(q[-1]))
			continue;
		if (word_at(q, le, "__has_include") || word_at(q, le, "__has_include_next") ||
		    word_at(q, le, "__has_embed")) {
			const char *o = q, *why;
			while (o < le && is_ident(*o))
				o++;
			o = skip_space(o, le);
			if (o < le && *o == '(')
				o++;
			name[0] = '\0';
			why = check_operand(o, le, name, sizeof(name));
			if (why)
				return reject(log, file, line, "__has_include", name, why);
		} else if (word_at(q, le, "_Pragma") && memmem(q, (size_t)(le - q), "dependency", 10)) {
			return reject(log, file, line, "_Pragma(\"GCC dependency\")", NULL,
				      "it reads another file");
		}
	}
	return KF_OK;
}

enum kf_status kf_include_check(const char *src, size_t len, const char *file, struct kf_buf *log)
{
	static const char *const asm_inc[] = {".incbin", ".include"};
	struct text T;
	enum kf_status st = KF_OK;
	const char *nul = memchr(src, '\0', len);

	if (nul) {
		/* GCC reads a NUL as a blank: "\0#include" would be a directive this check cannot see. */
		size_t line = 1;
		for (const char *p = src; p < nul; p++)
			line += *p == '\n';
		return reject(log, file, line, "a NUL byte", NULL, "the compilers read it differently");
	}
	if (!join_lines(src, len, &T))
		return KF_ERR_NOMEM;
	for (const char *ls = T.t, *end = T.t + T.n; ls < end && !st;) {
		const char *le = memchr(ls, '\n', (size_t)(end - ls));
		if (!le)
			le = end;
		st = check_line(ls, le, file, T.line[ls - T.t], log);
		ls = le + 1;
	}
	/* The assembler's include directives, wherever they appear (a string, a macro body). */
	for (size_t i = 0; i < KF_ARRAY_SIZE(asm_inc) && !st; i++) {
		const char *h = memmem(T.t, T.n, asm_inc[i], strlen(asm_inc[i]));
		if (h)
			st = reject(log, file, T.line[h - T.t], asm_inc[i], NULL,
				    "the assembler would read another file");
	}
	free(T.t);
	free(T.line);
	return st;
}
