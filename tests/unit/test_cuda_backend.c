/* The cuda backend without a GPU: "no driver" and "stub driver" are unavailable with a clear reason
 * (called directly, and through `kforge-worker --probe cuda`), error naming and stickiness, the launch
 * checks against device limits, and the interval union used for CUPTI timing. The backend comes from the
 * worker's library (libkforge-worker.a), which the worker binary links too. On a machine with a GPU the
 * "no driver" checks skip and the init is checked to succeed instead. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/baseline.h"
#include "sandbox/cuda/cuda_int.h"
#include "sandbox/worker/backend.h"
#include "testing.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* cublasLtCreate keeps (leaks) 192 bytes when it fails for want of a driver: not ours to free */
#define NVIDIA_LEAKS_BEGIN() __lsan_disable()
#define NVIDIA_LEAKS_END() __lsan_enable()
#else
#define NVIDIA_LEAKS_BEGIN() ((void)0)
#define NVIDIA_LEAKS_END() ((void)0)
#endif

static const char *worker_path(void)
{
	const char *w = getenv("KFORGE_WORKER");
	return w && *w ? w : "build/kforge-worker";
}

/* Runs cmd through the shell; its stdout into out (bounded), returns the exit status or -1. */
static int run_cmd(const char *cmd, char *out, size_t out_len)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, out_len - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_init_no_driver(void)
{
	struct kf_worker_opts opts = {.backend = KF_BACKEND_CUDA};
	struct kf_device_info info;
	char msg_buf[512] = "", *msg = msg_buf;
	enum kf_status st = kf_backend_cuda.init(&opts, &info, msg, sizeof(msg_buf));
	if (st == KF_OK) {
		/* a real GPU here: the facts must be filled */
		CHECK(info.sm_count > 0);
		CHECK(strncmp(info.arch, "sm_", 3) == 0);
		CHECK(info.max_threads_per_block >= 1024);
		kf_backend_cuda.shutdown();
		KF_SKIP("a CUDA driver and device are present");
	}
	CHECK_EQ_INT(st, KF_ERR_UNAVAILABLE);
	fprintf(stderr, "  reason: %s\n", msg);
	/* no libcuda.so.1 on the loader path, or a stub/no device/mismatch: each names its cause */
	CHECKF(strstr(msg, "no CUDA driver: libcuda.so.1") || strstr(msg, "stub") ||
		   strstr(msg, "no CUDA device") || strstr(msg, "mismatch"),
	       "unclear reason '%s'", msg);
	CHECK(strstr(msg, "cannot open shared object file") || !strstr(msg, "no CUDA driver"));
	/* every op refuses cleanly before a successful init */
	uint64_t d = 1;
	CHECK_EQ_INT(kf_backend_cuda.alloc(64, &d, msg, sizeof(msg_buf)), KF_ERR_INTERNAL);
	CHECK_EQ_INT(d, 0);
	CHECK_CONTAINS(msg, "not initialized");
	bool fatal = true;
	struct kf_be_run_stats stats;
	CHECK_EQ_INT(kf_backend_cuda.run(NULL, 0, false, &stats, &fatal, msg, sizeof(msg_buf)),
		     KF_ERR_INTERNAL);
	CHECK(!fatal);
	kf_backend_cuda.shutdown(); /* harmless when never initialized */
}

static void test_probe_no_driver(void)
{
	char cmd[1024], out_buf[4096], *out = out_buf;
	if (access(worker_path(), X_OK) != 0)
		KF_SKIP("no kforge-worker binary (set KFORGE_WORKER)");
	snprintf(cmd, sizeof(cmd), "'%s' --probe cuda 2>/dev/null", worker_path());
	int rc = run_cmd(cmd, out, sizeof(out_buf));
	if (rc == 0)
		KF_SKIP("a CUDA device is present");
	CHECK_EQ_INT(rc, 4);
	CHECK_CONTAINS(out, "available=0");
	CHECK_CONTAINS(out, "status=unavailable");
	CHECK_CONTAINS(out, "reason=");
}

