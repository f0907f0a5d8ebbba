/* Tests of core's compile-once pattern tables (core/regex.h): patterns from an array or from a field of a
 * table of rows, per-pattern options, a broken pattern reported the same way on every call, match limits
 * that stop a pathological match on outside text, and first use from several threads at once. */
#include <pthread.h>

#include "regex.h"
#include "testing.h"

static const char *const words[] = {"^ab+c$", "^x.y$"};
static const uint32_t word_options[] = {0, PCRE2_DOTALL};
static pcre2_code *word_re[2];
static struct kf_regex_table word_table =
    KF_REGEX_TABLE("word pattern", 2, words, sizeof(words[0]), word_options, 0, true, 0, 0, word_re);

struct row {
	int id;
	const char *pattern;
	const char *label;
};
static const struct row rows[] = {{1, "\\bfoo\\b", "foo"}, {2, "^bar", "bar"}};
static pcre2_code *row_re[2];
static struct kf_regex_table row_table = KF_REGEX_TABLE("row pattern", 2, &rows[0].pattern, sizeof(rows[0]),
							NULL, PCRE2_MULTILINE, false, 0, 0, row_re);

static bool matches(struct kf_regex_table *t, size_t i, const char *s)
{
	pcre2_match_data *md = pcre2_match_data_create(4, NULL);
	int rc = md ? kf_regex_table_match(t, i, s, strlen(s), 0, md) : -1;
	pcre2_match_data_free(md);
	return rc > 0;
}

static void test_tables(void)
{
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_regex_table_ready(&word_table, &err) == KF_OK);
	CHECK(matches(&word_table, 0, "abbbc") && !matches(&word_table, 0, "ac"));
	CHECK(matches(&word_table, 1, "x\ny")); /* DOTALL on the second pattern only */
	CHECK(kf_regex_table_ready(&row_table, &err) == KF_OK);
	CHECK(matches(&row_table, 0, "a foo b") && !matches(&row_table, 0, "food"));
	CHECK(matches(&row_table, 1, "x\nbar")); /* MULTILINE for every row */
	CHECK(row_table.mctx == NULL);
}

static const char *const bad[] = {"fine", "(unclosed"};
static pcre2_code *bad_re[2];
static struct kf_regex_table bad_table =
    KF_REGEX_TABLE("test pattern", 2, bad, sizeof(bad[0]), NULL, 0, false, 0, 0, bad_re);

static void test_broken_pattern(void)
{
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_regex_table_ready(&bad_table, &err) == KF_ERR_INTERNAL);
	CHECK_CONTAINS(err.msg, "test pattern 1 at offset");
	kf_err_clear(&err);
	CHECK(kf_regex_table_ready(&bad_table, &err) == KF_ERR_INTERNAL); /* the same answer later */
	CHECK_CONTAINS(err.msg, "test pattern 1");
	CHECK(kf_regex_table_ready(&bad_table, NULL) == KF_ERR_INTERNAL);
}

/* Catastrophic backtracking, as an LLM reply could trigger: the limit ends it with an error code. */
static const char *const slow[] = {"^(a+)+$"};
static pcre2_code *slow_re[1];
static struct kf_regex_table slow_table =
    KF_REGEX_TABLE("slow pattern", 1, slow, sizeof(slow[0]), NULL, 0, false, 10000, 1000, slow_re);

static void test_match_limit(void)
{
	struct kf_err err = KF_ERR_INIT;
	char s[64];
	memset(s, 'a', sizeof(s) - 2);
	s[sizeof(s) - 2] = 'b';
	s[sizeof(s) - 1] = 0;
	CHECK(kf_regex_table_ready(&slow_table, &err) == KF_OK && slow_table.mctx);
	pcre2_match_data *md = pcre2_match_data_create(4, NULL);
	int rc = kf_regex_table_match(&slow_table, 0, s, strlen(s), 0, md);
	CHECKF(rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT, "rc %d", rc);
	pcre2_match_data_free(md);
}

static const char *const shared[] = {"^t\\d+$"};
static pcre2_code *shared_re[1];
static struct kf_regex_table shared_table =
    KF_REGEX_TABLE("shared pattern", 1, shared, sizeof(shared[0]), NULL, 0, true, 0, 0, shared_re);

static void *first_use(void *arg)
{
	(void)arg;
	return kf_regex_table_ready(&shared_table, NULL) == KF_OK && matches(&shared_table, 0, "t42")
		   ? shared_re[0]
		   : NULL;
}

static void test_threads(void)
{
	pthread_t th[4];
	void *got[4];
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, first_use, NULL) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], &got[i]);
	for (int i = 0; i < 4; i++)
		CHECK(got[i] && got[i] == got[0]); /* compiled once, the same code for every thread */
}

KF_TEST_MAIN(TEST(test_tables), TEST(test_broken_pattern), TEST(test_match_limit), TEST(test_threads))
