/* `kforge-worker --metrics-selftest`: the GPU side of the range profiler in one command, for the device
 * check: a built-in vector add (PTX, JIT-compiled by the driver for whatever GPU is there) runs under
 * kf_cuda_metrics_collect, and the values must be plausible and the result still right after CUPTI's
 * kernel replay. Without a GPU it says why and exits 4. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/backend.h"
#include "cuda_int.h"
#include "metrics.h"

/* NVRTC 13.0 output for
 *   extern "C" __global__ void kf_selftest_vadd(const float *a, const float *b, float *c, int n)
 *   { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
 * at compute_75, so that any GPU this toolkit supports can JIT it. */
static const char vadd_ptx[] = ".version 9.0\n"
			       ".target sm_75\n"
			       ".address_size 64\n"
			       ".visible .entry kf_selftest_vadd(\n"
			       "\t.param .u64 kf_selftest_vadd_param_0,\n"
			       "\t.param .u64 kf_selftest_vadd_param_1,\n"
			       "\t.param .u64 kf_selftest_vadd_param_2,\n"
			       "\t.param .u32 kf_selftest_vadd_param_3\n"
			       ")\n"
			       "{\n"
			       "\t.reg .pred %p<2>;\n"
			       "\t.reg .f32 %f<4>;\n"
			       "\t.reg .b32 %r<6>;\n"
			       "\t.reg .b64 %rd<11>;\n"
			       "\tld.param.u64 %rd1, [kf_selftest_vadd_param_0];\n"
			       "\tld.param.u64 %rd2, [kf_selftest_vadd_param_1];\n"
			       "\tld.param.u64 %rd3, [kf_selftest_vadd_param_2];\n"
			       "\tld.param.u32 %r2, [kf_selftest_vadd_param_3];\n"
			       "\tmov.u32 %r3, %ctaid.x;\n"
			       "\tmov.u32 %r4, %ntid.x;\n"
			       "\tmov.u32 %r5, %tid.x;\n"
			       "\tmad.lo.s32 %r1, %r3, %r4, %r5;\n"
			       "\tsetp.ge.s32 %p1, %r1, %r2;\n"
			       "\t@%p1 bra $L__BB0_2;\n"
			       "\tcvta.to.global.u64 %rd4, %rd1;\n"
			       "\tmul.wide.s32 %rd5, %r1, 4;\n"
			       "\tadd.s64 %rd6, %rd4, %rd5;\n"
			       "\tcvta.to.global.u64 %rd7, %rd2;\n"
			       "\tadd.s64 %rd8, %rd7, %rd5;\n"
			       "\tld.global.f32 %f1, [%rd8];\n"
			       "\tld.global.f32 %f2, [%rd6];\n"
			       "\tadd.f32 %f3, %f2, %f1;\n"
			       "\tcvta.to.global.u64 %rd9, %rd3;\n"
			       "\tadd.s64 %rd10, %rd9, %rd5;\n"
			       "\tst.global.f32 [%rd10], %f3;\n"
			       "$L__BB0_2:\n"
			       "\tret;\n"
			       "}\n";

#define SELFTEST_N (1 << 24) /* 64 MiB per buffer: several times any L2, so DRAM traffic is measurable */

static const char *const default_metrics[] = {
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
};

struct selftest {
	uint64_t a, b, c;
	int n;
	void *args[4];
};

static int run_vadd(void *arg, char *msg, size_t msg_len)
{
	struct selftest *t = arg;
	struct kf_be_launch L;
	struct kf_be_run_stats stats;
	bool fatal = false;
	memset(&L, 0, sizeof(L));
	L.kernel = "kf_selftest_vadd";
	L.grid[0] = (uint32_t)((t->n + 255) / 256), L.grid[1] = 1, L.grid[2] = 1;
	L.block[0] = 256, L.block[1] = 1, L.block[2] = 1;
	L.args = t->args;
	L.line = 0;
	return kf_backend_cuda.run(&L, 1, false, &stats, &fatal, msg, msg_len) == KF_OK ? 0 : 1;
}

