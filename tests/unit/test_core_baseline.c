/* Unit tests for core/baseline.c: the `baselines` list of a task (kernel files and library calls),
 * every validation error with its field path, and the parent-side resolution of a library call at a
 * shape into what the cuda worker gets (buffer indices, int64 and double cells at fixed positions). */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "task.h"
#include "testing.h"

/* Bases: a GEMM task (with a bias, a residual and an inout matrix), a convolution, an f16 attention.
 * The string "BASELINES" in each is replaced by the case's text. */
static const char GEMM[] =
    "{\"format\": \"kforge-task/1\", \"name\": \"g\", \"title\": \"t\", \"category\": \"gemm\", \"level\": "
    "1,\n"
    " \"description\": \"d\", \"dims\": [\"M\", \"N\", \"K\"],\n"
    " \"shapes\": {\"public\": [{\"M\": 64, \"N\": 48, \"K\": 32}], \"hidden\": [{\"M\": 7, \"N\": 1, \"K\": "
    "13}],\n"
    "            \"timing\": [{\"M\": 4096, \"N\": 4096, \"K\": 4096}]},\n"
    " \"tensors\": [\n"
    "  {\"name\": \"A\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"M\", \"K\"]},\n"
    "  {\"name\": \"B\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"K\", \"N\"]},\n"
    "  {\"name\": \"Bt\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"N\", \"K\"]},\n"
    "  {\"name\": \"bias\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"N\"]},\n"
    "  {\"name\": \"R\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\"]},\n"
    "  {\"name\": \"H\", \"role\": \"input\", \"dtype\": \"f16\", \"shape\": [\"M\", \"K\"]},\n"
    "  {\"name\": \"io\", \"role\": \"inout\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\"]},\n"
    "  {\"name\": \"C\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"M\", \"N\"]}],\n"
    " \"params\": [{\"name\": \"s\", \"dtype\": \"f32\", \"value\": 0.5}],\n"
    " \"reference\": \"reference.cu\", BASELINES}\n";

static const char GEMM_REF[] = "// kforge:launch k grid=(1) block=(1) args=(A, C, M)\n"
			       "extern \"C\" __global__ void k(const float *A, float *C, int M) { }\n";

static const char CONV[] =
    "{\"format\": \"kforge-task/1\", \"name\": \"c\", \"title\": \"t\", \"category\": \"conv\", \"level\": "
    "1,\n"
    " \"description\": \"d\", \"dims\": [\"N\", \"CI\", \"CO\", \"H\", \"W\"],\n"
    " \"shapes\": {\"public\": [{\"N\": 2, \"CI\": 4, \"CO\": 8, \"H\": 9, \"W\": 7}]},\n"
    " \"tensors\": [\n"
    "  {\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"N\", \"CI\", \"H\", "
    "\"W\"]},\n"
    "  {\"name\": \"w\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"CO\", \"CI\", 3, 3]},\n"
    "  {\"name\": \"b\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"CO\"]},\n"
    "  {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"N\", \"CO\", \"H\", "
    "\"W\"]}],\n"
    " \"reference\": \"reference.cu\", BASELINES}\n";

static const char CONV_REF[] = "// kforge:launch k grid=(1) block=(1) args=(x, y, N)\n"
			       "extern \"C\" __global__ void k(const float *x, float *y, int N) { }\n";

static const char SDPA[] =
    "{\"format\": \"kforge-task/1\", \"name\": \"a\", \"title\": \"t\", \"category\": \"attention\", "
    "\"level\": 1,\n"
    " \"description\": \"d\", \"dims\": [\"B\", \"H\", \"T\", \"D\"],\n"
    " \"shapes\": {\"public\": [{\"B\": 2, \"H\": 3, \"T\": 17, \"D\": 64}]},\n"
    " \"tensors\": [\n"
    "  {\"name\": \"q\", \"role\": \"input\", \"dtype\": \"f16\", \"shape\": [\"B\", \"H\", \"T\", \"D\"]},\n"
    "  {\"name\": \"k\", \"role\": \"input\", \"dtype\": \"f16\", \"shape\": [\"B\", \"H\", \"T\", \"D\"]},\n"
    "  {\"name\": \"v\", \"role\": \"input\", \"dtype\": \"f16\", \"shape\": [\"B\", \"H\", \"T\", \"D\"]},\n"
    "  {\"name\": \"v32\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"H\", \"T\", "
    "\"D\"]},\n"
    "  {\"name\": \"o\", \"role\": \"output\", \"dtype\": \"f16\", \"shape\": [\"B\", \"H\", \"T\", "
    "\"D\"]}],\n"
    " \"reference\": \"reference.cu\", BASELINES}\n";

