/* kforge profile TASK KERNEL: verify first (a rejected kernel is never timed), then time candidate,
 * reference and baseline at the timing shapes with the protocol of docs/spec/verification.md. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "eval/eval.h"
#include "json.h"
#include "verifier/verifier_json.h"

static const char help[] =
    "Verifies KERNEL, then times it against the task's reference (and baseline) with interleaved\n"
    "samples, rotating input sets, L2 flushes (cuda), re-checked outputs, and a bootstrap 95%\n"
    "interval of the speedup. On the cpu backend the times are CPU times, labelled so.\n\n"
    "options:\n"
    "  --backend B      auto (default), cpu or cuda\n"
    "  --seed N         verification and input seed\n"
    "  --timing-shapes  cpu: time the task's timing shapes (default: its largest public shape)\n"
    "  --json           one JSON document on stdout\n"
    "exit: 0 verified and timed, 1 rejected, 2 bad input, 3 internal, 4 unavailable/unsupported\n";

static cJSON *ci_json(const struct kf_ci *ci)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "point", ci->point);
	cJSON_AddNumberToObject(o, "lo", ci->lo);
	cJSON_AddNumberToObject(o, "hi", ci->hi);
	cJSON_AddNumberToObject(o, "level", ci->level);
	cJSON_AddBoolToObject(o, "significant", kf_ci_significant(ci));
	if (ci->band > 0)
		cJSON_AddNumberToObject(o, "noise_band", ci->band);
	return o;
}

static cJSON *timed_json(const struct kf_timed *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "median_ns", t->stats.median);
	cJSON_AddNumberToObject(o, "iqr_ns", t->stats.iqr);
	cJSON_AddNumberToObject(o, "min_ns", t->stats.min);
	cJSON_AddNumberToObject(o, "mean_ns", t->stats.mean);
	cJSON_AddNumberToObject(o, "rse", t->stats.rse);
	cJSON_AddNumberToObject(o, "samples", (double)t->n);
	cJSON_AddStringToObject(o, "timing_source", t->timing_source);
	if (t->kernels_seen)
		cJSON_AddNumberToObject(o, "kernels_seen_per_run", t->kernels_seen);
	if (t->worker_median_ns > 0) {
		/* cpu: the parent's clock counts; the worker's own is only shown */
		cJSON_AddStringToObject(o, "clock_read_by", "parent");
		cJSON_AddNumberToObject(o, "worker_clock_median_ns", t->worker_median_ns);
	}
	return o;
}

/* ---- the task's baselines: every one with what became of it, and the candidate against each timed one ----
 */

static cJSON *baselines_json(const struct kf_eval_outcome *r)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < r->n_baselines; i++) {
		const struct kf_profile_baseline *b = &r->baselines[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", b->name);
		cJSON_AddStringToObject(j, "kind", b->library ? "library" : "kernel");
		cJSON_AddStringToObject(j, "call", b->call);
		cJSON_AddStringToObject(j, "status", kf_profile_base_status_name(b->status));
		if (b->verdict[0])
			cJSON_AddStringToObject(j, "verdict", b->verdict);
		cJSON_AddStringToObject(j, "reason", b->reason);
		cJSON_AddItemToArray(a, j);
	}
	return a;
}

/* Per timed shape: the candidate's speedup over each baseline timed there (baseline / candidate). */
static cJSON *shape_baselines_json(const struct kf_eval_timing *t)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; t && i < t->n_baselines; i++) {
		const struct kf_eval_baseline_time *b = &t->baselines[i];
		cJSON *j = cJSON_CreateObject(), *ci = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", b->name);
		cJSON_AddStringToObject(j, "kind", b->library ? "library" : "kernel");
		cJSON_AddStringToObject(j, "clock", t->clock);
		cJSON_AddNumberToObject(j, "median_ns", b->median_ns);
		cJSON_AddNumberToObject(ci, "point", b->speedup.point);
		cJSON_AddNumberToObject(ci, "lo", b->speedup.lo);
		cJSON_AddNumberToObject(ci, "hi", b->speedup.hi);
		cJSON_AddNumberToObject(ci, "level", b->speedup.level);
		cJSON_AddBoolToObject(ci, "significant", b->significant);
		cJSON_AddItemToObject(j, "speedup", ci);
		cJSON_AddStringToObject(j, "method", b->chained ? "chained" : "interleaved");
		cJSON_AddItemToArray(a, j);
	}
	return a;
}

