/* kforge regress MANIFEST: CI for shipped kernels. Every kernel of the manifest is compiled with NVRTC for
 * each arch the manifest names (toolchain breakage shows without a GPU), verified on every public and
 * hidden shape, and on a GPU timed at its task's first timing shape against the baseline recorded for
 * that arch; a slowdown counts only when its whole 95% interval lies beyond the threshold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "eval/eval.h"
#include "json.h"
#include "kfile.h"
#include "regress.h"
#include "reports/report.h"

static const char help[] =
    "Re-checks the kernels of a shipped-kernel manifest (spec/task-format.md): each one is compiled with\n"
    "NVRTC for every arch in the manifest's \"archs\" list and baselines, verified on every public and\n"
    "hidden shape (plus edge shapes), and on a GPU timed at its task's first timing shape and compared\n"
    "with the baseline recorded for the GPU's arch. A regression is a slowdown beyond the threshold whose\n"
    "bootstrap 95% interval lies wholly above it: noise alone never fails. On the cpu backend timing is\n"
    "reported as skipped (cpu times are not comparable to GPU baselines), never as passed.\n\n"
    "options:\n"
    "  --junit FILE         also write JUnit XML (one test case per kernel and check)\n"
    "  --json               one JSON document on stdout\n"
    "  --threshold PCT      allowed slowdown in percent (default 5)\n"
    "  --update-baselines   record the current medians as the baselines for this GPU's arch and\n"
    "                       toolchain and rewrite MANIFEST (sorted keys); needs a GPU\n"
    "  --backend B          auto (default), cpu or cuda\n"
    "exit: 0 all passed (skips allowed), 1 a kernel failed or regressed, 2 bad manifest or arguments\n"
    "(--update-baselines with --backend cpu), 3 internal error, 4 no GPU (--backend cuda, or\n"
    "--update-baselines on a machine without one)\n";

enum check_kind { CHECK_COMPILE, CHECK_VERIFY, CHECK_TIMING };
static const char *const kind_name[] = {"compile", "verify", "timing"};
static const char *const status_word[] = {"PASS", "FAIL", "ERROR", "SKIP"};
static const char *const status_json[] = {"pass", "fail", "error", "skip"};

struct check {
	size_t entry;
	enum check_kind kind;
	char name[200]; /* the test case name: "compile sm_80,sm_90", "verify public+hidden", ... */
	enum kf_junit_status status;
	char message[1500];   /* one line: verdict and numbers, or the skip reason */
	struct kf_buf detail; /* a compile log or the per-shape report (bounded) */
	double time_s;
	cJSON *extra; /* figures for --json */
};

struct run {
	const struct kf_regress_manifest *m;
	enum kf_backend_kind backend;
	struct kf_device_info dev;
	char toolchain[64]; /* "nvrtc 13.0" */
	double threshold;   /* fraction */
	bool update;
	size_t n_checks;
	struct check *checks;
	size_t n_updated;
	bool input_error, internal_error;
};

