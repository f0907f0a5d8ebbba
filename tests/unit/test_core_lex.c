/* Tests of core's one CUDA source lexer (core/lex.h), which the kernel-file parser, the unsupported-construct
 * scan and the technique tagger share: what is a comment, what is a literal, and the outputs keep lengths
 * and newlines so offsets and line numbers carry over. */
#include "lex.h"
#include "testing.h"

static void check_blank(const char *src, enum kf_lex_keep mode, const char *want)
{
	char *got = kf_lex_blank(src, strlen(src), mode);
	CHECKF(got && strlen(got) == strlen(src), "length changed for '%s'", src);
	CHECKF(kf_t_streq(got, want), "mode %d: '%s' -> '%s', want '%s'", (int)mode, src, kf_t_str(got),
	       want);
	free(got);
}

static void test_comments(void)
{
	check_blank("a // c\nb", KF_LEX_KEEP_LITERALS, "a     \nb");
	check_blank("a /* x\ny */ b", KF_LEX_KEEP_LITERALS, "a     \n     b");
	check_blank("a /* never closed\nb", KF_LEX_KEEP_LITERALS, "a                \n ");
	/* a slash right after the opener does not close the comment */
	check_blank("x /*/ y */ z", KF_LEX_KEEP_LITERALS, "x          z");
	check_blank("p = q / r; // half", KF_LEX_KEEP_LITERALS, "p = q / r;        ");
}

static void test_literals(void)
{
	/* a comment opener inside a literal is not a comment */
	check_blank("s = \"http://x\"; t", KF_LEX_KEEP_LITERALS, "s = \"http://x\"; t");
	check_blank("c = '/'; /* k */", KF_LEX_KEEP_LITERALS, "c = '/';        ");
	check_blank("s = \"a\\\"//b\"; // c", KF_LEX_KEEP_LITERALS, "s = \"a\\\"//b\";     ");
	/* keeping code only: contents blanked, quotes kept, a preprocessor line's literal kept */
	check_blank("asm(\"mma.sync\"); x", KF_LEX_KEEP_CODE, "asm(\"        \"); x");
	check_blank("  #include \"tile.cuh\" // t\nf(\"a\")", KF_LEX_KEEP_CODE,
		    "  #include \"tile.cuh\"     \nf(\" \")");
	check_blank("c = '\\''; d", KF_LEX_KEEP_CODE, "c = '  '; d");
	/* a literal ends at an unescaped newline; a backslash-newline continues it, the newline kept */
	check_blank("\"ab\nc // x", KF_LEX_KEEP_CODE, "\"  \nc     ");
	check_blank("\"a\\\nb\" c", KF_LEX_KEEP_CODE, "\"  \n \" c");
}

/* The attacker's kernel: a comment opener hidden in a literal must not hide the code after it. A naive
 * lexer would take everything after "/" "*" for a comment and miss the inline PTX the scan must refuse. */
static void test_literal_does_not_hide_code(void)
{
	const char *src = "const char *s = \"/*\";\nasm volatile(\"mov.u32 %0, 1;\" : \"=r\"(x));\n// */\n";
	char *code = kf_lex_blank(src, strlen(src), KF_LEX_KEEP_CODE);
	char *tags = kf_lex_blank(src, strlen(src), KF_LEX_KEEP_LITERALS);
	CHECK_CONTAINS(code, "asm volatile(");
	CHECK_CONTAINS(tags, "asm volatile(\"mov.u32");
	free(code);
	free(tags);
}

static void test_mask(void)
{
	const char *src = "k(); // kforge:launch\n/* b */ \"//\"";
	unsigned char *m = kf_lex_comment_mask(src, strlen(src));
	char got[64];
	size_t n = strlen(src);
	CHECK(m != NULL);
	if (!m)
		return;
	for (size_t i = 0; i < n; i++)
		got[i] = m[i] ? 'c' : '.';
	got[n] = 0;
	CHECK_STR(got, ".....cccccccccccccccc.ccccccc.....");
	free(m);
	m = kf_lex_comment_mask("", 0); /* an empty source still gets a buffer */
	CHECK(m != NULL);
	free(m);
}

/* The marks tell line from block comments and a comment's first byte from the rest; they agree with the
 * mask everywhere. */
static void test_marks(void)
{
	const char *src = "k(); // a\n/* b */ \"//\" // c";
	size_t n = strlen(src);
	unsigned char *m = kf_lex_comment_marks(src, n), *mask = kf_lex_comment_mask(src, n);
	char got[64];
	CHECK(m != NULL && mask != NULL);
	if (!m || !mask) {
		free(m);
		free(mask);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		got[i] = m[i] ? (char)m[i] : '.';
		CHECK((m[i] != 0) == (mask[i] != 0));
	}
	got[n] = 0;
	CHECK_STR(got, ".....Llll.Bbbbbbb......Llll");
	free(m);
	free(mask);
}

KF_TEST_MAIN(TEST(test_comments), TEST(test_literals), TEST(test_literal_does_not_hide_code), TEST(test_mask),
	     TEST(test_marks))
