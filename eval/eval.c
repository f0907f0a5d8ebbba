/* The evaluation pipeline (eval/eval.h): a fixed sequence of steps, each of which may settle the verdict,
 * then the parts every caller reads off a settled outcome (timings, feedback). A new step (a compile that
 * runs first on every backend, a sanitizer pass) is one more entry in the table of steps. */
#include "eval/eval.h"
#include "eval/eval_int.h"

#include "core/cancel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCE (4u << 20)
/* Bounds of what the feedback keeps for a prompt. */
#define FEEDBACK_LOG_MAX 4000
#define FEEDBACK_CHECK_MAX 600
#define FEEDBACK_TEXT_MAX 2000

const char *kf_eval_stage_name(enum kf_eval_stage s)
{
	static const char *const names[] = {"verify", "profile", "recheck", "strict"};
	return s < KF_EVAL_STAGE_COUNT ? names[s] : "unknown";
}

void kf_eval_opts_init(struct kf_eval_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = KF_BACKEND_CPU;
}

const char *kf_eval_clock_source(enum kf_backend_kind b, const char *timing_source)
{
	if (b != KF_BACKEND_CUDA)
		return "cpu";
	return timing_source && !strcmp(timing_source, "cupti") ? "cupti" : "cuda_event";
}

const char *kf_eval_task_dtype(const struct kf_task *t)
{
	for (size_t i = 0; i < t->n_tensors; i++)
		if (t->tensors[i].role != KF_ROLE_INPUT)
			return kf_dtype_name(t->tensors[i].dtype);
	return t->n_tensors ? kf_dtype_name(t->tensors[0].dtype) : "f32";
}

const struct kf_verify_result *kf_eval_verification(const struct kf_eval_outcome *o)
{
	return o->strict && o->strict->status != KF_VERDICT_PASS ? o->strict : o->verify;
}

/* ---- the steps ------------------------------------------------------------------------------------- */

struct run {
	const struct kf_task *t;
	const char *name, *source;
	size_t len;
	const struct kf_eval_opts *o;
	struct kf_verify_opts vo;
	struct kf_eval_outcome *out;
};

static bool stopped(const struct run *r)
{
	return r->o->stop && *r->o->stop;
}

