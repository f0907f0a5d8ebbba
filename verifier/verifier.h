/* verifier: proves a candidate kernel correct against a task's reference, or says exactly why not
 * (docs/spec/verification.md). Inputs are generated here in the trusted parent from a secret seed; the
 * candidate and the reference each run in their own sandboxed worker; outputs are compared here. */
#ifndef KF_VERIFIER_H
#define KF_VERIFIER_H

#include "kf.h"
#include "kfile.h"
#include "rng.h"
#include "sandbox/sandbox.h"
#include "task.h"

/* Verdicts of docs/spec/verification.md; the names are a contract. */
enum kf_verdict {
	KF_VERDICT_PASS,
	KF_VERDICT_COMPILE_ERROR,
	KF_VERDICT_INVALID_LAUNCH,
	KF_VERDICT_RUNTIME_ERROR,
	KF_VERDICT_TIMEOUT,
	KF_VERDICT_WRONG_OUTPUT,
	KF_VERDICT_NAN_MISMATCH,
	KF_VERDICT_OUT_OF_BOUNDS,
	KF_VERDICT_INPUT_MODIFIED,
	KF_VERDICT_NONDETERMINISTIC,
	KF_VERDICT_STATEFUL,
	KF_VERDICT_UNSUPPORTED,
	/* the cpu sanitizer's (additive: docs/spec/verification.md) */
	KF_VERDICT_RACE,
	KF_VERDICT_UNINITIALIZED_READ,
	KF_VERDICT_UNDEFINED_BEHAVIOR,
	KF_VERDICT_COUNT
};

const char *kf_verdict_name(enum kf_verdict v); /* "pass", "wrong_output", ... */
bool kf_verdict_parse(const char *s, enum kf_verdict *out);
int kf_verdict_exit_code(enum kf_verdict v); /* 0 pass, 4 unsupported, else 1 */

/* Where a checked shape came from. */
enum kf_shape_kind { KF_SHAPE_PUBLIC, KF_SHAPE_HIDDEN, KF_SHAPE_EDGE, KF_SHAPE_TIMING };
const char *kf_shape_kind_name(enum kf_shape_kind k);

/* Input distributions the verifier feeds (docs/spec/verification.md check 2; verifier/README.md): the task's
 * init, mixed sign, large magnitude, and the structured ones — a few large outliers among typical values
 * (at least one positive per row), an offset (mean 300 times the std), ties and constant rows, sorted
 * runs (ascending and descending rows), zeros and denormals. */
enum kf_input_dist {
	KF_INPUT_INIT,
	KF_INPUT_MIXED,
	KF_INPUT_LARGE,
	KF_INPUT_OUTLIER,
	KF_INPUT_OFFSET,
	KF_INPUT_TIES,
	KF_INPUT_SORTED,
	KF_INPUT_ZEROS,
	KF_INPUT_DIST_COUNT
};
const char *kf_input_dist_name(enum kf_input_dist d); /* "init", "mixed", ..., "zeros" */
/* Is d one of the structured distributions (outlier .. zeros)? */
bool kf_input_dist_structured(enum kf_input_dist d);

struct kf_shape_report {
	struct kf_shape shape;
	enum kf_shape_kind kind;
	enum kf_verdict status;
	char detail[600]; /* evidence: check, tensor, first bad index, both values, errors */
	char tensor[KF_NAME_MAX];
	enum kf_input_dist dist;
	uint64_t case_seed;
	double max_abs, max_rel, nmse;
	uint64_t n_bad, n_checked;
	int64_t first_bad; /* -1 when none */
	double got, want;
	uint32_t launches; /* candidate launches checked at this shape */
	bool sanitized;    /* the cpu sanitizer ran the candidate here (clean, or this shape's finding) */
};

