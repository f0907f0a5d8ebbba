/* kforge regress's checks (regress/regress.h): per kernel of the manifest, an NVRTC compile for every arch
 * it targets (toolchain breakage shows without a GPU), one evaluation through the pipeline (eval/:
 * verification on every public and hidden shape, and on a GPU the timing with its re-checks), and on a GPU
 * the regression decision against the baseline recorded for that arch, or a new baseline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "eval/eval.h"
#include "json.h"
#include "kfile.h"
#include "regress/regress.h"

static bool stopped(const struct kf_regress_run *r)
{
	return r->stop && *r->stop;
}

static struct kf_regress_check *check_new(struct kf_regress_run *r, size_t entry,
					  enum kf_regress_check_kind kind)
{
	struct kf_regress_check *c = &r->checks[r->n_checks++];
	memset(c, 0, sizeof(*c));
	c->entry = entry;
	c->kind = kind;
	kf_buf_init(&c->detail, 64 << 10); /* the head of a compile log or shape report is what matters */
	c->extra = cJSON_CreateObject();
	return c;
}

/* The first line of a compiler log that says "error", else its first non-empty line. */
static void first_log_line(const char *log, char *out, size_t n)
{
	const char *pick = NULL, *p = log;
	out[0] = 0;
	if (!log)
		return;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len && !pick)
			pick = p;
		if (len && memmem(p, len, "error", 5)) {
			pick = p;
			break;
		}
		p += len + (e ? 1 : 0);
	}
	if (pick) {
		const char *e = strchr(pick, '\n');
		size_t len = e ? (size_t)(e - pick) : strlen(pick);
		snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), pick);
	}
}

/* The archs to compile for: the manifest's "archs", every arch with a baseline, and the GPU's own. */
static size_t collect_archs(const struct kf_regress_run *r, const struct kf_regress_entry *e,
			    char archs[][16], size_t max)
{
	size_t n = 0;
	const char *cand[KF_REGRESS_MAX_ARCHS * 2 + 1];
	size_t nc = 0;
	for (size_t i = 0; i < r->m->n_archs; i++)
		cand[nc++] = r->m->archs[i];
	for (size_t i = 0; i < e->n_baselines && nc < KF_ARRAY_SIZE(cand) - 1; i++)
		cand[nc++] = e->baselines[i].arch;
	if (r->backend == KF_BACKEND_CUDA && r->dev.arch[0])
		cand[nc++] = r->dev.arch;
	for (size_t i = 0; i < nc; i++) {
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup = dup || !strcmp(archs[j], cand[i]);
		if (!dup && n < max)
			snprintf(archs[n++], 16, "%s", cand[i]);
	}
	/* sorted, so the test case name does not depend on the manifest's order */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(archs[j - 1], archs[j]) > 0; j--) {
			char t[16];
			memcpy(t, archs[j], 16);
			memcpy(archs[j], archs[j - 1], 16);
			memcpy(archs[j - 1], t, 16);
		}
	return n;
}

