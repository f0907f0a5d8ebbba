/* Tests for agent/prompt.c: the template renderer (variables, sections, errors, values never re-expanded)
 * and the prompt builder on a task fixture whose hidden shapes use values (4099, 77777) that must never
 * appear in any prompt, whatever feedback mentions them. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "testing.h"

#define DATA "tests/data/llm/"

static void test_render(void)
{
	struct kf_tmpl_var v[] = {{"a", "A"}, {"empty", ""}, {"null", NULL}, {"evil", "{{a}} {{#a}}"}};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_err err = KF_ERR_INIT;
	const char *t1 = "x {{a}} {{ a }}{{#a}}[yes]{{/a}}{{^empty}}[no]{{/empty}}{{#null}}[never]{{/null}}";
	const char *t2 = "start\n{{#a}}\nkept line\n{{/a}}\n{{#empty}}\ndropped line\n{{/empty}}\nend\n";
	const char *bad[] = {"{{nope}}",         "{{#a}}open", "{{/a}}", "{{a",
			     "{{#a}}{{/empty}}", "{{}}",       "{{a b}}"};

	CHECK(kf_tmpl_render(t1, strlen(t1), v, KF_ARRAY_SIZE(v), &out, &err) == KF_OK);
	CHECK_STR(out.data, "x A A[yes][no]");
	kf_buf_reset(&out);
	/* section tags alone on their lines leave no blank lines */
	CHECK(kf_tmpl_render(t2, strlen(t2), v, KF_ARRAY_SIZE(v), &out, &err) == KF_OK);
	CHECK_STR(out.data, "start\nkept line\nend\n");
	kf_buf_reset(&out);
	/* a value that looks like a template stays literal (LLM text goes into prompts) */
	CHECK(kf_tmpl_render("{{evil}}", 8, v, KF_ARRAY_SIZE(v), &out, &err) == KF_OK);
	CHECK_STR(out.data, "{{a}} {{#a}}");
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad); i++) {
		kf_buf_reset(&out);
		CHECKF(kf_tmpl_render(bad[i], strlen(bad[i]), v, KF_ARRAY_SIZE(v), &out, &err) ==
			   KF_ERR_INVALID,
		       "'%s' rendered", bad[i]);
	}
	CHECK_CONTAINS(err.msg, "line 1");
	/* a bounded output */
	{
		struct kf_buf small = KF_BUF_INIT(3);
		CHECK(kf_tmpl_render(t1, strlen(t1), v, KF_ARRAY_SIZE(v), &small, &err) == KF_ERR_LIMIT);
		kf_buf_release(&small);
	}
	kf_buf_release(&out);
}

static struct kf_task *load_task(void)
{
	struct kf_task *t = NULL;
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_task_load(DATA "task/task.json", 0, NULL, &t, &err) == KF_OK, "%s", err.msg);
	return t;
}

/* No hidden-only value may appear anywhere: not in the shapes, not in echoed verifier text. */
static void check_no_hidden(const char *what, const char *s)
{
	CHECKF(!strstr(s, "4099"), "%s mentions hidden N=4099", what);
	CHECKF(!strstr(s, "77777"), "%s mentions hidden N=77777", what);
	CHECKF(!strstr(s, "B=3 "), "%s mentions hidden B=3", what);
	CHECKF(!strstr(s, "{{"), "%s has an unrendered tag", what);
}

