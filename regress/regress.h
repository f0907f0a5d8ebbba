/* regress: `kforge regress` as a library. The shipped-kernel manifest (docs/spec/manifest.md) read with field
 * paths in every error and written back deterministically (sorted keys, one kernel per line group); the
 * statistics that decide whether a timed kernel regressed against its recorded baseline; the checks run per
 * kernel (compile, evaluate through eval/, time); and their JUnit and JSON forms. The command parses
 * arguments, calls these and prints. */
#ifndef KF_REGRESS_H
#define KF_REGRESS_H

#include <cjson/cJSON.h>

#include "kf.h"
#include "reports/report.h"
#include "sandbox/sandbox.h"

#define KF_REGRESS_FORMAT "kforge-manifest/1"
#define KF_REGRESS_MAX_ARCHS 16

/* One recorded baseline: the median time of the kernel at its task's first timing shape on one arch. */
struct kf_regress_baseline {
	char arch[16];      /* the key: "sm_90" */
	double median_us;   /* required, > 0 */
	char toolchain[32]; /* required: "cuda-13.0" */
	bool has_ci;        /* optional ci_lo_us <= median_us <= ci_hi_us: the recorded run's 95% interval */
	double ci_lo_us, ci_hi_us;
	char device[128]; /* optional: the GPU it was recorded on ("" when not given) */
};

struct kf_regress_entry {
	char *name;      /* "name" if given, else the kernel file's base name without ".cu" */
	char *task_path; /* resolved against the manifest's folder */
	char *kernel_path;
	size_t n_baselines;
	struct kf_regress_baseline *baselines;
	cJSON *json; /* this kernel's object inside the manifest tree (borrowed from it) */
};

struct kf_regress_manifest {
	char *path;
	cJSON *root;    /* the whole document, kept so a rewrite preserves fields kforge does not know */
	size_t n_archs; /* the optional top-level "archs" list: compiled for even without a baseline */
	char archs[KF_REGRESS_MAX_ARCHS][16];
	size_t n_entries;
	struct kf_regress_entry *entries;
};

/* Reads and checks path. KF_ERR_PARSE / KF_ERR_INVALID / KF_ERR_NOTFOUND with "FILE: kernels[2].task: ..."
 * in err; unknown fields are warnings appended to warnings (may be NULL). */
enum kf_status kf_regress_manifest_load(const char *path, struct kf_buf *warnings,
					struct kf_regress_manifest **out, struct kf_err *err);
void kf_regress_manifest_free(struct kf_regress_manifest *m);
/* The baseline of entry e for arch, or NULL. */
const struct kf_regress_baseline *kf_regress_baseline_find(const struct kf_regress_entry *e,
							   const char *arch);
/* Replaces (or adds) e's baseline object for arch in the tree with rec (ownership passes to the tree). */
enum kf_status kf_regress_baseline_set(struct kf_regress_entry *e, const char *arch, cJSON *rec,
				       struct kf_err *err);
/* True for "sm_NN", "sm_NNN" and the same with a trailing "a". */
bool kf_regress_arch_valid(const char *arch);

/* Serializes j deterministically: object keys in byte order, two-space indentation, a container whose
 * members are all scalars on one line, numbers in their shortest round-trip form, a final newline. */
enum kf_status kf_regress_json_write(const cJSON *j, struct kf_buf *out, struct kf_err *err);
/* Writes the manifest tree back to its file atomically with kf_regress_json_write. */
enum kf_status kf_regress_manifest_save(const struct kf_regress_manifest *m, struct kf_err *err);

/* ---- the regression decision ---- */

struct kf_regress_cmp {
	double median_ns;            /* of the current samples */
	double med_lo_ns, med_hi_ns; /* bootstrap 95% interval of that median */
	double change;               /* median / baseline - 1 (0.10 = 10% slower) */
	double change_lo, change_hi; /* interval of the change, widened by the baseline's own interval */
	bool regression;  /* change_lo > threshold: slower by more than the threshold beyond noise */
	bool improvement; /* change_hi < 0: faster beyond noise */
};

