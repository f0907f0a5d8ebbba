/* Unit tests for scaffold/: kernels as people write them (a 1-D index with a bounds check, a 2-D index, a
 * block per row, none of those, several kernels, templates, comments and strings that mention __global__,
 * an extern "C" block), what becomes a tensor, dim or param, the proposed directive, the TODO fields and
 * that kf_scaffold_todos finds exactly as many as the scaffold left; the templates load strictly and bind;
 * writing never overwrites. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfile.h"
#include "scaffold/scaffold.h"
#include "task.h"
#include "testing.h"

static char tmp[64];

static void test_setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/kf-scaffold-XXXXXX");
	CHECK(mkdtemp(tmp) != NULL);
}

/* Scaffolds src as task name in tmp/name and returns the number of TODOs kf_scaffold_todos finds there
 * (which must equal what the scaffold counted). */
static size_t scaffold(const char *name, const char *src, const char *kernel, struct kf_scaffold *s,
		       struct kf_err *err)
{
	char dir[128], task[160];
	size_t n = 0;
	kf_scaffold_init(s);
	kf_err_clear(err);
	if (kf_scaffold_from_kernel(name, "k.cu", src, strlen(src), kernel, s, err))
		return (size_t)-1;
	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	if (kf_scaffold_write(s, dir, err))
		return (size_t)-2;
	snprintf(task, sizeof(task), "%s/task.json", dir);
	CHECK(!kf_scaffold_todos(task, NULL, &n, err));
	CHECKF(n == s->n_todo, "%s: the scaffold counted %zu TODOs, the files hold %zu", name, s->n_todo, n);
	return n;
}

static void test_one_dim(void)
{
	struct kf_scaffold s;
	struct kf_err err = KF_ERR_INIT;
	const char *src =
	    "// my kernel: __global__ in a comment is no kernel\n"
	    "#define KERNEL __global__\n"
	    "const char *s = \"__global__ void fake(int x) {}\";\n"
	    "__global__ void __launch_bounds__(128) scale(const float* __restrict__ a, float *out,\n"
	    "                                           float alpha, size_t n)\n"
	    "{\n"
	    "    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
	    "    if (i < n) out[i] = alpha * a[i];\n"
	    "}\n";
	size_t n = scaffold("scale", src, NULL, &s, &err);
	CHECKF(n == 3, "%zu TODOs (%s)", n, err.msg); /* title, description, alpha's value */
	CHECK_CONTAINS(s.task_json.data, "\"dims\": [\"n\"]");
	CHECK_CONTAINS(s.task_json.data,
		       "{\"name\": \"a\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"n\"]}");
	CHECK_CONTAINS(s.task_json.data,
		       "{\"name\": \"out\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"n\"]}");
	CHECK_CONTAINS(s.task_json.data, "\"category\": \"elementwise\"");
	CHECK_CONTAINS(s.task_json.data, "\"bytes\": \"8*n\"");
	CHECK_CONTAINS(s.task_json.data, "\"value\": \"TODO");
	/* the launch bounds give the block; size_t n travels as long(n); extern "C" added */
	CHECK_CONTAINS(
	    s.reference.data,
	    "// kforge:launch scale grid=(cdiv(n, 128)) block=(128) args=(a, out, alpha, long(n))\n"
	    "extern \"C\" __global__ void __launch_bounds__(128) scale(");
	CHECK_CONTAINS(s.reference.data, "// my kernel: __global__ in a comment");
	kf_scaffold_release(&s);
}