static void test_first_prompt(void)
{
	struct kf_task *t = load_task();
	char *ref = NULL;
	struct kf_buf sys = KF_BUF_INIT(1 << 20), user = KF_BUF_INIT(1 << 20), r = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_device_info dev = {.backend = "cuda",
				     .name = "NVIDIA H200",
				     .arch = "sm_90",
				     .cc_major = 9,
				     .sm_count = 132,
				     .global_mem_bytes = 150ull << 30,
				     .l2_bytes = 60ull << 20,
				     .max_threads_per_block = 1024,
				     .max_block = {1024, 1024, 64},
				     .max_grid = {2147483647, 65535, 65535},
				     .max_smem_per_block = 49152,
				     .max_smem_per_block_optin = 232448,
				     .sm_clock_khz = 1980000,
				     .mem_clock_khz = 2619000,
				     .mem_bus_width_bits = 6144};
	struct kf_device_info cpu = {.backend = "cpu",
				     .name = "AMD EPYC",
				     .arch = "host",
				     .sm_count = 2,
				     .max_threads_per_block = 1024,
				     .max_smem_per_block = 49152};
	struct kf_prompt_input in = {0};

	if (!t)
		return;
	CHECK(kf_buf_read_file(&r, DATA "parent.cu", &err) == KF_OK);
	ref = r.data;
	in.task = t;
	in.reference_source = ref;
	in.device = &dev;
	in.mode = KF_EDIT_DIFF; /* no parent: falls back to a full rewrite */
	CHECKF(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(sys.data, "// kforge:launch  KERNEL[<TARGS>] grid=");
	CHECK_CONTAINS(sys.data, "// kforge:zero    NAME [byte=V]");
	CHECK_CONTAINS(user.data, "Dims: B, N\n");
	/* the answer format is in the user message: the system text stays the same for every request (the
	 * prompt cache keeps it) */
	CHECK_CONTAINS(user.data, "complete new kernel file");
	CHECK_CONTAINS(user.data, "Change: <what you changed");
	CHECK(!strstr(sys.data, "SEARCH/REPLACE"));
	CHECK(!strstr(user.data, "SEARCH/REPLACE"));
	CHECK_CONTAINS(sys.data, "## What this harness allows");
	CHECK_CONTAINS(sys.data, "wgmma");
	CHECK_CONTAINS(user.data, "# Task: Row-wise softmax, fp32 (`softmax_rows_f32`, softmax, level 1)");
	CHECK_CONTAINS(user.data, "sum_j exp(x[b, j])");
	CHECK_CONTAINS(user.data, "- B=64 N=1000\n- B=16 N=4096\n");
	CHECK_CONTAINS(user.data, "Speed is measured at:\n- B=4096 N=4096\n");
	CHECK_CONTAINS(user.data,
		       "- x: input f32 [B, N] as `const float *`, typically normal(mean 0, std 1)");
	CHECK_CONTAINS(user.data, "- y: output f32 [B, N] as `float *`");
	CHECK_CONTAINS(user.data, "- eps: f32 = 1e-05");
	CHECK_CONTAINS(user.data, "f32 |out - ref| <= 1e-05 + 1e-05*|ref|");
	CHECK_CONTAINS(user.data, "flops = 5*B*N, minimum bytes moved = 8*B*N");
	CHECK_CONTAINS(user.data, "NVIDIA H200 (sm_90, compute capability 9.0), 132 SMs");
	CHECK_CONTAINS(user.data, "232448 with the opt-in attribute");
	CHECK_CONTAINS(user.data, "```cuda\n// Row-wise softmax, one block per row");
	CHECK_CONTAINS(user.data, "y[(long long)row * N + i] = expf(xr[i] - m) / sum;\n}\n```\n");
	CHECK_CONTAINS(user.data, "Write a kernel that computes the same outputs");
	CHECK(!strstr(user.data, "Current kernel"));
	CHECK(!strstr(user.data, "knowledge base"));
	CHECK(!strstr(user.data, "\n\n\n")); /* sections leave no gaps */
	check_no_hidden("system", sys.data);
	check_no_hidden("user", user.data);

	/* no device: the arch and conservative limits; a cpu device: the backend's restrictions */
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	in.device = NULL;
	in.arch = "sm_80";
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
	CHECK_CONTAINS(user.data, "CUDA architecture sm_80 (device limits unknown");
	{
		kf_buf_reset(&sys);
		kf_buf_reset(&user);
		in.device = &cpu;
		CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
		CHECK_CONTAINS(user.data, "CPU backend (AMD EPYC, 2 threads)");
		CHECK_CONTAINS(user.data, "cannot run inline PTX");
	}
	/* a prompt larger than the caller's bound is an error, not a cut prompt */
	{
		struct kf_buf tiny = KF_BUF_INIT(100);
		kf_buf_reset(&sys);
		CHECK(kf_prompt_build(&in, &sys, &tiny, NULL, &err) == KF_ERR_LIMIT);
		kf_buf_release(&tiny);
	}
	/* a task's constraints are stated as preconditions beside the dims */
	{
		struct kf_task *tc = NULL;
		CHECKF(kf_task_load(DATA "task/constrained.json", 0, NULL, &tc, &err) == KF_OK, "%s",
		       err.msg);
		if (tc) {
			in.task = tc;
			kf_buf_reset(&sys);
			kf_buf_reset(&user);
			CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
			CHECK_CONTAINS(
			    user.data,
			    "Dims: B, N; preconditions you may rely on: 1 <= B <= 4096, 16 <= N\n");
			kf_task_free(tc);
		}
	}
	in.task = NULL;
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_ERR_INVALID);
	kf_buf_release(&sys);
	kf_buf_release(&user);
	kf_buf_release(&r);
	kf_task_free(t);
}

