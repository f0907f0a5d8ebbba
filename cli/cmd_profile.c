/* kforge profile TASK KERNEL: verify first (a rejected kernel is never timed), then time candidate,
 * reference and baseline at the timing shapes with the protocol of docs/spec/verification.md. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "profiler/costmodel.h"
#include "cli.h"
#include "eval/eval.h"
#include "json.h"
#include "verifier/verifier_json.h"

static const char help[] =
    "Verifies KERNEL, then times it against the task's reference (and baseline) with interleaved\n"
    "samples, rotating input sets, L2 flushes (cuda), re-checked outputs, and a bootstrap 95%\n"
    "interval of the speedup. On the cpu backend the times are CPU times, labelled so, and the GPU\n"
    "cost model predicts candidate and reference on a target GPU from an instrumented run at the\n"
    "timing shape (clock \"model\": predictions, not measurements; docs/cost-model.md).\n\n"
    "options:\n"
    "  --backend B      auto (default), cpu or cuda\n"
    "  --seed N         verification and input seed\n"
    "  --timing-shapes  cpu: time the task's timing shapes (default: its largest public shape)\n"
    "  --fitness F      cpu backend: model (default: predict with the cost model too) or cpu (CPU\n"
    "                   times only)\n"
    "  --target GPU     the cost model's GPU: h100 (default), h200, a100, l40s, rtx4090, a10,\n"
    "                   rtx3090, b200\n"
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

static cJSON *model_kernel_json(const struct kf_model_kernel *k)
{
	cJSON *o = cJSON_CreateObject(), *ls = cJSON_CreateArray();
	cJSON_AddNumberToObject(o, "predicted_ns", k->pred.total_ns);
	cJSON_AddStringToObject(o, "bound", kf_cost_limit_name(k->pred.bind));
	cJSON_AddBoolToObject(o, "sampled", k->pred.sampled);
	for (size_t i = 0; i < k->n; i++) {
		const struct kf_rt_cost *c = &k->counts[i];
		const struct kf_cost_launch_pred *p = &k->pred.launches[i];
		cJSON *j = cJSON_CreateObject(), *t = cJSON_CreateObject(), *n = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "kernel", k->res[i].kernel);
		cJSON_AddNumberToObject(j, "predicted_ns", p->total_ns);
		cJSON_AddStringToObject(j, "bound", kf_cost_limit_name(p->bind));
		for (int l = 0; l < KF_COST_LIMIT_COUNT; l++)
			cJSON_AddNumberToObject(t, kf_cost_limit_name((enum kf_cost_limit)l), p->ns[l]);
		cJSON_AddNumberToObject(t, "launch", p->launch_ns);
		cJSON_AddItemToObject(j, "limits_ns", t);
		cJSON_AddNumberToObject(j, "blocks_total", (double)c->blocks_total);
		cJSON_AddNumberToObject(j, "blocks_run", (double)c->blocks_run);
		cJSON_AddNumberToObject(j, "scale", p->scale);
		cJSON_AddNumberToObject(j, "occupancy", p->occupancy);
		cJSON_AddStringToObject(j, "occupancy_limiter", p->occ_limiter ? p->occ_limiter : "");
		cJSON_AddNumberToObject(j, "registers", p->regs);
		cJSON_AddBoolToObject(j, "registers_assumed", p->regs_assumed);
		cJSON_AddNumberToObject(j, "smem_bytes", p->smem_bytes);
		cJSON_AddNumberToObject(j, "waves", p->waves);
		cJSON_AddNumberToObject(j, "dram_bytes", p->dram_bytes);
		cJSON_AddNumberToObject(j, "l2_bytes", p->l2_bytes);
		cJSON_AddNumberToObject(j, "sectors_per_load", p->sectors_per_load);
		cJSON_AddNumberToObject(j, "sectors_per_store", p->sectors_per_store);
		cJSON_AddNumberToObject(j, "wavefronts_per_shared", p->wavefronts_per_shared);
		cJSON_AddNumberToObject(j, "warp_instructions", p->warp_instrs);
		cJSON_AddNumberToObject(j, "warp_latency_chain_clk", p->cp_clk);
		/* the raw counts of the blocks that ran */
		cJSON_AddNumberToObject(n, "gld_requests", (double)c->gld_requests);
		cJSON_AddNumberToObject(n, "gld_sectors", (double)c->gld_sectors);
		cJSON_AddNumberToObject(n, "gst_requests", (double)c->gst_requests);
		cJSON_AddNumberToObject(n, "gst_sectors", (double)c->gst_sectors);
		cJSON_AddNumberToObject(n, "l2_read_misses", (double)c->l2_read_misses);
		cJSON_AddNumberToObject(n, "l2_writebacks", (double)c->l2_writebacks);
		cJSON_AddNumberToObject(n, "touched_bytes", (double)c->touched_bytes);
		cJSON_AddNumberToObject(n, "sh_requests", (double)c->sh_requests);
		cJSON_AddNumberToObject(n, "sh_wavefronts", (double)c->sh_wavefronts);
		cJSON_AddNumberToObject(n, "atom_requests", (double)c->atom_requests);
		cJSON_AddNumberToObject(n, "atom_lanes", (double)c->atom_lanes);
		cJSON_AddNumberToObject(n, "atom_hot", (double)c->atom_hot);
		cJSON_AddNumberToObject(n, "barriers", (double)c->barriers);
		cJSON_AddNumberToObject(n, "collectives", (double)c->collectives);
		cJSON_AddNumberToObject(n, "warp_edges", (double)c->warp_edges);
		cJSON_AddNumberToObject(n, "thread_edges", (double)c->thread_edges);
		cJSON_AddNumberToObject(n, "warps_run", (double)c->warps_run);
		cJSON_AddItemToObject(j, "counts", n);
		cJSON_AddItemToArray(ls, j);
	}
	cJSON_AddItemToObject(o, "launches", ls);
	cJSON_AddStringToObject(o, "notes", k->notes);
	return o;
}