static void settle(struct run *r, enum kf_eval_stage stage, enum kf_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void settle(struct run *r, enum kf_eval_stage stage, enum kf_verdict v, const char *fmt, ...)
{
	va_list ap;
	r->out->stage = stage;
	r->out->verdict = v;
	va_start(ap, fmt);
	vsnprintf(r->out->reason, sizeof(r->out->reason), fmt, ap);
	va_end(ap);
}

/* Each step returns an error only for a problem of the task or the harness; *settled ends the sequence. */
typedef enum kf_status (*step_fn)(struct run *r, bool *settled, struct kf_err *err);

static enum kf_status step_verify(struct run *r, bool *settled, struct kf_err *err)
{
	double t0 = kf_now_ms();
	enum kf_status st = kf_verify_source(r->t, r->name, r->source, r->len, &r->vo, &r->out->verify, err);
	r->out->verify_ms = kf_now_ms() - t0;
	if (st)
		return st;
	r->out->seed = r->out->verify->seed;
	settle(r, KF_EVAL_STAGE_VERIFY, r->out->verify->status, "%s", r->out->verify->reason);
	*settled = r->out->verify->status != KF_VERDICT_PASS || !r->o->profile || stopped(r);
	return KF_OK;
}

static enum kf_status step_profile(struct run *r, bool *settled, struct kf_err *err)
{
	struct kf_eval_outcome *out = r->out;
	struct kf_profile_opts po;
	struct kf_kfile *kf = NULL;
	double t0 = kf_now_ms();
	enum kf_status st;

	(void)err;
	kf_profile_opts_init(&po);
	po.backend = r->o->backend;
	po.device = r->o->backend == KF_BACKEND_CUDA ? r->o->device : NULL;
	po.seed = out->seed;
	po.worker_path = r->o->worker_path;
	po.rule = r->o->rule;
	po.all_timing_shapes = r->o->all_timing_shapes;
	po.no_baselines = r->o->baselines_once != NULL; /* timed once for the search: chained, not re-timed */
	if ((st = kf_kfile_parse(r->name, r->source, r->len, &kf, &out->profile_err)) == KF_OK &&
	    (st = kf_kfile_bind(kf, r->t, &out->profile_err)) == KF_OK)
		st = kf_profile_run(r->t, kf, &po, &out->profile, &out->profile_err);
	kf_kfile_free(kf);
	out->profile_ms = kf_now_ms() - t0;
	out->profile_status = st;
	if (st == KF_ERR_RUNTIME) {
		settle(r, KF_EVAL_STAGE_PROFILE, KF_VERDICT_RUNTIME_ERROR, "failed while timed: %s",
		       out->profile_err.msg);
		*settled = true;
	} else if (st) {
		/* the verdict stands; the kernel is only not timed (the caller says why) */
		char was[sizeof(out->reason)];
		snprintf(was, sizeof(was), "%s", out->reason);
		snprintf(out->reason, sizeof(out->reason), "%s; not timed: %s", was, out->profile_err.msg);
		*settled = true;
	}
	return KF_OK;
}

static enum kf_status step_recheck(struct run *r, bool *settled, struct kf_err *err)
{
	const struct kf_profile_result *pr = r->out->profile;
	(void)err;
	if (pr->timed_outputs_ok)
		return KF_OK;
	/* spec check 9: a timed launch that went wrong after verified ones were right is `stateful` */
	for (size_t i = 0; i < pr->n_shapes; i++)
		if (!pr->shapes[i].outputs_ok) {
			const char *d = pr->shapes[i].recheck_detail;
			if (!strncmp(d, "not quiescent", 13))
				settle(r, KF_EVAL_STAGE_RECHECK, KF_VERDICT_STATEFUL,
				       "the timed launches were not independent: %s", d);
			else
				settle(r, KF_EVAL_STAGE_RECHECK, KF_VERDICT_STATEFUL,
				       "outputs of timed launches were wrong: %s", d);
			break;
		}
	if (r->out->stage != KF_EVAL_STAGE_RECHECK)
		settle(r, KF_EVAL_STAGE_RECHECK, KF_VERDICT_STATEFUL, "outputs of timed launches were wrong");
	*settled = true;
	return KF_OK;
}

/* spec check 10: a time below the roofline floor or a > 10x speedup earns a stricter re-verification with a
 * fresh secret seed; its rejection is the verdict. A strict run the harness cannot complete leaves the
 * first verdict standing. */
static enum kf_status step_strict(struct run *r, bool *settled, struct kf_err *err)
{
	struct kf_eval_outcome *out = r->out;
	struct kf_err e2 = KF_ERR_INIT;
	double t0 = kf_now_ms();
	(void)settled;
	(void)err;
	if (!out->profile->implausible || stopped(r))
		return KF_OK;
	r->vo.strict = true;
	r->vo.seed = 0;
	if (kf_verify_source(r->t, r->name, r->source, r->len, &r->vo, &out->strict, &e2))
		out->strict = NULL;
	out->strict_ms = kf_now_ms() - t0;
	if (out->strict && out->strict->status != KF_VERDICT_PASS) {
		settle(r, KF_EVAL_STAGE_STRICT, out->strict->status, "%s", out->strict->reason);
		*settled = true;
	}
	return KF_OK;
}

static const step_fn steps[KF_EVAL_STAGE_COUNT] = {
    [KF_EVAL_STAGE_VERIFY] = step_verify,
    [KF_EVAL_STAGE_PROFILE] = step_profile,
    [KF_EVAL_STAGE_RECHECK] = step_recheck,
    [KF_EVAL_STAGE_STRICT] = step_strict,
};

/* The model clock: a correct, timed kernel predicted on the target; the prediction becomes the fitness.
 * Without it (no clang here, a plan the model cannot take) the CPU clock stays the fitness, labelled. */
static void step_model(struct run *r, struct kf_eval_outcome *out)
{
	struct kf_model_opts mo;
	struct kf_kfile *kf = NULL;
	kf_model_opts_init(&mo);
	mo.target = r->o->model_target;
	mo.seed = out->seed;
	mo.access_budget = r->o->model_budget;
	mo.worker_path = r->o->worker_path;
	out->model_err = (struct kf_err)KF_ERR_INIT;
	double t0 = kf_now_ms();
	enum kf_status st = kf_kfile_parse(r->name, r->source, r->len, &kf, &out->model_err);
	if (!st && !(st = kf_kfile_bind(kf, r->t, &out->model_err)))
		st = kf_model_run(r->t, kf, &mo, &out->model, &out->model_err);
	kf_kfile_free(kf);
	out->model_ms = kf_now_ms() - t0;
	out->model_status = st;
	if (st)
		return;
	const struct kf_model_result *m = out->model;
	snprintf(out->fitness_clock, sizeof(out->fitness_clock), "model");
	snprintf(out->arch, sizeof(out->arch), "model-v%d-%s", m->version, m->target->key);
	out->speedup = out->speedup_lo = out->speedup_hi = m->speedup;
	out->noise_band = m->band;
}

/* ---- what a settled outcome offers ----------------------------------------------------------------- */

static double geomean(double log_sum, size_t n)
{
	return n ? exp(log_sum / (double)n) : 0;
}

static enum kf_status fill_timings(struct kf_eval_outcome *out, const struct kf_eval_opts *o,
				   struct kf_err *err)
{
	const struct kf_profile_result *pr = out->profile;
	double lp = 0, ll = 0, lh = 0;
	size_t n_pos = 0;

	out->timings = calloc(pr->n_shapes ? pr->n_shapes : 1, sizeof(*out->timings));
	if (!out->timings)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < pr->n_shapes; i++) {
		const struct kf_profile_shape *ps = &pr->shapes[i];
		struct kf_eval_timing *t = &out->timings[out->n_timings++];
		struct kf_boot_opts bo = {0, kf_mix64(out->seed ^ (0x6d656469616eull + i)), 0.95, false};
		enum kf_status st;

		t->shape = ps->shape;
		t->is_timing_shape = ps->is_timing_shape;
		t->clock = pr->clock[0] == 'c' ? "cpu" : "gpu";
		t->source = kf_eval_clock_source(out->backend, ps->cand.timing_source);
		t->n_samples = ps->cand.n;
		t->median_ns = ps->cand.stats.median;
		t->iqr_ns = ps->cand.stats.iqr;
		if ((st = kf_boot_median(ps->cand.samples, ps->cand.n, &bo, &t->median_ci, err)))
			return st;
		t->ref_median_ns = ps->ref.stats.median;
		t->speedup = ps->speedup;
		t->significant = kf_ci_significant(&ps->speedup);
		if (ps->has_aa)
			t->aa = ps->aa_ci;
		if (ps->speedup.band > out->noise_band)
			out->noise_band = ps->speedup.band;
		if ((st = kf_eval_baselines_at(out, o, ps, i, t, err)))
			return st;
		if (ps->speedup.point > 0 && ps->speedup.lo > 0 && ps->speedup.hi > 0) {
			lp += log(ps->speedup.point);
			ll += log(ps->speedup.lo);
			lh += log(ps->speedup.hi);
			n_pos++;
		}
	}
	/* the aggregate over shapes is the geometric mean; so is its interval (an approximation: the
	 * per-shape intervals are in the timings) */
	out->speedup = geomean(lp, n_pos);
	out->speedup_lo = geomean(ll, n_pos);
	out->speedup_hi = geomean(lh, n_pos);
	return KF_OK;
}