static void print_shape_baselines(const struct kf_eval_timing *t)
{
	for (size_t i = 0; t && i < t->n_baselines; i++) {
		const struct kf_eval_baseline_time *b = &t->baselines[i];
		char ms[32];
		kf_format_ns(b->median_ns, ms, sizeof(ms));
		printf("  vs %s (%s) %.3fx (95%% CI %.3f-%.3f)%s; it takes %s (%s clock)\n", b->name,
		       b->library ? "library" : "kernel", b->speedup.point, b->speedup.lo, b->speedup.hi,
		       b->significant ? ", significant" : ", not significant", ms, t->clock);
	}
}

static void print_baselines(const struct kf_eval_outcome *r)
{
	if (!r->n_baselines)
		return;
	printf("baselines:\n");
	for (size_t i = 0; i < r->n_baselines; i++) {
		const struct kf_profile_baseline *b = &r->baselines[i];
		printf("  %s (%s): %s", b->name, b->library ? "library" : "kernel",
		       kf_profile_base_status_name(b->status));
		if (b->status == KF_PROFILE_BASE_TIMED)
			printf(" (verified, then timed beside the candidate%s)\n",
			       r->clock[0] == 'c' ? "; CPU clock, not GPU speed" : "");
		else if (b->verdict[0] && strncmp(b->reason, b->verdict, strlen(b->verdict)))
			printf(": %s: %s\n", b->verdict, b->reason);
		else /* the verifier's reason opens with its verdict */
			printf(": %s\n", b->reason);
	}
}

static const struct kf_eval_timing *timing_of(const struct kf_eval_outcome *r, size_t i)
{
	return i < r->n_timings ? &r->timings[i] : NULL;
}

static cJSON *profile_json(const struct kf_eval_outcome *ev)
{
	const struct kf_profile_result *r = ev->profile;
	cJSON *o = cJSON_CreateObject(), *shapes = cJSON_CreateArray(), *res = cJSON_CreateArray();
	cJSON_AddStringToObject(o, "clock", r->clock);
	cJSON_AddStringToObject(o, "arch", r->arch);
	if (r->has_peaks) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "name", r->peaks.name);
		cJSON_AddNumberToObject(p, "f32_flops", r->peaks.flops[KF_PEAK_F32]);
		cJSON_AddNumberToObject(p, "f16_tc_flops", r->peaks.flops[KF_PEAK_F16_TC]);
		cJSON_AddNumberToObject(p, "dram_bytes_per_s", r->peaks.dram_bytes_per_s);
		cJSON_AddItemToObject(o, "peaks", p);
	}
	for (size_t i = 0; i < r->n_shapes; i++) {
		const struct kf_profile_shape *s = &r->shapes[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddItemToObject(j, "dims", kf_json_shape(&s->shape));
		cJSON_AddStringToObject(j, "shape_kind", s->is_timing_shape ? "timing" : "public");
		cJSON_AddItemToObject(j, "candidate", timed_json(&s->cand));
		cJSON_AddItemToObject(j, "reference", timed_json(&s->ref));
		cJSON_AddItemToObject(j, "speedup", ci_json(&s->speedup));
		if (s->has_aa) {
			cJSON *aa = ci_json(&s->aa_ci);
			cJSON_AddItemToObject(aa, "reference_twin", timed_json(&s->aa));
			cJSON_AddItemToObject(j, "aa", aa);
		}
		cJSON_AddNumberToObject(j, "noise_band", s->noise_band);
		cJSON_AddNumberToObject(j, "checked_rounds", s->n_checked);
		if (s->retimed)
			cJSON_AddItemToObject(j, "retime", ci_json(&s->retime));
		if (s->has_base) {
			cJSON_AddItemToObject(j, "baseline", timed_json(&s->base));
			cJSON_AddItemToObject(j, "speedup_vs_baseline", ci_json(&s->speedup_base));
		}
		cJSON_AddItemToObject(j, "baselines", shape_baselines_json(timing_of(ev, i)));
		cJSON_AddStringToObject(j, "stop", kf_stop_reason_name(s->stop));
		cJSON_AddBoolToObject(j, "timed_outputs_ok", s->outputs_ok);
		if (!s->outputs_ok)
			cJSON_AddStringToObject(j, "timed_outputs_detail", s->recheck_detail);
		if (s->has_roof) {
			cJSON *rf = cJSON_CreateObject();
			cJSON_AddNumberToObject(rf, "floor_ns", s->roof.floor_ns);
			cJSON_AddStringToObject(rf, "bound", s->roof.bound);
			cJSON_AddNumberToObject(rf, "fraction", s->roof.fraction);
			cJSON_AddNumberToObject(rf, "achieved_tflops", s->roof.achieved_flops / 1e12);
			cJSON_AddNumberToObject(rf, "achieved_gbps", s->roof.achieved_bytes_per_s / 1e9);
			cJSON_AddBoolToObject(rf, "below_floor", s->below_floor);
			cJSON_AddItemToObject(j, "roofline", rf);
		}
		cJSON_AddItemToArray(shapes, j);
	}
	cJSON_AddItemToObject(o, "shapes", shapes);
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct kf_launch_res *l = &r->launches[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "kernel", l->kernel);
		cJSON_AddNumberToObject(j, "block_threads", l->block_threads);
		cJSON_AddNumberToObject(j, "registers", l->regs);
		cJSON_AddNumberToObject(j, "smem_bytes", l->smem_bytes);
		cJSON_AddNumberToObject(j, "spill_bytes", l->spill_bytes);
		if (l->has_occ) {
			cJSON_AddNumberToObject(j, "occupancy", l->occ.occupancy);
			cJSON_AddNumberToObject(j, "active_blocks_per_sm", l->occ.active_blocks);
			cJSON_AddStringToObject(j, "limiter", l->occ.limiter);
		}
		cJSON_AddItemToArray(res, j);
	}
	cJSON_AddItemToObject(o, "resources", res);
	cJSON_AddBoolToObject(o, "implausible", r->implausible);
	if (r->flags[0])
		cJSON_AddStringToObject(o, "flags", r->flags);
	cJSON_AddStringToObject(o, "text", r->text);
	cJSON_AddItemToObject(o, "baselines", baselines_json(ev));
	return o;
}

