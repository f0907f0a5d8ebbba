/* Unit tests for core/task.c and core/json.c: good files load with every field and default resolved;
 * each broken variant of a base task fails with the file name and the field path in the message.
 * Variants are the base text with one substring replaced, written to a temporary folder. */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "task.h"
#include "testing.h"

/* arrays passed through a function so CHECK_STR's NULL test does not warn */
static const char *str_of(const char *s)
{
	return s;
}

static const char *BASE =
    "{\n"
    "  \"format\": \"kforge-task/1\",\n"
    "  \"name\": \"softmax_rows_f32\",\n"
    "  \"title\": \"Row-wise softmax\",\n"
    "  \"category\": \"softmax\",\n"
    "  \"level\": 1,\n"
    "  \"description\": \"softmax over rows\",\n"
    "  \"dims\": [\"B\", \"N\"],\n"
    "  \"shapes\": {\n"
    "    \"public\": [{\"B\": 64, \"N\": 1000}, {\"B\": 16, \"N\": 4096}],\n"
    "    \"hidden\": [{\"B\": 3, \"N\": 4099}]\n"
    "  },\n"
    "  \"tensors\": [\n"
    "    {\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"],\n"
    "     \"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}},\n"
    "    {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}\n"
    "  ],\n"
    "  \"params\": [{\"name\": \"eps\", \"dtype\": \"f32\", \"value\": 1e-5}],\n"
    "  \"reference\": \"reference.cu\",\n"
    "  \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5},\n"
    "  \"flops\": \"5*B*N\",\n"
    "  \"bytes\": \"8*B*N\"\n"
    "}\n";

static const char *REF =
    "// kforge:launch softmax_rows grid=(B) block=(256) smem=(256*4) args=(x, y, B, N)\n"
    "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n";

static char tmpdir[256];