static void test_two_dims_and_rows(void)
{
	struct kf_scaffold s;
	struct kf_err err = KF_ERR_INIT;
	const char *src =
	    "extern \"C\" {\n"
	    "__global__ void mm(const float *A, const float *B, float *C, int M, int N, int K) {\n"
	    "  int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
	    "  int row = (blockIdx.y * blockDim.y) + threadIdx.y;\n"
	    "  if (row >= M || col >= N) return;\n"
	    "  float s = 0; for (int k = 0; k < K; k++) s += A[row*K+k]*B[k*N+col]; C[row*N+col] = s;\n"
	    "}\n"
	    "extern __shared__ float red[];\n"
	    "__global__ void rowmax(const float *x, float *y, int B, int N) {\n"
	    "  float m = -3.4e38f;\n"
	    "  for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, x[blockIdx.x * N + i]);\n"
	    "  red[threadIdx.x] = m;\n"
	    "}\n"
	    "}\n";
	size_t n = scaffold("mm", src, "mm", &s, &err);
	/* title, category, description, three shapes */
	CHECKF(n == 6, "%zu TODOs (%s)", n, err.msg);
	CHECK_CONTAINS(
	    s.reference.data,
	    "// kforge:launch mm grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(A, B, C, M, N, K)\n"
	    "__global__ void mm(");
	CHECK(!strstr(s.reference.data, "extern \"C\" __global__")); /* already inside extern "C" { } */
	CHECK_CONTAINS(s.task_json.data, "\"shape\": \"TODO: the shape of A");
	kf_scaffold_release(&s);

	n = scaffold("rowmax", src, "rowmax", &s, &err);
	/* title, category, description, two shapes, smem */
	CHECKF(n == 6, "%zu TODOs (%s)", n, err.msg);
	CHECK_CONTAINS(s.reference.data,
		       "// kforge:launch rowmax grid=(B) block=(256) smem=(TODO(kforge): bytes");
	kf_scaffold_release(&s);
}

static void test_unrecognised_and_odd(void)
{
	struct kf_scaffold s;
	struct kf_err err = KF_ERR_INIT;
	const char *src =
	    "struct P { int a; };\n"
	    "template <int T> __global__ void tk(float *const x, __half *h, float4 *v, P p, int n)\n"
	    "{ if (threadIdx.x == 0) x[0] = 1; }\n";
	size_t n = scaffold("tk", src, NULL, &s, &err);
	/* title, description, the template arguments, the grid, the struct argument */
	CHECKF(n == 5, "%zu TODOs (%s)", n, err.msg);
	CHECK_CONTAINS(s.reference.data, "// kforge:launch tk<TODO(kforge): the template arguments");
	CHECK_CONTAINS(s.reference.data, "grid=(TODO(kforge): the grid");
	CHECK_CONTAINS(s.reference.data, "TODO(kforge): parameter 4 (p) is not a tensor, dim or param");
	CHECK(!strstr(s.reference.data, "extern \"C\" template")); /* a template keeps its C++ name */
	/* "float *const x": the pointer is const, the data is not */
	CHECK_CONTAINS(s.task_json.data, "{\"name\": \"x\", \"role\": \"output\", \"dtype\": \"f32\"");
	CHECK_CONTAINS(s.task_json.data, "{\"name\": \"h\", \"role\": \"output\", \"dtype\": \"f16\"");
	CHECK_CONTAINS(s.task_json.data, "{\"name\": \"v\", \"role\": \"output\", \"dtype\": \"f32\"");
	CHECK_CONTAINS(s.notes.data, "float4 elements as f32");
	kf_scaffold_release(&s);
}

static void test_errors_and_kept_directives(void)
{
	struct kf_scaffold s;
	struct kf_err err = KF_ERR_INIT;
	const char *two =
	    "extern \"C\" __global__ void a(float *x, int n) {}\n"
	    "extern \"C\" __global__ void b(float *x, int n);\n" /* a declaration: not counted */
	    "extern \"C\" __global__ void c(float *x, int n) {}\n";
	CHECK(scaffold("two", two, NULL, &s, &err) == (size_t)-1);
	CHECK_CONTAINS(err.msg, "2 __global__ functions (a, c): choose one with --kernel NAME");
	kf_scaffold_release(&s);
	CHECK(scaffold("two", two, "b", &s, &err) == (size_t)-1);
	CHECK_CONTAINS(err.msg, "no __global__ function 'b' (there are: a, c)");
	kf_scaffold_release(&s);
	CHECK(scaffold("none", "// __global__ void f() {}\nint x;\n", NULL, &s, &err) == (size_t)-1);
	CHECK_CONTAINS(err.msg, "no __global__ function");
	kf_scaffold_release(&s);
	CHECK(scaffold("Bad-Name", two, "a", &s, &err) == (size_t)-1);
	kf_scaffold_release(&s);
	/* a file that already says how to launch it keeps its directives */
	const char *dir =
	    "// kforge:launch a grid=(cdiv(n, 64)) block=(64) args=(x, n)\n"
	    "extern \"C\" __global__ void a(float *x, int n) { int i = blockIdx.x * blockDim.x + "
	    "threadIdx.x; if (i < n) x[i] = 0; }\n";
	CHECK(scaffold("kept", dir, NULL, &s, &err) == 2);
	CHECK_STR(s.reference.data, dir);
	kf_scaffold_release(&s);
	/* the folder exists and is not empty: nothing written */
	CHECK(scaffold("kept", dir, NULL, &s, &err) == (size_t)-2);
	CHECK_CONTAINS(err.msg, "not empty");
	kf_scaffold_release(&s);
}

