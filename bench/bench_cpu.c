/* make bench: the cpu backend against native C in the same run. A tiled 256^3 f32 matmul (shared memory,
 * two barriers per tile; tests/cpu/tiled_matmul.cu) and a naive one (no barriers) run through the fiber
 * runtime, each against a plain C triple loop built with -O2 here; also the fiber-switch cost and the
 * compile time of a typical kernel. Targets: tiled <= 15x, naive <= 5x. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kf.h"
#include "sandbox/cpu/cpu.h"
#include "sandbox/cpu/shim/kf_rt_abi.h"

#define N 256
#define REPS 5

static const char naive_src[] =
    "// kforge:launch matmul_naive grid=(cdiv(N,16),cdiv(N,16)) block=(16,16) args=(A, B, C, N)\n"
    "extern \"C\" __global__ void matmul_naive(const float *A, const float *B, float *C, int n)\n"
    "{\n"
    "  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (row >= n || col >= n) return;\n"
    "  float acc = 0.0f;\n"
    "  for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];\n"
    "  C[row * n + col] = acc;\n"
    "}\n";

struct mod {
	void *so;
	int fd;
	kf_rt_launch_fn launch;
	kf_rt_entry_fn entry;
	kf_rt_switch_ns_fn switch_ns;
	kf_rt_shutdown_fn shutdown;
};

static int mod_build(struct kf_kfile *k, const char *kernel, struct mod *m, double *compile_ms)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o = {.backend = KF_BACKEND_CPU};
	struct kf_compiled *c = NULL;
	double t0 = kf_now_ms();
	if (kf_cpu_compile(k, &o, &c, &err) != KF_OK) {
		fprintf(stderr, "bench_cpu: compile failed: %s\n%s\n", err.msg, c ? c->log : "");
		kf_compiled_free(c);
		return -1;
	}
	*compile_ms = kf_now_ms() - t0;
	m->fd = memfd_create("bench-cpu", MFD_CLOEXEC);
	if (m->fd < 0 || write(m->fd, c->image, c->image_len) != (ssize_t)c->image_len) {
		kf_compiled_free(c);
		return -1;
	}
	kf_compiled_free(c);
	char path[64], sym[160];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", m->fd);
	m->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!m->so) {
		fprintf(stderr, "bench_cpu: %s\n", dlerror());
		return -1;
	}
	snprintf(sym, sizeof(sym), KF_RT_ENTRY_PREFIX "%s", kernel);
	m->launch = (kf_rt_launch_fn)dlsym(m->so, "kf_rt_launch");
	m->entry = (kf_rt_entry_fn)dlsym(m->so, sym);
	m->switch_ns = (kf_rt_switch_ns_fn)dlsym(m->so, "kf_rt_switch_ns");
	m->shutdown = (kf_rt_shutdown_fn)dlsym(m->so, "kf_rt_shutdown");
	return m->launch && m->entry && m->switch_ns && m->shutdown ? 0 : -1;
}

static void mod_drop(struct mod *m)
{
	if (m->so) {
		m->shutdown();
		dlclose(m->so);
	}
	if (m->fd >= 0)
		close(m->fd);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_d);
	return v[n / 2];
}

static void native(const float *A, const float *B, float *C, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float acc = 0.0f;
			for (int k = 0; k < n; k++)
				acc += A[i * n + k] * B[k * n + j];
			C[i * n + j] = acc;
		}
}

/* Median ms of REPS launches (after one warm-up); checks the result against ref. */
static double time_mod(struct mod *m, float *A, float *B, float *C, const float *ref, int *ok)
{
	int n = N;
	void *args[] = {&A, &B, &C, &n};
	uint32_t g[3] = {N / 16, N / 16, 1}, b[3] = {16, 16, 1};
	char msg[512];
	double t[REPS];
	*ok = 1;
	for (int r = -1; r < REPS; r++) {
		memset(C, 0, sizeof(float) * N * N);
		double t0 = kf_now_ms();
		if (m->launch(m->entry, g, b, 0, args, msg, sizeof(msg)) != KF_RT_OK) {
			fprintf(stderr, "bench_cpu: launch failed: %s\n", msg);
			*ok = 0;
			return -1;
		}
		if (r >= 0)
			t[r] = kf_now_ms() - t0;
	}
	for (int i = 0; i < N * N; i++)
		if (!(fabsf(C[i] - ref[i]) <= 1e-3f * (1.0f + fabsf(ref[i]))))
			*ok = 0;
	return median(t, REPS);
}

int main(void)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kfile *tiled = NULL, *naive = NULL;
	if (kf_kfile_load("tests/cpu/tiled_matmul.cu", &tiled, &err) != KF_OK ||
	    kf_kfile_parse("naive.cu", naive_src, strlen(naive_src), &naive, &err) != KF_OK) {
		fprintf(stderr, "bench_cpu: %s\n", err.msg);
		return 1;
	}
	float *A = malloc(sizeof(float) * N * N), *B = malloc(sizeof(float) * N * N);
	float *C = malloc(sizeof(float) * N * N), *R = malloc(sizeof(float) * N * N);
	srand(1);
	for (int i = 0; i < N * N; i++) {
		A[i] = (float)rand() / RAND_MAX - 0.5f;
		B[i] = (float)rand() / RAND_MAX - 0.5f;
	}
	double tn[REPS];
	native(A, B, R, N);
	for (int r = 0; r < REPS; r++) {
		double t0 = kf_now_ms();
		native(A, B, C, N);
		tn[r] = kf_now_ms() - t0;
	}
	double native_ms = median(tn, REPS);

	struct mod mt = {.fd = -1}, mn = {.fd = -1};
	double ct, cn;
	int rc = 0, ok_t = 0, ok_n = 0;
	if (mod_build(tiled, "matmul_tiled", &mt, &ct) != 0 ||
	    mod_build(naive, "matmul_naive", &mn, &cn) != 0) {
		rc = 1;
		goto out;
	}
	double tiled_ms = time_mod(&mt, A, B, C, R, &ok_t);
	double naive_ms = time_mod(&mn, A, B, C, R, &ok_n);
	double sw = mt.switch_ns();
	printf("native C triple loop (-O2), 256^3 f32: %.2f ms\n", native_ms);
	printf("cpu backend tiled matmul (2 barriers/tile): %.2f ms  ratio %.1fx (target <= 15x)%s\n",
	       tiled_ms, tiled_ms / native_ms, ok_t ? "" : "  WRONG RESULT");
	printf("cpu backend naive matmul (no barriers):    %.2f ms  ratio %.1fx (target <= 5x)%s\n", naive_ms,
	       naive_ms / native_ms, ok_n ? "" : "  WRONG RESULT");
	printf("fiber switch: %.1f ns\n", sw);
	printf("compile time (host g++ with the shim): tiled %.0f ms, naive %.0f ms\n", ct, cn);
	rc = ok_t && ok_n ? 0 : 1;
out:
	mod_drop(&mt);
	mod_drop(&mn);
	kf_kfile_free(tiled);
	kf_kfile_free(naive);
	free(A);
	free(B);
	free(C);
	free(R);
	return rc;
}
