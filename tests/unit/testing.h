/* A tiny test helper (after redis's): CHECK records a failure with file:line and goes on; main() from
 * KF_TEST_MAIN runs every registered test and ends with "N passed, N failed", exit 1 on any failure.
 * A test that cannot run here calls KF_SKIP("why"); a skip is never counted as a pass. */
#ifndef KF_TESTING_H
#define KF_TESTING_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int kf_t_passed, kf_t_failed, kf_t_skipped, kf_t_cur_failed, kf_t_cur_skipped;
static const char *kf_t_name;

#define CHECK(cond)                                                                                          \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "  FAIL %s (%s:%d): %s\n", kf_t_name, __FILE__, __LINE__, #cond);    \
			kf_t_cur_failed = 1;                                                                 \
		}                                                                                            \
	} while (0)

#define CHECKF(cond, ...)                                                                                    \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			fprintf(stderr, "  FAIL %s (%s:%d): %s: ", kf_t_name, __FILE__, __LINE__, #cond);    \
			fprintf(stderr, __VA_ARGS__);                                                        \
			fputc('\n', stderr);                                                                 \
			kf_t_cur_failed = 1;                                                                 \
		}                                                                                            \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                                   \
	CHECKF((long long)(a) == (long long)(b), "%lld != %lld", (long long)(a), (long long)(b))
/* Functions, not macros, for the string checks: a char array argument would make `(a) &&` a
 * -Waddress warning. */
static inline int kf_t_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}
static inline int kf_t_contains(const char *hay, const char *needle)
{
	return hay && needle && strstr(hay, needle) != NULL;
}
static inline const char *kf_t_str(const char *s)
{
	return s ? s : "(null)";
}
#define CHECK_STR(a, b) CHECKF(kf_t_streq((a), (b)), "'%s' != '%s'", kf_t_str(a), kf_t_str(b))
#define CHECK_CONTAINS(hay, needle)                                                                          \
	CHECKF(kf_t_contains((hay), (needle)), "'%s' does not contain '%s'", kf_t_str(hay), kf_t_str(needle))
#define CHECK_NEAR(a, b, tol)                                                                                \
	CHECKF(fabs((double)(a) - (double)(b)) <= (tol), "%.9g !~ %.9g", (double)(a), (double)(b))

#define KF_SKIP(why)                                                                                         \
	do {                                                                                                 \
		fprintf(stderr, "  skip %s: %s\n", kf_t_name, (why));                                        \
		kf_t_cur_skipped = 1;                                                                        \
		return;                                                                                      \
	} while (0)

typedef void (*kf_test_fn)(void);
struct kf_test_case {
	const char *name;
	kf_test_fn fn;
};

#define TEST(name)                                                                                           \
	{                                                                                                    \
#name, name                                                                                  \
	}

static int kf_test_run(const struct kf_test_case *cases, size_t n, int argc, char **argv)
{
	for (size_t i = 0; i < n; i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		kf_t_name = cases[i].name;
		kf_t_cur_failed = 0;
		kf_t_cur_skipped = 0;
		cases[i].fn();
		if (kf_t_cur_failed)
			kf_t_failed++;
		else if (kf_t_cur_skipped)
			kf_t_skipped++;
		else
			kf_t_passed++;
	}
	printf("%d passed, %d failed, %d skipped\n", kf_t_passed, kf_t_failed, kf_t_skipped);
	return kf_t_failed ? 1 : 0;
}

/* kf_test_run with a scratch folder: dir is a mkdtemp template ("/tmp/kf-test-x.XXXXXX") made first and
 * removed with everything below it afterwards. */
static inline int kf_test_run_in_tmpdir(const struct kf_test_case *cases, size_t n, int argc, char **argv,
					char *dir)
{
	char cmd[600];
	int rc;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	rc = kf_test_run(cases, n, argc, argv);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return rc;
}

#define KF_TEST_MAIN_TMPDIR(dir, ...)                                                                        \
	int main(int argc, char **argv)                                                                      \
	{                                                                                                    \
		static const struct kf_test_case cases[] = {__VA_ARGS__};                                    \
		return kf_test_run_in_tmpdir(cases, sizeof(cases) / sizeof(cases[0]), argc, argv, (dir));    \
	}

#define KF_TEST_MAIN(...)                                                                                    \
	int main(int argc, char **argv)                                                                      \
	{                                                                                                    \
		static const struct kf_test_case cases[] = {__VA_ARGS__};                                    \
		return kf_test_run(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);                     \
	}

#endif
