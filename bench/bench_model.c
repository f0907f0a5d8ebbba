/* make bench: what the model clock costs per candidate. For the cost-model corpus' pairs
 * (tests/data/costmodel) and the examples' tiled matmul: the cost pass (candidate, reference and the A/A
 * twin, each instrumented at the task's timing shape with its blocks sampled) as a ratio to a plain
 * verification of the same candidate on the cpu backend (warm caches, median of 3), with the blocks the
 * sampler ran and the predicted speedup it gave. All times are CPU wall times on this machine; the
 * predictions are the model's (clock "model"), not GPU times. */
#include <stdio.h>
#include <stdlib.h>

#include "eval/eval.h"
#include "profiler/model.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median3(double *w)
{
	qsort(w, 3, sizeof(double), cmp_d);
	return w[1];
}

int main(void)
{
	static const char *const cases[][2] = {
	    {"tests/data/costmodel/copy_strided/task.json", "tests/data/costmodel/copy_strided/fast.cu"},
	    {"tests/data/costmodel/transpose_smem/task.json", "tests/data/costmodel/transpose_smem/fast.cu"},
	    {"tests/data/costmodel/softmax_rows/task.json", "tasks/examples/softmax_rows_f32/baseline.cu"},
	    {"tasks/examples/matmul_f32/task.json", "tasks/examples/matmul_f32/tiled.cu"},
	};
	if (kf_cpu_sanitizer_unavailable()) {
		printf("no model clock here: %s\n", kf_cpu_sanitizer_unavailable());
		return 0;
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		struct kf_task *t = NULL;
		struct kf_kfile *k = NULL;
		struct kf_err err = KF_ERR_INIT;
		double wv[3], wm[3];
		struct kf_model_result *m = NULL;
		if (kf_task_load(cases[i][0], 0, NULL, &t, &err) || kf_kfile_load(cases[i][1], &k, &err) ||
		    kf_kfile_bind(k, t, &err)) {
			fprintf(stderr, "bench_model: %s\n", err.msg);
			return 1;
		}
		for (int r = -1; r < 3; r++) { /* one warm-up fills the compile and reference caches */
			struct kf_eval_opts eo;
			struct kf_eval_outcome *o = NULL;
			struct kf_model_opts mo;
			kf_eval_opts_init(&eo);
			eo.backend = KF_BACKEND_CPU;
			eo.seed = 4242;
			double t0 = kf_now_ms();
			if (kf_eval_file(t, cases[i][1], &eo, &o, &err) || o->verdict != KF_VERDICT_PASS) {
				fprintf(stderr, "bench_model: %s: %s\n", cases[i][1],
					o ? o->reason : err.msg);
				return 1;
			}
			double t1 = kf_now_ms();
			kf_eval_outcome_free(o);
			kf_model_opts_init(&mo);
			mo.seed = 4242;
			kf_model_result_free(m);
			m = NULL;
			if (kf_model_run(t, k, &mo, &m, &err)) {
				fprintf(stderr, "bench_model: %s: %s\n", cases[i][1], err.msg);
				return 1;
			}
			if (r >= 0) {
				wv[r] = t1 - t0;
				wm[r] = kf_now_ms() - t1;
			}
		}
		double v = median3(wv), c = median3(wm);
		printf("model %-17s cost pass %7.1f ms = %.2fx a plain verification (%.1f ms); candidate "
		       "%llu of "
		       "%llu blocks run in launch 1; predicted speedup %.2fx (model)\n",
		       t->name, c, c / v, v, (unsigned long long)m->cand.counts[0].blocks_run,
		       (unsigned long long)m->cand.counts[0].blocks_total, m->speedup);
		kf_model_result_free(m);
		kf_kfile_free(k);
		kf_task_free(t);
	}
	return 0;
}