int kf_cuda_metrics_selftest_main(int argc, char **argv)
{
	const char *names[32];
	int n = 0;
	static char list[4096];
	if (argc > 2) {
		fprintf(stderr, "usage: kforge-worker --metrics-selftest [metric,...]\n");
		return 2;
	}
	if (argc == 2) {
		snprintf(list, sizeof(list), "%s", argv[1]);
		for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < 32;
		     tok = strtok_r(NULL, ",", &save))
			names[n++] = tok;
	} else {
		for (size_t i = 0; i < KF_ARRAY_SIZE(default_metrics); i++)
			names[n++] = default_metrics[i];
	}
	if (n == 0) {
		printf("ok=0\nreason=no metric given\n");
		return 1;
	}
	/* activity tracing stays off: the range profiler is the only CUPTI client in this process */
	setenv("KFORGE_CUPTI", "0", 1);
	struct kf_worker_opts opts;
	struct kf_device_info info;
	char msg[512] = "";
	memset(&opts, 0, sizeof(opts));
	opts.backend = KF_BACKEND_CUDA;
	if (kf_backend_cuda.init(&opts, &info, msg, sizeof(msg)) != KF_OK) {
		printf("ok=0\nskip=1\nreason=%s\n", msg);
		return 4;
	}
	printf("device=%s\narch=%s\n", info.name, info.arch);
	const char *kernels[] = {"kf_selftest_vadd"};
	struct selftest t;
	memset(&t, 0, sizeof(t));
	t.n = SELFTEST_N;
	size_t bytes = (size_t)SELFTEST_N * 4;
	int rc = 1;
	if (kf_backend_cuda.load((const uint8_t *)vadd_ptx, sizeof(vadd_ptx), -1, kernels, 1, msg,
				 sizeof(msg)) ||
	    kf_backend_cuda.alloc(bytes, &t.a, msg, sizeof(msg)) ||
	    kf_backend_cuda.alloc(bytes, &t.b, msg, sizeof(msg)) ||
	    kf_backend_cuda.alloc(bytes, &t.c, msg, sizeof(msg)) ||
	    kf_backend_cuda.fill32(t.a, 0x3f800000u, bytes, msg, sizeof(msg)) || /* 1.0f */
	    kf_backend_cuda.fill32(t.b, 0x40000000u, bytes, msg, sizeof(msg)) || /* 2.0f */
	    kf_backend_cuda.fill32(t.c, 0xffffffffu, bytes, msg, sizeof(msg))) { /* NaN */
		printf("ok=0\nreason=%s\n", msg);
		goto out;
	}
	t.args[0] = &t.a, t.args[1] = &t.b, t.args[2] = &t.c, t.args[3] = &t.n;
	/* warm-up outside the profiler: the JIT and first-launch costs are not what we measure */
	if (run_vadd(&t, msg, sizeof(msg))) {
		printf("ok=0\nreason=%s\n", msg);
		goto out;
	}
	double values[4 * 32];
	size_t ranges = 0;
	int ordinal = -1;
	CUcontext ctx = kf_cuda_context(&ordinal);
	rc = kf_cuda_metrics_collect(ctx, ordinal, names, n, run_vadd, &t, values, 4, &ranges, msg,
				     sizeof(msg));
	if (rc != 0) {
		printf("ok=0\n%sreason=%s\n", rc == 4 ? "skip=1\n" : "", msg);
		goto out;
	}
	printf("ranges=%zu\n", ranges);
	bool plausible = ranges == 1;
	for (int i = 0; i < n && ranges > 0; i++) {
		double v = values[i];
		printf("%s=%g\n", names[i], v);
		/* times are > 0 ns; percentages of peak lie in [0, 100] with a little slack for rounding */
		if (!isfinite(v) || v < 0 || (strstr(names[i], ".pct") && v > 101.0) ||
		    (!strcmp(names[i], "gpu__time_duration.sum") && v <= 0))
			plausible = false;
	}
	float c[4] = {0};
	if (kf_backend_cuda.dtoh(c, t.c + bytes - sizeof(c), sizeof(c), msg, sizeof(msg)) || c[0] != 3.0f ||
	    c[3] != 3.0f) {
		printf("ok=0\nreason=the result after kernel replay is wrong (%g), or %s\n", (double)c[0],
		       msg);
		rc = 1;
		goto out;
	}
	printf("ok=%d\n", plausible ? 1 : 0);
	rc = plausible ? 0 : 1;
out:
	fflush(stdout);
	kf_backend_cuda.shutdown();
	return rc;
}