/* With the toolkit's stub on the loader path as libcuda.so.1, cuInit returns 34 and the reason says so. */
static void test_probe_stub_driver(void)
{
	const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
	char dir[] = "/tmp/kforge-stub.XXXXXX", link_path[256], cmd[1024], out_buf[4096], *out = out_buf;
	if (access(stub, R_OK) != 0)
		KF_SKIP("no CUDA toolkit stub libcuda.so");
	if (access(worker_path(), X_OK) != 0)
		KF_SKIP("no kforge-worker binary (set KFORGE_WORKER)");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(link_path, sizeof(link_path), "%s/libcuda.so.1", dir);
	CHECK(symlink(stub, link_path) == 0);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' '%s' --probe cuda 2>/dev/null", dir, worker_path());
	int rc = run_cmd(cmd, out, sizeof(out_buf));
	unlink(link_path);
	rmdir(dir);
	CHECK_EQ_INT(rc, 4);
	CHECK_CONTAINS(out, "available=0");
	CHECK_CONTAINS(out, "stub");
	CHECK_CONTAINS(out, "34");
	CHECK_CONTAINS(out, "CUDA_ERROR_STUB_LIBRARY");

	/* the stubs folder itself on the path (it holds only libcuda.so): still recognized as the stub */
	snprintf(cmd, sizeof(cmd),
		 "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs '%s' --probe cuda 2>/dev/null", worker_path());
	rc = run_cmd(cmd, out, sizeof(out_buf));
	CHECK_EQ_INT(rc, 4);
	CHECK_CONTAINS(out, "reason=CUDA driver is a stub (cuInit returned 34 CUDA_ERROR_STUB_LIBRARY)");
}

static void test_error_names(void)
{
	CHECK_STR(kf_cu_error_name((CUresult)700), "CUDA_ERROR_ILLEGAL_ADDRESS");
	CHECK_STR(kf_cu_error_name((CUresult)34), "CUDA_ERROR_STUB_LIBRARY");
	CHECK_STR(kf_cu_error_name((CUresult)12345), "CUDA_ERROR_12345");
	const int sticky[] = {700, 702, 710, 714, 715, 716, 717, 718, 719};
	for (size_t i = 0; i < KF_ARRAY_SIZE(sticky); i++)
		CHECKF(kf_cu_error_sticky((CUresult)sticky[i]), "%d should be sticky", sticky[i]);
	const int soft[] = {1, 2, 200, 209, 500, 701, 720};
	for (size_t i = 0; i < KF_ARRAY_SIZE(soft); i++)
		CHECKF(!kf_cu_error_sticky((CUresult)soft[i]), "%d should not be sticky", soft[i]);
}

static void test_union(void)
{
	/* [0,10) [5,15) [20,30) [30,31) [25,26): 15 + 11 = 26 */
	uint64_t s[] = {20, 0, 5, 30, 25}, e[] = {30, 10, 15, 31, 26};
	CHECK_EQ_INT(kf_cupti_union_ns(s, e, 5), 26);
	/* nested child kernel inside its parent counts once */
	uint64_t s2[] = {100, 120}, e2[] = {200, 150};
	CHECK_EQ_INT(kf_cupti_union_ns(s2, e2, 2), 100);
	/* a gap between two launches is not counted */
	uint64_t s3[] = {0, 1000}, e3[] = {400, 1300};
	CHECK_EQ_INT(kf_cupti_union_ns(s3, e3, 2), 700);
	CHECK_EQ_INT(kf_cupti_union_ns(NULL, NULL, 0), 0);
	/* a record with end < start (clock glitch) contributes nothing */
	uint64_t s4[] = {50}, e4[] = {40};
	CHECK_EQ_INT(kf_cupti_union_ns(s4, e4, 1), 0);
}