static void test_feedback_prompts(void)
{
	struct kf_task *t = load_task();
	struct kf_buf sys = KF_BUF_INIT(1 << 20), user = KF_BUF_INIT(1 << 20), log = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_shape hidden = {0}, pub = {0};
	struct kf_prompt_feedback fb = {0};
	struct kf_prompt_example ex[2] = {
	    {"softmax_cols_f32",
	     "// kforge:launch k grid=(B) block=(32) args=(x, y, B, N)\nextern \"C\" __global__ void k() {}",
	     2.5, "warp-shuffle,vectorized", "one warp per row instead of a block"},
	    {NULL, "// example two", 0, NULL, NULL},
	};
	struct kf_prompt_input in = {0};
	const char *parent = "// kforge:launch softmax_rows grid=(B) block=(256) args=(x, y, B, N)\n"
			     "extern \"C\" __global__ void softmax_rows(const float *x, float *y, int B, int "
			     "N) { /* PARENT */ }\n";

	if (!t)
		return;
	kf_shape_set(&hidden, "B", 3);
	kf_shape_set(&hidden, "N", 4099);
	kf_shape_set(&pub, "B", 64);
	kf_shape_set(&pub, "N", 1000);
	for (int i = 0; i < 5000; i++)
		kf_buf_addf(&log, "kernel.cu(%d): error: identifier \"foo\" is undefined at N=4099\n", i);

	in.task = t;
	in.reference_source = "// the reference";
	in.parent_source = parent;
	in.feedback = &fb;
	in.examples = ex;
	in.n_examples = 2;
	in.mode = KF_EDIT_DIFF;

	/* wrong at a hidden shape: the check is shown, the shape and its values are not */
	fb.correct = false;
	fb.verdict = "wrong_result";
	fb.failing_check = "max abs error 0.5 at y[2, 4098] (B=3 N=4099, row length 4099)";
	fb.failing_shape = &hidden;
	fb.max_error = 0.5;
	fb.compile_log = log.data;
	fb.profile_text = "time 12.5 us, speedup 1.8x [1.7, 1.9], 71% of DRAM peak";
	fb.edits_total = 3;
	fb.edits_unmatched = 2;
	CHECKF(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(user.data, "SEARCH/REPLACE blocks");
	CHECK_CONTAINS(user.data, "## Current kernel");
	CHECK_CONTAINS(user.data, "/* PARENT */ }\n```\n");
	CHECK_CONTAINS(
	    user.data,
	    "Verdict: wrong_result\nFailing check: max abs error 0.5 at y[2, ?] (B=? N=?, row length ?)");
	CHECK_CONTAINS(user.data, "At shape: one of the hidden shapes (not shown)");
	CHECK_CONTAINS(user.data, "Max error: 0.5\n");
	CHECK_CONTAINS(user.data, "Compiler output (excerpt):\n```\nkernel.cu(0): error");
	CHECK_CONTAINS(user.data, "[... truncated");
	CHECK(user.len < 60000); /* the 300 KB log is cut to an excerpt */
	CHECK_CONTAINS(user.data, "2 of your 3 SEARCH/REPLACE edits in the last reply about this kernel did "
				  "not match it, so that reply was not evaluated");
	CHECK(!strstr(user.data, "speedup 1.8x")); /* no profile before the kernel is correct */
	CHECK_CONTAINS(user.data, "The current kernel is not correct");
	CHECK_CONTAINS(
	    user.data,
	    "### Example 1: softmax_cols_f32 (2.50x over its reference)\nTechniques: "
	    "warp-shuffle,vectorized\nWhat changed: one warp per row instead of a block\n```cuda\n");
	CHECK_CONTAINS(user.data, "### Example 2\n```cuda\n// example two\n```");
	/* correctness feedback comes before the instructions */
	CHECK(strstr(user.data, "Failing check") < strstr(user.data, "## Your job"));
	check_no_hidden("user (wrong)", user.data);
	check_no_hidden("system (wrong)", sys.data);

	/* a failing public shape is shown */
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	fb.failing_shape = &pub;
	fb.compile_log = NULL;
	fb.failing_check = "NaN in y[0, 999]";
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
	CHECK_CONTAINS(user.data, "At shape: B=64 N=1000");
	CHECK(!strstr(user.data, "Compiler output"));

	/* correct: the profile, no failing check */
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	fb = (struct kf_prompt_feedback){.correct = true,
					 .profile_text =
					     "time 12.5 us, speedup 1.8x [1.7, 1.9], 71% of DRAM peak, "
					     "occupancy 50%, 40 registers, 0 spills",
					 .max_error = -1};
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
	CHECK_CONTAINS(user.data, "Verdict: correct\nProfile:\n```\ntime 12.5 us, speedup 1.8x [1.7, 1.9]");
	CHECK_CONTAINS(user.data, "The current kernel is correct. Make it faster");
	CHECK(!strstr(user.data, "Failing check"));
	CHECK(!strstr(user.data, "did not match"));
	check_no_hidden("user (correct)", user.data);

	/* full-rewrite mode with a parent */
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	in.mode = KF_EDIT_FULL;
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_OK);
	CHECK(!strstr(sys.data, "SEARCH/REPLACE"));
	CHECK_CONTAINS(user.data, "complete new kernel file");

	kf_buf_release(&sys);
	kf_buf_release(&user);
	kf_buf_release(&log);
	kf_task_free(t);
}

