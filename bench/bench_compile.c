/* Compile cache benefit: cold compiles (sandboxed NVRTC child, fresh cache directory each) against cached
 * compiles (cache file read and checked) of a typical kernel, as medians and their ratio. Target: a
 * cached compile costs under 1/10 of a cold one. Run from the repository root (make bench), or pass a
 * kernel file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

#define COLD_RUNS 5
#define CACHED_RUNS 50
#define TARGET_RATIO 0.1

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int compile_once(const struct kf_kfile *k, const char *dir, bool want_cached, double *ms)
{
	struct kf_compile_opts o = {.backend = KF_BACKEND_CUDA, .cache_dir = dir};
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	double t0 = kf_now_ms();
	enum kf_status st = kf_compile(k, &o, &c, &err);
	*ms = kf_now_ms() - t0;
	if (st != KF_OK || !c || c->cached != want_cached) {
		fprintf(stderr, "error: compile of '%s' gave %s (cached %d): %s\n", k->path,
			kf_status_name(st), c ? c->cached : -1, err.msg);
		kf_compiled_free(c);
		return -1;
	}
	kf_compiled_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "tasks/l1/softmax_f32/reference.cu";
	char root[] = "/tmp/kforge-bench-compile-XXXXXX", dir[128], cmd[256];
	double cold[COLD_RUNS], cached[CACHED_RUNS], cold_ms, cached_ms, ratio;
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	int rc = 0;

	if (kf_kfile_load(path, &k, &err) != KF_OK) {
		fprintf(stderr, "error: %s\n", err.msg);
		return 1;
	}
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		kf_kfile_free(k);
		return 1;
	}
	/* Cold: a fresh cache directory per run, so every run forks the compiler and stores an entry. */
	for (int i = 0; i < COLD_RUNS && !rc; i++) {
		snprintf(dir, sizeof(dir), "%s/cold%d", root, i);
		rc = compile_once(k, dir, false, &cold[i]);
	}
	/* Cached: the last cold run's directory now holds the entry. */
	for (int i = 0; i < CACHED_RUNS && !rc; i++)
		rc = compile_once(k, dir, true, &cached[i]);
	if (!rc) {
		cold_ms = median(cold, COLD_RUNS);
		cached_ms = median(cached, CACHED_RUNS);
		ratio = cached_ms / cold_ms;
		printf("kernel          %s\n", path);
		printf("cold compile    %.2f ms (median of %d; sandboxed NVRTC child)\n", cold_ms, COLD_RUNS);
		printf("cached compile  %.3f ms (median of %d)\n", cached_ms, CACHED_RUNS);
		printf("cached/cold     %.4f (target < %.2f): %s\n", ratio, TARGET_RATIO,
		       ratio < TARGET_RATIO ? "ok" : "MISSED");
		if (ratio >= TARGET_RATIO)
			rc = 1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: cannot remove '%s'\n", root);
	kf_kfile_free(k);
	return rc ? 1 : 0;
}
