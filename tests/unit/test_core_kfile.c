/* Unit tests for core/kfile.c: directive parsing (balanced parentheses, free whitespace, comments
 * and strings that only look like directives, prose that mentions the word), kernel-name and template
 * discovery, binding in the documented order (tensor, scratch, param, dim, literal, expression),
 * arguments checked against parameter types, template instantiations, zero directives, plans at a
 * shape, and PATH:LINE in every error. */
#include <stdint.h>
#include <unistd.h>

#include "kfile.h"
#include "testing.h"

/* arrays passed through a function so CHECK_STR's NULL test does not warn */
static const char *str_of(const char *s)
{
	return s;
}

static struct kf_task *task;

static const char *TASK_JSON =
    "{\"format\": \"kforge-task/1\", \"name\": \"t\", \"title\": \"t\", \"category\": \"test\", \"level\": 1,"
    " \"description\": \"d\", \"dims\": [\"B\", \"N\"],"
    " \"shapes\": {\"public\": [{\"B\": 4, \"N\": 1000}]},"
    " \"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]},"
    "              {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f16\", \"shape\": [\"B\"]}],"
    " \"params\": [{\"name\": \"eps\", \"dtype\": \"f32\", \"value\": 0.5},"
    "            {\"name\": \"alpha\", \"dtype\": \"f64\", \"value\": 2.25},"
    "            {\"name\": \"k\", \"dtype\": \"i32\", \"value\": -7},"
    "            {\"name\": \"big\", \"dtype\": \"i64\", \"value\": 5000000000}],"
    " \"reference\": \"r.cu\"}";

static void test_setup(void)
{
	char dir[] = "/tmp/kf-kfile-XXXXXX", path[64];
	struct kf_err err = KF_ERR_INIT;
	FILE *f;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/task.json", dir);
	f = fopen(path, "w");
	fputs(TASK_JSON, f);
	fclose(f);
	CHECKF(kf_task_load(path, KF_TASK_NO_FILES, NULL, &task, &err) == KF_OK, "%s", err.msg);
	unlink(path);
	rmdir(dir);
}

static enum kf_status parse(const char *src, struct kf_kfile **k, struct kf_err *err)
{
	kf_err_clear(err);
	return kf_kfile_parse("k.cu", src, strlen(src), k, err);
}

static void test_parse_good(void)
{
	const char *src =
	    "// a file with two launches and a scratch buffer\n"
	    "//kforge:scratch partial f32 (cdiv(N, 256) * B)\n"
	    "   //   kforge:launch   reduce_a grid=( cdiv(N,256) , B ) block = (256) smem=(256*4)  args=(x, "
	    "partial, B, long(N), 3, -1)\n"
	    "// kforge:launch reduce_b grid=(B) block=(32,2,1) args=(partial,y,eps,alpha,k,big)\n"
	    "const char *s = \"// kforge:nonsense inside a string is not a comment\";\n"
	    "/* extern \"C\" __global__ void commented_out(int x) {} */\n"
	    "extern \"C\" __global__ void __launch_bounds__(256, 2) reduce_a(const float *x, float *p, int "
	    "B,\n"
	    "                                                      long long N, int a, int b) { }\n"
	    "extern \"C\" {\n"
	    "__global__ void reduce_b(const float *p, void *y, float e, double a, int k, long long g) { if "
	    "(k) { } }\n"
	    "__device__ int helper(int v) { return v; }\n"
	    "__global__ void\n   third ( ) { }\n"
	    "}\n"
	    "__global__ void not_extern_c(int x) { }\n";
	struct kf_kfile *k = NULL;
	struct kf_err err;

	CHECKF(parse(src, &k, &err) == KF_OK, "%s", err.msg);
	if (!k)
		return;
	CHECK_EQ_INT(k->n_scratch, 1);
	CHECK_STR(k->scratch[0].name, "partial");
	CHECK_EQ_INT(k->scratch[0].dtype, KF_DTYPE_F32);
	CHECK_STR(k->scratch[0].count, "cdiv(N, 256) * B");
	CHECK_EQ_INT(k->scratch[0].line, 2);
	CHECK_EQ_INT(k->n_launches, 2);
	CHECK_STR(k->launches[0].kernel, "reduce_a");
	CHECK_EQ_INT(k->launches[0].line, 3);
	CHECK_EQ_INT(k->launches[0].grid_rank, 2);
	CHECK_STR(k->launches[0].grid[0], "cdiv(N,256)");
	CHECK_STR(k->launches[0].grid[1], "B");
	CHECK_EQ_INT(k->launches[0].block_rank, 1);
	CHECK_STR(k->launches[0].smem, "256*4");
	CHECK_EQ_INT(k->launches[0].n_args, 6);
	CHECK(k->launches[0].args[3].is_long);
	CHECK_STR(k->launches[0].args[3].name, "N");
	CHECK_EQ_INT(k->launches[0].args[4].kind, KF_ARG_LITERAL);
	CHECK_EQ_INT(k->launches[0].args[5].literal, -1);
	CHECK_EQ_INT(k->launches[1].block_rank, 3);
	CHECK(k->launches[1].smem == NULL);
	/* kernels: launch_bounds before the name, an extern "C" block, a name on its own line; not the
	 * commented-out one nor the non-extern-C one */
	CHECK_EQ_INT(k->n_kernels, 3);
	if (k->n_kernels == 3) {
		CHECK_STR(k->kernels[0], "reduce_a");
		CHECK_STR(k->kernels[1], "reduce_b");
		CHECK_STR(k->kernels[2], "third");
	}
	kf_kfile_free(k);
	kf_kfile_free(NULL);
}

struct bad {
	const char *src;
	const char *want1, *want2;
};