/* CUPTI loads without a driver but refuses to record: the backend must then fall back to events. */
static void test_cupti_without_driver(void)
{
	char why_buf[256] = "", *why = why_buf;
	double t = 1;
	uint32_t seen = 1;
	setenv("KFORGE_CUPTI", "0", 1);
	CHECK(!kf_cupti_start(why, sizeof(why_buf)));
	CHECK_CONTAINS(why, "KFORGE_CUPTI=0");
	unsetenv("KFORGE_CUPTI");
	if (kf_cupti_start(why, sizeof(why_buf))) {
		kf_cupti_stop();
		KF_SKIP("CUPTI records activity here (a driver is present)");
	}
	fprintf(stderr, "  cupti: %s\n", why);
	CHECK(strstr(why, "no CUPTI") || strstr(why, "cuptiActivity"));
	CHECK(!kf_cupti_collect(&t, &seen, why, sizeof(why_buf)));
	CHECK_CONTAINS(why, "not active");
	CHECK(t == 0 && seen == 0);
}

/* The launch checks need device facts only; they run before any driver call. H100-like limits. */
static void test_launch_checks(void)
{
	struct kf_device_info d;
	memset(&d, 0, sizeof(d));
	snprintf(d.name, sizeof(d.name), "NVIDIA H100");
	d.max_threads_per_block = 1024;
	d.max_block[0] = 1024, d.max_block[1] = 1024, d.max_block[2] = 64;
	d.max_grid[0] = 2147483647, d.max_grid[1] = 65535, d.max_grid[2] = 65535;
	d.max_smem_per_block = 49152;
	d.max_smem_per_block_optin = 232448;
	const int regs_per_block = 65536;
	struct kf_cuda_func_limits f = {.regs = 32, .static_smem = 1024, .max_threads = 1024};
	struct kf_be_launch L = {
	    .kernel = "k", .grid = {100, 1, 1}, .block = {256, 1, 1}, .smem_bytes = 4096, .line = 7};
	char msg_buf[512], *msg = msg_buf;

	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_OK);

	L.grid[1] = 70000;
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "line 7: grid y = 70000");
	L.grid[1] = 1;
	L.block[2] = 65;
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "block z = 65");
	L.block[0] = 64, L.block[1] = 32, L.block[2] = 1; /* 2048 threads */
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "2048 threads");
	L.block[0] = 1024, L.block[1] = 1;
	f.regs = 128; /* 1024 x 128 = 131072 registers */
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "128 registers per thread");
	f.regs = 64;
	f.max_threads = 512; /* the function's own limit */
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "at most 512 threads");
	f.max_threads = 1024;
	L.smem_bytes = 232448; /* + 1024 static is over the opt-in limit */
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "233472 bytes of shared memory");
	L.grid[0] = 0;
	L.smem_bytes = 0;
	CHECK_EQ_INT(kf_cuda_launch_check(&L, &d, regs_per_block, &f, msg, sizeof(msg_buf)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "grid x = 0");
}

/* Library calls with no GPU: each library loads (it is in the toolkit here), and creating its handle
 * fails cleanly as unavailable with the library's words; malformed calls are invalid. On a GPU the
 * handle exists and these checks do not apply. */