struct kf_verify_result {
	enum kf_verdict status;
	char reason[1200];
	enum kf_backend_kind backend;
	uint64_t seed;
	char kernel_hash[65];
	size_t n_shapes;
	struct kf_shape_report *shapes;
	char *compile_log;            /* candidate compile log (never NULL) */
	struct kf_compiled *compiled; /* the candidate's compile result (resources), may be NULL */
	double elapsed_ms;
	double parent_ms;  /* time spent in the parent (generation, comparison), for the bench */
	uint32_t launches; /* candidate launches checked in total */
	bool strict;
	/* What the verdict rests on (spec check 0 and the cpu sanitizer): the arch NVRTC compiled the
	 * kernel file for first ("" when it did not get that far); whether the cpu sanitizer pass ran, on
	 * how many shapes, checking how many accesses, and a note on what it skipped or why it did not run
	 * (never NULL, "" when there is nothing to say). */
	char gpu_arch[16];
	bool sanitizer;
	uint32_t san_shapes;
	uint64_t san_accesses;
	double san_ms;
	char san_note[300];
};

struct kf_verify_opts {
	enum kf_backend_kind backend;
	uint64_t seed;           /* 0: a secret seed from getrandom (recorded in the result) */
	int n_seeds;             /* seeds per shape and distribution, default 2 */
	bool strict;             /* plausibility re-verification: more seeds, more edge shapes */
	bool timing_shapes;      /* also check timing shapes (default: cuda yes, cpu no) */
	bool no_edge_shapes;     /* only the task's own shapes */
	int step_timeout_ms;     /* default 20000 */
	bool all_shapes;         /* keep checking after the first failing shape */
	const char *arch;        /* cuda compile arch; default from the device */
	const char *worker_path; /* default beside the binary */
	bool shuffle;            /* cpu: seeded fiber order (default on) */
	bool no_sanitizer;       /* cpu: skip the sanitizer pass (default: it runs) */
	int verbose;
	int deadline_s; /* the whole verification, compiles included (default 3600): what is
			   left when it passes is a timeout verdict */
};

void kf_verify_opts_init(struct kf_verify_opts *o);

/* When set (to a flag a SIGINT handler raises), verification stops taking new shapes once it is
 * non-zero. */
extern volatile int *kf_verify_interrupted;

/* Runs the whole protocol for one candidate kernel given as source text (name is used in messages; the
 * evaluation pipeline, eval/eval.h, is what commands call). Returns KF_OK with *out holding the verdict
 * (pass or a rejection). Errors are problems of the task or of the harness: KF_ERR_INVALID/PARSE/NOTFOUND
 * (bad task, broken reference: exit 2), KF_ERR_UNAVAILABLE (backend not usable: exit 4), others (exit 3). */
enum kf_status kf_verify_source(const struct kf_task *t, const char *name, const char *source, size_t len,
				const struct kf_verify_opts *o, struct kf_verify_result **out,
				struct kf_err *err);
void kf_verify_result_free(struct kf_verify_result *r);

/* The protocol for one of the task's baselines (core/baseline.h): a kernel file exactly like a candidate;
 * a library call likewise on every shape, input set and launch schedule, with no compile. A library
 * baseline on a backend without its library is KF_ERR_UNAVAILABLE with the reason (exit 4). */
struct kf_baseline;
enum kf_status kf_verify_baseline(const struct kf_task *t, const struct kf_baseline *b,
				  const struct kf_verify_opts *o, struct kf_verify_result **out,
				  struct kf_err *err);

/* One shape the verifier checks and why. */
struct kf_checked_shape {
	struct kf_shape shape;
	enum kf_shape_kind kind;
	bool residue; /* a per-run residue shape (kind EDGE): checked with fewer input cases */
};

/* The shapes the verifier checks, in order: public, hidden, derived shapes, timing (when asked).
 * Derived (edge) shapes vary the free dims (not fixed_dims) within the task's range (never beyond the
 * largest value its public and hidden shapes declare) and constraints: all at their smallest value, at
 * primes drawn from seed, one past a power of two, and then the residue shapes drawn from seed that give
 * every free dim every residue mod 32 its range allows, each costing no more than an eighth of the
 * smallest public shape. The same task and seed give the same list. *out is a new array (free()). */
enum kf_status kf_verify_shapes(const struct kf_task *t, bool edges, bool timing, bool strict, uint64_t seed,
				struct kf_checked_shape **out, size_t *n, struct kf_err *err);

/* Describes shape s for a prompt without its hidden values: per dim, a value a shown (public or timing)
 * shape has ("B=16 (as in a shown shape)"), "N = 1", or the size class and residue ("2^10 <= N < 2^11,
 * N % 32 == 3, N prime"; below 64 only the parity). */