static cJSON *model_json(const struct kf_model_result *m)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "clock", "model");
	cJSON_AddNumberToObject(o, "version", m->version);
	cJSON_AddStringToObject(o, "target", m->target->key);
	cJSON_AddStringToObject(o, "target_name", m->target->name);
	cJSON_AddItemToObject(o, "dims", kf_json_shape(&m->shape));
	cJSON_AddBoolToObject(o, "is_timing_shape", m->is_timing_shape);
	cJSON_AddItemToObject(o, "candidate", model_kernel_json(&m->cand));
	cJSON_AddItemToObject(o, "reference", model_kernel_json(&m->ref));
	cJSON_AddNumberToObject(o, "speedup", m->speedup);
	cJSON_AddNumberToObject(o, "aa", m->aa);
	cJSON_AddNumberToObject(o, "noise_band", m->band);
	cJSON_AddBoolToObject(o, "significant", m->significant);
	cJSON_AddNumberToObject(o, "ms", m->ms);
	cJSON_AddStringToObject(o, "text", m->text);
	return o;
}

static void print_model_kernel(const char *who, const struct kf_model_kernel *k)
{
	char t[32];
	kf_format_ns(k->pred.total_ns, t, sizeof(t));
	printf("  %s: %s predicted, bound by %s\n", who, t, kf_cost_limit_name(k->pred.bind));
	for (size_t i = 0; i < k->n; i++) {
		const struct kf_cost_launch_pred *p = &k->pred.launches[i];
		const struct kf_rt_cost *c = &k->counts[i];
		char d[32], l2[32], sh[32], is[32], la[32], at[32];
		kf_format_ns(p->ns[KF_COST_DRAM], d, sizeof(d));
		kf_format_ns(p->ns[KF_COST_L2], l2, sizeof(l2));
		kf_format_ns(p->ns[KF_COST_SHARED], sh, sizeof(sh));
		kf_format_ns(p->ns[KF_COST_ISSUE], is, sizeof(is));
		kf_format_ns(p->ns[KF_COST_LATENCY], la, sizeof(la));
		kf_format_ns(p->ns[KF_COST_ATOMIC], at, sizeof(at));
		printf("    launch %zu '%s': memory %s, l2 %s, shared %s, compute %s, latency %s, atomic %s "
		       "(+ launch)\n",
		       i + 1, k->res[i].kernel, d, l2, sh, is, la, at);
		printf("      %.1f sectors/load, %.1f sectors/store, %.1f wavefronts/shared access; DRAM "
		       "%.3g MB, "
		       "L2 %.3g MB; occupancy %.0f%% (%s%s), %.0f waves; %llu of %llu blocks run%s\n",
		       p->sectors_per_load, p->sectors_per_store, p->wavefronts_per_shared,
		       p->dram_bytes / 1e6, p->l2_bytes / 1e6, 100 * p->occupancy,
		       p->occ_limiter ? p->occ_limiter : "?", p->regs_assumed ? ", registers assumed 32" : "",
		       p->waves, (unsigned long long)c->blocks_run, (unsigned long long)c->blocks_total,
		       p->scale > 1 ? " (counts extrapolated by blocks)" : "");
	}
	if (k->notes[0])
		printf("    %s\n", k->notes);
}