static char *dup_bounded(const char *s, size_t max)
{
	size_t n;
	if (!s)
		return NULL;
	n = strlen(s);
	return kf_strndup(s, n > max ? max : n);
}

/* Feedback for a prompt: a public shape's evidence, never a hidden or edge shape's dims (a failing one is
 * described by its kind, size class and residues: kf_shape_report_feedback). */
static void fill_feedback(const struct kf_task *t, struct kf_eval_outcome *out, bool profile_asked)
{
	const struct kf_verify_result *vr = kf_eval_verification(out);
	struct kf_eval_feedback *fb = &out->feedback;
	/* a kernel that passed but could not be timed, where timing was asked for, is no answer either */
	bool correct = out->verdict == KF_VERDICT_PASS && (out->timed || !profile_asked);

	fb->max_error = -1;
	if (vr->status == KF_VERDICT_COMPILE_ERROR)
		fb->compile_log = dup_bounded(vr->compile_log, FEEDBACK_LOG_MAX);
	for (size_t i = 0; i < vr->n_shapes; i++) {
		const struct kf_shape_report *s = &vr->shapes[i];
		if (s->status == KF_VERDICT_PASS)
			continue;
		if (s->kind == KF_SHAPE_PUBLIC) {
			fb->has_shape = true;
			fb->shape = s->shape;
			fb->check = dup_bounded(s->detail, FEEDBACK_CHECK_MAX);
			if (isfinite(s->max_abs))
				fb->max_error = s->max_abs;
		} else {
			char text[1200];
			kf_shape_report_feedback(t, s, text, sizeof(text));
			fb->check = kf_strdup(text);
		}
		break;
	}
	if (!fb->check && !correct && out->verdict != KF_VERDICT_COMPILE_ERROR) {
		/* a reason may name the shape it failed at (a timing or strict stage's): described, not shown
		 */
		char text[sizeof(out->reason) + 200];
		kf_verify_reason_feedback(t, out->reason, text, sizeof(text));
		fb->check = dup_bounded(text, sizeof(out->reason));
	}
	if (correct && out->model) {
		/* the model's text first (the fitness), the CPU clock's after it, labelled as such */
		char text[2200];
		snprintf(text, sizeof(text), "%s\nCPU clock (the cpu backend's own time, not GPU speed): %s",
			 out->model->text, out->profile ? out->profile->text : "not timed");
		fb->profile_text = dup_bounded(text, FEEDBACK_TEXT_MAX);
	} else if (correct && out->profile)
		fb->profile_text = dup_bounded(out->profile->text, FEEDBACK_TEXT_MAX);
}

