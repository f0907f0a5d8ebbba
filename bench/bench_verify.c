/* make bench: the verifier's own cost. For the softmax example (the reference verified against itself):
 * the parent-side time per candidate (input generation, comparison, bookkeeping: everything but the
 * kernels and the workers), as a ratio against one worker start measured in the same run, plus the
 * total wall time of a verification. Target (issue 4): parent-side under 50 ms plus the worker start. */
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

int main(void)
{
	const char *task_path = "tasks/examples/softmax_rows_f32/task.json";
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	struct kf_kfile *k = NULL;
	struct kf_compiled *c = NULL;
	struct kf_plan *p = NULL;
	struct kf_compile_opts co = {0};
	double start_ms[5], parent_ms[3], wall_ms[3];
	int rc = 0;

	if (kf_task_load(task_path, 0, NULL, &t, &err) || kf_kfile_load(t->reference, &k, &err) ||
	    kf_kfile_bind(k, t, &err) || kf_compile(k, &co, &c, &err) ||
	    kf_plan_make(k, t, &t->shapes_public[0], &p, &err)) {
		fprintf(stderr, "bench_verify: %s\n", err.msg);
		return 1;
	}
	/* baseline: start a worker for this module and end it */
	for (int i = 0; i < 5; i++) {
		struct kf_worker_opts wo = {0};
		struct kf_session *s = NULL;
		double t0 = kf_now_ms();
		wo.backend = KF_BACKEND_CPU;
		if (kf_session_start(&wo, c, p, 1 << 20, &s, &err)) {
			fprintf(stderr, "bench_verify: %s\n", err.msg);
			return 1;
		}
		kf_session_end(s, NULL);
		start_ms[i] = kf_now_ms() - t0;
	}
	for (int i = 0; i < 3; i++) {
		struct kf_eval_opts eo;
		struct kf_eval_outcome *ev = NULL;
		const struct kf_verify_result *r;
		kf_eval_opts_init(&eo); /* verification only, as kforge verify runs it */
		eo.seed =
		    1000 + (uint64_t)i; /* fixed seeds: the reference cache is warm after the first run */
		if (kf_eval_file(t, t->reference, &eo, &ev, &err) || ev->verdict != KF_VERDICT_PASS) {
			fprintf(stderr, "bench_verify: %s\n", ev ? ev->reason : err.msg);
			kf_eval_outcome_free(ev);
			return 1;
		}
		r = ev->verify;
		parent_ms[i] = r->parent_ms;
		wall_ms[i] = r->elapsed_ms;
		if (i == 2)
			printf("verify softmax example: %zu shapes, %u launches checked\n", r->n_shapes,
			       r->launches);
		kf_eval_outcome_free(ev);
	}
	qsort(start_ms, 5, sizeof(double), cmp_d);
	qsort(parent_ms, 3, sizeof(double), cmp_d);
	qsort(wall_ms, 3, sizeof(double), cmp_d);
	printf("worker start+end (baseline):      %8.1f ms (median of 5)\n", start_ms[2]);
	printf("parent-side work per candidate:   %8.1f ms = %.2fx a worker start (target < 50 ms + worker "
	       "start)\n",
	       parent_ms[1], parent_ms[1] / start_ms[2]);
	printf("whole verification (wall):        %8.1f ms = %.1fx a worker start\n", wall_ms[1],
	       wall_ms[1] / start_ms[2]);
	if (parent_ms[1] > 50.0 + start_ms[2]) {
		printf("FAIL: parent-side work over its target\n");
		rc = 1;
	}
	kf_plan_free(p);
	kf_compiled_free(c);
	kf_kfile_free(k);
	kf_task_free(t);
	return rc;
}