/* NVRTC for each arch. Returns false when the kernel does not compile (the check failed). */
static bool check_compile(struct kf_regress_run *r, size_t idx)
{
	const struct kf_regress_entry *e = &r->m->entries[idx];
	char archs[KF_REGRESS_MAX_ARCHS * 2 + 1][16], line[400], list[200] = "";
	size_t n = collect_archs(r, e, archs, KF_ARRAY_SIZE(archs)), n_bad = 0;
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	cJSON *per = cJSON_CreateObject();
	struct kf_regress_check *c;
	double t0 = kf_now_ms() / 1e3;

	if (!n) {
		cJSON_Delete(per);
		return true; /* no arch named anywhere and no GPU: nothing to compile for NVRTC */
	}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "", archs[i]);
	c = check_new(r, idx, KF_REGRESS_CHECK_COMPILE);
	snprintf(c->name, sizeof(c->name), "compile %s", list);
	cJSON_AddItemToObject(c->extra, "archs", per);
	if (kf_kfile_load(e->kernel_path, &k, &err)) {
		c->status = KF_JUNIT_FAIL;
		snprintf(c->message, sizeof(c->message), "compile_error: %s", err.msg);
		c->time_s = kf_now_ms() / 1e3 - t0;
		return false;
	}
	c->status = KF_JUNIT_PASS;
	for (size_t i = 0; i < n && !stopped(r); i++) {
		struct kf_compile_opts co = {0};
		struct kf_compiled *out = NULL;
		enum kf_status st;
		co.backend = KF_BACKEND_CUDA;
		co.arch = archs[i];
		st = kf_compile(k, &co, &out, &err);
		if (!st) {
			cJSON_AddStringToObject(per, archs[i], "ok");
			if (!c->message[0])
				snprintf(c->message, sizeof(c->message), "compiled with %s", out->compiler);
		} else if (st == KF_ERR_COMPILE || st == KF_ERR_TIMEOUT || st == KF_ERR_LIMIT ||
			   st == KF_ERR_CRASH) {
			/* the kernel (or the toolchain under it) is broken: a failure of the thing checked */
			const char *what = st == KF_ERR_COMPILE ? "compile_error" : "compile_failed";
			if (st == KF_ERR_COMPILE && out)
				first_log_line(out->log, line, sizeof(line));
			else
				snprintf(line, sizeof(line), "%s", err.msg);
			cJSON_AddStringToObject(per, archs[i], what);
			if (!n_bad++) {
				snprintf(c->message, sizeof(c->message), "%s for %s: %s", what, archs[i],
					 line);
				if (out && out->log)
					kf_buf_add_truncated(&c->detail, out->log, strlen(out->log));
			}
			if (c->status != KF_JUNIT_ERROR)
				c->status = KF_JUNIT_FAIL;
		} else {
			cJSON_AddStringToObject(per, archs[i], "error");
			snprintf(c->message, sizeof(c->message), "cannot compile for %s: %s", archs[i],
				 err.msg);
			c->status = KF_JUNIT_ERROR;
			r->internal_error = true;
		}
		kf_compiled_free(out);
	}
	if (n_bad > 1 && c->status == KF_JUNIT_FAIL)
		snprintf(c->message + strlen(c->message), sizeof(c->message) - strlen(c->message),
			 " (fails on %zu of %zu archs)", n_bad, n);
	kf_kfile_free(k);
	c->time_s = kf_now_ms() / 1e3 - t0;
	return c->status == KF_JUNIT_PASS;
}

/* Verification on every public and hidden shape (and the verifier's edge shapes; timing shapes too on a
 * GPU): the first verification of the kernel's evaluation, ev (NULL when it did not run: st and eerr say
 * why, or the kernel does not compile). */
