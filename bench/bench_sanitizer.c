/* make bench: what NVRTC-first and the cpu sanitizer cost. For two verifications (the softmax example's
 * reference, a tiled matmul with 32 barriers per thread): the time of the sanitizer's runs as a ratio to
 * the same verification without it (warm caches, median of 3), and the wall ratio, with the accesses it
 * checked;
 * the NVRTC compile every cpu verification now starts with, cold and cached, as a ratio to the plain
 * cpu build; and the sanitizer build (clang, instrumented) as a ratio to the plain cpu build. All times
 * are CPU wall times on this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "sandbox/sandbox.h"
#include "verifier/verifier.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median wall time of 3 verifications (after one warm-up that fills the compile and reference caches). */
static int verify_ms(const struct kf_task *t, const char *kernel, bool sanitize, double *ms,
		     struct kf_eval_outcome **last)
{
	double w[3];
	for (int i = -1; i < 3; i++) {
		struct kf_eval_opts eo;
		struct kf_eval_outcome *r = NULL;
		struct kf_err err = KF_ERR_INIT;
		kf_eval_opts_init(&eo);
		eo.backend = KF_BACKEND_CPU;
		eo.seed = 4242;
		eo.no_sanitizer = !sanitize;
		double t0 = kf_now_ms();
		if (kf_eval_file(t, kernel, &eo, &r, &err) || r->verdict != KF_VERDICT_PASS) {
			fprintf(stderr, "bench_sanitizer: %s: %s\n", kernel, r ? r->reason : err.msg);
			kf_eval_outcome_free(r);
			return 1;
		}
		if (i >= 0)
			w[i] = kf_now_ms() - t0;
		if (i == 2 && last)
			*last = r;
		else
			kf_eval_outcome_free(r);
	}
	qsort(w, 3, sizeof(double), cmp_d);
	*ms = w[1];
	return 0;
}

/* Median of 3 compiles of k with o (no_cache for a cold compile). */
static int compile_ms(const struct kf_kfile *k, const struct kf_compile_opts *o, double *ms)
{
	double w[3];
	for (int i = 0; i < 3; i++) {
		struct kf_compiled *c = NULL;
		struct kf_err err = KF_ERR_INIT;
		double t0 = kf_now_ms();
		enum kf_status st = kf_compile(k, o, &c, &err);
		w[i] = kf_now_ms() - t0;
		kf_compiled_free(c);
		if (st) {
			fprintf(stderr, "bench_sanitizer: compile: %s\n", err.msg);
			return 1;
		}
	}
	qsort(w, 3, sizeof(double), cmp_d);
	*ms = w[1];
	return 0;
}

int main(void)
{
	static const char *const cases[][2] = {
	    {"tasks/examples/softmax_rows_f32/task.json", "tasks/examples/softmax_rows_f32/reference.cu"},
	    {"tasks/examples/matmul_f32/task.json", "tests/cpu/candidates/matmul_tiled_ok.cu"},
	};
	int rc = 0;
	for (size_t i = 0; i < 2 && !rc; i++) {
		struct kf_task *t = NULL;
		struct kf_err err = KF_ERR_INIT;
		struct kf_eval_outcome *o = NULL;
		double plain, san;
		if (kf_task_load(cases[i][0], 0, NULL, &t, &err)) {
			fprintf(stderr, "bench_sanitizer: %s\n", err.msg);
			return 1;
		}
		rc = verify_ms(t, cases[i][1], false, &plain, NULL) ||
		     verify_ms(t, cases[i][1], true, &san, &o);
		if (!rc) {
			const struct kf_verify_result *r = o->verify;
			/* the sanitized runs' own time is the pass's cost; the wall ratio also carries the
			 * shapes checked in parallel and this machine's noise */
			printf(
			    "verify %-17s sanitizer pass %7.1f ms = %.2fx a verification without it (%.1f "
			    "ms; "
			    "wall with it %.1f ms = %.2fx); %u shapes, %llu accesses, %.0f ns per access\n",
			    t->name, r->san_ms, r->san_ms / plain, plain, san, san / plain, r->san_shapes,
			    (unsigned long long)r->san_accesses,
			    r->san_accesses ? r->san_ms * 1e6 / (double)r->san_accesses : 0.0);
		}
		kf_eval_outcome_free(o);
		kf_task_free(t);
	}
	if (rc)
		return rc;

	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	if (kf_kfile_load("tasks/examples/softmax_rows_f32/reference.cu", &k, &err)) {
		fprintf(stderr, "bench_sanitizer: %s\n", err.msg);
		return 1;
	}
	struct kf_compile_opts cpu_cold = {.backend = KF_BACKEND_CPU, .no_cache = true};
	struct kf_compile_opts nv_cold = {.backend = KF_BACKEND_CUDA, .no_cache = true};
	struct kf_compile_opts nv_warm = {.backend = KF_BACKEND_CUDA};
	struct kf_compile_opts san_cold = {.backend = KF_BACKEND_CPU, .instrument = true, .no_cache = true};
	double cpu_ms, nv_ms, nv_cached_ms, san_ms;
	rc = compile_ms(k, &cpu_cold, &cpu_ms) || compile_ms(k, &nv_cold, &nv_ms) ||
	     compile_ms(k, &nv_warm, &nv_cached_ms) || compile_ms(k, &san_cold, &san_ms);
	if (!rc) {
		printf("cpu build (g++, baseline):        %8.1f ms\n", cpu_ms);
		printf("NVRTC first, cold:                %8.1f ms = %.2fx the cpu build\n", nv_ms,
		       nv_ms / cpu_ms);
		printf("NVRTC first, cached:              %8.1f ms = %.3fx the cpu build\n", nv_cached_ms,
		       nv_cached_ms / cpu_ms);
		printf("sanitizer build (clang), cold:    %8.1f ms = %.2fx the cpu build (cached like it)\n",
		       san_ms, san_ms / cpu_ms);
	}
	kf_kfile_free(k);
	return rc;
}