void kf_shape_describe_hidden(const struct kf_task *t, const struct kf_shape *s, char *buf, size_t n);
/* Feedback a prompt may show about a shape report that failed at a hidden or edge shape: the verdict, the
 * tensor, the input distribution, the kind of shape and its description, never its values nor the
 * detail (which names indices): "nan_mismatch in 'z' with typical inputs at a shape you are not shown (an
 * edge shape the verifier derives): 2^9 <= N < 2^10, N % 32 == 14. Make the kernel correct ...". */
void kf_shape_report_feedback(const struct kf_task *t, const struct kf_shape_report *r, char *buf, size_t n);
/* The same from a recorded verification reason (a resumed run has only that): the reason as it is when
 * it names a public shape or no shape, else the feedback above. */
void kf_verify_reason_feedback(const struct kf_task *t, const char *reason, char *buf, size_t n);

/* Findings of `kforge tasks lint`: degenerate tasks let a do-nothing kernel pass. */
struct kf_lint_finding {
	char check[32]; /* "near_zero_output", "seed_independent", "input_ignored", "reference_error",
			   "constraint_no_tails" (a warning) */
	char detail[400];
	bool warning; /* worth knowing, but the task is not degenerate */
};

enum kf_status kf_task_lint(const struct kf_task *t, enum kf_backend_kind b,
			    struct kf_lint_finding **findings, size_t *n, struct kf_err *err);

/* Output comparison in the spec's order: NaN/Inf parity, then |got-ref| <= atol + rtol*|ref| (atol scaled
 * by the tensor's rms, see compare.c), then NMSE. Public because the timing protocol re-checks the outputs
 * of timed launches with the same rule a verified kernel was held to. */
struct kf_cmp {
	enum kf_verdict verdict; /* PASS, NAN_MISMATCH or WRONG_OUTPUT */
	uint64_t n_bad;          /* elements failing the verdict's check */
	int64_t first_bad;
	double got, want;
	double max_abs, max_rel, nmse;
	double atol_scale; /* max(1, rms of the reference): the factor atol was applied with */
};

void kf_compare(const void *got, const void *want, enum kf_dtype dt, size_t numel, const struct kf_tol *tol,
		struct kf_cmp *out);

/* Host-side conversions used for f16/bf16 data (round to nearest even), exposed for tests. */
uint16_t kf_f32_to_f16(float f);
float kf_f16_to_f32(uint16_t h);
uint16_t kf_f32_to_bf16(float f);
float kf_bf16_to_f32(uint16_t h);

/* Reads element i of a buffer of dtype dt as a double. */
double kf_elem_get(const void *buf, enum kf_dtype dt, size_t i);
void kf_elem_set(void *buf, enum kf_dtype dt, size_t i, double v);

/* Fills tensor data (numel elements of dt) for a distribution from rng (core/rng.h); respects init and
 * domain. The structured distributions work per row of `row` elements (the tensor's last extent; 0: one
 * row). */
void kf_inputs_fill_rows(void *data, enum kf_dtype dt, size_t numel, size_t row,
			 const struct kf_tensor *tensor, enum kf_input_dist dist, struct kf_rng *rng);
/* kf_inputs_fill_rows with the whole tensor as one row. */
void kf_inputs_fill(void *data, enum kf_dtype dt, size_t numel, const struct kf_tensor *tensor,
		    enum kf_input_dist dist, struct kf_rng *rng);
/* Which distributions apply to a tensor: index-like (randint) tensors get only their init; a domain
 * forbids what it excludes (mixed needs both signs, large and outliers a wide range, an offset the range
 * around +-300 std, zeros the value 0). */
bool kf_inputs_dist_allowed(const struct kf_tensor *tensor, enum kf_input_dist dist);

/* The NMSE under which a case of distribution dist passes despite elementwise misses, provided NaN/Inf
 * parity holds (0: elementwise only). Large-magnitude and structured inputs make many operators
 * ill-conditioned (verifier/README.md); init and mixed cases are judged elementwise only. */
double kf_verify_nmse_fallback(enum kf_input_dist dist, enum kf_dtype dt);

#endif