static const char SDPA_REF[] = "// kforge:launch k grid=(1) block=(1) args=(q, o, B)\n"
			       "extern \"C\" __global__ void k(const __half *q, __half *o, int B) { }\n";

static const char NORM[] =
    "{\"format\": \"kforge-task/1\", \"name\": \"n\", \"title\": \"t\", \"category\": \"norm\", \"level\": "
    "1,\n"
    " \"description\": \"d\", \"dims\": [\"B\", \"N\"],\n"
    " \"shapes\": {\"public\": [{\"B\": 5, \"N\": 33}], \"hidden\": [{\"B\": 1, \"N\": 7}]},\n"
    " \"tensors\": [\n"
    "  {\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]},\n"
    "  {\"name\": \"w\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"N\"]},\n"
    "  {\"name\": \"b\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"N\"]},\n"
    "  {\"name\": \"h\", \"role\": \"input\", \"dtype\": \"f16\", \"shape\": [\"N\"]},\n"
    "  {\"name\": \"d\", \"role\": \"input\", \"dtype\": \"f64\", \"shape\": [\"B\", \"N\"]},\n"
    "  {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"B\", \"N\"]}],\n"
    " \"params\": [{\"name\": \"eps\", \"dtype\": \"f32\", \"value\": 1e-06},\n"
    "            {\"name\": \"zero\", \"dtype\": \"f32\", \"value\": 0}],\n"
    " \"reference\": \"reference.cu\", BASELINES}\n";

static const char NORM_REF[] = "// kforge:launch k grid=(1) block=(1) args=(x, y, B)\n"
			       "extern \"C\" __global__ void k(const float *x, float *y, int B) { }\n";

static const char BASE_CU[] = "// kforge:launch k grid=(1) block=(1) args=(A, C, M)\n"
			      "extern \"C\" __global__ void k(const float *A, float *C, int M) { }\n";

static char tmpdir[256], task_path[512];

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

/* Loads base with BASELINES replaced by text (a JSON member list, e.g. "\"baselines\": [...]"). */
static enum kf_status load_with(const char *base, const char *ref, const char *text, struct kf_task **t,
				struct kf_err *err)
{
	const char *at = strstr(base, "BASELINES");
	size_t n = strlen(base) + strlen(text) + 1;
	char *s = malloc(n);
	snprintf(s, n, "%.*s%s%s", (int)(at - base), base, text, at + strlen("BASELINES"));
	write_file("task.json", s);
	write_file("reference.cu", ref);
	write_file("base.cu", BASE_CU);
	free(s);
	snprintf(task_path, sizeof(task_path), "%s/task.json", tmpdir);
	kf_err_clear(err);
	*t = NULL;
	return kf_task_load(task_path, KF_TASK_STRICT, NULL, t, err);
}

struct bad_case {
	const char *base, *ref, *text, *want;
};

#define GEMM_OK_ARGS "\"A\": \"A\", \"B\": \"B\", \"C\": \"C\", \"M\": \"M\", \"N\": \"N\", \"K\": \"K\""
#define LT(extra)                                                                                            \
	"\"baselines\": [{\"library\": \"cublasLt.matmul\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"D\": "  \
	"\"C\", \"M\": \"M\", \"N\": \"N\", \"K\": \"K\"" extra "}}]"
#define GEMM_WITH(extra) "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {" GEMM_OK_ARGS extra "}}]"
#define CONV_ARGS_R(r)                                                                                       \
	"\"x\": \"x\", \"w\": \"w\", \"y\": \"y\", \"N\": \"N\", \"C\": \"CI\", \"H\": \"H\", \"W\": "       \
	"\"W\", "                                                                                            \
	"\"K\": \"CO\", \"R\": " r ", \"S\": 3"
#define CONV_WITH(extra)                                                                                     \
	"\"baselines\": [{\"library\": \"cudnn.conv_fwd\", \"args\": {" CONV_ARGS_R("3") extra "}}]"
#define CONV_WITH_R(r, extra)                                                                                \
	"\"baselines\": [{\"library\": \"cudnn.conv_fwd\", \"args\": {" CONV_ARGS_R(r) extra "}}]"
#define SDPA_OK_ARGS                                                                                         \
	"\"q\": \"q\", \"k\": \"k\", \"v\": \"v\", \"o\": \"o\", \"B\": \"B\", \"H\": \"H\", \"T\": \"T\", " \
	"\"D\": \"D\""