static void check_verify(struct kf_regress_run *r, size_t idx, bool compiles, enum kf_status st,
			 const struct kf_err *eerr, const struct kf_eval_outcome *ev)
{
	struct kf_regress_check *c = check_new(r, idx, KF_REGRESS_CHECK_VERIFY);
	const struct kf_verify_result *vr = ev ? ev->verify : NULL;
	size_t n_kind[4] = {0};

	snprintf(c->name, sizeof(c->name), "verify public+hidden");
	if (!compiles) {
		c->status = KF_JUNIT_SKIP;
		snprintf(c->message, sizeof(c->message),
			 "not verified: the kernel does not compile (see its compile check)");
		return;
	}
	if (st || !ev) {
		c->status = KF_JUNIT_ERROR;
		snprintf(c->message, sizeof(c->message), "cannot verify: %s", eerr->msg);
		if (st == KF_ERR_INVALID || st == KF_ERR_PARSE || st == KF_ERR_NOTFOUND)
			r->input_error = true; /* the task or its reference is broken, not the kernel */
		else
			r->internal_error = true;
		return;
	}
	c->time_s = ev->verify_ms / 1e3;
	for (size_t i = 0; i < vr->n_shapes; i++)
		if (vr->shapes[i].kind < 4)
			n_kind[vr->shapes[i].kind]++;
	cJSON_AddStringToObject(c->extra, "verdict", kf_verdict_name(vr->status));
	cJSON_AddStringToObject(c->extra, "backend", kf_backend_name(r->backend));
	{
		char seed[24]; /* as a string: a 64-bit seed does not fit a JSON number exactly */
		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)vr->seed);
		cJSON_AddStringToObject(c->extra, "seed", seed);
	}
	kf_json_add_int(c->extra, "public_shapes", (int64_t)n_kind[KF_SHAPE_PUBLIC]);
	kf_json_add_int(c->extra, "hidden_shapes", (int64_t)n_kind[KF_SHAPE_HIDDEN]);
	kf_json_add_int(c->extra, "edge_shapes", (int64_t)n_kind[KF_SHAPE_EDGE]);
	kf_json_add_int(c->extra, "timing_shapes", (int64_t)n_kind[KF_SHAPE_TIMING]);
	if (vr->status == KF_VERDICT_PASS) {
		c->status = KF_JUNIT_PASS;
		snprintf(c->message, sizeof(c->message),
			 "pass on %s: %zu public, %zu hidden, %zu edge%s shapes, seed %llu",
			 kf_backend_name(r->backend), n_kind[KF_SHAPE_PUBLIC], n_kind[KF_SHAPE_HIDDEN],
			 n_kind[KF_SHAPE_EDGE], n_kind[KF_SHAPE_TIMING] ? " and timing" : "",
			 (unsigned long long)vr->seed);
	} else if (vr->status == KF_VERDICT_UNSUPPORTED) {
		c->status = KF_JUNIT_SKIP;
		snprintf(c->message, sizeof(c->message), "unsupported on the %s backend: %s",
			 kf_backend_name(r->backend), vr->reason);
	} else {
		c->status = KF_JUNIT_FAIL;
		const char *v = kf_verdict_name(vr->status);
		bool named =
		    !strncmp(vr->reason, v, strlen(v)); /* the verifier's reason usually opens with it */
		snprintf(c->message, sizeof(c->message), "%s%s%s (seed %llu)", named ? "" : v,
			 named ? "" : ": ", vr->reason, (unsigned long long)vr->seed);
		if (vr->compile_log && vr->compile_log[0])
			kf_buf_add_truncated(&c->detail, vr->compile_log, strlen(vr->compile_log));
		for (size_t i = 0; i < vr->n_shapes; i++) {
			const struct kf_shape_report *s = &vr->shapes[i];
			char shape[256];
			if (s->status == KF_VERDICT_PASS)
				continue;
			kf_shape_format(&s->shape, shape, sizeof(shape));
			kf_buf_addf(&c->detail, "%s shape %s: %s: %s\n", kf_shape_kind_name(s->kind), shape,
				    kf_verdict_name(s->status), s->detail);
		}
	}
}

