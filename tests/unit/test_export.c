/* Unit tests for export/: expressions translated with kforge's semantics into C and Python helper calls,
 * names that cannot clash with keywords or the generated code's own, the header's launcher for a plan with
 * scratch, params and several launches, the torch module's function, and text from the task or the kernel
 * file that tries to break out of a comment or a string. (tests/integration/export.sh compiles the output
 * with nvcc and runs the Python against a stand-in torch.) */
#include <stdint.h>
#include <unistd.h>

#include "export/export.h"
#include "export/export_int.h"
#include "testing.h"

static struct kf_task *load_task(const char *json)
{
	char dir[] = "/tmp/kf-export-XXXXXX", path[64];
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	FILE *f;
	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/task.json", dir);
	f = fopen(path, "w");
	if (f) {
		fputs(json, f);
		fclose(f);
	}
	if (kf_task_load(path, KF_TASK_NO_FILES, NULL, &t, &err))
		fprintf(stderr, "  task: %s\n", err.msg);
	unlink(path);
	rmdir(dir);
	return t;
}

static const char *TASK =
    "{\"format\": \"kforge-task/1\", \"name\": \"2sum\", \"title\": \"Sum */ #error broken /*\","
    " \"category\": \"reduction\", \"level\": 1, \"description\": \"d\", \"dims\": [\"B\", \"N\", \"int\"],"
    " \"shapes\": {\"public\": [{\"B\": 4, \"N\": 1000, \"int\": 3}]},"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]},"
    "              {\"name\": \"stream\", \"role\": \"output\", \"dtype\": \"f16\", \"shape\": [\"B\"]},"
    "              {\"name\": \"lambda\", \"role\": \"inout\", \"dtype\": \"i64\", \"shape\": [\"int*2\"]}],"
    " \"params\": [{\"name\": \"eps\", \"dtype\": \"f32\", \"value\": 1},"
    "            {\"name\": \"k\", \"dtype\": \"i64\", \"value\": 5000000000}],"
    " \"reference\": \"r.cu\"}";

static const char *KERNEL =
    "// kforge:scratch partial f32 (cdiv(N, 256) * B)\n"
    "// kforge:scratch count i32 (B)\n"
    "// kforge:launch stage1 grid=(cdiv(N, 256), B) block=(256) smem=(256*4) args=(x, partial, B, long(N), "
    "eps, 7)\n"
    "// kforge:launch stage2 grid=(B) block=(32) args=(partial, count, stream, lambda, k, int)\n"
    "extern \"C\" __global__ void stage1(const float *x, float *p, int B, long long N, float eps, int s) {}\n"
    "extern \"C\" __global__ void stage2(const float *p, int *c, void *y, long long *l, long long k, int i) "
    "{}\n";

static void test_expr_c(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_buf b = KF_BUF_INIT(1 << 16);
	struct kf_err err = KF_ERR_INIT;
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(!ex_expr(&b, EX_C, "cdiv(N, 256) * B + -3 % 2", t, &err));
	CHECK_STR(b.data, "kforge_e_add(kforge_e_mul(kforge_e_cdiv(N, 256LL, &kf_bad), B, &kf_bad), "
			  "kforge_e_mod(kforge_e_neg(3LL, &kf_bad), 2LL, &kf_bad), &kf_bad)");
	kf_buf_reset(&b);
	/* left to right within a level, * before +, parentheses respected */
	CHECK(!ex_expr(&b, EX_C, "B - N - 1", t, &err));
	CHECK_STR(b.data, "kforge_e_sub(kforge_e_sub(B, N, &kf_bad), 1LL, &kf_bad)");
	kf_buf_reset(&b);
	CHECK(!ex_expr(&b, EX_C, "(B - (N - 1)) / max(B, 2)", t, &err));
	CHECK_STR(b.data, "kforge_e_div(kforge_e_sub(B, kforge_e_sub(N, 1LL, &kf_bad), &kf_bad), "
			  "kforge_e_max(B, 2LL, &kf_bad), &kf_bad)");
	kf_buf_reset(&b);
	/* a dim named like a keyword is renamed, the same way as in the signature */
	CHECK(!ex_expr(&b, EX_C, "int*2", t, &err));
	CHECK_STR(b.data, "kforge_e_mul(int_, 2LL, &kf_bad)");
	kf_buf_release(&b);
	kf_task_free(t);
}