static void print_text(const struct kf_eval_outcome *ev)
{
	const struct kf_profile_result *r = ev->profile;
	for (size_t i = 0; i < r->n_shapes; i++) {
		const struct kf_profile_shape *s = &r->shapes[i];
		char shape[256], a[32], b[32], c[32];
		kf_shape_format(&s->shape, shape, sizeof(shape));
		kf_format_ns(s->cand.stats.median, a, sizeof(a));
		kf_format_ns(s->ref.stats.median, b, sizeof(b));
		printf("%s (%s shape, %s clock, %s):\n", shape,
		       s->is_timing_shape ? "timing" : "largest public", r->clock, s->cand.timing_source);
		kf_format_ns(s->cand.stats.iqr, c, sizeof(c));
		printf("  candidate %s (IQR %s, %zu samples)  reference %s\n", a, c, s->cand.n, b);
		printf("  speedup %.3fx (95%% CI %.3f-%.3f)%s\n", s->speedup.point, s->speedup.lo,
		       s->speedup.hi, kf_ci_significant(&s->speedup) ? ", significant" : ", not significant");
		if (s->has_aa)
			printf("  A/A: reference vs its twin %.3fx (95%% CI %.3f-%.3f): noise band +-%.1f%% "
			       "(floor %.0f%%)\n",
			       s->aa_ci.point, s->aa_ci.lo, s->aa_ci.hi, s->noise_band * 100.0,
			       (r->clock[0] == 'g' ? 0.02 : 0.03) * 100.0);
		printf("  %u of %zu timed rounds checked; every launch from fresh inputs and poisoned "
		       "outputs%s\n",
		       s->n_checked, s->cand.n, r->clock[0] == 'c' ? "; the parent's clock" : "");
		if (s->retimed)
			printf("  re-timed (implausible) in fresh workers in reverse order: %.3fx (95%% CI "
			       "%.3f-%.3f); the lower of the two is the result\n",
			       s->retime.point, s->retime.lo, s->retime.hi);
		print_shape_baselines(timing_of(ev, i));
		if (!s->outputs_ok)
			printf("  TIMED OUTPUTS WRONG: %s\n", s->recheck_detail);
	}
	if (r->clock[0] == 'c')
		printf("note: cpu backend: these are CPU times of the fiber runtime, not GPU speed\n");
	if (r->text[0])
		printf("\n%s", r->text);
	if (r->implausible)
		printf("flag: %s\n", r->flags);
	print_baselines(ev);
}