/* Compares samples_ns[0..n) (n >= 5, all finite and > 0) with baseline b: a percentile bootstrap
 * (resamples, default 4000 when 0; deterministic for seed) of the median at 95%, divided by the baseline's
 * median, or by its recorded interval when it has one (lower change bound over its upper time bound and
 * the reverse), so that noise on either side widens the interval. threshold is a fraction (0.05 = 5%).
 * KF_ERR_INVALID for bad arguments, KF_ERR_NOMEM. */
enum kf_status kf_regress_compare(const double *samples_ns, size_t n, const struct kf_regress_baseline *b,
				  double threshold, uint64_t seed, uint32_t resamples,
				  struct kf_regress_cmp *out, struct kf_err *err);

/* ---- the checks ---- */

enum kf_regress_check_kind { KF_REGRESS_CHECK_COMPILE, KF_REGRESS_CHECK_VERIFY, KF_REGRESS_CHECK_TIMING };
const char *kf_regress_check_kind_name(enum kf_regress_check_kind k); /* "compile", "verify", "timing" */

/* One JUnit test case: a kernel's compile, verify or timing check. */
struct kf_regress_check {
	size_t entry; /* the kernel: index in the manifest's entries */
	enum kf_regress_check_kind kind;
	char name[200]; /* the test case name: "compile sm_80,sm_90", "verify public+hidden", "timing B=16" */
	enum kf_junit_status status;
	char message[1500];   /* one line: verdict and numbers, or the skip reason */
	struct kf_buf detail; /* a compile log or the per-shape report (bounded) */
	double time_s;
	cJSON *extra; /* figures for --json */
};

struct kf_regress_run {
	/* in */
	struct kf_regress_manifest *m; /* with update, the new baselines are set in its tree */
	enum kf_backend_kind backend;
	struct kf_device_info dev; /* the probed device on cuda */
	double threshold;          /* allowed slowdown, a fraction (0.05 = 5%) */
	bool update;               /* record this run's medians as the baselines for the GPU's arch */
	bool cpu_timing; /* cpu backend: time the kernels anyway (CPU clock) to report their speedups over the
			    reference and the task's baselines; the timing check stays skipped */
	volatile int *stop; /* Ctrl-C: no kernel is started after it is set (may be NULL) */
	/* out */
	char toolchain[64]; /* NVRTC's compiler id */
	size_t n_checks;
	struct kf_regress_check *checks;
	size_t counts[4]; /* checks by enum kf_junit_status */
	size_t n_updated; /* baselines recorded (update) */
	bool input_error; /* a task or reference is broken (exit 2) */
	bool internal_error;
};

typedef void (*kf_regress_progress_fn)(void *ctx, const struct kf_regress_run *r,
				       const struct kf_regress_check *c);

/* Runs the checks of every kernel of r->m in order; fn (may be NULL) hears of each check once its kernel is
 * done. Per kernel: the compile check (NVRTC for the manifest's archs, the arches with baselines and the
 * GPU's own; none without any), one evaluation through the pipeline (verification, and on a GPU the timing,
 * the re-check of timed outputs and the strict re-verification of an implausible time), the verify check
 * from it, and the timing check: skipped without a GPU; on one, a failure when the timing rejected the
 * kernel, else the median at the task's first timing shape against the baseline for the GPU's arch (a
 * regression is a change whose whole 95% interval lies above the threshold), or recorded as the baseline
 * with update. Returns an error only for what stops it all (out of memory); release r afterwards. */
enum kf_status kf_regress_run_all(struct kf_regress_run *r, kf_regress_progress_fn fn, void *ctx,
				  struct kf_err *err);
/* The exit code of a finished run (docs/spec/cli.md): 3 internal error, 2 broken input, 1 a check failed,
 * else 0. */
int kf_regress_exit_code(const struct kf_regress_run *r);
void kf_regress_run_release(struct kf_regress_run *r);

/* The JUnit XML of the checks, written atomically to path. */
enum kf_status kf_regress_junit_write(const struct kf_regress_run *r, const char *path, struct kf_err *err);
/* The --json document: the run's settings, each kernel with its checks and status, the summary, exit_code
 * rc. The caller frees it (cJSON_Delete). */
cJSON *kf_regress_json(const struct kf_regress_run *r, const char *manifest, int rc);

#endif
