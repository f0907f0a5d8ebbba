/* kforge regress MANIFEST: CI for shipped kernels (the regress library, regress/regress.h). Every kernel of
 * the manifest is compiled with NVRTC for each arch the manifest names (toolchain breakage shows without a
 * GPU), evaluated on every public and hidden shape, and on a GPU timed at its task's first timing shape
 * against the baseline recorded for that arch; a slowdown counts only when its whole 95% interval lies
 * beyond the threshold. This file parses arguments, calls the library and prints. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "json.h"
#include "regress/regress.h"

static const char help[] =
    "Re-checks the kernels of a shipped-kernel manifest (docs/spec/manifest.md): each one is compiled with\n"
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
    "  --cpu-timing         cpu backend: time the kernels anyway, to report their speedups over the\n"
    "                       reference and the task's baselines (tuned kernels; library calls are\n"
    "                       unavailable there) on the CPU clock; the timing check stays skipped\n"
    "exit: 0 all passed (skips allowed), 1 a kernel failed or regressed, 2 bad manifest or arguments\n"
    "(--update-baselines with --backend cpu), 3 internal error, 4 no GPU (--backend cuda, or\n"
    "--update-baselines on a machine without one)\n";

static const char *const status_word[] = {"PASS", "FAIL", "ERROR", "SKIP"};

static void print_check(void *ctx, const struct kf_regress_run *r, const struct kf_regress_check *c)
{
	(void)ctx;
	printf("%-5s %s  %s: %s\n", status_word[c->status], r->m->entries[c->entry].name, c->name,
	       c->message);
	fflush(stdout);
}

int cmd_regress(int argc, char **argv)
{
	const char *junit = NULL, *thr_s = NULL, *backend = NULL, *pos[1];
	bool json = false, update = false, cpu_timing = false;
	const struct kf_opt opts[] = {
	    {"junit", true, &junit, NULL},     {"json", false, NULL, &json},
	    {"threshold", true, &thr_s, NULL}, {"update-baselines", false, NULL, &update},
	    {"backend", true, &backend, NULL}, {"cpu-timing", false, NULL, &cpu_timing},
	};
	struct kf_regress_run r = {0};
	struct kf_regress_manifest *m = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf warn = KF_BUF_INIT(1 << 16);
	size_t n_pos;
	const size_t *counts = r.counts;
	enum kf_status st;
	int rc;

	if (kf_cli_start("regress", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "expected MANIFEST", &rc))
		return rc;
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
	r.cpu_timing = cpu_timing;
	r.stop = kf_cancel_flag();
	if ((st = kf_regress_run_all(&r, json ? NULL : print_check, NULL, &err))) {
		kf_cli_error("%s", err.msg);
		kf_regress_run_release(&r);
		kf_regress_manifest_free(m);
		return KF_EXIT_INTERNAL;
	}
	rc = kf_regress_exit_code(&r);
	if (update && !kf_cancelled()) {
		if (rc || counts[KF_JUNIT_FAIL]) {
			kf_cli_error("baselines not updated: fix the failing checks first");
		} else if ((st = kf_regress_manifest_save(m, &err))) {
			kf_cli_error("%s", err.msg);
			rc = KF_EXIT_INTERNAL;
		}
	}
	if (junit && (st = kf_regress_junit_write(&r, junit, &err))) {
		kf_cli_error("junit: %s", err.msg);
		rc = KF_EXIT_INTERNAL;
	}
	if (kf_cancelled())
		rc = KF_EXIT_INTERRUPTED;
	if (json) {
		cJSON *doc = kf_regress_json(&r, pos[0], rc);
		if (!doc || kf_json_fput(doc, true, stdout, &err))
			kf_cli_error("%s", doc ? err.msg : "out of memory");
		cJSON_Delete(doc);
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
	kf_regress_run_release(&r);
	kf_regress_manifest_free(m);
	return rc;
}