static uint64_t name_seed(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a: a fixed bootstrap seed per kernel, reproducible */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static double round_us(double ns)
{
	return round(ns) / 1e3; /* microseconds with nanosecond resolution: short and stable in the file */
}

/* The baseline record written by --update-baselines (fields of docs/spec/manifest.md plus optional ones). */
static cJSON *baseline_record(const struct kf_regress_run *r, const struct kf_profile_shape *s,
			      const struct kf_regress_cmp *own)
{
	cJSON *o = cJSON_CreateObject();
	char when[32], shape[256];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	kf_shape_format(&s->shape, shape, sizeof(shape));
	kf_json_add_number(o, "median_us", round_us(own->median_ns));
	cJSON_AddStringToObject(o, "toolchain", r->toolchain);
	kf_json_add_number(o, "ci_lo_us", round_us(floor(own->med_lo_ns)));
	kf_json_add_number(o, "ci_hi_us", round_us(ceil(own->med_hi_ns)));
	kf_json_add_int(o, "samples", (int64_t)s->cand.n);
	cJSON_AddStringToObject(o, "device", r->dev.name);
	cJSON_AddStringToObject(o, "clock", "gpu");
	cJSON_AddStringToObject(o, "shape", shape);
	cJSON_AddStringToObject(o, "recorded_at", when);
	return o;
}

/* The kernel against the task's reference and each of its baselines at timed shape i of ev: appended to
 * the check's message (and so to its JUnit line) and to its JSON ("task_baselines": the task's tuned
 * kernels and library calls, not the manifest's recorded medians). */
static void add_speedups(struct kf_regress_check *c, const struct kf_eval_outcome *ev, size_t i)
{
	const struct kf_eval_timing *t = i < ev->n_timings ? &ev->timings[i] : NULL;
	cJSON *a;
	size_t used = strlen(c->message);
	if (!t)
		return;
	if (!cJSON_GetObjectItemCaseSensitive(c->extra, "speedup_vs_reference")) {
		kf_json_add_number(c->extra, "speedup_vs_reference", t->speedup.point);
		kf_json_add_number(c->extra, "speedup_vs_reference_lo", t->speedup.lo);
		kf_json_add_number(c->extra, "speedup_vs_reference_hi", t->speedup.hi);
		used += (size_t)snprintf(c->message + used, sizeof(c->message) - used,
					 "; %s clock: %.2fx the reference (95%% CI %.2f-%.2f)", t->clock,
					 t->speedup.point, t->speedup.lo, t->speedup.hi);
	}
	cJSON_AddStringToObject(c->extra, "clock", t->clock);
	a = cJSON_AddArrayToObject(c->extra, "task_baselines");
	for (size_t b = 0; b < ev->n_baselines; b++) {
		const struct kf_profile_baseline *pb = &ev->baselines[b];
		const struct kf_eval_baseline_time *bt = NULL;
		cJSON *j = cJSON_CreateObject();
		for (size_t k = 0; k < t->n_baselines; k++)
			if (t->baselines[k].index == b)
				bt = &t->baselines[k];
		cJSON_AddStringToObject(j, "name", pb->name);
		cJSON_AddStringToObject(j, "kind", pb->library ? "library" : "kernel");
		cJSON_AddStringToObject(j, "status", bt ? "timed" : kf_profile_base_status_name(pb->status));
		if (bt) {
			kf_json_add_number(j, "speedup", bt->speedup.point);
			kf_json_add_number(j, "speedup_lo", bt->speedup.lo);
			kf_json_add_number(j, "speedup_hi", bt->speedup.hi);
			cJSON_AddBoolToObject(j, "significant", bt->significant);
			kf_json_add_number(j, "median_us", bt->median_ns / 1e3);
			if (used < sizeof(c->message))
				used += (size_t)snprintf(c->message + used, sizeof(c->message) - used,
							 "; vs %s %.2fx (95%% CI %.2f-%.2f%s)", pb->name,
							 bt->speedup.point, bt->speedup.lo, bt->speedup.hi,
							 bt->significant ? ", significant" : "");
		} else {
			cJSON_AddStringToObject(j, "reason", pb->reason);
			if (used < sizeof(c->message))
				used += (size_t)snprintf(
				    c->message + used, sizeof(c->message) - used, "; %s %s%s%.160s", pb->name,
				    kf_profile_base_status_name(pb->status), pb->verdict[0] ? " " : ": ",
				    pb->verdict[0] ? pb->verdict : pb->reason);
		}
		cJSON_AddItemToArray(a, j);
	}
}

/* The timing check from the kernel's evaluation ev (NULL when it did not run): on a GPU, its task's first
 * timing shape against the recorded baseline for the GPU's arch (or recorded as the new baseline). */
static void check_timing(struct kf_regress_run *r, size_t idx, const struct kf_task *task,
			 const struct kf_eval_outcome *ev)
{
	struct kf_regress_entry *e = &r->m->entries[idx];
	struct kf_regress_check *c = check_new(r, idx, KF_REGRESS_CHECK_TIMING);
	const struct kf_regress_baseline *b;
	const struct kf_profile_shape *s = NULL;
	const struct kf_profile_result *pr;
	struct kf_err err = KF_ERR_INIT;
	struct kf_regress_cmp cmp;
	char shape[256], a[32], bstr[32];
	enum kf_status st;

	/* named by the task's first timing shape whatever happens below, so a CI system's history of this
	 * test case is the same on every runner */
	if (task->n_timing) {
		kf_shape_format(&task->shapes_timing[0], shape, sizeof(shape));
		snprintf(c->name, sizeof(c->name), "timing %s", shape);
	} else {
		snprintf(c->name, sizeof(c->name), "timing");
	}
	if (r->backend != KF_BACKEND_CUDA) {
		char archs[200] = "";
		/* name the archs the kernel has baselines for, else those the manifest targets */
		for (size_t i = 0; i < e->n_baselines; i++)
			snprintf(archs + strlen(archs), sizeof(archs) - strlen(archs), "%s%s", i ? "/" : "",
				 e->baselines[i].arch);
		for (size_t i = 0; !e->n_baselines && i < r->m->n_archs; i++)
			snprintf(archs + strlen(archs), sizeof(archs) - strlen(archs), "%s%s", i ? "/" : "",
				 r->m->archs[i]);
		c->status = KF_JUNIT_SKIP;
		snprintf(c->message, sizeof(c->message),
			 "no GPU: cpu times are not comparable to %s baselines", archs[0] ? archs : "GPU");
		/* --cpu-timing: the speedups on the CPU clock, said so, the check still skipped */
		if (ev && ev->timed && ev->n_timings) {
			c->time_s = ev->profile_ms / 1e3;
			add_speedups(c, ev, 0);
		} else if (ev && ev->verdict != KF_VERDICT_PASS && ev->stage != KF_EVAL_STAGE_VERIFY) {
			/* what the timing (asked for with --cpu-timing) found: its rejection fails the kernel
			 */
			c->status = KF_JUNIT_FAIL;
			snprintf(c->message, sizeof(c->message), "%s while timed on the cpu backend: %s",
				 kf_verdict_name(ev->verdict), ev->reason);
		}
		return;
	}
	if (!ev || ev->verify->status != KF_VERDICT_PASS) {
		c->status = KF_JUNIT_SKIP;
		snprintf(c->message, sizeof(c->message), "not timed: the kernel did not pass verification");
		return;
	}
	c->time_s = ev->profile_ms / 1e3;
	if (ev->profile_status) {
		st = ev->profile_status;
		c->status = st == KF_ERR_RUNTIME ? KF_JUNIT_FAIL : KF_JUNIT_ERROR;
		snprintf(c->message, sizeof(c->message), "%s: %s",
			 st == KF_ERR_RUNTIME ? "runtime_error" : "cannot time", ev->profile_err.msg);
		if (st != KF_ERR_RUNTIME)
			r->internal_error = true;
		return;
	}
	if (!(pr = ev->profile)) {
		c->status = KF_JUNIT_SKIP;
		snprintf(c->message, sizeof(c->message), "not timed: interrupted");
		return;
	}
	for (size_t i = 0; i < pr->n_shapes && !s; i++)
		if (pr->shapes[i].is_timing_shape)
			s = &pr->shapes[i];
	if (!s && pr->n_shapes)
		s = &pr->shapes[0];
	if (!s || s->cand.n < 5) {
		c->status = KF_JUNIT_ERROR;
		snprintf(c->message, sizeof(c->message), "cannot time: the profiler returned %s",
			 s ? "fewer than 5 samples" : "no timed shape");
		r->internal_error = true;
		goto out;
	}
	kf_shape_format(&s->shape, shape, sizeof(shape));
	cJSON_AddStringToObject(c->extra, "shape", shape);
	cJSON_AddStringToObject(c->extra, "arch", r->dev.arch);
	cJSON_AddStringToObject(c->extra, "timing_source", s->cand.timing_source);
	kf_json_add_int(c->extra, "samples", (int64_t)s->cand.n);
	/* how the shipped kernel compares with the task's reference in this same run (interleaved samples) */
	kf_json_add_number(c->extra, "speedup_vs_reference", s->speedup.point);
	kf_json_add_number(c->extra, "speedup_vs_reference_lo", s->speedup.lo);
	kf_json_add_number(c->extra, "speedup_vs_reference_hi", s->speedup.hi);
	kf_json_add_number(c->extra, "noise_band", s->noise_band); /* the A/A band of this run */
	if (s->has_aa) {
		kf_json_add_number(c->extra, "aa_lo", s->aa_ci.lo);
		kf_json_add_number(c->extra, "aa_hi", s->aa_ci.hi);
	}
	kf_format_ns(s->cand.stats.median, a, sizeof(a));
	if (ev->stage == KF_EVAL_STAGE_RECHECK) {
		c->status = KF_JUNIT_FAIL;
		snprintf(c->message, sizeof(c->message), "%s: %s", kf_verdict_name(ev->verdict), ev->reason);
		goto out;
	}
	if (ev->stage == KF_EVAL_STAGE_STRICT) {
		/* an implausible time (below the roofline floor, or > 10x) earned a strict re-verification */
		c->status = KF_JUNIT_FAIL;
		snprintf(c->message, sizeof(c->message),
			 "%s: strict re-verification after an implausible time "
			 "(%s): %s",
			 kf_verdict_name(ev->verdict), pr->flags, ev->reason);
		goto out;
	}
	b = kf_regress_baseline_find(e, r->dev.arch);
	if (r->update) {
		struct kf_regress_baseline self = {.median_us = s->cand.stats.median / 1e3};
		double was = b ? b->median_us : 0;
		if ((st = kf_regress_compare(s->cand.samples, s->cand.n, &self, 0, name_seed(e->name), 0,
					     &cmp, &err)) ||
		    (st = kf_regress_baseline_set(e, r->dev.arch, baseline_record(r, s, &cmp), &err))) {
			c->status = KF_JUNIT_ERROR;
			snprintf(c->message, sizeof(c->message), "cannot record the baseline: %s", err.msg);
			r->internal_error = true;
			goto out;
		}
		r->n_updated++;
		c->status = KF_JUNIT_PASS;
		kf_json_add_number(c->extra, "median_us", round_us(cmp.median_ns));
		cJSON_AddStringToObject(c->extra, "result", "recorded");
		if (was > 0)
			snprintf(c->message, sizeof(c->message),
				 "recorded %s baseline %s (was %.3f us, %+.1f%%)", r->dev.arch, a, was,
				 (cmp.median_ns / (was * 1e3) - 1) * 100);
		else
			snprintf(c->message, sizeof(c->message), "recorded %s baseline %s (new)", r->dev.arch,
				 a);
		goto out;
	}
	if (!b) {
		c->status = KF_JUNIT_PASS;
		kf_json_add_number(c->extra, "median_us", round_us(s->cand.stats.median));
		cJSON_AddStringToObject(c->extra, "result", "new");
		snprintf(c->message, sizeof(c->message),
			 "new: median %s over %zu samples, no %s baseline to compare with", a, s->cand.n,
			 r->dev.arch);
		goto out;
	}
	if ((st = kf_regress_compare(s->cand.samples, s->cand.n, b, r->threshold, name_seed(e->name), 0, &cmp,
				     &err))) {
		c->status = KF_JUNIT_ERROR;
		snprintf(c->message, sizeof(c->message), "cannot compare: %s", err.msg);
		r->internal_error = true;
		goto out;
	}
	kf_format_ns(b->median_us * 1e3, bstr, sizeof(bstr));
	kf_json_add_number(c->extra, "median_us", round_us(cmp.median_ns));
	kf_json_add_number(c->extra, "baseline_us", b->median_us);
	cJSON_AddStringToObject(c->extra, "baseline_toolchain", b->toolchain);
	kf_json_add_number(c->extra, "change_pct", cmp.change * 100);
	kf_json_add_number(c->extra, "change_lo_pct", cmp.change_lo * 100);
	kf_json_add_number(c->extra, "change_hi_pct", cmp.change_hi * 100);
	cJSON_AddStringToObject(c->extra, "result",
				cmp.regression    ? "regression"
				: cmp.improvement ? "faster"
						  : "unchanged");
	c->status = cmp.regression ? KF_JUNIT_FAIL : KF_JUNIT_PASS;
	snprintf(c->message, sizeof(c->message),
		 "%s: median %s vs %s baseline %s (%+.1f%%, 95%% CI %+.1f%%..%+.1f%%; threshold %.1f%%; "
		 "toolchain %s, "
		 "baseline %s)",
		 cmp.regression    ? "slower"
		 : cmp.improvement ? "faster"
				   : "within threshold",
		 a, r->dev.arch, bstr, cmp.change * 100, cmp.change_lo * 100, cmp.change_hi * 100,
		 r->threshold * 100, r->toolchain, b->toolchain);
	/* baselines are keyed by arch: an H100 and an H200 are both sm_90, so say when the GPU differs */
	if (b->device[0] && strcmp(b->device, r->dev.name))
		snprintf(c->message + strlen(c->message), sizeof(c->message) - strlen(c->message),
			 "; note: the baseline was recorded on '%s', this is '%s'", b->device, r->dev.name);
out:
	if (s && s->outputs_ok && c->status != KF_JUNIT_ERROR)
		snprintf(c->message + strlen(c->message), sizeof(c->message) - strlen(c->message),
			 "; %.2fx the reference (95%% CI %.2f-%.2f)", s->speedup.point, s->speedup.lo,
			 s->speedup.hi);
	if (s && s->outputs_ok && c->status != KF_JUNIT_ERROR && ev->timed)
		add_speedups(c, ev, (size_t)(s - pr->shapes));
	c->time_s = (ev->profile_ms + ev->strict_ms) / 1e3;
}

static void run_entry(struct kf_regress_run *r, size_t idx)
{
	const struct kf_regress_entry *e = &r->m->entries[idx];
	struct kf_task *task = NULL;
	struct kf_eval_outcome *ev = NULL;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = KF_OK;
	bool compiles = check_compile(r, idx);

	if (kf_task_load(e->task_path, 0, NULL, &task, &err)) {
		struct kf_regress_check *c = check_new(r, idx, KF_REGRESS_CHECK_VERIFY);
		snprintf(c->name, sizeof(c->name), "verify public+hidden");
		c->status = KF_JUNIT_ERROR;
		snprintf(c->message, sizeof(c->message), "cannot load task: %s", err.msg);
		r->input_error = true;
		return;
	}
	if (compiles) {
		/* one evaluation: verification, and on a GPU the timing with its re-checks */
		struct kf_eval_opts eo;
		kf_eval_opts_init(&eo);
		eo.backend = r->backend;
		eo.device = &r->dev;
		eo.profile = r->backend == KF_BACKEND_CUDA || r->cpu_timing;
		eo.stop = r->stop;
		st = kf_eval_file(task, e->kernel_path, &eo, &ev, &err);
	}
	check_verify(r, idx, compiles, st, &err, ev);
	if (!stopped(r))
		check_timing(r, idx, task, ev);
	kf_eval_outcome_free(ev);
	kf_task_free(task);
}

enum kf_status kf_regress_run_all(struct kf_regress_run *r, kf_regress_progress_fn fn, void *ctx,
				  struct kf_err *err)
{
	const struct kf_regress_manifest *m = r->m;

	r->n_checks = r->n_updated = 0;
	r->input_error = r->internal_error = false;
	memset(r->counts, 0, sizeof(r->counts));
	/* regress's baselines are GPU times of NVRTC builds: the toolchain is NVRTC's id on any backend */
	snprintf(r->toolchain, sizeof(r->toolchain), "%s", kf_compiler_id(KF_BACKEND_CUDA));
	if (!(r->checks = calloc(m->n_entries * 3 + 1, sizeof(*r->checks))))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < m->n_entries && !stopped(r); i++) {
		size_t first = r->n_checks;
		run_entry(r, i);
		for (size_t j = first; j < r->n_checks; j++) {
			r->counts[r->checks[j].status]++;
			if (fn)
				fn(ctx, r, &r->checks[j]);
		}
	}
	return KF_OK;
}

int kf_regress_exit_code(const struct kf_regress_run *r)
{
	return r->internal_error ? 3 : r->input_error ? 2 : r->counts[KF_JUNIT_FAIL] ? 1 : 0;
}

void kf_regress_run_release(struct kf_regress_run *r)
{
	for (size_t i = 0; r->checks && i < r->n_checks; i++) {
		kf_buf_release(&r->checks[i].detail);
		cJSON_Delete(r->checks[i].extra);
	}
	free(r->checks);
	r->checks = NULL;
	r->n_checks = 0;
}
