/* Tests of core's filesystem helpers (core/fs.h): mkdir -p and the task-file walk `kforge tasks` and the
 * bench runner's suites share (sorted, hidden entries skipped, a file taken as it is, clear errors). */
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "testing.h"

static char tmpdir[] = "/tmp/kf-test-fs.XXXXXX";

static void touch(const char *rel)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	f = fopen(p, "w");
	CHECKF(f != NULL, "cannot create %s", p);
	if (f)
		fclose(f);
}

static void test_mkdir_p(void)
{
	char p[512];
	struct stat sb;
	struct kf_err err = KF_ERR_INIT;
	snprintf(p, sizeof(p), "%s/a/b/c", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK);
	CHECK(stat(p, &sb) == 0 && S_ISDIR(sb.st_mode));
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK); /* existing: fine */
	touch("a/file");
	snprintf(p, sizeof(p), "%s/a/file/sub", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_ERR_IO);
	CHECK_CONTAINS(err.msg, "/a/file/sub");
	CHECK(kf_mkdir_p("", 0755, &err) == KF_ERR_INVALID);
	CHECK(kf_mkdir_p(p, 0755, NULL) == KF_ERR_IO); /* no error struct: still the code */
}

static void test_task_files_find(void)
{
	char p[512], q[600];
	struct kf_paths l = {0};
	struct kf_err err = KF_ERR_INIT;
	snprintf(p, sizeof(p), "%s/suite/z/deep/er", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK);
	snprintf(p, sizeof(p), "%s/suite/.hidden", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK);
	snprintf(p, sizeof(p), "%s/suite/a", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK);
	touch("suite/z/deep/er/task.json");
	touch("suite/a/task.json");
	touch("suite/a/other.json");
	touch("suite/.hidden/task.json");

	snprintf(p, sizeof(p), "%s/suite/", tmpdir);
	CHECK(kf_task_files_find(p, &l, &err) == KF_OK);
	CHECK_EQ_INT(l.n, 2);
	if (l.n == 2) {
		snprintf(q, sizeof(q), "%s/suite/a/task.json", tmpdir);
		CHECK_STR(l.v[0], q);
		snprintf(q, sizeof(q), "%s/suite/z/deep/er/task.json", tmpdir);
		CHECK_STR(l.v[1], q);
	}
	/* a file is taken as given (validate names files that are not called task.json) */
	snprintf(p, sizeof(p), "%s/suite/a/other.json", tmpdir);
	CHECK(kf_task_files_find(p, &l, &err) == KF_OK && l.n == 3 && kf_t_streq(l.v[2], p));
	kf_paths_free(&l);
	CHECK(l.n == 0 && l.v == NULL);

	snprintf(p, sizeof(p), "%s/none", tmpdir);
	CHECK(kf_task_files_find(p, &l, &err) == KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "does not exist");
	snprintf(p, sizeof(p), "%s/only_hidden/.h", tmpdir);
	CHECK(kf_mkdir_p(p, 0755, &err) == KF_OK);
	touch("only_hidden/.h/task.json");
	snprintf(p, sizeof(p), "%s/only_hidden", tmpdir);
	CHECK(kf_task_files_find(p, &l, &err) == KF_ERR_NOTFOUND); /* only a hidden task below: none */
	CHECK_CONTAINS(err.msg, "no task.json under");
	kf_paths_free(&l);
}

/* kf_grow (core/kf.h): the one array growth of the tree. */
static void test_grow(void)
{
	size_t cap = 0;
	int *v = kf_grow(NULL, 0, &cap, sizeof(int), 4), *w;
	CHECK(v && cap == 4);
	CHECK(kf_grow(v, 3, &cap, sizeof(int), 4) == v && cap == 4); /* room left: the same array */
	for (int i = 0; i < 4; i++)
		v[i] = i;
	w = kf_grow(v, 4, &cap, sizeof(int), 4);
	CHECK(w && cap == 8);
	if (w) {
		v = w;
		CHECK(v[3] == 3); /* kept */
	}
	cap = SIZE_MAX / 2 + 1; /* doubling would overflow: refused, the array untouched */
	CHECK(kf_grow(v, cap, &cap, sizeof(int), 4) == NULL && cap == SIZE_MAX / 2 + 1);
	free(v);
}

KF_TEST_MAIN_TMPDIR(tmpdir, TEST(test_grow), TEST(test_mkdir_p), TEST(test_task_files_find))