static void test_expr_py_and_errors(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_buf b = KF_BUF_INIT(1 << 16);
	struct kf_err err = KF_ERR_INIT;
	char deep[300];
	if (!t)
		return;
	CHECK(!ex_expr(&b, EX_PY, "min(cdiv(N, 32), int) * 4", t, &err));
	CHECK_STR(b.data, "_e_mul(_e_min(_e_cdiv(D[\"N\"], 32), D[\"int\"]), 4)");
	/* what the translator refuses: names that are not dims, other functions, other characters (an
	 * expression is code in the generated file: nothing but the grammar may pass) */
	static const char *const bad[] = {
	    "Q + 1",   "system(1)", "N; abort()",           "N \" + x", "N // 2", "1e3", "0x10",
	    "cdiv(N)", "",          "99999999999999999999", "N)"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad); i++) {
		kf_buf_reset(&b);
		kf_err_clear(&err);
		CHECKF(ex_expr(&b, EX_C, bad[i], t, &err) != KF_OK, "'%s' translated to '%s'", bad[i],
		       b.data);
		CHECKF(ex_expr(&b, EX_PY, bad[i], t, &err) != KF_OK, "'%s' translated", bad[i]);
		CHECK(err.msg[0] != '\0');
	}
	/* nesting is bounded */
	memset(deep, '(', 200);
	snprintf(deep + 200, sizeof(deep) - 200, "N");
	kf_err_clear(&err);
	CHECK(ex_expr(&b, EX_C, deep, t, &err) != KF_OK);
	CHECK_CONTAINS(err.msg, "nested");
	kf_buf_release(&b);
	kf_task_free(t);
}

static void test_names(void)
{
	char out[EX_NAME_MAX];
	ex_name(EX_C, "x", out);
	CHECK_STR(out, "x");
	ex_name(EX_C, "int", out);
	CHECK_STR(out, "int_");
	ex_name(EX_C, "kf_bad", out);
	CHECK_STR(out, "kf_bad_");
	ex_name(EX_C, "stream", out);
	CHECK_STR(out, "stream_");
	ex_name(EX_PY, "lambda", out);
	CHECK_STR(out, "lambda_");
	ex_name(EX_PY, "_e_add", out);
	CHECK_STR(out, "_e_add_");
	ex_name(EX_PY, "int", out); /* not a keyword, but the function body calls int() */
	CHECK_STR(out, "int_");
	ex_name(EX_PY, "stream", out);
	CHECK_STR(out, "stream");
	CHECK(kf_export_ident_ok("softmax_f32"));
	CHECK(!kf_export_ident_ok("2sum"));
	CHECK(!kf_export_ident_ok("kf_x"));
	CHECK(!kf_export_ident_ok("a-b"));
	CHECK(!kf_export_ident_ok("a\"b"));
	CHECK(!kf_export_ident_ok(""));
	kf_export_ident_default("2sum", out, sizeof(out));
	CHECK_STR(out, "k2sum");
	kf_export_ident_default("kf_x", out, sizeof(out));
	CHECK(kf_export_ident_ok(out));
}

static struct kf_kfile *bound(const struct kf_task *t, const char *src)
{
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	if (kf_kfile_parse("k.cu", src, strlen(src), &k, &err) || kf_kfile_bind(k, t, &err)) {
		fprintf(stderr, "  kernel: %s\n", err.msg);
		kf_kfile_free(k);
		return NULL;
	}
	return k;
}