#define NORM_WITH(x, scale, extra)                                                                           \
	"\"baselines\": [{\"library\": \"cudnn.norm\", \"args\": {\"x\": \"" x "\", \"scale\": \"" scale     \
	"\", \"y\": \"y\", \"B\": \"B\", \"N\": \"N\"" extra "}}]"
#define SDPA_WITH(extra) "\"baselines\": [{\"library\": \"cudnn.sdpa\", \"args\": {" SDPA_OK_ARGS extra "}}]"

/* Every case must fail with its file name and this text (the field path and the reason). */
static const struct bad_case bad_cases[] = {
    {GEMM, GEMM_REF, "\"baselines\": {}", "baselines: expected an array, got an object"},
    {GEMM, GEMM_REF, "\"baselines\": [3]", "baselines[0]: expected an object"},
    {GEMM, GEMM_REF, "\"baselines\": [{}]", "baselines[0]: needs \"kernel\""},
    {GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"base.cu\", \"library\": \"cublas.gemm\"}]",
     "baselines[0]: give either"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"base.cu\", \"name\": \"x\"}]",
     "baselines[0]: unknown field 'name'"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"base.cu\", \"args\": {}}]",
     "baselines[0].args: only a library baseline takes args"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"nope.cu\"}]", "baselines[0].kernel: kernel file"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"base.cu\"}, {\"kernel\": \"base.cu\"}]",
     "baselines[1].kernel: 'base.cu' is already a baseline"},
    {GEMM, GEMM_REF, "\"baseline\": \"base.cu\", \"baselines\": [{\"kernel\": \"base.cu\"}]",
     "baselines[0].kernel: 'base.cu' is already a baseline (the 'baseline' field)"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"kernel\": \"base.cu\"}, {\"kernel\": \"reference.cu\"}, {\"kernel\": \"a.cu\"}, "
     "{\"kernel\": \"b.cu\"}, {\"kernel\": \"c.cu\"}, {\"kernel\": \"d.cu\"}, {\"kernel\": \"e.cu\"}, "
     "{\"kernel\": \"f.cu\"}, {\"kernel\": \"g.cu\"}]",
     "baselines: 9 baselines; at most 8"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"library\": \"cublas.gemv\", \"args\": {}}]",
     "baselines[0].library: unknown library op 'cublas.gemv' (known: cublas.gemm, cublasLt.matmul"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"library\": 7}]", "baselines[0].library: expected a string"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"library\": \"cublas.gemm\"}]",
     "baselines[0].args: missing required field"},
    {GEMM, GEMM_REF, "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": []}]",
     "baselines[0].args: expected an object"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"ldq\": 3"), "baselines[0].args.ldq: unknown argument of cublas.gemm"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M\", \"N\": \"N\"}}]",
     "baselines[0].args.K: missing required argument of cublas.gemm"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"Z\", \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.A: unknown tensor 'Z'"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": 1, \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.A: expected a tensor name, got a number"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"lda\": \"Q\""), "baselines[0].args.lda: unknown dim 'Q'"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"lda\": 2.5"), "baselines[0].args.lda: expected an integer"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"lda\": true"), "baselines[0].args.lda: expected an integer expression"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"trans_a\": 1"), "baselines[0].args.trans_a: expected true or false"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"alpha\": \"nope\""),
     "baselines[0].args.alpha: 'nope' is not a param of the task"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"compute\": \"f8\""),
     "baselines[0].args.compute: expected one of default, f32, tf32, f16, f64"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"compute\": \"f64\""),
     "baselines[0].args.compute: compute 'f64' does not apply to f32 data"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"compute\": \"f16\""),
     "baselines[0].args.compute: compute 'f16' does not apply to f32 data"},
    /* shape-dependent: the leading dimension, the extent, the batch */
    {GEMM, GEMM_REF, GEMM_WITH(", \"lda\": \"K-1\""),
     "baselines[0].args.lda: 31 is less than the 32 elements of a row of 'A' at shapes.public[0] (M=64 N=48 "
     "K=32)"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"lda\": \"K+1\""),
     "baselines[0].args.A: the call reaches element 2111 of 'A', which has 2048 at shapes.public[0]"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"batch\": 2"),
     "baselines[0].args.A: the call reaches element 4096 of 'A'"},
    {GEMM, GEMM_REF, GEMM_WITH(", \"batch\": 0"), "baselines[0].args.batch: '0' is 0; at least 1 needed"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M-64\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.M: 'M-64' is 0; at least 1 needed at shapes.public[0]"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M/(N-1)\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.M: division by zero in 'M/(N-1)' at shapes.hidden[0] (M=7 N=1 K=13)"},
    /* roles and dtypes */
    {GEMM, GEMM_REF, GEMM_WITH(", \"beta\": 1"),
     "baselines[0].args.beta: beta is not 0 but C ('C') is an output, poisoned before each run"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"C\", \"B\": \"B\", \"C\": \"io\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.A: 'C' is an output (poisoned before each run); the call reads it"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"C\": \"R\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.C: 'R' is an input; the call writes it"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"H\", \"B\": \"B\", \"C\": \"C\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\"}}]",
     "baselines[0].args.B: 'B' is f32 but 'H' is f16: A and B share a dtype"},
    {GEMM, GEMM_REF,
     "\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"C\": \"io\", "
     "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\", \"stride_c\": 1, \"batch\": 2, \"stride_a\": 0, "
     "\"stride_b\": 0}}]",
     "baselines[0].args.stride_c: 1: the 2 output matrices of 'io' would overlap"},
    {GEMM, GEMM_REF, LT(", \"bias\": \"R\""),
     "baselines[0].args.bias: 'R' has 3072 elements; the epilogue adds one per column (N = 48)"},
    {GEMM, GEMM_REF, LT(", \"beta\": 2"), "baselines[0].args.beta: beta is not 0 but there is no C to scale"},
    {GEMM, GEMM_REF, LT(", \"activation\": \"tanh\""),
     "baselines[0].args.activation: expected one of none, relu, gelu"},
    {GEMM, GEMM_REF, LT(", \"C\": \"H\", \"beta\": 1"),
     "baselines[0].args.C: 'H' is f16; C has the output's dtype (f32)"},
    /* convolution */
    {CONV, CONV_REF, CONV_WITH(""),
     "baselines[0].args.y: 'y' has 1008 elements; N*K*P*Q (the output size) is 560"},
    {CONV, CONV_REF, CONV_WITH(", \"pad_h\": 1, \"pad_w\": 1, \"groups\": 3"),
     "baselines[0].args.groups: 3 groups do not divide C = 4 and K = 8"},
    {CONV, CONV_REF, CONV_WITH_R("5", ", \"pad_h\": 1, \"pad_w\": 1"),
     "baselines[0].args.w: 'w' has 288 elements; K*(C/groups)*R*S is 480"},
    {CONV, CONV_REF, CONV_WITH(", \"pad_h\": 1, \"pad_w\": 1, \"bias\": \"x\""),
     "baselines[0].args.bias: 'x' has 504 elements; K is 8"},
    {CONV, CONV_REF, CONV_WITH(", \"pad_h\": 1, \"pad_w\": 1, \"activation\": \"gelu\""),
     "baselines[0].args.activation: expected one of none, relu"},
    {CONV, CONV_REF, CONV_WITH(", \"pad_h\": 1, \"pad_w\": 1, \"stride_h\": 0"),
     "baselines[0].args.stride_h: '0' is 0; at least 1 needed"},
    {CONV, CONV_REF, CONV_WITH(", \"pad_h\": -1"), "baselines[0].args.pad_h: -1 is out of range"},
    {CONV, CONV_REF, CONV_WITH_R("20", ", \"pad_h\": 0"),
     "baselines[0].args.R: a 20-high filter (dilation 1) does not fit H = 9 with padding 0"},
    /* attention */
    {SDPA, SDPA_REF,
     "\"baselines\": [{\"library\": \"cudnn.sdpa\", \"args\": {\"q\": \"q\", \"k\": \"k\", \"v\": \"v32\", "
     "\"o\": \"o\", \"B\": \"B\", \"H\": \"H\", \"T\": \"T\", \"D\": \"D\"}}]",
     "baselines[0].args.v: 'v32' is f32; every operand is f16 like q"},
    {SDPA, SDPA_REF,
     "\"baselines\": [{\"library\": \"cudnn.sdpa\", \"args\": {\"q\": \"v32\", \"k\": \"k\", \"v\": \"v\", "
     "\"o\": \"o\", \"B\": \"B\", \"H\": \"H\", \"T\": \"T\", \"D\": \"D\"}}]",
     "baselines[0].args.q: 'v32' is f32; cuDNN's fused attention takes f16 or bf16 only"},
    {SDPA, SDPA_REF, SDPA_WITH(", \"T_kv\": \"2*T\""),
     "baselines[0].args.k: 'k' has 6528 elements; B*H*T_kv*D"},
    {SDPA, SDPA_REF, SDPA_WITH(", \"layout\": \"sbhd\""),
     "baselines[0].args.layout: expected one of bhsd, bshd"},
    {SDPA, SDPA_REF, SDPA_WITH(", \"causal\": \"yes\""), "baselines[0].args.causal: expected true or false"},
    /* norms */
    {NORM, NORM_REF, NORM_WITH("x", "w", ""),
     "baselines[0].args.bias: mode 'layer' needs a bias (cuDNN's LayerNorm adds one)"},
    {NORM, NORM_REF, NORM_WITH("x", "w", ", \"mode\": \"group\""),
     "baselines[0].args.mode: expected one of layer, rms"},
    {NORM, NORM_REF, NORM_WITH("x", "h", ", \"mode\": \"rms\""),
     "baselines[0].args.scale: 'h' is f16; every operand is f32 like x"},
    {NORM, NORM_REF, NORM_WITH("d", "w", ", \"mode\": \"rms\""),
     "baselines[0].args.x: 'd' is f64; cuDNN's norm takes f32, f16 or bf16"},
    {NORM, NORM_REF, NORM_WITH("x", "y", ", \"mode\": \"rms\""),
     "baselines[0].args.scale: 'y' is an output (poisoned before each run); the call reads it"},
    {NORM, NORM_REF, NORM_WITH("x", "x", ", \"mode\": \"rms\""),
     "baselines[0].args.scale: 'x' has 165 elements; N (one per element of a row) is 33 at shapes.public[0]"},
    {NORM, NORM_REF,
     "\"baselines\": [{\"library\": \"cudnn.norm\", \"args\": {\"x\": \"x\", \"scale\": \"w\", \"bias\": "
     "\"b\", \"y\": \"y\", \"B\": \"B\", \"N\": \"N+1\"}}]",
     "baselines[0].args.x: 'x' has 165 elements; B*N is 170 at shapes.public[0]"},
    {NORM, NORM_REF, NORM_WITH("x", "w", ", \"mode\": \"rms\", \"eps\": \"zero\""),
     "baselines[0].args.eps: 0: cuDNN's norm needs an eps above 0"},
    {NORM, NORM_REF, NORM_WITH("x", "w", ", \"mode\": \"rms\", \"eps\": -1"),
     "baselines[0].args.eps: -1: cuDNN's norm needs an eps above 0"},
};