static const struct bad bad_parse[] = {
    {"int a;\n// kforge:launch k grid=(B block=(1) args=(x)\n", "k.cu:2: malformed launch directive", NULL},
    {"// kforge:launch k grid=(B) args=(x)\n", "k.cu:1: malformed launch directive", NULL},
    {"\n\n\n// kforge:lunch k grid=(B) block=(1) args=(x)\n", "k.cu:4: unknown directive 'kforge:lunch'",
     NULL},
    {"/* kforge:launch k grid=(B) block=(1) args=(x) */\n", "k.cu:1:", "own"},
    {"int x; // kforge:launch k grid=(B) block=(1) args=(x)\n", "k.cu:1:", "own"},
    {"// kforge: docs\n", "k.cu:1: unknown directive 'kforge:'", NULL},
    {"/*\n kforge:launch k */ /* kforge:zero y */\n", "k.cu:2:", "own"},
    {"// kforge:launch k grid=(B) block=(1) args=(x) extra\n", "k.cu:1: malformed", NULL},
    {"// kforge:launch k grid=(1,2,3,4) block=(1) args=(x)\n", "k.cu:1: grid=(1,2,3,4): needs 1 to 3", NULL},
    {"// kforge:launch k grid=() block=(1) args=(x)\n", "k.cu:1: grid=()", NULL},
    {"// kforge:launch k grid=(B+) block=(1) args=(x)\n", "k.cu:1: grid[0]: unexpected end", NULL},
    {"// kforge:launch k grid=(1) block=(1) smem=(1,2) args=(x)\n", "k.cu:1: smem=(1,2)", NULL},
    {"// kforge:launch k grid=(1) block=(1) args=(x+)\n", "k.cu:1: args[0]: bad argument 'x+'", NULL},
    {"// kforge:launch k grid=(1) block=(1) args=(long(N)*2)\n", "k.cu:1: args[0]: bad argument",
     "whole argument"},
    {"// kforge:launch k grid=(1) block=(1) args=(long())\n", "k.cu:1: args[0]: long(): empty", NULL},
    {"// kforge:launch k grid=(1) block=(1) args=(99999999999999999999)\n",
     "k.cu:1: args[0]:", "out of range"},
    {"// kforge:launch k<int; x> grid=(1) block=(1) args=(x)\n", "k.cu:1: template arguments <int; x>",
     "';'"},
    {"// kforge:zero y byte=256\n// kforge:launch k grid=(1) block=(1) args=(y)\n",
     "k.cu:1: zero 'y': byte=256", NULL},
    {"// kforge:launch k grid=(1) block=(1) args=(y)\n// kforge:zero y\n",
     "k.cu:2: zero 'y' follows the last launch", NULL},
    {"// kforge:zero\n", "k.cu:1: malformed zero directive", NULL},
    {"// kforge:scratch s f8 (N)\n// kforge:launch k grid=(1) block=(1) args=(s)\n",
     "k.cu:1: scratch 's': unknown dtype 'f8'", NULL},
    {"// kforge:scratch s f32 (N)\n// kforge:scratch s f32 (B)\n// kforge:launch k grid=(1) block=(1) "
     "args=(s)\n",
     "k.cu:2: scratch 's' already declared on line 1", NULL},
    {"// kforge:scratch s f32 N\n", "k.cu:1: malformed scratch directive", NULL},
    {"extern \"C\" __global__ void k() {}\n", "k.cu: no '// kforge:launch' directive", NULL},
};

