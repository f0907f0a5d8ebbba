/* make bench: the timing protocol's calibration and cost (docs/spec/verification.md, "When a speedup is
 * significant"). For two example tasks, the reference profiled against itself N times (KF_BENCH_AA_RUNS,
 * default 10) on the cpu backend: how many runs called the difference significant under the calibrated
 * rule (lower bound above 1 + the A/A band) and how many would have under the uncalibrated one (lower
 * bound above 1), the bands measured; and what a profile costs per candidate, as a ratio to one
 * verification of the same kernel measured in the same run. CPU times, labelled so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "profiler/timing.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int one_task(const char *task_path, int runs)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	double *verify_ms = calloc((size_t)runs, sizeof(double)),
	       *timing_ms = calloc((size_t)runs, sizeof(double));
	double band_min = 1e9, band_max = 0, band_sum = 0;
	int calibrated = 0, uncalibrated = 0, done = 0, rc = 0;

	if (!verify_ms || !timing_ms || kf_task_load(task_path, 0, NULL, &t, &err)) {
		fprintf(stderr, "bench_timing: %s\n", err.msg[0] ? err.msg : "out of memory");
		free(verify_ms);
		free(timing_ms);
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		struct kf_eval_opts eo;
		struct kf_eval_outcome *ev = NULL;
		kf_eval_opts_init(&eo);
		eo.profile = true;
		eo.seed = 7000 + (uint64_t)i;
		if (kf_eval_file(t, t->reference, &eo, &ev, &err) || ev->verdict != KF_VERDICT_PASS ||
		    !ev->profile || !ev->profile->n_shapes) {
			fprintf(stderr, "bench_timing: %s: %s\n", task_path, ev ? ev->reason : err.msg);
			kf_eval_outcome_free(ev);
			rc = 1;
			break;
		}
		const struct kf_profile_shape *ps = &ev->profile->shapes[0];
		calibrated += kf_ci_significant(&ps->speedup) || ps->speedup.hi < 1 - ps->noise_band;
		uncalibrated += ps->speedup.lo > 1 || ps->speedup.hi < 1;
		band_sum += ps->noise_band;
		band_min = ps->noise_band < band_min ? ps->noise_band : band_min;
		band_max = ps->noise_band > band_max ? ps->noise_band : band_max;
		verify_ms[done] = ev->verify->elapsed_ms;
		timing_ms[done] = ev->profile_ms;
		done++;
		kf_eval_outcome_free(ev);
	}
	if (done) {
		qsort(verify_ms, (size_t)done, sizeof(double), cmp_d);
		qsort(timing_ms, (size_t)done, sizeof(double), cmp_d);
		printf("A/A %s (cpu clock): %d of %d runs significant with the band (%d without it); band "
		       "%.1f%%-%.1f%% (mean %.1f%%)\n",
		       t->name, calibrated, done, uncalibrated, band_min * 100, band_max * 100,
		       band_sum / done * 100);
		printf("timing protocol %s: %.0f ms per candidate (median) = %.2fx a verification (%.0f ms), "
		       "CPU time\n",
		       t->name, timing_ms[done / 2], timing_ms[done / 2] / verify_ms[done / 2],
		       verify_ms[done / 2]);
	}
	kf_task_free(t);
	free(verify_ms);
	free(timing_ms);
	return rc;
}

int main(void)
{
	const char *env = getenv("KF_BENCH_AA_RUNS");
	int runs = env ? atoi(env) : 10; /* NOLINT(cert-err34-c): a bench knob, 0 or junk means the default */
	if (runs < 1 || runs > 1000)
		runs = 10;
	return one_task("tasks/examples/softmax_rows_f32/task.json", runs) |
	       one_task("tasks/examples/matmul_f32/task.json", runs);
}