enum kf_status kf_eval_run(const struct kf_task *t, const char *name, const char *source, size_t len,
			   const struct kf_eval_opts *o, struct kf_eval_outcome **out, struct kf_err *err)
{
	struct kf_eval_outcome *res = calloc(1, sizeof(*res));
	struct run r = {t, name, source, len, o, {0}, res};
	double t0 = kf_now_ms();
	enum kf_status st = KF_OK;
	bool settled = false;

	*out = NULL;
	if (!res)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	res->backend = o->backend;
	res->profile_err = (struct kf_err)KF_ERR_INIT;
	snprintf(res->clock, sizeof(res->clock), "%s", o->backend == KF_BACKEND_CUDA ? "gpu" : "cpu");
	snprintf(res->toolchain, sizeof(res->toolchain), "%s", kf_compiler_id(o->backend));
	if (o->backend == KF_BACKEND_CUDA && o->device)
		snprintf(res->device, sizeof(res->device), "%s", o->device->name);

	kf_verify_opts_init(&r.vo);
	r.vo.backend = o->backend;
	r.vo.seed = o->seed;
	r.vo.strict = o->strict;
	r.vo.all_shapes = o->all_shapes;
	r.vo.shuffle = !o->no_shuffle;
	r.vo.no_sanitizer = o->no_sanitizer;
	r.vo.verbose = o->verbose;
	r.vo.worker_path = o->worker_path;
	r.vo.timing_shapes = o->backend == KF_BACKEND_CUDA;
	if (o->step_timeout_ms > 0)
		r.vo.step_timeout_ms = o->step_timeout_ms;
	if (o->deadline_s > 0)
		r.vo.deadline_s = o->deadline_s;
	if (o->arch)
		r.vo.arch = o->arch;
	else if (o->backend == KF_BACKEND_CUDA && o->device && o->device->arch[0])
		r.vo.arch = o->device->arch;

	for (size_t i = 0; i < KF_ARRAY_SIZE(steps) && !settled && !st; i++)
		st = steps[i](&r, &settled, err);
	/* a failure while a cancellation was asked for is the cancellation's (a killed child) */
	if (st && st != KF_ERR_NOMEM && st != KF_ERR_INTERRUPTED && kf_cancelled()) {
		char was[sizeof(err->msg)];
		snprintf(was, sizeof(was), "%s", err->msg);
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted (%s)", was);
	}
	if (st) {
		kf_eval_outcome_free(res);
		return st;
	}

	if (o->backend != KF_BACKEND_CUDA)
		snprintf(res->arch, sizeof(res->arch), "cpu");
	else if (o->device && o->device->arch[0])
		snprintf(res->arch, sizeof(res->arch), "%s", o->device->arch);
	else if (res->verify->compiled)
		snprintf(res->arch, sizeof(res->arch), "%s", res->verify->compiled->arch);
	if (res->profile) {
		res->n_resources = res->profile->n_launches;
		res->resources = res->profile->launches;
	}
	kf_eval_baselines_status(res, o);
	res->timed = res->verdict == KF_VERDICT_PASS && res->profile && !res->profile_status;
	if (res->timed && (st = fill_timings(res, o, err))) {
		kf_eval_outcome_free(res);
		return st;
	}
	snprintf(res->fitness_clock, sizeof(res->fitness_clock), "%s", res->clock);
	res->cpu_speedup = res->speedup;
	if (res->timed && o->model && o->backend == KF_BACKEND_CPU && !(o->stop && *o->stop))
		step_model(&r, res);
	fill_feedback(t, res, o->profile);
	res->wall_ms = kf_now_ms() - t0;
	*out = res;
	return KF_OK;
}

enum kf_status kf_eval_file(const struct kf_task *t, const char *path, const struct kf_eval_opts *o,
			    struct kf_eval_outcome **out, struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(MAX_SOURCE);
	enum kf_status st = kf_buf_read_file(&b, path, err);
	*out = NULL;
	if (st) {
		kf_buf_release(&b);
		return st == KF_ERR_NOMEM ? st : KF_ERR_NOTFOUND;
	}
	st = kf_eval_run(t, path, b.data, b.len, o, out, err);
	kf_buf_release(&b);
	return st;
}

void kf_eval_outcome_free(struct kf_eval_outcome *o)
{
	if (!o)
		return;
	kf_verify_result_free(o->verify);
	kf_verify_result_free(o->strict);
	kf_profile_result_free(o->profile);
	kf_model_result_free(o->model);
	free(o->timings);
	free(o->feedback.compile_log);
	free(o->feedback.check);
	free(o->feedback.profile_text);
	free(o);
}