static void test_templates(void)
{
	for (int kind = 0; kind < KF_SCAFFOLD_KIND_COUNT; kind++) {
		struct kf_scaffold s;
		struct kf_err err = KF_ERR_INIT;
		struct kf_task *t = NULL;
		struct kf_kfile *k = NULL;
		char dir[128], task[160], name[32];
		size_t n = 99;
		enum kf_scaffold_kind back;
		const char *kn = kf_scaffold_kind_name((enum kf_scaffold_kind)kind);
		CHECK(kf_scaffold_kind_parse(kn, &back) && back == (enum kf_scaffold_kind)kind);
		snprintf(name, sizeof(name), "tpl_%s", kn);
		kf_scaffold_init(&s);
		CHECKF(!kf_scaffold_from_template(name, (enum kf_scaffold_kind)kind, &s, &err), "%s",
		       err.msg);
		snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
		CHECKF(!kf_scaffold_write(&s, dir, &err), "%s", err.msg);
		snprintf(task, sizeof(task), "%s/task.json", dir);
		CHECKF(!kf_task_load(task, KF_TASK_STRICT, NULL, &t, &err), "%s: %s", kn, err.msg);
		CHECK(!kf_scaffold_todos(task, NULL, &n, &err) && n == 0 && s.n_todo == 0);
		if (t) {
			CHECK_STR(t->name, name);
			CHECKF(!kf_kfile_load(t->reference, &k, &err) && !kf_kfile_bind(k, t, &err), "%s: %s",
			       kn, err.msg);
			for (size_t i = 0; k && i < t->n_public; i++) {
				struct kf_plan *p = NULL;
				CHECKF(!kf_plan_make(k, t, &t->shapes_public[i], &p, &err), "%s: %s", kn,
				       err.msg);
				kf_plan_free(p);
			}
		}
		kf_kfile_free(k);
		kf_task_free(t);
		kf_scaffold_release(&s);
	}
	{
		enum kf_scaffold_kind k;
		CHECK(!kf_scaffold_kind_parse("softmax", &k));
	}
}

static void test_todos(void)
{
	char dir[128], path[160];
	struct kf_buf out = KF_BUF_INIT(1 << 16);
	struct kf_err err = KF_ERR_INIT;
	size_t n = 0;
	FILE *f;
	snprintf(dir, sizeof(dir), "%s/todos", tmp);
	mkdir(dir, 0777);
	snprintf(path, sizeof(path), "%s/task.json", dir);
	f = fopen(path, "w");
	fputs("{\"a\": \"TODO: one\", \"b\": [1, {\"c\": \"TODO two\"}], \"d\": \"not TODO\", "
	      "\"reference\": \"r.cu\"}",
	      f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/r.cu", dir);
	f = fopen(path, "w");
	fputs("// kforge:launch k grid=(TODO(kforge): a grid (cdiv)) block=(256) args=(x)\nint x; // TODO "
	      "later\n"
	      "// TODO(kforge): host code\n",
	      f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/task.json", dir);
	CHECK(!kf_scaffold_todos(path, &out, &n, &err));
	CHECK_EQ_INT(n, 4);
	CHECK_CONTAINS(out.data, "task.json: a: TODO: one\n");
	CHECK_CONTAINS(out.data, "task.json: b[1].c: TODO two\n");
	CHECK_CONTAINS(out.data, "r.cu: line 1: TODO(kforge): a grid (cdiv)\n");
	CHECK_CONTAINS(out.data, "r.cu: line 3: TODO(kforge): host code\n");
	CHECK(!strstr(out.data, "not TODO"));
	/* an unreadable file is the loader's to report */
	n = 7;
	CHECK(!kf_scaffold_todos("/nonexistent/task.json", &out, &n, &err) && n == 0);
	kf_buf_release(&out);
}

KF_TEST_MAIN(TEST(test_setup), TEST(test_one_dim), TEST(test_two_dims_and_rows),
	     TEST(test_unrecognised_and_odd), TEST(test_errors_and_kept_directives), TEST(test_templates),
	     TEST(test_todos))