static struct check *check_new(struct run *r, size_t entry, enum check_kind kind)
{
	struct check *c = &r->checks[r->n_checks++];
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
static size_t collect_archs(const struct run *r, const struct kf_regress_entry *e, char archs[][16],
			    size_t max)
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
static bool check_compile(struct run *r, size_t idx)
{
	const struct kf_regress_entry *e = &r->m->entries[idx];
	char archs[KF_REGRESS_MAX_ARCHS * 2 + 1][16], line[400], list[200] = "";
	size_t n = collect_archs(r, e, archs, KF_ARRAY_SIZE(archs)), n_bad = 0;
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	cJSON *per = cJSON_CreateObject();
	struct check *c;
	double t0 = kf_now_ms() / 1e3;

	if (!n) {
		cJSON_Delete(per);
		return true; /* no arch named anywhere and no GPU: nothing to compile for NVRTC */
	}
	for (size_t i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "", archs[i]);
	c = check_new(r, idx, CHECK_COMPILE);
	snprintf(c->name, sizeof(c->name), "compile %s", list);
	cJSON_AddItemToObject(c->extra, "archs", per);
	if (kf_kfile_load(e->kernel_path, &k, &err)) {
		c->status = KF_JUNIT_FAIL;
		snprintf(c->message, sizeof(c->message), "compile_error: %s", err.msg);
		c->time_s = kf_now_ms() / 1e3 - t0;
		return false;
	}
	c->status = KF_JUNIT_PASS;
	for (size_t i = 0; i < n && !kf_cli_interrupted; i++) {
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
static void check_verify(struct run *r, size_t idx, bool compiles, enum kf_status st,
			 const struct kf_err *eerr, const struct kf_eval_outcome *ev)
{
	struct check *c = check_new(r, idx, CHECK_VERIFY);
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

/* The baseline record written by --update-baselines (fields of spec/task-format.md plus optional ones). */
static cJSON *baseline_record(const struct run *r, const struct kf_profile_shape *s,
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

/* The timing check from the kernel's evaluation ev (NULL when it did not run): on a GPU, its task's first
 * timing shape against the recorded baseline for the GPU's arch (or recorded as the new baseline). */
static void check_timing(struct run *r, size_t idx, const struct kf_task *task,
			 const struct kf_eval_outcome *ev)
{
	struct kf_regress_entry *e = &r->m->entries[idx];
	struct check *c = check_new(r, idx, CHECK_TIMING);
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
	kf_format_ns(s->cand.stats.median, a, sizeof(a));
	if (ev->stage == KF_EVAL_STAGE_RECHECK) {
		const struct kf_profile_shape *bad = s;
		for (size_t i = 0; i < pr->n_shapes && bad->outputs_ok; i++)
			bad = &pr->shapes[i];
		c->status = KF_JUNIT_FAIL;
		snprintf(c->message, sizeof(c->message),
			 "wrong_output: the outputs of timed launches differ: %s", bad->recheck_detail);
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
	c->time_s = (ev->profile_ms + ev->strict_ms) / 1e3;
}

static void run_entry(struct run *r, size_t idx)
{
	const struct kf_regress_entry *e = &r->m->entries[idx];
	struct kf_task *task = NULL;
	struct kf_eval_outcome *ev = NULL;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = KF_OK;
	bool compiles = check_compile(r, idx);

	if (kf_task_load(e->task_path, 0, NULL, &task, &err)) {
		struct check *c = check_new(r, idx, CHECK_VERIFY);
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
		eo.profile = r->backend == KF_BACKEND_CUDA;
		eo.stop = &kf_cli_interrupted;
		st = kf_eval_file(task, e->kernel_path, &eo, &ev, &err);
	}
	check_verify(r, idx, compiles, st, &err, ev);
	if (!kf_cli_interrupted)
		check_timing(r, idx, task, ev);
	kf_eval_outcome_free(ev);
	kf_task_free(task);
}

static void print_check(const struct run *r, const struct check *c)
{
	printf("%-5s %s  %s: %s\n", status_word[c->status], r->m->entries[c->entry].name, c->name,
	       c->message);
	fflush(stdout);
}

static int write_junit(const struct run *r, const char *path)
{
	struct kf_junit_case *cases = calloc(r->n_checks + 1, sizeof(*cases));
	struct kf_buf b = KF_BUF_INIT(64u << 20);
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st;

	if (!cases) {
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < r->n_checks; i++) {
		const struct check *c = &r->checks[i];
		cases[i] = (struct kf_junit_case){
		    .classname = r->m->entries[c->entry].name,
		    .name = c->name,
		    .time_s = c->time_s,
		    .status = c->status,
		    .message = c->message,
		    .detail = c->detail.len ? c->detail.data : NULL,
		};
	}
	st = kf_junit_render(&b, "kforge regress", cases, r->n_checks);
	if (!st)
		st = kf_write_file_atomic(path, b.data, b.len, &err);
	else
		kf_err_set(&err, st, "cannot render the JUnit report");
	free(cases);
	kf_buf_release(&b);
	if (st) {
		kf_cli_error("junit: %s", err.msg);
		return KF_EXIT_INTERNAL;
	}
	return 0;
}

static void print_json(const struct run *r, const char *manifest, size_t counts[4], int rc)
{
	cJSON *o = cJSON_CreateObject(), *ks = cJSON_CreateArray(), *sum = cJSON_CreateObject();
	struct kf_err err = KF_ERR_INIT;
	cJSON_AddStringToObject(o, "manifest", manifest);
	cJSON_AddStringToObject(o, "backend", kf_backend_name(r->backend));
	if (r->backend == KF_BACKEND_CUDA) {
		cJSON_AddStringToObject(o, "device", r->dev.name);
		cJSON_AddStringToObject(o, "arch", r->dev.arch);
	}
	cJSON_AddStringToObject(o, "toolchain", r->toolchain);
	kf_json_add_number(o, "threshold_pct", r->threshold * 100);
	cJSON_AddBoolToObject(o, "update_baselines", r->update);
	for (size_t i = 0; i < r->m->n_entries; i++) {
		const struct kf_regress_entry *e = &r->m->entries[i];
		cJSON *k = cJSON_CreateObject(), *checks = cJSON_CreateArray();
		size_t n_by[4] = {0};
		const char *status;
		cJSON_AddStringToObject(k, "name", e->name);
		cJSON_AddStringToObject(k, "task", e->task_path);
		cJSON_AddStringToObject(k, "kernel", e->kernel_path);
		for (size_t j = 0; j < r->n_checks; j++) {
			const struct check *c = &r->checks[j];
			cJSON *cj;
			if (c->entry != i)
				continue;
			n_by[c->status]++;
			cj = cJSON_Duplicate(c->extra, true);
			cJSON_AddStringToObject(cj, "check", kind_name[c->kind]);
			cJSON_AddStringToObject(cj, "name", c->name);
			cJSON_AddStringToObject(cj, "status", status_json[c->status]);
			cJSON_AddStringToObject(cj, "message", c->message);
			if (c->detail.len)
				cJSON_AddStringToObject(cj, "detail", c->detail.data);
			kf_json_add_number(cj, "time_s", c->time_s);
			cJSON_AddItemToArray(checks, cj);
		}
		/* fail over error over pass; "skip" only when nothing was checked at all */
		status = n_by[KF_JUNIT_FAIL]    ? "fail"
			 : n_by[KF_JUNIT_ERROR] ? "error"
			 : n_by[KF_JUNIT_PASS]  ? "pass"
						: "skip";
		cJSON_AddStringToObject(k, "status", status);
		cJSON_AddItemToObject(k, "checks", checks);
		cJSON_AddItemToArray(ks, k);
	}
	cJSON_AddItemToObject(o, "kernels", ks);
	kf_json_add_int(sum, "kernels", (int64_t)r->m->n_entries);
	kf_json_add_int(sum, "checks", (int64_t)r->n_checks);
	kf_json_add_int(sum, "passed", (int64_t)counts[KF_JUNIT_PASS]);
	kf_json_add_int(sum, "failed", (int64_t)counts[KF_JUNIT_FAIL]);
	kf_json_add_int(sum, "errors", (int64_t)counts[KF_JUNIT_ERROR]);
	kf_json_add_int(sum, "skipped", (int64_t)counts[KF_JUNIT_SKIP]);
	if (r->update)
		kf_json_add_int(sum, "baselines_updated", (int64_t)r->n_updated);
	cJSON_AddItemToObject(o, "summary", sum);
	kf_json_add_int(o, "exit_code", rc);
	if (kf_json_fput(o, true, stdout, &err))
		kf_cli_error("%s", err.msg);
	cJSON_Delete(o);
}

int cmd_regress(int argc, char **argv)
{
	const char *junit = NULL, *thr_s = NULL, *backend = NULL, *pos[1];
	bool json = false, update = false;
	const struct kf_opt opts[] = {
	    {"junit", true, &junit, NULL},     {"json", false, NULL, &json},
	    {"threshold", true, &thr_s, NULL}, {"update-baselines", false, NULL, &update},
	    {"backend", true, &backend, NULL},
	};
	struct run r = {0};
	struct kf_regress_manifest *m = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf warn = KF_BUF_INIT(1 << 16);
	size_t n_pos, counts[4] = {0};
	enum kf_status st;
	int rc;

	if (kf_cli_wants_help(argc, argv))
		return kf_cli_help("regress", help);
	if ((rc = kf_cli_parse("regress", argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, &n_pos)))
		return rc;
	if (n_pos != 1)
		return kf_cli_usage_error("regress", "expected MANIFEST");
	r.threshold = 0.05;
	if (thr_s) {
		char *end;
		double v = strtod(thr_s, &end);
		if (end == thr_s || *end || !(v >= 0 && v <= 1000))
			return kf_cli_usage_error(
			    "regress", "--threshold needs a percentage in 0..1000, not '%s'", thr_s);
		r.threshold = v / 100;
	}
	if (update && backend && !strcmp(backend, "cpu"))
		return kf_cli_usage_error("regress",
					  "--update-baselines needs GPU times; the cpu backend cannot record "
					  "baselines");
	st = kf_regress_manifest_load(pos[0], &warn, &m, &err);
	if (warn.len)
		fputs(warn.data, stderr);
	kf_buf_release(&warn);
	if (st) {
		kf_cli_error("%s", err.msg);
		return st == KF_ERR_NOMEM || st == KF_ERR_IO ? KF_EXIT_INTERNAL : KF_EXIT_USAGE;
	}
	if ((rc = kf_cli_backend_select("regress", backend, &r.backend, &r.dev))) {
		kf_regress_manifest_free(m);
		return rc;
	}
	if (update && r.backend != KF_BACKEND_CUDA) {
		kf_cli_error(
		    "--update-baselines needs a GPU: no usable GPU here, so no baselines were recorded");
		kf_regress_manifest_free(m);
		return KF_EXIT_UNAVAILABLE;
	}
	r.m = m;
	r.update = update;
	/* regress's baselines are GPU times of NVRTC builds: the toolchain is NVRTC's id on any backend */
	snprintf(r.toolchain, sizeof(r.toolchain), "%s", kf_compiler_id(KF_BACKEND_CUDA));
	if (!(r.checks = calloc(m->n_entries * 3, sizeof(*r.checks)))) {
		kf_regress_manifest_free(m);
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < m->n_entries && !kf_cli_interrupted; i++) {
		size_t first = r.n_checks;
		run_entry(&r, i);
		if (!json)
			for (size_t j = first; j < r.n_checks; j++)
				print_check(&r, &r.checks[j]);
	}
	for (size_t i = 0; i < r.n_checks; i++)
		counts[r.checks[i].status]++;
	rc = r.internal_error        ? KF_EXIT_INTERNAL
	     : r.input_error         ? KF_EXIT_USAGE
	     : counts[KF_JUNIT_FAIL] ? KF_EXIT_FAILED
				     : 0;
	if (update && !kf_cli_interrupted) {
		if (rc || counts[KF_JUNIT_FAIL]) {
			kf_cli_error("baselines not updated: fix the failing checks first");
		} else if ((st = kf_regress_manifest_save(m, &err))) {
			kf_cli_error("%s", err.msg);
			rc = KF_EXIT_INTERNAL;
		}
	}
	if (junit && write_junit(&r, junit))
		rc = KF_EXIT_INTERNAL;
	if (kf_cli_interrupted)
		rc = KF_EXIT_INTERRUPTED;
	if (json) {
		print_json(&r, pos[0], counts, rc);
	} else {
		printf(
		    "regress: %zu kernels, %zu checks: %zu passed, %zu failed, %zu errors, %zu skipped%s\n",
		    m->n_entries, r.n_checks, counts[KF_JUNIT_PASS], counts[KF_JUNIT_FAIL],
		    counts[KF_JUNIT_ERROR], counts[KF_JUNIT_SKIP],
		    r.backend == KF_BACKEND_CUDA ? "" : " (no GPU: timing skipped, not passed)");
		if (update && !rc)
			printf("recorded %zu %s baselines (%s) in %s\n", r.n_updated, r.dev.arch, r.toolchain,
			       pos[0]);
	}
	for (size_t i = 0; i < r.n_checks; i++) {
		kf_buf_release(&r.checks[i].detail);
		cJSON_Delete(r.checks[i].extra);
	}
	free(r.checks);
	kf_regress_manifest_free(m);
	return rc;
}