static void test_header(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_kfile *k = t ? bound(t, KERNEL) : NULL;
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_export_opts o = {.origin = "evil */ origin\n#error no"};
	CHECK(k != NULL);
	if (!k) {
		kf_task_free(t);
		return;
	}
	CHECKF(!kf_export_header(t, k, &o, &b, &err), "%s", err.msg);
	/* the signature: tensors (const for inputs), dims, params, workspace, stream; renamed keywords */
	CHECK_CONTAINS(b.data,
		       "cudaError_t kforge_k2sum_launch(const float *x, void *stream_, int64_t *lambda, "
		       "int64_t B, int64_t N, int64_t int_, float eps, int64_t k, void *workspace, size_t "
		       "workspace_bytes, cudaStream_t stream)");
	CHECK_CONTAINS(b.data, "size_t kforge_k2sum_workspace_bytes(int64_t B, int64_t N, int64_t int_)");
	CHECK_CONTAINS(b.data, "#define KFORGE_K2SUM_eps (1.0f)");
	CHECK_CONTAINS(b.data, "#define KFORGE_K2SUM_k (5000000000LL)");
	/* scratch buffers laid out in file order, each rounded up */
	CHECK_CONTAINS(b.data, "kf_o = kforge_e_ws(kf_o, kforge_e_mul(kforge_e_cdiv(N, 256LL, &kf_bad), B, "
			       "&kf_bad), 4, &kf_bad); /* scratch partial");
	CHECK_CONTAINS(b.data, "kf_o = kforge_e_ws(kf_o, B, 4, &kf_bad); /* scratch count");
	CHECK_CONTAINS(b.data, "char *kf_s1 = kf_ws ? kf_ws + kf_o : NULL;");
	/* the arguments as the harness passes them: pointers, int dims (range-checked), long(N), params at
	 * their dtype, literals */
	CHECK_CONTAINS(b.data, "void *kf_a1 = (void *)kf_s0;");
	CHECK_CONTAINS(b.data, "int kf_a2 = kforge_e_int(B, &kf_bad);");
	CHECK_CONTAINS(b.data, "long long kf_a3 = (long long)(N);");
	CHECK_CONTAINS(b.data, "float kf_a4 = (float)eps;");
	CHECK_CONTAINS(b.data, "int kf_a5 = kforge_e_int(7LL, &kf_bad);");
	CHECK_CONTAINS(b.data, "long long kf_a4 = (long long)k;");
	CHECK_CONTAINS(b.data, "void *kf_a2 = (void *)stream_;");
	CHECK_CONTAINS(b.data, "long long kf_smem = kforge_e_mul(256LL, 4LL, &kf_bad);");
	/* both launches, in order, through cudaLaunchKernel */
	const char *l1 = strstr(b.data, "(const void *)&stage1"),
		   *l2 = strstr(b.data, "(const void *)&stage2");
	CHECK(l1 && l2 && l1 < l2);
	CHECK_CONTAINS(b.data, "cudaFuncAttributeMaxDynamicSharedMemorySize");
	CHECK_CONTAINS(b.data, "cudaMallocAsync(&kf_own, kf_need, stream)");
	/* the kernel file verbatim, inside the implementation part only */
	const char *impl = strstr(b.data, "#ifdef KFORGE_K2SUM_IMPLEMENTATION");
	const char *src = strstr(b.data, "extern \"C\" __global__ void stage1");
	CHECK(impl && src && impl < src);
	/* text from the task and the origin never closes a comment or starts a directive */
	CHECK(!strstr(b.data, "\n#error broken"));
	CHECK(!strstr(b.data, "\n#error no"));
	CHECK_CONTAINS(b.data, "Sum  #error broken ");
	for (const char *p = b.data; (p = strstr(p, "*/")); p += 2) {
		/* every comment end is the end of a line or followed by a space and more of our code */
		CHECKF(p[2] == '\n' || p[2] == ' ' || p[2] == '\0', "'%.40s'", p - 20 > b.data ? p - 20 : p);
	}
	kf_buf_release(&b);
	kf_kfile_free(k);
	kf_task_free(t);
}