static void test_bad(void)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct kf_task *t = NULL;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st = load_with(c->base, c->ref, c->text, &t, &err);
		CHECKF(st == KF_ERR_INVALID || st == KF_ERR_NOTFOUND, "case %zu: status %d (%s)", i, (int)st,
		       err.msg);
		CHECKF(strstr(err.msg, c->want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg, c->want);
		CHECKF(strstr(err.msg, "task.json") != NULL, "case %zu: no file name in '%s'", i, err.msg);
		CHECK(t == NULL);
		kf_task_free(t);
	}
}

/* Valid lists: the legacy field first, defaults, every op. */
static void test_good(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;

	CHECKF(
	    load_with(GEMM, GEMM_REF,
		      "\"baseline\": \"base.cu\", \"baselines\": [{\"library\": \"cublas.gemm\", \"args\": "
		      "{" GEMM_OK_ARGS "}}, {\"library\": \"cublasLt.matmul\", \"args\": {\"A\": \"A\", "
		      "\"B\": \"Bt\", \"D\": \"C\", "
		      "\"M\": \"M\", \"N\": \"N\", \"K\": \"K\", \"trans_b\": true, \"bias\": \"bias\", "
		      "\"activation\": \"relu\", \"C\": \"R\", \"beta\": 1, \"alpha\": \"s\"}}, {\"kernel\": "
		      "\"reference.cu\"}]",
		      &t, &err) == KF_OK,
	    "%s", err.msg);
	if (!t)
		return;
	CHECK_EQ_INT(t->n_baselines, 4);
	CHECK_EQ_INT(t->baselines[0].kind, KF_BASELINE_KERNEL);
	CHECK_STR(t->baselines[0].name, "base.cu");
	CHECK_CONTAINS(t->baselines[0].kernel, "/base.cu");
	CHECK_EQ_INT(t->baselines[1].kind, KF_BASELINE_LIBRARY);
	CHECK_EQ_INT(t->baselines[1].op, KF_LIBOP_CUBLAS_GEMM);
	CHECK_STR(t->baselines[1].name, "cublas.gemm");
	CHECK_STR(t->baselines[1].canon, "cublas.gemm(A=A, B=B, M=M, N=N, K=K, C=C)");
	CHECK_EQ_INT(t->baselines[2].op, KF_LIBOP_CUBLASLT_MATMUL);
	CHECK_CONTAINS(t->baselines[2].canon, "trans_b=true");
	CHECK_CONTAINS(t->baselines[2].canon, "alpha=s");
	CHECK_EQ_INT(t->baselines[3].kind, KF_BASELINE_KERNEL);
	kf_task_free(t);

	/* no baselines at all */
	CHECKF(load_with(GEMM, GEMM_REF, "\"flops\": \"2*M*N*K\"", &t, &err) == KF_OK, "%s", err.msg);
	if (t)
		CHECK_EQ_INT(t->n_baselines, 0);
	kf_task_free(t);
}