static void write_file(const char *name, const char *text)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* base with the first occurrence of from replaced by to (from must occur) */
static char *variant(const char *base, const char *from, const char *to)
{
	const char *at = strstr(base, from);
	size_t n;
	char *s;
	if (!at) {
		fprintf(stderr, "fixture error: '%s' not in base\n", from);
		exit(2);
	}
	n = strlen(base) - strlen(from) + strlen(to) + 1;
	s = malloc(n);
	snprintf(s, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
	return s;
}

static char task_path[512];

static enum kf_status load_text(const char *json, const char *ref, unsigned flags, struct kf_task **t,
				struct kf_buf *warn, struct kf_err *err)
{
	write_file("task.json", json);
	write_file("reference.cu", ref ? ref : REF);
	snprintf(task_path, sizeof(task_path), "%s/task.json", tmpdir);
	kf_err_clear(err);
	return kf_task_load(task_path, flags, warn, t, err);
}

static void test_good(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf warn = KF_BUF_INIT(4096);
	double v;
	int64_t n;
	struct kf_tol tol;

	CHECKF(load_text(BASE, NULL, KF_TASK_STRICT, &t, &warn, &err) == KF_OK, "%s", err.msg);
	if (!t)
		return;
	CHECK_STR(t->name, "softmax_rows_f32");
	CHECK_STR(t->category, "softmax");
	CHECK_EQ_INT(t->level, 1);
	CHECK_EQ_INT(t->n_dims, 2);
	CHECK_EQ_INT(t->n_public, 2);
	CHECK_EQ_INT(t->n_hidden, 1);
	/* timing defaults to the largest public shape by product: 16*4096 > 64*1000 */
	CHECK_EQ_INT(t->n_timing, 1);
	CHECK(kf_shape_get(&t->shapes_timing[0], "N", &n) && n == 4096);
	CHECK_EQ_INT(t->n_tensors, 2);
	CHECK_EQ_INT(t->tensors[0].init.dist, KF_DIST_NORMAL);
	CHECK_EQ_INT(t->tensors[1].role, KF_ROLE_OUTPUT);
	CHECK_EQ_INT(t->tensors[1].init.dist, KF_DIST_DEFAULT);
	CHECK_EQ_INT(t->n_params, 1);
	CHECK_NEAR(t->params[0].value, 1e-5, 1e-12);
	CHECK_EQ_INT(strlen(t->hash), 64);
	CHECK_CONTAINS(t->reference, "reference.cu");
	CHECK(t->baseline == NULL);
	CHECK(kf_task_flops(t, &t->shapes_public[0], &v) && v == 5.0 * 64 * 1000);
	CHECK(kf_task_bytes(t, &t->shapes_public[0], &v) && v == 8.0 * 64 * 1000);
	CHECK(kf_task_numel(t, 1, &t->shapes_hidden[0], &n, NULL) == KF_OK && n == 3 * 4099);
	tol = kf_task_tolerance(t, KF_DTYPE_F32);
	CHECK_NEAR(tol.atol, 1e-5, 1e-15);
	CHECK_EQ_INT(kf_task_tensor_index(t, "y"), 1);
	CHECK_EQ_INT(kf_task_param_index(t, "eps"), 0);
	CHECK_EQ_INT(kf_task_dim_index(t, "N"), 1);
	CHECK_EQ_INT(kf_task_dim_index(t, "Q"), -1);
	CHECK_EQ_INT(warn.len, 0);
	kf_task_free(t);
	kf_task_free(NULL);
	kf_buf_release(&warn);
}

static void test_defaults_and_variants(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf warn = KF_BUF_INIT(4096);
	char *j;
	struct kf_tol tol;

	/* per-dtype tolerance: f32 overridden, f16 keeps the project default */
	j = variant(BASE, "{\"atol\": 1e-5, \"rtol\": 1e-5}", "{\"f32\": {\"atol\": 2e-5}}");
	CHECKF(load_text(j, NULL, KF_TASK_STRICT, &t, NULL, &err) == KF_OK, "%s", err.msg);
	free(j);
	if (t) {
		tol = kf_task_tolerance(t, KF_DTYPE_F32);
		CHECK_NEAR(tol.atol, 2e-5, 1e-15);
		CHECK_NEAR(tol.rtol, kf_tol_default(KF_DTYPE_F32).rtol, 1e-15);
		tol = kf_task_tolerance(t, KF_DTYPE_F16);
		CHECK_NEAR(tol.atol, kf_tol_default(KF_DTYPE_F16).atol, 1e-15);
		kf_task_free(t);
	}
	/* exact ints, ordered float defaults */
	CHECK(kf_tol_default(KF_DTYPE_I32).atol == 0 && kf_tol_default(KF_DTYPE_U8).rtol == 0);
	CHECK(kf_tol_default(KF_DTYPE_F64).rtol < kf_tol_default(KF_DTYPE_F32).rtol);
	CHECK(kf_tol_default(KF_DTYPE_F32).rtol < kf_tol_default(KF_DTYPE_F16).rtol);
	CHECK(kf_tol_default(KF_DTYPE_F16).rtol <= kf_tol_default(KF_DTYPE_BF16).rtol);

	/* an unknown top-level field: a warning by default, an error with KF_TASK_STRICT */
	j = variant(BASE, "\"level\": 1,", "\"level\": 1, \"colour\": \"blue\",");
	CHECKF(load_text(j, NULL, 0, &t, &warn, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(warn.data, "unknown field 'colour'");
	CHECK_CONTAINS(warn.data, "task.json");
	kf_task_free(t);
	CHECK_EQ_INT(load_text(j, NULL, KF_TASK_STRICT, &t, &warn, &err), KF_ERR_INVALID);
	CHECK(t == NULL);
	CHECK_CONTAINS(err.msg, "unknown field 'colour'");
	free(j);

	/* explicit timing shapes, literal and expression extents, randint ints, domain */
	j = variant(BASE, "\"hidden\": [{\"B\": 3, \"N\": 4099}]",
		    "\"hidden\": [{\"B\": 3, \"N\": 4099}], \"timing\": [{\"B\": 2, \"N\": 8}, {\"B\": 4, "
		    "\"N\": 16}]");
	{
		char *j2 = variant(
		    j,
		    "{\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}",
		    "{\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]},"
		    "{\"name\": \"idx\", \"role\": \"inout\", \"dtype\": \"i32\", \"shape\": [3, "
		    "\"cdiv(N,2)+1\"],"
		    " \"init\": {\"dist\": \"randint\", \"lo\": 0, \"hi\": 10}, \"domain\": {\"lo\": 0, "
		    "\"hi\": 100}}");
		CHECKF(load_text(j2, NULL, KF_TASK_STRICT, &t, NULL, &err) == KF_OK, "%s", err.msg);
		if (t) {
			int64_t n;
			CHECK_EQ_INT(t->n_timing, 2);
			CHECK_STR(t->tensors[2].shape[0], "3");
			CHECK(kf_task_numel(t, 2, &t->shapes_timing[0], &n, NULL) == KF_OK && n == 3 * 5);
			CHECK(t->tensors[2].has_domain);
			CHECK_EQ_INT(t->tensors[2].init.dist, KF_DIST_RANDINT);
			kf_task_free(t);
		}
		free(j2);
	}
	free(j);

	/* KF_TASK_NO_FILES: no reference needed on disk */
	j = variant(BASE, "\"reference.cu\"", "\"missing.cu\"");
	CHECKF(load_text(j, NULL, KF_TASK_NO_FILES, &t, NULL, &err) == KF_OK, "%s", err.msg);
	kf_task_free(t);
	free(j);
	kf_buf_release(&warn);
}

struct bad_case {
	const char *from, *to; /* replacement in BASE (from NULL: use to as the whole file) */
	const char *ref;       /* reference.cu text, NULL: the good one */
	enum kf_status code;
	const char *want1, *want2;
};

static const struct bad_case bad_cases[] = {
    {NULL, "{\"format\": \"kforge-task/1\",,}", NULL, KF_ERR_PARSE, "task.json:1:", "invalid JSON"},
    {NULL, "[1, 2]", NULL, KF_ERR_INVALID, "expected a JSON object", NULL},
    {"\"level\": 1,", "\"level\": 1, \"level\": 2,", NULL, KF_ERR_PARSE, "duplicate key 'level'", NULL},
    {"kforge-task/1", "kforge-task/2", NULL, KF_ERR_INVALID, "format: unsupported format", NULL},
    {"\"name\": \"softmax_rows_f32\",", "", NULL, KF_ERR_INVALID, "name: missing required field 'name'",
     NULL},
    {"softmax_rows_f32", "Softmax-Rows", NULL, KF_ERR_INVALID,
     "name: 'Softmax-Rows' is not a valid task name", "[a-z0-9_]+"},
    {"\"title\": \"Row-wise softmax\",", "\"title\": 7,", NULL, KF_ERR_INVALID, "title: expected a string",
     NULL},
    {"\"category\": \"softmax\"", "\"category\": \"two words\"", NULL, KF_ERR_INVALID,
     "category:", "one word"},
    {"\"level\": 1", "\"level\": 4", NULL, KF_ERR_INVALID, "level: 4 is out of range", NULL},
    {"\"level\": 1", "\"level\": 1.5", NULL, KF_ERR_INVALID, "level: expected an integer", NULL},
    {"[\"B\", \"N\"],\n  \"shapes\"", "[\"B\", \"B\"],\n  \"shapes\"", NULL, KF_ERR_INVALID,
     "dims[1]: duplicate dim 'B'", NULL},
    {"[\"B\", \"N\"],\n  \"shapes\"", "[\"B\", \"2N\"],\n  \"shapes\"", NULL, KF_ERR_INVALID,
     "dims[1]: dim name '2N' is not an identifier", NULL},
    {"[\"B\", \"N\"],\n  \"shapes\"", "[\"B\", \"min\"],\n  \"shapes\"", NULL, KF_ERR_INVALID, "reserved",
     NULL},
    {"\"shapes\": {", "\"fixed_dims\": [\"N\", \"H\"], \"shapes\": {", NULL, KF_ERR_INVALID,
     "fixed_dims[1]: unknown dim 'H'", NULL},
    {"\"shapes\": {", "\"fixed_dims\": [\"N\", \"N\"], \"shapes\": {", NULL, KF_ERR_INVALID,
     "fixed_dims[1]: duplicate dim 'N'", NULL},
    {"{\"B\": 16, \"N\": 4096}", "{\"B\": 16}", NULL, KF_ERR_INVALID, "shapes.public[1]: missing dim 'N'",
     NULL},
    {"{\"B\": 16, \"N\": 4096}", "{\"B\": 16, \"N\": 4096, \"Q\": 3}", NULL, KF_ERR_INVALID,
     "shapes.public[1].Q: unknown dim 'Q'", NULL},
    {"{\"B\": 3, \"N\": 4099}", "{\"B\": 0, \"N\": 4099}", NULL, KF_ERR_INVALID,
     "shapes.hidden[0].B:", "out of range"},
    {"{\"B\": 3, \"N\": 4099}", "{\"B\": \"3\", \"N\": 4099}", NULL, KF_ERR_INVALID,
     "shapes.hidden[0].B:", "expected an integer"},
    {"\"public\": [{\"B\": 64, \"N\": 1000}, {\"B\": 16, \"N\": 4096}],", "\"public\": [],", NULL,
     KF_ERR_INVALID, "shapes.public: needs at least one shape", NULL},
    {"\"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}\n", "\"dtype\": \"f8\", \"shape\": [\"B\", \"N\"]}\n",
     NULL, KF_ERR_INVALID, "tensors[1].dtype: unknown dtype 'f8'", NULL},
    {"\"role\": \"output\"", "\"role\": \"result\"", NULL, KF_ERR_INVALID,
     "tensors[1].role: unknown role 'result'", NULL},
    {"\"shape\": [\"B\", \"N\"]}\n", "\"shape\": [\"B\", \"Q\"]}\n", NULL, KF_ERR_INVALID,
     "tensors[1].shape[1]: unknown dim 'Q'", NULL},
    {"\"shape\": [\"B\", \"N\"]}\n", "\"shape\": [\"B\", true]}\n", NULL, KF_ERR_INVALID,
     "tensors[1].shape[1]: expected a string or integer", NULL},
    {"\"shape\": [\"B\", \"N\"]}\n", "\"shape\": [\"B\", \"N/(B-16)\"]}\n", NULL, KF_ERR_INVALID,
     "tensors[1].shape[1]: division by zero", "shapes.public[1] (B=16 N=4096)"},
    {"\"shape\": [\"B\", \"N\"]}\n", "\"shape\": [\"B\", \"N-4096\"]}\n", NULL, KF_ERR_INVALID,
     "tensors[1].shape[1]: 'N-4096' is -3096", "at least 1"},
    {"\"shape\": [\"B\", \"N\"]}\n", "\"shape\": [\"B\", \"N+\"]}\n", NULL, KF_ERR_PARSE,
     "tensors[1].shape[1]:", "unexpected end"},
    {"{\"name\": \"y\"", "{\"name\": \"x\"", NULL, KF_ERR_INVALID,
     "tensors[1].name: duplicate tensor name 'x'", NULL},
    {"{\"name\": \"y\"", "{\"name\": \"N\"", NULL, KF_ERR_INVALID,
     "tensors[1].name: tensor name 'N' is also a dim", NULL},
    {"\"role\": \"output\"", "\"role\": \"input\"", NULL, KF_ERR_INVALID,
     "tensors: no output or inout tensor", NULL},
    {"\"dist\": \"normal\"", "\"dist\": \"gauss\"", NULL, KF_ERR_INVALID,
     "tensors[0].init.dist: unknown distribution", NULL},
    {"\"mean\": 0, \"std\": 1", "\"std\": -1", NULL, KF_ERR_INVALID,
     "tensors[0].init.std: must not be negative", NULL},
    {"{\"dist\": \"normal\", \"mean\": 0, \"std\": 1}", "{\"dist\": \"uniform\", \"lo\": 2, \"hi\": 1}", NULL,
     KF_ERR_INVALID, "tensors[0].init: lo (2) must be below hi (1)", NULL},
    {"\"value\": 1e-5", "\"value\": \"small\"", NULL, KF_ERR_INVALID, "params[0].value: expected a number",
     NULL},
    {"\"name\": \"eps\", \"dtype\": \"f32\"", "\"name\": \"eps\", \"dtype\": \"f16\"", NULL, KF_ERR_INVALID,
     "params[0].dtype: bad param dtype 'f16'", NULL},
    {"\"name\": \"eps\"", "\"name\": \"x\"", NULL, KF_ERR_INVALID, "params[0].name: duplicate name 'x'",
     NULL},
    {"\"dtype\": \"f32\", \"value\": 1e-5", "\"dtype\": \"i32\", \"value\": 3000000000", NULL, KF_ERR_INVALID,
     "params[0].value:", "out of range"},
    {"{\"atol\": 1e-5, \"rtol\": 1e-5}", "{\"atol\": -1}", NULL, KF_ERR_INVALID,
     "tolerance.atol: must not be negative", NULL},
    {"{\"atol\": 1e-5, \"rtol\": 1e-5}", "{\"atoll\": 1}", NULL, KF_ERR_INVALID,
     "tolerance: unknown field 'atoll'", NULL},
    {"{\"atol\": 1e-5, \"rtol\": 1e-5}", "{\"f32\": {\"atol\": 1}, \"rtol\": 1}", NULL, KF_ERR_INVALID,
     "tolerance:", "mixes"},
    {"\"5*B*N\"", "\"5*B*Q\"", NULL, KF_ERR_INVALID, "flops: unknown dim 'Q'", NULL},
    {"\"8*B*N\"", "\"8*B*N/(N-1000)\"", NULL, KF_ERR_INVALID, "bytes: division by zero", "shapes.public[0]"},
    {"\"reference.cu\"", "\"nope.cu\"", NULL, KF_ERR_NOTFOUND, "reference: kernel file",
     "nope.cu' does not exist"},
    {"\"reference\": \"reference.cu\",", "", NULL, KF_ERR_INVALID, "reference: missing required field", NULL},
    {"\"bytes\": \"8*B*N\"", "\"bytes\": \"8*B*N\", \"baseline\": \"gone.cu\"", NULL, KF_ERR_NOTFOUND,
     "baseline: kernel file", NULL},
    /* constraints: preconditions every declared shape must satisfy */
    {"\"shapes\": {", "\"constraints\": {\"Q\": {\"min\": 1}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "constraints.Q: unknown dim 'Q'", NULL},
    {"\"shapes\": {", "\"constraints\": {\"N\": 8}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "constraints.N: expected an object", NULL},
    {"\"shapes\": {", "\"constraints\": {\"N\": {\"multiple_of\": 0}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "constraints.N.multiple_of:", "out of range"},
    {"\"shapes\": {", "\"constraints\": {\"N\": {\"min\": 9, \"max\": 8}}, \"shapes\": {", NULL,
     KF_ERR_INVALID, "constraints.N: min 9 is above max 8", NULL},
    {"\"shapes\": {",
     "\"constraints\": {\"N\": {\"multiple_of\": 16, \"min\": 17, \"max\": 31}}, \"shapes\": {", NULL,
     KF_ERR_INVALID, "constraints.N: no multiple of 16 lies in 17..31", NULL},
    {"\"shapes\": {", "\"constraints\": {\"N\": {\"multiple_of\": 8}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "shapes.hidden[0] (B=3 N=4099): N=4099 breaks constraints.N.multiple_of (not a multiple of 8)", NULL},
    {"\"shapes\": {", "\"constraints\": {\"B\": {\"max\": 32}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "shapes.public[0] (B=64 N=1000): B=64 breaks constraints.B.max (above 32)", NULL},
    {"\"shapes\": {", "\"constraints\": {\"B\": {\"min\": 4}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "shapes.hidden[0] (B=3 N=4099): B=3 breaks constraints.B.min (below 4)", NULL},
    {"\"shapes\": {", "\"constraints\": {\"B\": {\"multipleof\": 4}}, \"shapes\": {", NULL, KF_ERR_INVALID,
     "constraints.B: unknown field 'multipleof'", NULL},
    /* the reference kernel file is validated too, with its own path and line */
    {NULL, NULL,
     "// kforge:launch softmax grid=(B) block=(256) args=(x, y, B, N)\n"
     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n",
     KF_ERR_INVALID, "task.json: reference: ", "reference.cu:1: unknown kernel 'softmax'"},
    {NULL, NULL,
     "\n\n// kforge:launch softmax_rows grid=(B) block=(256) args=(x, q, B, N)\n"
     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n",
     KF_ERR_INVALID, "reference.cu:3: unknown argument 'q'", NULL},
    {NULL, NULL,
     "// kforge:launch softmax_rows grid=(B/(N-1000)) block=(256) args=(x, y, B, N)\n"
     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n",
     KF_ERR_INVALID, "reference.cu:1: grid[0]: division by zero", "shapes.public[0]"},
    {NULL, NULL,
     "// kforge:launch softmax_rows grid=(B) block=(N) args=(x, y, B, N)\n"
     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n",
     KF_ERR_INVALID, "reference.cu:1: block[0]", "outside 1..1024"},
    {NULL, NULL,
     "// kforge:launch softmax_rows grid=(B block=(256) args=(x, y, B, N)\n"
     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int N) { }\n",
     KF_ERR_INVALID, "reference.cu:1: malformed launch directive", NULL},
};

/* Constraints load per dim with defaults for the rest, and kf_task_dim_allows applies them. */
static void test_constraints(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	char *j = variant(BASE, "\"shapes\": {",
			  "\"constraints\": {\"N\": {\"multiple_of\": 8, \"min\": 8, \"max\": 8192}},\n"
			  "  \"shapes\": {");
	char *j2 = variant(j, "{\"B\": 3, \"N\": 4099}", "{\"B\": 3, \"N\": 4104}");
	CHECKF(load_text(j2, NULL, KF_TASK_STRICT, &t, NULL, &err) == KF_OK, "%s", err.msg);
	if (t) {
		CHECK(t->constraints[1].set && t->constraints[1].multiple_of == 8);
		CHECK(t->constraints[1].min == 8 && t->constraints[1].max == 8192);
		CHECK(!t->constraints[0].set && t->constraints[0].multiple_of == 1);
		CHECK(kf_task_dim_allows(t, 1, 4104));
		CHECK(!kf_task_dim_allows(t, 1, 4100));
		CHECK(!kf_task_dim_allows(t, 1, 0));
		CHECK(!kf_task_dim_allows(t, 1, 8200));
		CHECK(kf_task_dim_allows(t, 0, 1));
		CHECK(!kf_task_dim_allows(t, 0, 0));
		CHECK(!kf_task_dim_allows(t, 2, 1));
		CHECK(!kf_task_dim_fixed(t, 0));
		kf_task_free(t);
	}
	free(j);
	free(j2);
}

static void test_bad(void)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct kf_task *t = (struct kf_task *)1;
		struct kf_err err = KF_ERR_INIT;
		char *j = c->from ? variant(BASE, c->from, c->to) : kf_strdup(c->to ? c->to : BASE);
		enum kf_status st = load_text(j, c->ref, KF_TASK_STRICT, &t, NULL, &err);
		CHECKF(st == c->code, "case %zu: status %s, want %s (%s)", i, kf_status_name(st),
		       kf_status_name(c->code), err.msg);
		CHECKF(t == NULL, "case %zu: *out not NULL on failure", i);
		CHECKF(strstr(err.msg, task_path) != NULL, "case %zu: '%s' does not name the file", i,
		       err.msg);
		CHECKF(strstr(err.msg, c->want1) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg, c->want1);
		if (c->want2)
			CHECKF(strstr(err.msg, c->want2) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
			       c->want2);
		free(j);
	}
}

static void test_missing_file(void)
{
	struct kf_task *t;
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(kf_task_load("/nonexistent/task.json", 0, NULL, &t, &err), KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "/nonexistent/task.json");
}

static void test_dtypes(void)
{
	enum kf_dtype d;
	CHECK(kf_dtype_parse("bf16", &d) && d == KF_DTYPE_BF16);
	CHECK(!kf_dtype_parse("f8", &d));
	CHECK_EQ_INT(kf_dtype_size(KF_DTYPE_F64), 8);
	CHECK_EQ_INT(kf_dtype_size(KF_DTYPE_BF16), 2);
	CHECK_EQ_INT(kf_dtype_size(KF_DTYPE_U8), 1);
	CHECK(kf_dtype_is_float(KF_DTYPE_F16) && !kf_dtype_is_float(KF_DTYPE_I8));
	CHECK_STR(kf_dtype_ctype(KF_DTYPE_BF16), "__nv_bfloat16");
	CHECK_STR(kf_dtype_name(KF_DTYPE_I16), "i16");
	CHECK_STR(kf_role_name(KF_ROLE_INOUT), "inout");
}

static void test_json_helpers(void)
{
	struct kf_jpath p;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf out = KF_BUF_INIT(1 << 12);
	cJSON *j = NULL, *o;
	int64_t v;
	size_t m1, m2;

	kf_jpath_init(&p, "t.json");
	m1 = kf_jpath_push_key(&p, "tensors");
	m2 = kf_jpath_push_index(&p, 1);
	kf_jpath_push_key(&p, "shape");
	kf_jpath_push_index(&p, 0);
	CHECK_STR(kf_jpath_str(&p), "tensors[1].shape[0]");
	kf_jpath_err(&p, &err, KF_ERR_INVALID, "expected a string or integer");
	CHECK_STR(str_of(err.msg), "t.json: tensors[1].shape[0]: expected a string or integer");
	kf_jpath_pop(&p, m2);
	CHECK_STR(kf_jpath_str(&p), "tensors");
	kf_jpath_pop(&p, m1);
	CHECK_STR(kf_jpath_str(&p), "");

	CHECK_EQ_INT(kf_json_parse("x.json", "{\"a\": 1}", 8, &j, &err), KF_OK);
	CHECK_EQ_INT(kf_json_get_int(j, "a", true, 0, 10, &v, NULL, &p, &err), KF_OK);
	CHECK_EQ_INT(v, 1);
	CHECK_EQ_INT(kf_json_get_int(j, "b", true, 0, 10, &v, NULL, &p, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "t.json: b: missing required field 'b'");
	cJSON_Delete(j);
	CHECK_EQ_INT(kf_json_parse("x.json", "{\"a\": 1} x", 10, &j, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "x.json:1:");
	CHECK_EQ_INT(kf_json_parse("x.json", "{\"a\":\n [1, 2,]}", 14, &j, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "x.json:2:");
	CHECK_EQ_INT(kf_json_parse("x.json", "{\"a\": {\"b\": 1, \"b\": 2}}", 23, &j, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "a: duplicate key 'b'");
	CHECK_EQ_INT(kf_json_parse("x.json", "{\"a\": 1}\0{", 10, &j, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(kf_json_parse("x.json", "", 0, &j, &err), KF_ERR_PARSE);

	o = cJSON_CreateObject();
	kf_json_add_number(o, "nan", NAN);
	kf_json_add_int(o, "big", INT64_MAX);
	kf_json_add_int(o, "small", -3);
	kf_json_add_string(o, "s", "a\"b\n");
	kf_json_add_string(o, "null", NULL);
	CHECK_EQ_INT(kf_json_print(o, false, &out, &err), KF_OK);
	CHECK_STR(
	    str_of(out.data),
	    "{\"nan\":null,\"big\":\"9223372036854775807\",\"small\":-3,\"s\":\"a\\\"b\\n\",\"null\":null}");
	{
		struct kf_buf tiny = KF_BUF_INIT(8);
		CHECK_EQ_INT(kf_json_print(o, false, &tiny, &err), KF_ERR_LIMIT);
		kf_buf_release(&tiny);
	}
	{
		char path[512];
		cJSON *back = NULL;
		snprintf(path, sizeof(path), "%s/out.json", tmpdir);
		CHECK_EQ_INT(kf_json_write_file(path, o, true, &err), KF_OK);
		CHECK_EQ_INT(kf_json_read_file(path, 0, &back, NULL, &err), KF_OK);
		CHECK(back && cJSON_IsString(cJSON_GetObjectItem(back, "big")));
		cJSON_Delete(back);
		CHECK_EQ_INT(kf_json_read_file(path, 10, &back, NULL, &err), KF_ERR_LIMIT);
	}
	cJSON_Delete(o);
	kf_buf_release(&out);
}

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/kf-task-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(2);
	}
}

static void teardown(void)
{
	char p[600];
	const char *names[] = {"task.json", "reference.cu", "out.json"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(names); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
		unlink(p);
	}
	rmdir(tmpdir);
}

static void test_setup(void)
{
	setup();
}
static void test_teardown(void)
{
	teardown();
}

KF_TEST_MAIN(TEST(test_setup), TEST(test_good), TEST(test_defaults_and_variants), TEST(test_constraints),
	     TEST(test_bad), TEST(test_missing_file), TEST(test_dtypes), TEST(test_json_helpers),
	     TEST(test_teardown))