static void print_json(const struct kf_eval_outcome *r, const struct kf_task *task, const char *kernel)
{
	cJSON *o = cJSON_CreateObject();
	struct kf_err err = KF_ERR_INIT;
	cJSON_AddStringToObject(o, "status", kf_verdict_name(r->verdict));
	if (r->profile) {
		cJSON_AddStringToObject(o, "backend", kf_backend_name(r->backend));
		cJSON_AddStringToObject(o, "clock", r->clock);
	}
	cJSON_AddItemToObject(o, "verification",
			      kf_verify_result_json(kf_eval_verification(r), task, kernel));
	if (r->profile)
		cJSON_AddItemToObject(o, "profile", profile_json(r));
	if (kf_json_fput(o, true, stdout, &err))
		kf_cli_error("%s", err.msg);
	cJSON_Delete(o);
}

int cmd_profile(int argc, char **argv)
{
	const char *backend = NULL, *seed_s = NULL, *pos[2];
	bool json = false, timing_shapes = false;
	const struct kf_opt opts[] = {{"backend", true, &backend, NULL},
				      {"seed", true, &seed_s, NULL},
				      {"json", false, NULL, &json},
				      {"timing-shapes", false, NULL, &timing_shapes}};
	size_t n_pos;
	struct kf_device_info dev;
	struct kf_eval_opts eo;
	struct kf_task *task = NULL;
	struct kf_eval_outcome *r = NULL;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st;
	int rc;

	if (kf_cli_start("profile", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 2, 2, &n_pos,
			 "expected TASK and KERNEL", &rc))
		return rc;
	kf_eval_opts_init(&eo);
	if (seed_s && (!kf_parse_u64(seed_s, &eo.seed) || !eo.seed))
		return kf_cli_usage_error("profile", "--seed needs a positive integer, not '%s'", seed_s);
	/* bad input first: the task is read before the backend is picked (and talked about) */
	if ((st = kf_task_load(pos[0], 0, NULL, &task, &err))) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_USAGE;
	}
	if ((rc = kf_cli_backend_select("profile", backend, &eo.backend, &dev))) {
		kf_task_free(task);
		return rc;
	}
	eo.device = &dev;
	eo.profile = true;
	eo.all_timing_shapes = timing_shapes;
	eo.stop = kf_cancel_flag();
	st = kf_eval_file(task, pos[1], &eo, &r, &err);
	if (st) {
		kf_cli_error("%s", err.msg);
		rc = st == KF_ERR_UNAVAILABLE                                ? 4
		     : kf_status_exit_code(st) == 2 || st == KF_ERR_NOTFOUND ? 2
									     : 3;
		goto out;
	}
	if (r->stage == KF_EVAL_STAGE_VERIFY && r->verdict != KF_VERDICT_PASS) {
		rc = kf_verdict_exit_code(r->verdict);
		if (json) {
			print_json(r, task, pos[1]);
		} else {
			kf_verify_result_print(stdout, r->verify);
			printf("not timed: the kernel did not pass verification\n");
		}
		goto out;
	}
	if (r->profile_status || !r->profile) {
		st = r->profile_status;
		kf_cli_error("profile: %s", r->profile_status ? r->profile_err.msg : "interrupted");
		rc = st == KF_ERR_RUNTIME ? 1 : st == KF_ERR_UNAVAILABLE ? 4 : st == KF_ERR_INVALID ? 2 : 3;
		goto out;
	}
	rc = r->verdict == KF_VERDICT_PASS ? 0 : 1;
	if (json) {
		print_json(r, task, pos[1]);
	} else {
		printf("verified: %s\n", r->verify->reason);
		print_text(r);
		if (rc)
			printf("verdict: rejected: %s\n", r->reason);
	}
out:
	kf_eval_outcome_free(r);
	kf_task_free(task);
	return kf_cancelled() ? KF_EXIT_INTERRUPTED : rc;
}