static int64_t cell_int(const struct kf_plan_launch *l, int pos)
{
	int64_t v;
	memcpy(&v, l->args[pos].bytes, 8);
	return v;
}

static double cell_real(const struct kf_plan_launch *l, int pos)
{
	double v;
	memcpy(&v, l->args[pos].bytes, 8);
	return v;
}

/* Resolution: row-major defaults, buffer indices, the absent-tensor zero, scalars in their cells. */
static void test_resolve_mm(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_plan *p = NULL;
	struct kf_libcall call;
	const struct kf_plan_launch *l;
	enum kf_libop op;

	CHECKF(
	    load_with(
		GEMM, GEMM_REF,
		"\"baselines\": [{\"library\": \"cublas.gemm\", \"args\": {\"A\": \"A\", \"B\": \"Bt\", "
		"\"C\": \"io\", \"M\": \"M\", \"N\": \"N\", \"K\": \"K\", \"trans_b\": true, \"beta\": "
		"\"s\"}}, {\"library\": \"cublasLt.matmul\", \"args\": {\"A\": \"A\", \"B\": \"B\", \"D\": "
		"\"C\", \"M\": \"M\", \"N\": \"N\", \"K\": \"K\", \"bias\": \"bias\", \"activation\": "
		"\"gelu\"}}]",
		&t, &err) == KF_OK,
	    "%s", err.msg);
	if (!t)
		return;
	CHECK(kf_libcall_resolve(&t->baselines[0], t, &t->shapes_public[0], &call, &err) == KF_OK);
	CHECK_EQ_INT(call.n_args, KF_MM_NARGS);
	CHECK_EQ_INT(call.args[KF_MM_A].tensor, 0);
	CHECK_EQ_INT(call.args[KF_MM_B].tensor, 2);
	CHECK_EQ_INT(call.args[KF_MM_C].tensor, 6); /* beta != 0: C is read, and it is the output */
	CHECK_EQ_INT(call.args[KF_MM_D].tensor, 6);
	CHECK_EQ_INT(call.args[KF_MM_LDA].i, 32); /* A [M,K]: row of K */
	CHECK_EQ_INT(call.args[KF_MM_LDB].i, 32); /* B stored [N,K]: row of K */
	CHECK_EQ_INT(call.args[KF_MM_LDC].i, 48); /* C [M,N] */
	CHECK_EQ_INT(call.args[KF_MM_STRIDE_A].i, 64 * 32);
	CHECK_EQ_INT(call.args[KF_MM_STRIDE_B].i, 48 * 32);
	CHECK_EQ_INT(call.args[KF_MM_TRANS_B].i, 1);
	CHECK_NEAR(call.args[KF_MM_BETA].r, 0.5, 0);
	CHECK_NEAR(call.args[KF_MM_ALPHA].r, 1, 0);
	CHECK_EQ_INT(call.args[KF_MM_DTYPE_AB].i, KF_DTYPE_F32);

	/* the plan: every tensor as a buffer in task order, one launch "@cublas.gemm" */
	CHECKF(kf_libcall_plan(&t->baselines[0], t, &t->shapes_hidden[0], &p, &err) == KF_OK, "%s", err.msg);
	if (p) {
		CHECK_EQ_INT(p->n_buffers, t->n_tensors);
		CHECK_EQ_INT(p->buffers[6].numel, 7 * 1);
		CHECK_EQ_INT(p->buffers[6].n_bytes, 7 * 4);
		CHECK_EQ_INT(p->n_launches, 1);
		l = &p->launches[0];
		CHECK_STR(l->kernel, "@cublas.gemm");
		CHECK(kf_libop_from_launch(l->kernel, &op) && op == KF_LIBOP_CUBLAS_GEMM);
		CHECK_EQ_INT(l->n_args, KF_MM_NARGS);
		CHECK_EQ_INT(l->args[KF_MM_A].kind, KF_PARG_BUFFER);
		CHECK_EQ_INT(l->args[KF_MM_A].buffer, 0);
		CHECK_EQ_INT(l->args[KF_MM_D].buffer, 6);
		CHECK_EQ_INT(l->args[KF_MM_BIAS].kind, KF_PARG_SCALAR); /* absent: the integer 0 */
		CHECK_EQ_INT(cell_int(l, KF_MM_BIAS), 0);
		CHECK_EQ_INT(cell_int(l, KF_MM_M), 7);
		CHECK_EQ_INT(cell_int(l, KF_MM_N), 1);
		CHECK_EQ_INT(cell_int(l, KF_MM_K), 13);
		CHECK_EQ_INT(cell_int(l, KF_MM_LDC), 1);
		CHECK_NEAR(cell_real(l, KF_MM_BETA), 0.5, 0);
		for (uint32_t a = 0; a < l->n_args; a++)
			CHECK(l->args[a].kind == KF_PARG_BUFFER || l->args[a].size == 8);
	}
	kf_plan_free(p);
	p = NULL;

	/* cuBLASLt: no C (beta 0), a bias, gelu */
	CHECK(kf_libcall_resolve(&t->baselines[1], t, &t->shapes_public[0], &call, &err) == KF_OK);
	CHECK_EQ_INT(call.args[KF_MM_C].tensor, -1);
	CHECK_EQ_INT(call.args[KF_MM_D].tensor, 7);
	CHECK_EQ_INT(call.args[KF_MM_BIAS].tensor, 3);
	CHECK_EQ_INT(call.args[KF_MM_LDB].i, 48);
	CHECK_EQ_INT(call.args[KF_MM_LDD].i, 48);
	CHECK_EQ_INT(call.args[KF_MM_ACTIVATION].i, KF_LIB_ACT_GELU);
	/* a kernel baseline is not a library call */
	kf_task_free(t);
	CHECKF(load_with(GEMM, GEMM_REF, "\"baselines\": [{\"kernel\": \"base.cu\"}]", &t, &err) == KF_OK,
	       "%s", err.msg);
	if (t)
		CHECK(kf_libcall_plan(&t->baselines[0], t, &t->shapes_public[0], &p, &err) ==
		      KF_ERR_INTERNAL);
	CHECK(p == NULL);
	kf_task_free(t);
}

