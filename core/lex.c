/* core/lex.h: one pass classifies every byte as code, comment or literal content; the two outputs are
 * views of that classification. */
#include "lex.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum cls { CODE = 0, COMMENT = 1, LITERAL = 2 };

/* cls[i] for each byte of src[0..len) (cls has len bytes); marks (may be NULL) gets enum kf_lex_mark. */
static void classify_marks(const char *src, size_t len, unsigned char *cls, unsigned char *marks)
{
	enum { S_CODE, S_LINE, S_BLOCK, S_STR, S_CHR } s = S_CODE;

	memset(cls, CODE, len);
	for (size_t i = 0; i < len; i++) {
		char c = src[i], nx = i + 1 < len ? src[i + 1] : '\0';
		switch (s) {
		case S_CODE:
			if (c == '/' && nx == '/') {
				s = S_LINE;
				cls[i] = COMMENT;
				if (marks)
					marks[i] = KF_LEX_LINE_START;
			} else if (c == '/' && nx == '*') {
				s = S_BLOCK;
				cls[i] = cls[i + 1] = COMMENT;
				if (marks) {
					marks[i] = KF_LEX_BLOCK_START;
					marks[i + 1] = KF_LEX_BLOCK;
				}
				i++;
			} else if (c == '"') {
				s = S_STR;
			} else if (c == '\'') {
				s = S_CHR;
			}
			break;
		case S_LINE:
			if (c == '\n') {
				s = S_CODE;
			} else {
				cls[i] = COMMENT;
				if (marks)
					marks[i] = KF_LEX_LINE;
			}
			break;
		case S_BLOCK:
			cls[i] = COMMENT;
			if (marks)
				marks[i] = KF_LEX_BLOCK;
			if (c == '*' && nx == '/') {
				cls[i + 1] = COMMENT;
				if (marks)
					marks[i + 1] = KF_LEX_BLOCK;
				i++;
				s = S_CODE;
			}
			break;
		case S_STR:
		case S_CHR:
			if (c == '\\') {
				cls[i] = LITERAL;
				if (i + 1 < len)
					cls[++i] = LITERAL;
			} else if ((s == S_STR && c == '"') || (s == S_CHR && c == '\'') || c == '\n') {
				s = S_CODE; /* the closing quote (or the newline) is not content */
			} else {
				cls[i] = LITERAL;
			}
			break;
		}
	}
}

static void classify(const char *src, size_t len, unsigned char *cls)
{
	classify_marks(src, len, cls, NULL);
}

unsigned char *kf_lex_comment_marks(const char *src, size_t len)
{
	unsigned char *cls = malloc(len ? len : 1), *m = calloc(len ? len : 1, 1);
	if (!cls || !m) {
		free(cls);
		free(m);
		return NULL;
	}
	classify_marks(src, len, cls, m);
	free(cls);
	return m;
}

unsigned char *kf_lex_comment_mask(const char *src, size_t len)
{
	unsigned char *m = malloc(len ? len : 1);
	if (!m)
		return NULL;
	m[0] = 0;
	classify(src, len, m);
	for (size_t i = 0; i < len; i++)
		m[i] = m[i] == COMMENT;
	return m;
}

char *kf_lex_blank(const char *src, size_t len, enum kf_lex_keep mode)
{
	unsigned char *cls = malloc(len ? len : 1);
	char *o = malloc(len + 1);
	bool directive = false, line_start = true;

	if (!cls || !o) {
		free(cls);
		free(o);
		return NULL;
	}
	classify(src, len, cls);
	for (size_t i = 0; i < len; i++) {
		char c = src[i];
		/* a preprocessor line: '#' is its first non-blank character */
		if (c == '\n') {
			line_start = true;
			directive = false;
		} else if (line_start && c != ' ' && c != '\t') {
			line_start = false;
			directive = c == '#' && cls[i] == CODE;
		}
		bool blank =
		    cls[i] == COMMENT || (cls[i] == LITERAL && mode == KF_LEX_KEEP_CODE && !directive);
		o[i] = blank && c != '\n' ? ' ' : c;
	}
	o[len] = '\0';
	free(cls);
	return o;
}
