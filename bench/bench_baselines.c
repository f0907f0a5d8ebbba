/* make bench: what the task's baselines cost a search. For a task whose tuned baseline is a warp-level
 * kernel (log_softmax_f32's is ~30x its reference's time on the cpu backend's fibers at the public shape
 * timed), the wall time of one candidate's timing step and whole evaluation (verify, profile)
 * with every baseline timed beside the candidate, as each candidate's profile did before, against the same
 * evaluation with the baselines timed once per run and the speedup over them chained through the reference
 * (kf_eval_opts.baselines_once), measured alternately in the same run; plus the one-time cost of that
 * session and the number of candidates after which it has paid for itself. The candidate is the task's
 * reference; the stopping rule is the one a search uses on the cpu backend (agent/optimize.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/baseline.h"
#include "eval/eval.h"

#define REPS 5

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, REPS, sizeof(*v), cmp_d);
	return v[REPS / 2];
}

/* One candidate evaluation; its wall time in ms (its timing step's in *profile_ms), and the log width of
 * the interval of the speedup over the first baseline timed in *width; -1 on failure. */
static double eval_once(const struct kf_task *t, const struct kf_eval_opts *o, double *profile_ms,
			double *width)
{
	struct kf_eval_outcome *ev = NULL;
	struct kf_err err = KF_ERR_INIT;
	double t0 = kf_now_ms(), ms;
	if (kf_eval_file(t, t->reference, o, &ev, &err) || !ev->timed) {
		fprintf(stderr, "bench_baselines: %s\n", ev ? ev->reason : err.msg);
		kf_eval_outcome_free(ev);
		return -1;
	}
	ms = kf_now_ms() - t0;
	*profile_ms = ev->profile_ms;
	if (getenv("BENCH_BASELINES_VERBOSE"))
		fprintf(stderr, "  (%s: verify %.0f ms, profile %.0f ms, %zu samples a side)\n",
			o->baselines_once ? "chained" : "beside", ev->verify_ms, ev->profile_ms,
			ev->timings[0].n_samples);
	*width = ev->timings[0].n_baselines
		     ? log(ev->timings[0].baselines[0].speedup.hi / ev->timings[0].baselines[0].speedup.lo)
		     : 0;
	kf_eval_outcome_free(ev);
	return ms;
}

int main(int argc, char **argv)
{
	const char *task_path = argc > 1 ? argv[1] : "tasks/l1/log_softmax_f32/task.json";
	struct kf_task *t = NULL;
	struct kf_profile_result *once = NULL;
	struct kf_eval_opts each, chained;
	struct kf_err err = KF_ERR_INIT;
	double each_ms[REPS], chained_ms[REPS], p_each[REPS], p_chained[REPS], w_each[REPS], w_chained[REPS];
	double once_ms, t0;

	if (kf_task_load(task_path, 0, NULL, &t, &err)) {
		fprintf(stderr, "bench_baselines: %s\n", err.msg);
		return 1;
	}
	kf_eval_opts_init(&each);
	each.backend = KF_BACKEND_CPU;
	each.profile = true;
	each.seed = 1234;
	each.rule = (struct kf_stop_rule){5, 1e7, 0.02, 30, 1.5e9}; /* a search's, agent/optimize.c */
	chained = each;
	/* warm the caches (reference outputs, compiled modules, baseline verdicts) before any figure */
	if (eval_once(t, &each, &p_each[0], &w_each[0]) < 0)
		return 1;
	t0 = kf_now_ms();
	if (kf_eval_baselines_time(t, &each, &once, &err)) {
		fprintf(stderr, "bench_baselines: %s\n", err.msg);
		return 1;
	}
	once_ms = kf_now_ms() - t0;
	chained.baselines_once = once;
	for (int i = 0; i < REPS; i++) {
		each_ms[i] = eval_once(t, &each, &p_each[i], &w_each[i]);
		chained_ms[i] = eval_once(t, &chained, &p_chained[i], &w_chained[i]);
		if (each_ms[i] < 0 || chained_ms[i] < 0)
			return 1;
	}
	double e = median(each_ms), c = median(chained_ms), pe = median(p_each), pc = median(p_chained);
	double we = median(w_each), wc = median(w_chained);
	printf(
	    "baselines of %s (%zu), cpu backend, a search's stopping rule, median of %d alternating runs:\n",
	    t->name, t->n_baselines, REPS);
	printf("  timing step of one candidate: baselines beside it %.0f ms, chained %.0f ms (%.2fx)\n", pe,
	       pc, pc / pe);
	printf("  whole evaluation (verify + time): beside %.0f ms, chained %.0f ms (%.2fx)\n", e, c, c / e);
	printf("  the baselines' one session per run: %.0f ms (paid back after %.1f candidates)\n", once_ms,
	       pe > pc ? once_ms / (pe - pc) : 0.0);
	printf("  interval of the speedup over %s, log width: beside %.3f, chained %.3f\n",
	       t->n_baselines ? t->baselines[0].name : "-", we, wc);
	kf_profile_result_free(once);
	kf_task_free(t);
	return 0;
}