static void test_resolve_conv_sdpa(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_libcall call;

	CHECKF(load_with(CONV, CONV_REF,
			 CONV_WITH(", \"pad_h\": 1, \"pad_w\": 1, \"bias\": \"b\", \"activation\": \"relu\""),
			 &t, &err) == KF_OK,
	       "%s", err.msg);
	if (t) {
		CHECK(kf_libcall_resolve(&t->baselines[0], t, &t->shapes_public[0], &call, &err) == KF_OK);
		CHECK_EQ_INT(call.n_args, KF_CONV_NARGS);
		CHECK_EQ_INT(call.args[KF_CONV_P].i, 9);
		CHECK_EQ_INT(call.args[KF_CONV_Q].i, 7);
		CHECK_EQ_INT(call.args[KF_CONV_C].i, 4);
		CHECK_EQ_INT(call.args[KF_CONV_K].i, 8);
		CHECK_EQ_INT(call.args[KF_CONV_GROUPS].i, 1);
		CHECK_EQ_INT(call.args[KF_CONV_BIAS].tensor, 2);
		CHECK_EQ_INT(call.args[KF_CONV_RESIDUAL].tensor, -1);
		CHECK_EQ_INT(call.args[KF_CONV_ACTIVATION].i, KF_LIB_ACT_RELU);
	}
	kf_task_free(t);
	CHECKF(load_with(SDPA, SDPA_REF, SDPA_WITH(", \"causal\": true, \"layout\": \"bhsd\""), &t, &err) ==
		   KF_OK,
	       "%s", err.msg);
	if (t) {
		CHECK(kf_libcall_resolve(&t->baselines[0], t, &t->shapes_public[0], &call, &err) == KF_OK);
		CHECK_EQ_INT(call.args[KF_SDPA_T_KV].i, 17);          /* defaults to T */
		CHECK_EQ_INT(call.args[KF_SDPA_D_V].i, 64);           /* defaults to D */
		CHECK_NEAR(call.args[KF_SDPA_SCALE].r, 0.125, 1e-15); /* 1/sqrt(D) */
		CHECK_EQ_INT(call.args[KF_SDPA_CAUSAL].i, 1);
		CHECK_EQ_INT(call.args[KF_SDPA_DTYPE].i, KF_DTYPE_F16);
	}
	kf_task_free(t);
}