static void test_template_override(void)
{
	char dir[] = "/tmp/kf-prompts.XXXXXX", path[128];
	struct kf_task *t = load_task();
	struct kf_buf sys = KF_BUF_INIT(1 << 20), user = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_prompt_input in = {.task = t, .reference_source = "ref"};
	FILE *f;

	if (!t || !mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/task.txt", dir);
	f = fopen(path, "w");
	fputs("custom {{name}} {{public_shapes}}", f);
	fclose(f);
	setenv("KFORGE_PROMPTS", dir, 1);
	size_t static_len = 0;
	CHECK(kf_prompt_build(&in, &sys, &user, &static_len, &err) == KF_OK);
	CHECK(!strncmp(user.data, "custom softmax_rows_f32 - B=64 N=1000\n- B=16 N=4096\n\n## Your job", 60));
	CHECK_EQ_INT(static_len, strlen("custom softmax_rows_f32 - B=64 N=1000\n- B=16 N=4096\n\n"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/user.txt", dir);
	CHECK_CONTAINS(sys.data, "expert CUDA"); /* not overridden: the built-in one */
	f = fopen(path, "w");
	fputs("{{no_such_variable}}", f);
	fclose(f);
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	CHECK(kf_prompt_build(&in, &sys, &user, NULL, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "user.txt");
	CHECK_CONTAINS(err.msg, "no_such_variable");
	unsetenv("KFORGE_PROMPTS");
	unlink(path);
	rmdir(dir);
	kf_buf_release(&sys);
	kf_buf_release(&user);
	kf_task_free(t);
	CHECK(kf_prompt_template("no-such.txt", NULL, &err) == NULL);
	CHECK(err.code == KF_ERR_NOTFOUND);
}

/* What an expert would be given: the target's figures, the reference against the roofline floor, the
 * category's playbook; then the run's memory (strategy, lineage, best kernels, lessons); and the static
 * prefix the prompt cache keeps is byte-identical whatever the memory holds. */
static void test_expert_context(void)
{
	struct kf_task *t = load_task();
	struct kf_buf sys = KF_BUF_INIT(1 << 20), user = KF_BUF_INIT(1 << 20), user2 = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_prompt_input in = {0};
	size_t st1 = 0, st2 = 0;
	if (!t)
		return;
	in.task = t;
	in.reference_source = "// the reference\n";
	in.arch = "sm_90";
	in.clock = "cpu";
	struct kf_prompt_baseline bl = {"B=4096 N=4096",           2.41e6, "cpu", 27.96e3, "memory",
					"NVIDIA H100 SXM (table)", 0,      {{0}}};
	in.baseline = &bl;
	CHECKF(kf_prompt_build(&in, &sys, &user, &st1, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(user.data, "Target facts (NVIDIA H100 SXM (table), sm_90");
	CHECK_CONTAINS(user.data, "DRAM bandwidth 3.35 TB/s; 132 SMs; L2 50 MiB");
	CHECK_CONTAINS(user.data, "FP32 67 TFLOP/s");
	CHECK_CONTAINS(user.data, "FP16/BF16 989, FP8 1979 TFLOP/s");
	CHECK_CONTAINS(user.data, "228 KiB shared memory");
	CHECK_CONTAINS(user.data, "65536 32-bit registers");
	CHECK_CONTAINS(user.data, "ridge point");
	CHECK_CONTAINS(user.data, "CPU-clock figure, not GPU speed");
	CHECK_CONTAINS(user.data, "the reference takes 2.41 ms");
	CHECK_CONTAINS(user.data, "CPU clock, kforge's CPU backend: not a GPU time");
	CHECK_CONTAINS(user.data, "roofline floor on the target is 28 us (memory-bound");
	CHECK(
	    !strstr(user.data, "% of the speed of light")); /* a CPU time against a GPU floor means nothing */
	CHECK_CONTAINS(user.data, "## Playbook for this kind of kernel\n\nSoftmax and normalizations");
	CHECK(st1 > 0 && st1 < user.len);
	CHECK_CONTAINS(user.data + st1, "## Your job");
	CHECK(!strstr(user.data + st1, "# Task:"));

	/* a refinement with the run's memory */
	struct kf_prompt_attempt hist[] = {
	    {12, 0, "vectorized the loads with float4", "pass", 1.84, NULL},
	    {0, 12, "split rows across two warps", "unusable", 0,
	     "2 of 3 SEARCH/REPLACE edits did not match the parent"},
	    {13, 12, "online softmax in one pass", "wrong_output", 0,
	     "max abs error 0.5 at y[2, 4098] (B=3 N=4099)"},
	};
	struct kf_prompt_example best[] = {
	    {NULL, "// BEST KERNEL\n", 2.5, "warp_shuffle", "warp-per-row reduction"},
	    {NULL, "// SECOND\n", 1.9, "", "block reduction"}};
	struct kf_prompt_example insp = {NULL, "// OTHER APPROACH\n", 1.2, "shared_memory",
					 "tile rows in smem"};
	struct kf_prompt_lesson les[] = {
	    {"layernorm", "race", "shared partial sums without a barrier", "racecheck: ..."}};
	struct kf_prompt_feedback fb = {0};
	fb.correct = true;
	fb.profile_text = "time 1.2 ms (cpu)";
	in.parent_source = "// PARENT\n";
	in.feedback = &fb;
	in.mode = KF_EDIT_DIFF;
	in.strategy = "WARP-PER-ROW: one warp per row, shuffles for max and sum";
	in.history = hist;
	in.n_history = KF_ARRAY_SIZE(hist);
	in.best = best;
	in.n_best = 2;
	in.inspiration = &insp;
	in.lessons = les;
	in.n_lessons = 1;
	in.variant = "(Attempt 2 of several made at once from this kernel: take a different direction from "
		     "the others.)";
	kf_buf_reset(&sys);
	CHECKF(kf_prompt_build(&in, &sys, &user2, &st2, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(st2, st1);
	CHECK(!memcmp(user.data, user2.data, st1)); /* the cached prefix does not move */
	const char *u = user2.data;
	CHECK_CONTAINS(u, "## Your line of attack\n\nWARP-PER-ROW: one warp per row");
	CHECK_CONTAINS(u, "Keep to this strategy");
	CHECK_CONTAINS(
	    u, "- #12 (from the reference): \"vectorized the loads with float4\" -> pass, 1.84x (cpu)");
	CHECK_CONTAINS(
	    u, "- a reply to #12: \"split rows across two warps\" -> unusable: 2 of 3 SEARCH/REPLACE");
	CHECK_CONTAINS(
	    u,
	    "- #13 (from #12): \"online softmax in one pass\" -> wrong_output: max abs error 0.5 at y[2, ?]");
	CHECK_CONTAINS(u, "## The best kernels of this run so far");
	CHECK_CONTAINS(
	    u, "### 2.50x over the reference (cpu); techniques: warp_shuffle\nWhat it changed: warp-per-row");
	CHECK_CONTAINS(u, "// BEST KERNEL");
	CHECK(!strstr(u, "// SECOND")); /* only the best one with its source */
	CHECK_CONTAINS(u, "block reduction");
	CHECK_CONTAINS(u, "## A different approach from this run");
	CHECK_CONTAINS(u, "// OTHER APPROACH");
	CHECK_CONTAINS(u, "- [layernorm] tried \"shared partial sums without a barrier\" -> race");
	CHECK_CONTAINS(u, "Attempt 2 of several");
	CHECK_CONTAINS(u, "Do not repeat an");
	check_no_hidden("user", u);
	/* CPU-clock examples are said to be CPU-clock examples */
	struct kf_prompt_example ex = {"rowsum", "// EXAMPLE\n", 3.0, NULL, NULL};
	in.examples = &ex;
	in.n_examples = 1;
	kf_buf_reset(&sys);
	kf_buf_reset(&user2);
	CHECK(kf_prompt_build(&in, &sys, &user2, NULL, &err) == KF_OK);
	CHECK_CONTAINS(user2.data, "Their speedups are CPU-clock ratios");
	in.clock = "gpu";
	kf_buf_reset(&sys);
	kf_buf_reset(&user2);
	CHECK(kf_prompt_build(&in, &sys, &user2, NULL, &err) == KF_OK);
	CHECK(!strstr(user2.data, "CPU-clock ratios"));
	CHECK(!strstr(user2.data, "CPU-clock figure"));

	/* the strategy call: the static prefix, then the request */
	kf_buf_reset(&sys);
	kf_buf_reset(&user2);
	CHECK(kf_prompt_build_strategies(&in, 4, &sys, &user2, &st2, &err) == KF_OK);
	CHECK_CONTAINS(user2.data + st2, "propose 4 distinct strategies");
	CHECK(!strstr(user2.data, "// PARENT"));
	CHECK_STR(kf_prompt_playbook("gemm_fused"), "playbook_gemm.txt");
	CHECK_STR(kf_prompt_playbook("conv_block"), "playbook_conv.txt");
	CHECK_STR(kf_prompt_playbook("ssm"), "playbook_scan.txt");
	CHECK_STR(kf_prompt_playbook("weird"), "playbook_other.txt");
	kf_buf_release(&sys);
	kf_buf_release(&user);
	kf_buf_release(&user2);
	kf_task_free(t);
}

/* The task's baselines are part of the target: on a GPU their measured times ("cuBLAS takes X here");
 * on the cpu backend only the CPU-clock ratio, said to be one, and for a library call that cannot run there
 * no number at all; never a CPU time presented as a GPU time. A rejected baseline is not mentioned. */
static void test_baselines_in_target(void)
{
	struct kf_task *t = load_task();
	struct kf_buf sys = KF_BUF_INIT(1 << 20), user = KF_BUF_INIT(1 << 20);
	struct kf_err err = KF_ERR_INIT;
	struct kf_prompt_input in = {0};
	size_t st = 0;
	if (!t)
		return;
	struct kf_prompt_baseline bl = {.shape = "B=4096 N=4096",
					.ref_ns = 2.41e6,
					.clock = "gpu",
					.floor_ns = 27.96e3,
					.bound = "memory",
					.peaks = "NVIDIA H100 SXM (table)",
					.n_baselines = 3};
	bl.baselines[0] = (struct kf_prompt_vs){"cublas.gemm", true, 41.7e3, 41.7e3 / 2.41e6, "timed"};
	bl.baselines[1] = (struct kf_prompt_vs){"baseline.cu", false, 120e3, 120e3 / 2.41e6, "timed"};
	bl.baselines[2] = (struct kf_prompt_vs){"broken.cu", false, 0, 0, "rejected"};
	in.task = t;
	in.reference_source = "// the reference\n";
	in.arch = "sm_90";
	in.clock = "gpu";
	in.baseline = &bl;
	CHECKF(kf_prompt_build(&in, &sys, &user, &st, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(user.data,
		       "- cuBLAS (`cublas.gemm`, the library call a user would otherwise run) takes 41.7 us "
		       "here (median, GPU clock): 0.02x the reference's time");
	CHECK_CONTAINS(user.data, "- `baseline.cu` (a tuned kernel shipped with the task) takes 120 us here");
	CHECK_CONTAINS(user.data, "the target is to beat the fastest of these");
	CHECK(!strstr(user.data, "broken.cu"));

	/* the cpu backend: a ratio on the CPU clock, said so; the library call has no number */
	kf_buf_reset(&sys);
	kf_buf_reset(&user);
	bl.clock = "cpu";
	in.clock = "cpu";
	bl.baselines[0] = (struct kf_prompt_vs){"cublas.gemm", true, 0, 0, "unavailable"};
	bl.baselines[1] = (struct kf_prompt_vs){"baseline.cu", false, 9.6e6, 4.0, "timed"};
	CHECKF(kf_prompt_build(&in, &sys, &user, &st, &err) == KF_OK, "%s", err.msg);
	CHECK_CONTAINS(user.data,
		       "- `baseline.cu` (a tuned kernel shipped with the task) took 4.00x the reference's "
		       "time here on the CPU clock (kforge's CPU backend: not a GPU time");
	CHECK_CONTAINS(user.data,
		       "- cuBLAS (`cublas.gemm`, the library call a user would otherwise run) cannot run on "
		       "the CPU backend: no time for it here");
	CHECK(!strstr(user.data, "9.6 ms")); /* a CPU time is never shown as a time to beat */
	CHECK(!strstr(user.data, "GPU clock"));
	CHECK(!strstr(user.data, "broken.cu"));
	kf_buf_release(&sys);
	kf_buf_release(&user);
	kf_task_free(t);
}

KF_TEST_MAIN(TEST(test_render), TEST(test_first_prompt), TEST(test_feedback_prompts),
	     TEST(test_template_override), TEST(test_expert_context), TEST(test_baselines_in_target))