static void test_header_checks(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_export_opts o = {.ident = "bad-name"};
	struct kf_kfile *k = t ? bound(t, KERNEL) : NULL;
	if (!k) {
		kf_task_free(t);
		return;
	}
	CHECK(kf_export_header(t, k, &o, &b, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "bad-name");
	CHECK(b.len == 0);
	kf_kfile_free(k);
	/* a plan kforge cannot make at a public shape is not exported: 2000 threads per block */
	k = bound(
	    t, "// kforge:launch stage1 grid=(1) block=(N*2) args=(x, stream, B, long(N), eps, 7)\n"
	       "extern \"C\" __global__ void stage1(const float *x, void *p, int B, long long N, float eps, "
	       "int s) {}\n");
	if (k) {
		kf_err_clear(&err);
		CHECK(kf_export_header(t, k, NULL, &b, &err) == KF_ERR_INVALID);
		CHECK_CONTAINS(err.msg, "block[0]");
		CHECK(b.len == 0);
	}
	kf_kfile_free(k);
	kf_task_free(t);
}

static void test_torch(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_kfile *k = t ? bound(t, KERNEL) : NULL;
	struct kf_buf b = KF_BUF_INIT(1 << 20), tb = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	if (!k) {
		kf_task_free(t);
		return;
	}
	CHECKF(!kf_export_torch(t, k, NULL, &b, &err), "%s", err.msg);
	/* inputs and inouts positional, dims and params keyword-only with the task's values as defaults */
	CHECK_CONTAINS(b.data, "def k2sum(x, lambda_, *, B=None, N=None, int_=None, eps=1, k=5000000000):");
	CHECK_CONTAINS(b.data, "_dim(D, \"B\", x.shape[0], \"x.shape[0]\")");
	CHECK_CONTAINS(b.data, "\"lambda\": (_e_mul(D[\"int\"], 2),),");
	CHECK_CONTAINS(b.data, "stream = torch.empty(S[\"stream\"], dtype=torch.float16, device=device)");
	CHECK_CONTAINS(b.data, "load().launch([x, stream, lambda_], [D[\"B\"], D[\"N\"], D[\"int\"]], "
			       "[float(eps)], [int(k)])");
	CHECK_CONTAINS(b.data, "return stream, lambda_");
	CHECK_CONTAINS(b.data, "load_inline(");
	CHECK_CONTAINS(b.data, "-U__CUDA_NO_HALF_OPERATORS__");
	/* the C++ travels as bytes literals: nothing from the kernel file can end the string */
	CHECK_CONTAINS(b.data, "b\"extern \\\"C\\\" __global__ void stage1(");
	CHECK(!strstr(b.data, "\n#error broken"));
	CHECKF(!kf_export_torch_test(t, k, NULL, "k2sum", &tb, &err), "%s", err.msg);
	CHECK_CONTAINS(tb.data, "MODULE = \"k2sum\"");
	CHECK_CONTAINS(tb.data, "def reference(x, lambda_, *,");
	CHECK_CONTAINS(tb.data,
		       "return f(ins[\"x\"], ins[\"lambda\"], B=D[\"B\"], N=D[\"N\"], int_=D[\"int\"])");
	CHECK_CONTAINS(tb.data, "(\"public\", {\"B\": 4, \"N\": 1000, \"int\": 3}),");
	kf_buf_reset(&tb);
	CHECK(kf_export_torch_test(t, k, NULL, "not-a-module", &tb, &err) == KF_ERR_INVALID);
	kf_buf_release(&b);
	kf_buf_release(&tb);
	kf_kfile_free(k);
	kf_task_free(t);
}

/* The grammar's template instantiations, kforge:zero fills and integer expressions as arguments, each
 * passed at its parameter's width and sign. */
static void test_header_grammar(void)
{
	struct kf_task *t = load_task(TASK);
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_kfile *k;
	if (!t)
		return;
	k = bound(
	    t,
	    "// kforge:scratch acc f32 (B)\n"
	    "// kforge:zero acc\n"
	    "// kforge:launch part<256, float> grid=(cdiv(N, 256)) block=(256) args=(x, acc, N*2, "
	    "long(N+B))\n"
	    "// kforge:zero stream byte=0xff\n"
	    "// kforge:launch fin grid=(1) block=(32) args=(acc, stream, lambda, 5, int)\n"
	    "template <int BS, typename T> __global__ void part(const T *x, T *a, unsigned n, size_t m) {}\n"
	    "extern \"C\" __global__ void fin(const float *a, void *y, long long *l, unsigned long long c, "
	    "int i) {}\n");
	CHECK(k != NULL);
	if (k) {
		CHECKF(!kf_export_header(t, k, NULL, &b, &err), "%s", err.msg);
		CHECK_CONTAINS(b.data, "(const void *)&part<256,float>;");
		CHECK_CONTAINS(b.data,
			       "unsigned kf_a2 = kforge_e_u32(kforge_e_mul(N, 2LL, &kf_bad), &kf_bad);");
		CHECK_CONTAINS(
		    b.data, "unsigned long long kf_a3 = kforge_e_u64(kforge_e_add(N, B, &kf_bad), &kf_bad);");
		CHECK_CONTAINS(b.data, "unsigned long long kf_a3 = kforge_e_u64(5LL, &kf_bad);");
		/* in the launcher: the zero of the scratch before launch 1, of the output tensor before
		 * launch 2 */
		const char *fn = strstr(b.data, "extern \"C\" cudaError_t");
		const char *z1 = fn ? strstr(fn, "kforge:zero acc byte=0x00") : NULL,
			   *l1 = fn ? strstr(fn, "launch 1: part") : NULL;
		const char *z2 = fn ? strstr(fn, "kforge:zero stream byte=0xff") : NULL,
			   *l2 = fn ? strstr(fn, "launch 2: fin") : NULL;
		CHECK(z1 && l1 && z2 && l2 && z1 < l1 && l1 < z2 && z2 < l2);
		CHECK_CONTAINS(b.data, "cudaMemsetAsync(kf_p, 0xff, kf_n, stream)");
		CHECK_CONTAINS(b.data, "size_t kf_n = kforge_e_bytes(B, 2, &kf_bad);"); /* stream: f16 [B] */
	}
	kf_buf_release(&b);
	kf_kfile_free(k);
	kf_task_free(t);
}

static void test_strings(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 16);
	char c[64];
	CHECK(!ex_c_string(&b, "a\"b\\c\n?\?=\x01"));
	CHECK_STR(b.data, "a\\\"b\\\\c\\n?\\?=\\001");
	kf_buf_reset(&b);
	CHECK(!ex_py_bytes(&b, "x\"\n\xc3\xa9\\", 6, "  "));
	CHECK_STR(b.data, "(\n  b\"x\\\"\\n\"\n  b\"\\xc3\\xa9\\\\\"\n).decode(\"utf-8\")");
	kf_buf_reset(&b);
	CHECK(!ex_py_str(&b, "a\"\x7f"));
	CHECK_STR(b.data, "\"a\\\"\\x7f\"");
	ex_comment_text("a */ b /* c\nd", c, sizeof(c));
	CHECK_STR(c, "a  b  cd");
	kf_buf_release(&b);
}

KF_TEST_MAIN(TEST(test_expr_c), TEST(test_expr_py_and_errors), TEST(test_names), TEST(test_header),
	     TEST(test_header_checks), TEST(test_header_grammar), TEST(test_torch), TEST(test_strings))
