/* The one lexer of CUDA/C++ source the parent uses to look past comments (and, where a scan asks, string
 * literals): the kernel-file parser, the unsupported-construct scan and the technique tagger read the same
 * comments the same way. Outputs have the source's length and keep every newline, so offsets and line
 * numbers carry over. No preprocessing: macros, #if and line splices outside literals are not interpreted. */
#ifndef KF_LEX_H
#define KF_LEX_H

#include <stddef.h>

enum kf_lex_keep {
	KF_LEX_KEEP_LITERALS, /* comments become spaces; string and character literals stay as they are */
	KF_LEX_KEEP_CODE,     /* comments and the contents of literals become spaces (the quotes stay), except
				 on a preprocessor line, whose literals (#include "x.cuh") stay */
};

/* A NUL-terminated copy of src[0..len) with what mode blanks replaced by spaces; NULL when out of memory.
 * Comments are // to the end of the line and block comments; literals are "..." and '...' with backslash
 * escapes (a backslash-newline continues one), ending at the closing quote or an unescaped newline. */
char *kf_lex_blank(const char *src, size_t len, enum kf_lex_keep mode);
/* len flags (at least 1 byte): m[i] = 1 where byte i belongs to a comment; NULL when out of memory. */
unsigned char *kf_lex_comment_mask(const char *src, size_t len);

/* What kf_lex_comment_marks says about a byte: code, or which kind of comment, with the first byte of
 * each comment marked apart (so a directive can be told from a comment that follows code or another
 * comment on the same line). */
enum kf_lex_mark {
	KF_LEX_CODE = 0,
	KF_LEX_LINE = 'l',
	KF_LEX_LINE_START = 'L',
	KF_LEX_BLOCK = 'b',
	KF_LEX_BLOCK_START = 'B',
};
/* len marks (at least 1 byte), enum kf_lex_mark values; NULL when out of memory. Non-zero exactly where
 * kf_lex_comment_mask is 1. */
unsigned char *kf_lex_comment_marks(const char *src, size_t len);

#endif