static void test_parse_bad(void)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad_parse); i++) {
		struct kf_kfile *k = (struct kf_kfile *)1;
		struct kf_err err;
		enum kf_status st = parse(bad_parse[i].src, &k, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(k == NULL, "case %zu: *out set on failure", i);
		CHECKF(strstr(err.msg, bad_parse[i].want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       bad_parse[i].want1);
		if (bad_parse[i].want2)
			CHECKF(strstr(err.msg, bad_parse[i].want2) != NULL, "case %zu: '%s' lacks '%s'", i,
			       err.msg, bad_parse[i].want2);
	}
}

static const struct bad bad_bind[] = {
    {"// kforge:launch nope grid=(B) block=(1) args=(x)\nextern \"C\" __global__ void k(float *x) {}\n",
     "k.cu:1: unknown kernel 'nope'", NULL},
    {"\n// kforge:launch k grid=(B) block=(1) args=(x, q)\nextern \"C\" __global__ void k(float *x) {}\n",
     "k.cu:2: unknown argument 'q'", NULL},
    {"// kforge:launch k grid=(Q) block=(1) args=(x)\nextern \"C\" __global__ void k(float *x) {}\n",
     "k.cu:1: grid[0]: unknown dim 'Q'", NULL},
    {"// kforge:launch k grid=(B) block=(1) smem=(eps) args=(x)\nextern \"C\" __global__ void k(float *x) "
     "{}\n",
     "k.cu:1: smem: unknown dim 'eps'", NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(long(x))\nextern \"C\" __global__ void k(float *x) {}\n",
     "k.cu:1: args[0]: long(x): 'x' is not a dim", NULL},
    {"// kforge:scratch x f32 (N)\n// kforge:launch k grid=(B) block=(1) args=(x)\nextern \"C\" __global__ "
     "void k(float *x) {}\n",
     "k.cu:1: scratch 'x' has the name of a task tensor", NULL},
    {"// kforge:scratch s f32 (M)\n// kforge:launch k grid=(B) block=(1) args=(s)\nextern \"C\" __global__ "
     "void k(float *x) {}\n",
     "k.cu:1: scratch 's': unknown dim 'M'", NULL},
    /* the arguments must fit the kernel's parameter list: count and kind */
    {"// kforge:launch k grid=(B) block=(1) args=(x, y)\nextern \"C\" __global__ void k(float *x) {}\n",
     "k.cu:1: kernel 'k' takes 1 parameter but the directive passes 2 arguments", NULL},
    {"\n// kforge:launch k grid=(B) block=(1) args=(x)\nextern \"C\" __global__ void k(const float *x, int "
     "n) {}\n",
     "k.cu:2: kernel 'k' takes 2 parameters but the directive passes 1 argument", NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(x, long(N))\nextern \"C\" __global__ void k(float *x, int "
     "n) {}\n",
     "k.cu:1: args[1]: 'N' is passed as a long long (8 bytes) but parameter 2 of 'k' is 'int n' (an int (4 "
     "bytes))",
     NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(N, x)\nextern \"C\" __global__ void k(float *x, int n) "
     "{}\n",
     "k.cu:1: args[0]: 'N' is passed as an int (4 bytes) but parameter 1 of 'k' is 'float *x' (a device "
     "pointer)",
     NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(x, eps)\nextern \"C\" __global__ void k(float *x, double "
     "e) {}\n",
     "args[1]: 'eps' is passed as a float but parameter 2 of 'k' is 'double e'", NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(x, 3)\nextern \"C\" __global__ void k(float *x, float s) "
     "{}\n",
     "args[1]: '3' is passed as an integer literal but parameter 2 of 'k' is 'float s' (a float)", NULL},
    {"// kforge:launch k grid=(B) block=(1) args=(x)\nextern \"C\" __global__ void k(void) {}\n",
     "kernel 'k' takes 0 parameters but the directive passes 1 argument", NULL},
    /* a __global__ that is not extern "C" has a mangled name: not launchable by name */
    {"// kforge:launch k grid=(B) block=(1) args=(x)\n__global__ void k(float *x) {}\n", "unknown kernel 'k'",
     NULL},
};

static void test_bind(void)
{
	const char *good =
	    "// kforge:scratch tmp f64 (B*2)\n"
	    "// kforge:launch k grid=(B) block=(1) args=(x, tmp, eps, N, 7, long(B), y)\n"
	    "extern \"C\" __global__ void k(const float *x, double *t, float e, int n, int seven,\n"
	    "                              long long b, __half *y) {}\n";
	struct kf_kfile *k = NULL;
	struct kf_err err;

	if (!task)
		return;
	CHECKF(parse(good, &k, &err) == KF_OK, "%s", err.msg);
	if (k) {
		struct kf_arg *a = k->launches[0].args;
		CHECKF(kf_kfile_bind(k, task, &err) == KF_OK, "%s", err.msg);
		CHECK(a[0].kind == KF_ARG_TENSOR && a[0].index == 0);
		CHECK(a[1].kind == KF_ARG_SCRATCH && a[1].index == 0);
		CHECK(a[2].kind == KF_ARG_PARAM && a[2].index == 0);
		CHECK(a[3].kind == KF_ARG_DIM_INT && a[3].index == 1);
		CHECK(a[4].kind == KF_ARG_LITERAL && a[4].literal == 7);
		CHECK(a[5].kind == KF_ARG_DIM_LONG && a[5].index == 0);
		CHECK(a[6].kind == KF_ARG_TENSOR && a[6].index == 1);
		/* binding twice is harmless */
		CHECKF(kf_kfile_bind(k, task, &err) == KF_OK, "%s", err.msg);
		kf_kfile_free(k);
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad_bind); i++) {
		enum kf_status st;
		k = NULL;
		st = parse(bad_bind[i].src, &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(strstr(err.msg, bad_bind[i].want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       bad_bind[i].want1);
		kf_kfile_free(k);
	}
}

/* Parameter lists the checker cannot judge are left to the compiler and the launch, never rejected. */
static void test_signature_lenient(void)
{
	static const char *const ok[] = {
	    /* a macro may stand for several parameters */
	    "#define ARGS const float *x, float *y\n// kforge:launch k grid=(B) block=(1) args=(x, y)\n"
	    "extern \"C\" __global__ void k(ARGS) {}\n",
	    /* typedefs and half types are not judged; restrict/const qualifiers are understood */
	    "typedef int myint;\n// kforge:launch k grid=(B) block=(1) args=(x, N, long(B), eps, big, k)\n"
	    "extern \"C\" __global__ void k(const float *__restrict__ x, myint n, const long long b, float "
	    "e,\n"
	    "                               int64_t g, unsigned q) {}\n",
	    /* a prototype without names, then the definition */
	    "// kforge:launch k grid=(B) block=(1) args=(x, N)\nextern \"C\" __global__ void k(float *, "
	    "int);\n"
	    "extern \"C\" __global__ void k(float *x, int n) {}\n",
	    /* an #if inside the parameter list makes it unreadable */
	    "// kforge:launch k grid=(B) block=(1) args=(x)\nextern \"C\" __global__ void k(float *x\n#if "
	    "0\n, int n\n#endif\n) {}\n",
	    /* no parameters, no arguments */
	    "// kforge:launch k grid=(B) block=(1) args=()\nextern \"C\" __global__ void k() {}\n",
	};
	if (!task)
		return;
	for (size_t i = 0; i < KF_ARRAY_SIZE(ok); i++) {
		struct kf_kfile *k = NULL;
		struct kf_err err;
		enum kf_status st = parse(ok[i], &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_OK, "case %zu: %s", i, err.msg);
		kf_kfile_free(k);
	}
}

static enum kf_status plan_of(const char *src, const struct kf_shape *s, struct kf_plan **p,
			      struct kf_err *err)
{
	struct kf_kfile *k = NULL;
	enum kf_status st = parse(src, &k, err);
	*p = NULL;
	if (!st)
		st = kf_kfile_bind(k, task, err);
	if (!st)
		st = kf_plan_make(k, task, s, p, err);
	kf_kfile_free(k);
	return st;
}

static void test_plan(void)
{
	const char *src =
	    "// kforge:scratch tmp f64 (cdiv(N, 256) * B)\n"
	    "// kforge:launch k1 grid=(cdiv(N,256), B) block=(256) smem=(256*4) args=(x, tmp, N, long(B), "
	    "7)\n"
	    "// kforge:launch k2 grid=(B) block=(8, 4, 2) args=(tmp, y, eps, alpha, k, big)\n"
	    "extern \"C\" {\n"
	    "__global__ void k1(const float *x, double *t, int n, long long b, int seven) {}\n"
	    "__global__ void k2(const double *t, __half *y, float e, double a, int k, long long g) {}\n"
	    "}\n";
	struct kf_shape s = {0};
	struct kf_plan *p = NULL;
	struct kf_err err;
	float f;
	double d;
	int32_t i32;
	int64_t i64;

	if (!task)
		return;
	kf_shape_set(&s, "B", 4);
	kf_shape_set(&s, "N", 1000);
	CHECKF(plan_of(src, &s, &p, &err) == KF_OK, "%s", err.msg);
	if (!p)
		return;
	CHECK_EQ_INT(p->n_buffers, 3);
	CHECK_STR(str_of(p->buffers[0].name), "x");
	CHECK_EQ_INT(p->buffers[0].numel, 4000);
	CHECK_EQ_INT(p->buffers[0].n_bytes, 16000);
	CHECK_EQ_INT(p->buffers[1].numel, 4);
	CHECK_EQ_INT(p->buffers[1].n_bytes, 8); /* f16 */
	CHECK(p->buffers[2].is_scratch && p->buffers[2].role == KF_ROLE_OUTPUT);
	CHECK_EQ_INT(p->buffers[2].numel, 16);
	CHECK_EQ_INT(p->buffers[2].n_bytes, 128);
	CHECK_EQ_INT(p->n_launches, 2);
	CHECK_STR(str_of(p->launches[0].kernel), "k1");
	CHECK_EQ_INT(p->launches[0].grid[0], 4);
	CHECK_EQ_INT(p->launches[0].grid[1], 4);
	CHECK_EQ_INT(p->launches[0].grid[2], 1);
	CHECK_EQ_INT(p->launches[0].block[0], 256);
	CHECK_EQ_INT(p->launches[0].block[1], 1);
	CHECK_EQ_INT(p->launches[0].smem_bytes, 1024);
	CHECK_EQ_INT(p->launches[0].line, 2);
	CHECK_EQ_INT(p->launches[0].n_args, 5);
	CHECK(p->launches[0].args[0].kind == KF_PARG_BUFFER && p->launches[0].args[0].buffer == 0);
	CHECK(p->launches[0].args[1].kind == KF_PARG_BUFFER && p->launches[0].args[1].buffer == 2);
	memcpy(&i32, p->launches[0].args[2].bytes, 4);
	CHECK(p->launches[0].args[2].size == 4 && i32 == 1000);
	memcpy(&i64, p->launches[0].args[3].bytes, 8);
	CHECK(p->launches[0].args[3].size == 8 && i64 == 4);
	memcpy(&i32, p->launches[0].args[4].bytes, 4);
	CHECK(p->launches[0].args[4].size == 4 && i32 == 7);
	CHECK_EQ_INT(p->launches[1].block[2], 2);
	memcpy(&f, p->launches[1].args[2].bytes, 4);
	CHECK(p->launches[1].args[2].size == 4 && f == 0.5f);
	memcpy(&d, p->launches[1].args[3].bytes, 8);
	CHECK(p->launches[1].args[3].size == 8 && d == 2.25);
	memcpy(&i32, p->launches[1].args[4].bytes, 4);
	CHECK(p->launches[1].args[4].size == 4 && i32 == -7);
	memcpy(&i64, p->launches[1].args[5].bytes, 8);
	CHECK(p->launches[1].args[5].size == 8 && i64 == 5000000000LL);
	CHECK_EQ_INT(p->shape.n, 2);
	kf_plan_free(p);
	kf_plan_free(NULL);
}

static void test_plan_limits(void)
{
	static const struct {
		const char *directive;
		const char *want;
		const char *params; /* the kernel's parameter list; NULL: "float *x" */
	} cases[] = {
	    {"// kforge:launch k grid=(B) block=(1025) args=(x)", "k.cu:1: block[0]", NULL},
	    {"// kforge:launch k grid=(B) block=(1, 1, 65) args=(x)", "k.cu:1: block[2]", NULL},
	    {"// kforge:launch k grid=(B) block=(64, 32) args=(x)", "k.cu:1: block has 2048 threads", NULL},
	    {"// kforge:launch k grid=(1, 65536) block=(1) args=(x)", "k.cu:1: grid[1]", NULL},
	    {"// kforge:launch k grid=(2147483648) block=(1) args=(x)", "k.cu:1: grid[0]", NULL},
	    {"// kforge:launch k grid=(B-4) block=(1) args=(x)", "k.cu:1: grid[0] = 'B-4' = 0", NULL},
	    {"// kforge:launch k grid=(N/(B-4)) block=(1) args=(x)", "k.cu:1: grid[0]: division by zero",
	     NULL},
	    {"// kforge:launch k grid=(1) block=(1) smem=(0-1) args=(x)", "k.cu:1: smem", NULL},
	    {"// kforge:scratch s f32 (B-4)\n// kforge:launch k grid=(1) block=(1) args=(s)",
	     "k.cu:1: scratch 's' has 0", NULL},
	    {"\n// kforge:launch k grid=(1) block=(1) args=(N)",
	     "k.cu:2: args[0]: dim N = 3000000000 does not fit", "int n"},
	    /* an expression is checked against its parameter's range at every shape */
	    {"\n\n// kforge:launch k grid=(1) block=(1) args=(N*B)",
	     "k.cu:3: args[0]: 'N*B' = 12000000000 does "
	     "not fit in an int; pass long(...)",
	     "int n"},
	    {"// kforge:launch k grid=(1) block=(1) args=(B-N)",
	     "k.cu:1: args[0]: 'B-N' = -2999999996 does not "
	     "fit in an int",
	     "int n"},
	    {"// kforge:launch k grid=(1) block=(1) args=(B-5)",
	     "k.cu:1: args[0]: 'B-5' = -1 does not fit in an "
	     "unsigned int",
	     "unsigned n"},
	    {"// kforge:launch k grid=(1) block=(1) args=(long(B-5))",
	     "k.cu:1: args[0]: 'B-5' = -1 does not fit "
	     "in an unsigned 64-bit parameter",
	     "size_t n"},
	    {"// kforge:launch k grid=(1) block=(1) args=(N/(B-4))", "k.cu:1: args[0]: division by zero",
	     "int n"},
	    /* with an unreadable parameter list an expression is an int */
	    {"// kforge:launch k grid=(1) block=(1) args=(N+B)",
	     "k.cu:1: args[0]: 'N+B' = 3000000004 does not "
	     "fit in an int",
	     "MYARGS"},
	};
	struct kf_shape s = {0};
	kf_shape_set(&s, "B", 4);
	kf_shape_set(&s, "N", 3000000000LL);
	if (!task)
		return;
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		char src[512];
		struct kf_plan *p = (struct kf_plan *)1;
		struct kf_err err;
		enum kf_status st;
		snprintf(src, sizeof(src),
			 "%s\n#define MYARGS int n\nextern \"C\" __global__ void k(%s) {}\n",
			 cases[i].directive, cases[i].params ? cases[i].params : "float *x");
		st = plan_of(src, &s, &p, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(p == NULL, "case %zu: plan set on failure", i);
		CHECKF(strstr(err.msg, cases[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       cases[i].want);
	}
	/* long(N) carries the same value fine */
	{
		struct kf_plan *p = NULL;
		struct kf_err err;
		int64_t v;
		CHECKF(plan_of("// kforge:launch k grid=(1) block=(1) args=(long(N))\nextern \"C\" "
			       "__global__ void k(long long n){}\n",
			       &s, &p, &err) == KF_OK,
		       "%s", err.msg);
		if (p) {
			memcpy(&v, p->launches[0].args[0].bytes, 8);
			CHECK(v == 3000000000LL);
			kf_plan_free(p);
		}
	}
}

/* Only a line comment whose text begins with "kforge:" is a directive; prose that mentions the word,
 * and directives commented out inside a block comment, are nothing. */
static void test_prose_comments(void)
{
	const char *src = "// A two-pass reduction. Exercises kforge:scratch and kforge:launch.\n"
			  "/* see kforge:zero in the spec */\n"
			  "/*\n"
			  "// kforge:launch old grid=(B) block=(1) args=(x)\n"
			  "*/\n"
			  "//kforge:launch k grid=(B) block=(1) args=(x) // a trailing note\n"
			  "extern \"C\" __global__ void k(const float *x) { /* kforge: none */ }\n";
	const char *src2 = "// kforge:launch k grid=(B) block=(1) args=(x)\n"
			   "extern \"C\" __global__ void k(const float *x) {}\n";
	struct kf_kfile *k = NULL;
	struct kf_err err;
	/* a trailing '//' inside a directive's own text is part of the args group: malformed */
	CHECK_EQ_INT(parse(src, &k, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "k.cu:6: malformed launch directive");
	kf_kfile_free(k);
	{
		char buf[1024];
		snprintf(buf, sizeof(buf), "%.*s%s", (int)(strstr(src, "//kforge:launch") - src), src, src2);
		CHECKF(parse(buf, &k, &err) == KF_OK, "%s", err.msg);
		if (k) {
			CHECK_EQ_INT(k->n_launches, 1);
			CHECK_STR(k->launches[0].kernel, "k");
			CHECK_EQ_INT(k->launches[0].line, 6);
			kf_kfile_free(k);
		}
	}
}

/* Integer expressions as arguments, long(E) and 64-bit literals, each passed at its parameter's type. */
static void test_expr_args(void)
{
	const char *src =
	    "// kforge:launch k grid=(cdiv(N, 256)) block=(256) args=(x, N*B, cdiv(N, 32), long(N*B), "
	    "4294967296, 7, N - 1, long(3000000000), 5, B)\n"
	    "extern \"C\" __global__ void k(const float *x, int nb, unsigned c, size_t total, unsigned long "
	    "long "
	    "big,\n"
	    "                              size_t seven, int last, long long l, short s, uint32_t b) {}\n";
	struct kf_shape s = {0};
	struct kf_plan *p = NULL;
	struct kf_err err;
	int32_t i32;
	uint32_t u32;
	int64_t i64;

	if (!task)
		return;
	kf_shape_set(&s, "B", 4);
	kf_shape_set(&s, "N", 1000);
	CHECKF(plan_of(src, &s, &p, &err) == KF_OK, "%s", err.msg);
	if (!p)
		return;
	CHECK_EQ_INT(p->launches[0].n_args, 10);
	memcpy(&i32, p->launches[0].args[1].bytes, 4);
	CHECK(p->launches[0].args[1].size == 4 && i32 == 4000);
	memcpy(&u32, p->launches[0].args[2].bytes, 4);
	CHECK(p->launches[0].args[2].size == 4 && u32 == 32);
	memcpy(&i64, p->launches[0].args[3].bytes, 8);
	CHECK(p->launches[0].args[3].size == 8 && i64 == 4000);
	memcpy(&i64, p->launches[0].args[4].bytes, 8);
	CHECK(p->launches[0].args[4].size == 8 && i64 == 4294967296LL);
	/* a literal takes the width of its parameter: 8 bytes for size_t */
	memcpy(&i64, p->launches[0].args[5].bytes, 8);
	CHECK(p->launches[0].args[5].size == 8 && i64 == 7);
	memcpy(&i32, p->launches[0].args[6].bytes, 4);
	CHECK(p->launches[0].args[6].size == 4 && i32 == 999);
	memcpy(&i64, p->launches[0].args[7].bytes, 8);
	CHECK(p->launches[0].args[7].size == 8 && i64 == 3000000000LL);
	/* a parameter type the checker does not know (short): an int, as before */
	memcpy(&i32, p->launches[0].args[8].bytes, 4);
	CHECK(p->launches[0].args[8].size == 4 && i32 == 5);
	memcpy(&u32, p->launches[0].args[9].bytes, 4);
	CHECK(p->launches[0].args[9].size == 4 && u32 == 4);
	kf_plan_free(p);

	static const struct bad bad[] = {
	    {"// kforge:launch k grid=(1) block=(1) args=(x+1)\nextern \"C\" __global__ void k(int n) {}\n",
	     "k.cu:1: args[0]: 'x+1': 'x' is a tensor; an expression argument is over dims", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(eps*2)\nextern \"C\" __global__ void k(int n) {}\n",
	     "'eps' is a param", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(Q*2)\nextern \"C\" __global__ void k(int n) {}\n",
	     "k.cu:1: args[0]: unknown dim 'Q'", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(N*B)\nextern \"C\" __global__ void k(size_t n) "
	     "{}\n",
	     "args[0]: 'N*B' is passed as an int (4 bytes) but parameter 1 of 'k' is 'size_t n' (an unsigned "
	     "64-bit integer (8 bytes)); pass long(...)",
	     NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(long(N))\nextern \"C\" __global__ void k(unsigned "
	     "n) "
	     "{}\n",
	     "'N' is passed as a long long (8 bytes) but parameter 1 of 'k' is 'unsigned n'", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(3000000000)\nextern \"C\" __global__ void k(int n) "
	     "{}\n",
	     "k.cu:1: args[0]: literal 3000000000 does not fit in an int (4 bytes)", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(3000000000)\n#define A int n\nextern \"C\" "
	     "__global__ "
	     "void k(A) {}\n",
	     "literal 3000000000 does not fit in an int (pass long(...) for a 64-bit parameter)", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(-1)\nextern \"C\" __global__ void k(size_t n) {}\n",
	     "args[0]: literal -1 is negative but its parameter is an unsigned 64-bit", NULL},
	    {"// kforge:launch k grid=(1) block=(1) args=(N*2)\nextern \"C\" __global__ void k(float *x) "
	     "{}\n",
	     "'N*2' is passed as an int (4 bytes) but parameter 1 of 'k' is 'float *x'", NULL},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad); i++) {
		struct kf_kfile *k = NULL;
		enum kf_status st = parse(bad[i].src, &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(strstr(err.msg, bad[i].want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       bad[i].want1);
		kf_kfile_free(k);
	}
}

/* Template entry points: found with their template parameter lists, launched as instantiations
 * (several in one plan), the instantiation's parameter list checked with its type arguments. */
static void test_templates(void)
{
	const char *src =
	    "template <const int BM, const int BN, typename T = float>\n"
	    "__global__ void __launch_bounds__(BM * BN) sgemm(const T *__restrict__ x, T *y, int n, T s);\n"
	    "// kforge:launch sgemm< 64 , 8, float > grid=(cdiv(N, 64)) block=(64, 8) args=(x, x, N, eps)\n"
	    "// kforge:launch sgemm<128,8,float> grid=(cdiv(N, 128)) block=(128, 8) args=(x, x, N, eps)\n"
	    "// kforge:launch sgemm<32, 8> grid=(cdiv(N, 32)) block=(32, 8) args=(x, x, N, eps)\n"
	    "// kforge:launch sgemm<64,8,float> grid=(B) block=(64) args=(x, x, B, eps)\n"
	    "template <int BLOCK, bool NPOW2> __global__ void reduce(const float *x, float *y, unsigned n)\n"
	    "{ if (BLOCK < (1 << 4)) {} }\n"
	    "// kforge:launch reduce<256, true> grid=(B) block=(256) args=(x, y, N)\n"
	    "template <typename T> __device__ T helper(T v) { return v; }\n"
	    "template <> __global__ void sgemm<1, 1, float>(const float *x, float *y, int n, float s) {}\n"
	    "template <const int BM, const int BN, typename T>\n"
	    "__global__ void sgemm(const T *__restrict__ x, T *y, int n, T s) {}\n";
	struct kf_kfile *k = NULL;
	struct kf_err err;
	const char *names[8];

	CHECKF(parse(src, &k, &err) == KF_OK, "%s", err.msg);
	if (!k)
		return;
	CHECK_EQ_INT(k->n_kernels, 0);
	CHECK_EQ_INT(k->n_templates, 2);
	if (k->n_templates == 2) {
		CHECK_STR(k->templates[0], "sgemm");
		CHECK_STR(k->template_tparams[0], "const int BM, const int BN, typename T = float");
		CHECK_STR(k->template_params[0], "const T *__restrict__ x, T *y, int n, T s");
		CHECK_STR(k->templates[1], "reduce");
	}
	CHECK_STR(k->launches[0].kernel, "sgemm<64,8,float>");
	CHECK_STR(k->launches[0].base, "sgemm");
	CHECK_STR(k->launches[0].targs, "64,8,float");
	CHECK_EQ_INT(kf_kfile_name_exprs(k, names, 8), 4);
	CHECK_STR(names[0], "sgemm<64,8,float>");
	CHECK_STR(names[1], "sgemm<128,8,float>");
	CHECK_STR(names[2], "sgemm<32,8>");
	CHECK_STR(names[3], "reduce<256,true>");
	if (task) {
		struct kf_shape s = {0};
		struct kf_plan *p = NULL;
		float f;
		CHECKF(kf_kfile_bind(k, task, &err) == KF_OK, "%s", err.msg);
		kf_shape_set(&s, "B", 4);
		kf_shape_set(&s, "N", 1000);
		CHECKF(kf_plan_make(k, task, &s, &p, &err) == KF_OK, "%s", err.msg);
		if (p) {
			CHECK_EQ_INT(p->n_launches, 5);
			CHECK_STR(str_of(p->launches[1].kernel), "sgemm<128,8,float>");
			CHECK_EQ_INT(p->launches[1].grid[0], 8);
			memcpy(&f, p->launches[0].args[3].bytes, 4);
			CHECK(p->launches[0].args[3].size == 4 && f == 0.5f);
			kf_plan_free(p);
		}
	}
	kf_kfile_free(k);

	static const struct bad bad[] = {
	    /* the type argument is substituted: T = double wants a double, eps is a float */
	    {"template <typename T> __global__ void k(T *x, T s) {}\n"
	     "// kforge:launch k<double> grid=(1) block=(1) args=(x, eps)\n",
	     "k.cu:2: args[1]: 'eps' is passed as a float but parameter 2 of 'k<double>' is 'double s'",
	     NULL},
	    {"template <int A, int B> __global__ void k(float *x) {}\n"
	     "// kforge:launch k<1, 2, 3> grid=(1) block=(1) args=(x)\n",
	     "k.cu:2: 'k<1,2,3>' is given 3 template arguments but template 'k' takes 2 (<int A, int B>)",
	     NULL},
	    {"template <int A, int B = 4> __global__ void k(float *x) {}\n"
	     "// kforge:launch k<> grid=(1) block=(1) args=(x)\n",
	     "'k<>' is given 0 template arguments but template 'k' takes at most 1", NULL},
	    {"template <int A> __global__ void k(float *x) {}\n"
	     "// kforge:launch k<N> grid=(1) block=(1) args=(x)\n",
	     "k.cu:2: template arguments of 'k': 'N' is a dim of the task", NULL},
	    {"template <int A> __global__ void k(float *x) {}\n"
	     "// kforge:launch k grid=(1) block=(1) args=(x)\n",
	     "k.cu:2: 'k' is a __global__ template: launch an instantiation of it ('k<...>')", NULL},
	    {"extern \"C\" __global__ void k(float *x) {}\n"
	     "// kforge:launch k<1> grid=(1) block=(1) args=(x)\n",
	     "'k' is an extern \"C\" kernel, not a template", NULL},
	    {"template <int A> __device__ void k(float *x) {}\n"
	     "// kforge:launch k<1> grid=(1) block=(1) args=(x)\n",
	     "unknown kernel template 'k'", NULL},
	    {"template <int A> __global__ void k(float *x, int n) {}\n"
	     "// kforge:launch k<1> grid=(1) block=(1) args=(x)\n",
	     "kernel 'k<1>' takes 2 parameters but the directive passes 1 argument", NULL},
	};
	for (size_t i = 0; task && i < KF_ARRAY_SIZE(bad); i++) {
		enum kf_status st;
		k = NULL;
		st = parse(bad[i].src, &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(strstr(err.msg, bad[i].want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       bad[i].want1);
		kf_kfile_free(k);
	}
	/* what cannot be read is not judged: overloads, packs, defaulted type parameters */
	static const char *const lenient[] = {
	    "template <int A> __global__ void k(float *x) {}\ntemplate <int A, int B> __global__ void "
	    "k(float *x, "
	    "int n) {}\n// kforge:launch k<1, 2> grid=(1) block=(1) args=(x, N)\n",
	    "template <typename... Ts> __global__ void k(Ts... v) {}\n// kforge:launch k<float, int> "
	    "grid=(1) "
	    "block=(1) args=(eps, N)\n",
	    "template <int A, typename T = double> __global__ void k(T v) {}\n// kforge:launch k<1> grid=(1) "
	    "block=(1) args=(eps)\n",
	    /* void is a template argument like any type */
	    "template <typename T> __global__ void k(T *v) {}\n// kforge:launch k<void> grid=(1) block=(1) "
	    "args=(x)\n",
	};
	for (size_t i = 0; task && i < KF_ARRAY_SIZE(lenient); i++) {
		enum kf_status st;
		k = NULL;
		st = parse(lenient[i], &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_OK, "lenient case %zu: %s", i, err.msg);
		kf_kfile_free(k);
	}
}

/* `// kforge:zero NAME [byte=V]`: before the plan, or before the next launch; never an input. */
static void test_zero(void)
{
	const char *src = "// kforge:scratch acc f32 (B)\n"
			  "// kforge:zero y\n"
			  "// kforge:zero acc byte=0xff\n"
			  "// kforge:launch k1 grid=(B) block=(1) args=(x, acc)\n"
			  "//   kforge:zero   acc   byte = 7\n"
			  "// kforge:launch k2 grid=(B) block=(1) args=(acc, y)\n"
			  "extern \"C\" __global__ void k1(const float *x, float *a) {}\n"
			  "extern \"C\" __global__ void k2(const float *a, __half *y) {}\n";
	struct kf_shape s = {0};
	struct kf_plan *p = NULL;
	struct kf_err err;

	if (!task)
		return;
	kf_shape_set(&s, "B", 4);
	kf_shape_set(&s, "N", 1000);
	CHECKF(plan_of(src, &s, &p, &err) == KF_OK, "%s", err.msg);
	if (p) {
		CHECK_EQ_INT(p->n_zeros, 3);
		if (p->n_zeros == 3) {
			CHECK(p->zeros[0].buffer == 1 && p->zeros[0].before == 0 && p->zeros[0].byte == 0);
			CHECK_EQ_INT(p->zeros[0].line, 2);
			CHECK(p->zeros[1].buffer == 2 && p->zeros[1].before == 0 && p->zeros[1].byte == 0xff);
			CHECK(p->zeros[2].buffer == 2 && p->zeros[2].before == 1 && p->zeros[2].byte == 7);
		}
		kf_plan_free(p);
	}
	static const struct bad bad[] = {
	    {"// kforge:zero x\n// kforge:launch k grid=(1) block=(1) args=(x)\nextern \"C\" __global__ void "
	     "k(float *x) {}\n",
	     "k.cu:1: zero 'x': 'x' is an input tensor", NULL},
	    {"// kforge:zero q\n// kforge:launch k grid=(1) block=(1) args=(x)\nextern \"C\" __global__ void "
	     "k(float *x) {}\n",
	     "k.cu:1: zero 'q': no output, inout or scratch buffer", NULL},
	    {"// kforge:zero y\n// kforge:zero y byte=1\n// kforge:launch k grid=(1) block=(1) "
	     "args=(y)\nextern "
	     "\"C\" __global__ void k(float *x) {}\n",
	     "k.cu:2: zero 'y' already given on line 1", NULL},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad); i++) {
		struct kf_kfile *k = NULL;
		enum kf_status st = parse(bad[i].src, &k, &err);
		if (!st)
			st = kf_kfile_bind(k, task, &err);
		CHECKF(st == KF_ERR_INVALID, "case %zu: status %s (%s)", i, kf_status_name(st), err.msg);
		CHECKF(strstr(err.msg, bad[i].want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
		       bad[i].want1);
		kf_kfile_free(k);
	}
}

/* Windows line endings and a UTF-8 byte-order mark are not errors. */
static void test_crlf_bom(void)
{
	const char *src = "\xEF\xBB\xBF// kforge:launch k grid=(cdiv(N, 256)) block=(256) args=(x, N)\r\n"
			  "extern \"C\" __global__ void k(const float *x, int n)\r\n{\r\n}\r\n";
	struct kf_kfile *k = NULL;
	struct kf_err err;
	CHECKF(parse(src, &k, &err) == KF_OK, "%s", err.msg);
	if (k) {
		CHECK_STR(k->launches[0].args[1].name, "N");
		CHECK_EQ_INT(k->n_kernels, 1);
		if (task)
			CHECKF(kf_kfile_bind(k, task, &err) == KF_OK, "%s", err.msg);
		kf_kfile_free(k);
	}
}

static void test_load(void)
{
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(kf_kfile_load("/nonexistent/k.cu", &k, &err), KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "/nonexistent/k.cu");
	CHECK_EQ_INT(kf_kfile_parse("k.cu", "a\0b", 3, &k, &err), KF_ERR_INVALID);
}

/* Mutated directive files (fixed seed): each parses or fails with KF_ERR_INVALID naming k.cu, and
 * nothing trips the sanitizers. */
static void test_random_mutations(void)
{
	static const char base[] =
	    "// kforge:scratch s f32 (cdiv(N,256))\n"
	    "// kforge:zero s byte=3\n"
	    "// kforge:launch k grid=(cdiv(N, 256), B) block=(256) smem=(4*256) args=(x, s, long(N), 3)\n"
	    "// kforge:launch t<4, float> grid=(B) block=(64) args=(x, N*B, long(N-1))\n"
	    "extern \"C\" { __global__ void __launch_bounds__(256) k(float *x, float *s, long long n, int "
	    "c)\n"
	    "{ /* } */ } }\n"
	    "template <int V, typename T> __global__ void t(T *x, int n, size_t m) {}\n";
	static const char noise[] = "()/,*\"{}=: \n<>kforge:launch";
	uint64_t r = 12345;
	int planned = 0;
	for (int it = 0; it < 3000; it++) {
		char src[sizeof(base)];
		struct kf_kfile *k = NULL;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st;
		memcpy(src, base, sizeof(base));
		for (int m = 0; m < 3; m++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			src[r % (sizeof(base) - 1)] = noise[(r >> 20) % (sizeof(noise) - 1)];
		}
		st = kf_kfile_parse("k.cu", src, strlen(src), &k, &err);
		if (!st && task) {
			struct kf_shape sh = {0};
			struct kf_plan *p = NULL;
			kf_shape_set(&sh, "B", 4);
			kf_shape_set(&sh, "N", 1000);
			if (!kf_kfile_bind(k, task, &err) && !kf_plan_make(k, task, &sh, &p, &err)) {
				CHECK(p && p->n_launches == k->n_launches);
				planned++;
			}
			kf_plan_free(p);
		} else {
			CHECKF(st == KF_ERR_INVALID && strstr(err.msg, "k.cu"), "%s: %s", kf_status_name(st),
			       err.msg);
		}
		kf_kfile_free(k);
	}
	CHECKF(planned > 30, "only %d of 3000 mutants planned: the test no longer reaches kf_plan_make",
	       planned);
}

static void test_teardown(void)
{
	kf_task_free(task);
}

KF_TEST_MAIN(TEST(test_setup), TEST(test_parse_good), TEST(test_parse_bad), TEST(test_bind),
	     TEST(test_signature_lenient), TEST(test_plan), TEST(test_plan_limits), TEST(test_prose_comments),
	     TEST(test_expr_args), TEST(test_templates), TEST(test_zero), TEST(test_crlf_bom),
	     TEST(test_load), TEST(test_random_mutations), TEST(test_teardown))