static void test_library_no_gpu(void)
{
	int64_t cells[KF_MM_NARGS] = {0};
	void *args[KF_MM_NARGS];
	struct kf_be_launch L = {.kernel = "@cublas.gemm", .args = args, .n_args = KF_MM_NARGS};
	char msg[512] = "";
	enum kf_status st;
	double one = 1;

	if (kf_backend_cuda.init(&(struct kf_worker_opts){.backend = KF_BACKEND_CUDA},
				 &(struct kf_device_info){0}, msg, sizeof(msg)) == KF_OK) {
		kf_backend_cuda.shutdown();
		KF_SKIP("a GPU is present: handles would be created");
	}
	for (int i = 0; i < KF_MM_NARGS; i++)
		args[i] = &cells[i];
	cells[KF_MM_M] = cells[KF_MM_N] = cells[KF_MM_K] = 8;
	cells[KF_MM_LDA] = cells[KF_MM_LDB] = cells[KF_MM_LDC] = cells[KF_MM_LDD] = 8;
	cells[KF_MM_BATCH] = 1;
	memcpy(&cells[KF_MM_ALPHA], &one, 8);
	L.buffer_mask = 1u << KF_MM_A | 1u << KF_MM_B | 1u << KF_MM_D;
	st = kf_culib_prepare(0, &L, NULL, msg, sizeof(msg));
	if (st == KF_ERR_UNAVAILABLE && strstr(msg, "not installed"))
		KF_SKIP(msg);
	CHECK_EQ_INT(st, KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(msg, "cublasCreate: CUBLAS_STATUS_");
	L.kernel = "@cublasLt.matmul";
	NVIDIA_LEAKS_BEGIN();
	st = kf_culib_prepare(1, &L, NULL, msg, sizeof(msg));
	NVIDIA_LEAKS_END();
	CHECK_EQ_INT(st, KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(msg, "cublasLtCreate: CUBLAS_STATUS_");
	/* an epilogue cublas.gemm does not have is the parent's mistake: invalid, before any handle */
	L.kernel = "@cublas.gemm";
	cells[KF_MM_ACTIVATION] = KF_LIB_ACT_RELU;
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "no epilogue");
	cells[KF_MM_ACTIVATION] = KF_LIB_ACT_NONE;
	cells[KF_MM_K] = (int64_t)1 << 40; /* outside cuBLAS's 32-bit sizes */
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID);
	cells[KF_MM_K] = 8;
	L.n_args = KF_MM_NARGS - 1;
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "takes");
	L.n_args = KF_MM_NARGS;
	L.kernel = "@cudnn.conv_fwd";
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)),
		     KF_ERR_INVALID); /* 27 cells, conv takes 23 */
	L.kernel = "@cudnn.sdpa";
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID);
	L.n_args = KF_SDPA_NARGS;
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(msg, "cudnnCreate");
	L.kernel = "@cudnn.norm";
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID); /* 14 cells, norm 9 */
	CHECK_CONTAINS(msg, "cudnn.norm takes 9 arguments, not 14");
	L.n_args = KF_NORM_NARGS;
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(msg, "cudnnCreate");
	L.kernel = "cublas.gemm"; /* a plain name is never a library call */
	CHECK_EQ_INT(kf_culib_prepare(0, &L, NULL, msg, sizeof(msg)), KF_ERR_INVALID);
	CHECK(!kf_culib_is_call("cublas.gemm"));
	CHECK(kf_culib_is_call("@cudnn.conv_fwd"));
	CHECK_EQ_INT(kf_culib_run(5, args, msg, sizeof(msg)), KF_ERR_INTERNAL); /* never prepared */
	kf_culib_release(true);
}

/* `kforge-worker --library-check`: the three libraries load, every entry point resolves, and the
 * host-side descriptors of the sample calls (cuDNN's attention and norm graphs included) are accepted. */
static void test_library_check(void)
{
	char out[4096], cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "%s --library-check 2>&1", worker_path());
	rc = run_cmd(cmd, out, sizeof(out));
	if (rc == 4)
		KF_SKIP("a library is not installed here");
	CHECKF(rc == 0, "exit %d: %s", rc, out);
	CHECK_CONTAINS(out, "cublas=ok\n");
	CHECK_CONTAINS(out, "cublaslt_describe=ok\n");
	CHECK_CONTAINS(out, "cudnn_conv_describe=ok\n");
	CHECK_CONTAINS(out, "cudnn_sdpa_graph_bhsd_causal=ok\n");
	CHECK_CONTAINS(out, "cudnn_sdpa_graph_bshd_full=ok\n");
	CHECK_CONTAINS(out, "cudnn_norm_graph_layer_f32=ok\n");
	CHECK_CONTAINS(out, "cudnn_norm_graph_rms_bf16=ok\n");
	CHECK_CONTAINS(out, "cudnn_norm_graph_rms_bf16_bias=ok\n");
	CHECK_CONTAINS(out, "failed=0\n");
}

KF_TEST_MAIN(TEST(test_init_no_driver), TEST(test_probe_no_driver), TEST(test_probe_stub_driver),
	     TEST(test_error_names), TEST(test_union), TEST(test_cupti_without_driver),
	     TEST(test_launch_checks), TEST(test_library_no_gpu), TEST(test_library_check))