static void test_resolve_norm(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_libcall call;
	struct kf_plan *p = NULL;

	CHECKF(load_with(NORM, NORM_REF, NORM_WITH("x", "w", ", \"bias\": \"b\""), &t, &err) == KF_OK, "%s",
	       err.msg);
	if (t) {
		CHECK(kf_libcall_resolve(&t->baselines[0], t, &t->shapes_hidden[0], &call, &err) == KF_OK);
		CHECK_EQ_INT(call.op, KF_LIBOP_CUDNN_NORM);
		CHECK_EQ_INT(call.n_args, KF_NORM_NARGS);
		CHECK_EQ_INT(call.args[KF_NORM_X].tensor, 0);
		CHECK_EQ_INT(call.args[KF_NORM_SCALE].tensor, 1);
		CHECK_EQ_INT(call.args[KF_NORM_BIAS].tensor, 2);
		CHECK_EQ_INT(call.args[KF_NORM_Y].tensor, 5);
		CHECK_EQ_INT(call.args[KF_NORM_B].i, 1);
		CHECK_EQ_INT(call.args[KF_NORM_N].i, 7);
		CHECK_EQ_INT(call.args[KF_NORM_MODE].i, KF_LIB_NORM_LAYER); /* the default */
		CHECK_NEAR(call.args[KF_NORM_EPS].r, 1e-5, 1e-20);          /* the default */
		CHECK_EQ_INT(call.args[KF_NORM_DTYPE].i, KF_DTYPE_F32);
		CHECK(kf_libcall_plan(&t->baselines[0], t, &t->shapes_public[0], &p, &err) == KF_OK);
		if (p) {
			CHECK_STR(p->launches[0].kernel, "@cudnn.norm");
			CHECK_EQ_INT(p->launches[0].n_args, KF_NORM_NARGS);
		}
		kf_plan_free(p);
	}
	kf_task_free(t);
	/* rms without a bias; eps from a param (an f32 param: its float value) */
	CHECKF(load_with(NORM, NORM_REF, NORM_WITH("x", "w", ", \"mode\": \"rms\", \"eps\": \"eps\""), &t,
			 &err) == KF_OK,
	       "%s", err.msg);
	if (t) {
		CHECK(kf_libcall_resolve(&t->baselines[0], t, &t->shapes_public[0], &call, &err) == KF_OK);
		CHECK_EQ_INT(call.args[KF_NORM_BIAS].tensor, -1);
		CHECK_EQ_INT(call.args[KF_NORM_MODE].i, KF_LIB_NORM_RMS);
		CHECK_NEAR(call.args[KF_NORM_EPS].r, 1e-6, 1e-12);
		CHECK_EQ_INT(call.args[KF_NORM_N].i, 33);
	}
	kf_task_free(t);
}

