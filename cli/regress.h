/* kforge regress: the shipped-kernel manifest (spec/task-format.md, "Shipped-kernel manifest") read with
 * field paths in every error and written back deterministically (sorted keys, one kernel per line group),
 * and the statistics that decide whether a timed kernel regressed against its recorded baseline. */
#ifndef KF_CLI_REGRESS_H
#define KF_CLI_REGRESS_H

#include <cjson/cJSON.h>

#include "kf.h"

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

#endif