static void print_model(const struct kf_eval_outcome *ev)
{
	const struct kf_model_result *m = ev->model;
	if (!m) {
		if (ev->model_status)
			printf("model clock: none (%s)\n", ev->model_err.msg);
		return;
	}
	char shape[256];
	kf_shape_format(&m->shape, shape, sizeof(shape));
	printf("model clock (GPU cost model v%d, %s; predictions from an instrumented run, not measured) at "
	       "%s (%s shape):\n",
	       m->version, m->target->name, shape, m->is_timing_shape ? "timing" : "largest public");
	print_model_kernel("candidate", &m->cand);
	print_model_kernel("reference", &m->ref);
	printf("  predicted speedup %.3fx: %s (A/A: the reference against itself with other sampled blocks "
	       "%.3fx; band +-%.1f%%)\n",
	       m->speedup, m->significant ? "significant" : "not significant", m->aa, 100 * m->band);
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
	print_model(ev);
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
		/* the clock of the fitness: "model" when the cost model predicted it (the CPU times are
		 * the profile's, clock "cpu") */
		cJSON_AddStringToObject(o, "clock", r->fitness_clock[0] ? r->fitness_clock : r->clock);
		cJSON_AddNumberToObject(o, "speedup", r->speedup);
	}
	cJSON_AddItemToObject(o, "verification",
			      kf_verify_result_json(kf_eval_verification(r), task, kernel));
	if (r->profile)
		cJSON_AddItemToObject(o, "profile", profile_json(r));
	if (r->model)
		cJSON_AddItemToObject(o, "model", model_json(r->model));
	else if (r->model_status) {
		cJSON *n = cJSON_CreateObject();
		cJSON_AddStringToObject(n, "clock", "none");
		cJSON_AddStringToObject(n, "why", r->model_err.msg);
		cJSON_AddItemToObject(o, "model", n);
	}
	if (kf_json_fput(o, true, stdout, &err))
		kf_cli_error("%s", err.msg);
	cJSON_Delete(o);
}

int cmd_profile(int argc, char **argv)
{
	const char *backend = NULL, *seed_s = NULL, *fitness = NULL, *target = NULL, *pos[2];
	bool json = false, timing_shapes = false;
	const struct kf_opt opts[] = {
	    {"backend", true, &backend, NULL}, {"seed", true, &seed_s, NULL},
	    {"fitness", true, &fitness, NULL}, {"target", true, &target, NULL},
	    {"json", false, NULL, &json},      {"timing-shapes", false, NULL, &timing_shapes}};
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
	if (fitness && strcmp(fitness, "model") && strcmp(fitness, "cpu")) {
		kf_task_free(task);
		return kf_cli_usage_error("profile", "--fitness is model or cpu, not '%s'", fitness);
	}
	eo.model = eo.backend == KF_BACKEND_CPU && !(fitness && !strcmp(fitness, "cpu"));
	if (target && !(eo.model_target = kf_cost_target_find(target))) {
		kf_task_free(task);
		return kf_cli_usage_error("profile", "--target: unknown GPU '%s' (%s)", target,
					  kf_cost_target_keys());
	}
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