static void test_names(void)
{
	enum kf_libop op;
	CHECK(kf_libop_parse("cudnn.conv_fwd", &op) && op == KF_LIBOP_CUDNN_CONV_FWD);
	CHECK(!kf_libop_parse("cudnn.conv", &op));
	CHECK(!kf_libop_parse(NULL, &op));
	CHECK_STR(kf_libop_library(KF_LIBOP_CUBLASLT_MATMUL), "cuBLASLt");
	CHECK(kf_libop_from_launch("@cudnn.sdpa", &op) && op == KF_LIBOP_CUDNN_SDPA);
	/* a kernel name is never a library call, even when it spells one */
	CHECK(!kf_libop_from_launch("cudnn.sdpa", &op));
	CHECK(!kf_libop_from_launch("@cudnn", &op));
}

static void test_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kforge-test-baseline.%d", (int)getpid());
	mkdir(tmpdir, 0700);
}

static void test_teardown(void)
{
	const char *names[] = {"task.json", "reference.cu", "base.cu"};
	char p[600];
	for (size_t i = 0; i < KF_ARRAY_SIZE(names); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpdir, names[i]);
		unlink(p);
	}
	rmdir(tmpdir);
}

KF_TEST_MAIN(TEST(test_setup), TEST(test_names), TEST(test_bad), TEST(test_good), TEST(test_resolve_mm),
	     TEST(test_resolve_conv_sdpa), TEST(test_resolve_norm), TEST(test_teardown))
