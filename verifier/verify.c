/* The verification protocol (docs/spec/verification.md): shapes × input distributions × seeds, reference in
 * its own worker (outputs cached on disk), candidate in another, harness-owned poisoned buffers with
 * guard zones, input checksums, determinism under two poison patterns, >= 8 launches per worker mixing
 * same-address and fresh-address inputs, and a fresh-process re-check that tells `stateful` from wrong. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "cancel.h"
#include "compare.h"
#include "fs.h"
#include "hash.h"
#include "verifier.h"

/* Poison patterns: P1 is a NaN in every float width (f32 0x7fc07fc0, f16/bf16 0x7fc0, f64
 * 0x7fc07fc07fc07fc0) so an unwritten float output shows as NaN; P2 is a huge finite value in every float
 * width (f16 65504, f32/bf16 ~2.6e36) so a kernel that reads uninitialized memory through max()/min()
 * or accumulates into it gives a different answer under the two patterns. */
#define POISON_NAN 0x7fc07fc0u
#define POISON_BIG 0x7bff7bffu
#define GUARD_CANARY 0xc3a55a3cu
#define MIN_LAUNCHES 8
#define INPUTS_VERSION 3 /* of inputs.c's generators: part of the reference-cache key */

volatile int *kf_verify_interrupted;

static const char *const verdict_names[KF_VERDICT_COUNT] = {
    "pass",         "compile_error", "invalid_launch", "runtime_error",      "timeout",
    "wrong_output", "nan_mismatch",  "out_of_bounds",  "input_modified",     "nondeterministic",
    "stateful",     "unsupported",   "race",           "uninitialized_read", "undefined_behavior",
};

const char *kf_verdict_name(enum kf_verdict v)
{
	return (unsigned)v < KF_VERDICT_COUNT ? verdict_names[v] : "unknown";
}

bool kf_verdict_parse(const char *s, enum kf_verdict *out)
{
	for (int i = 0; i < KF_VERDICT_COUNT; i++)
		if (!strcmp(s, verdict_names[i])) {
			*out = (enum kf_verdict)i;
			return true;
		}
	return false;
}

int kf_verdict_exit_code(enum kf_verdict v)
{
	return v == KF_VERDICT_PASS ? 0 : v == KF_VERDICT_UNSUPPORTED ? 4 : 1;
}

const char *kf_shape_kind_name(enum kf_shape_kind k)
{
	static const char *const n[] = {"public", "hidden", "edge", "timing"};
	return (unsigned)k < 4 ? n[k] : "?";
}

const char *kf_input_dist_name(enum kf_input_dist d)
{
	static const char *const n[] = {"init",   "mixed", "large",  "outlier",
					"offset", "ties",  "sorted", "zeros"};
	_Static_assert(KF_ARRAY_SIZE(n) == KF_INPUT_DIST_COUNT, "a name per distribution");
	return (unsigned)d < KF_INPUT_DIST_COUNT ? n[d] : "?";
}

void kf_verify_opts_init(struct kf_verify_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = KF_BACKEND_CPU;
	o->n_seeds = 2;
	o->step_timeout_ms = 20000;
	o->shuffle = true;
	o->timing_shapes = false;
	o->deadline_s = 3600;
}

/* ---- context --------------------------------------------------------------------------------- */

struct vcase {
	enum kf_input_dist dist;
	uint64_t seed;
};

struct vctx {
	const struct kf_task *t;
	double structured_budget; /* the cheapest public shape's cost: structured cases up to it */
	const struct kf_verify_opts *o;
	struct kf_kfile *cand_kf, *ref_kf;
	struct kf_compiled *cand_c, *ref_c;
	const struct kf_baseline *cand_lib; /* a library baseline in place of a kernel file (cand_kf NULL) */
	char ref_hash[65];
	char cache_dir[PATH_MAX];
	struct kf_verify_result *res;
	uint64_t parent_ns;
	struct kf_worker_opts wopts;
	/* the cpu sanitizer: its build, made when first needed (under san_mu), and the shapes it covers */
	pthread_mutex_t san_mu;
	bool san_tried;
	struct kf_compiled *cand_san;
	const bool *san_pick;
	uint64_t san_ns;
};

static uint64_t now_ns(void)
{
	return kf_now_ns();
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* Arena bytes for one buffer as copied back: [guard | data | guard], rounded up to keep the next
 * region 256-byte aligned. */
static size_t region_bytes(uint64_t n_bytes)
{
	return round_up(2 * (size_t)KF_GUARD_BYTES + (size_t)n_bytes, 256);
}

/* The cache folder (sandbox.h); the reference outputs are sealed blobs under its ref/ ("" when there
 * is no usable folder: no caching). */
static void cache_dir_init(struct vctx *c)
{
	if (kf_cache_dir(NULL, c->cache_dir, sizeof(c->cache_dir), NULL) != KF_OK)
		c->cache_dir[0] = '\0';
}

static bool tensor_is_out(const struct kf_tensor *te)
{
	return te->role == KF_ROLE_OUTPUT || te->role == KF_ROLE_INOUT;
}

static bool tensor_is_in(const struct kf_tensor *te)
{
	return te->role == KF_ROLE_INPUT || te->role == KF_ROLE_INOUT;
}

/* ---- per-shape data ---------------------------------------------------------------------------- */

struct vshape {
	const struct kf_shape *shape;
	enum kf_shape_kind kind;
	bool residue;
	size_t n_cases;
	struct vcase cases[24];
	size_t n_tensors;
	uint64_t numel[KF_MAX_BUFFERS];
	uint64_t n_bytes[KF_MAX_BUFFERS];
	uint64_t row[KF_MAX_BUFFERS];     /* last extent: the row the structured inputs work along */
	uint8_t *in[24][KF_MAX_BUFFERS];  /* generated inputs per case (input/inout tensors) */
	uint8_t *ref[24][KF_MAX_BUFFERS]; /* reference outputs per case (output/inout tensors) */
};

static void vshape_release(struct vshape *v)
{
	for (size_t c = 0; c < v->n_cases; c++)
		for (size_t i = 0; i < v->n_tensors; i++) {
			free(v->in[c][i]);
			free(v->ref[c][i]);
		}
}

/* The input cases of a shape. Public and hidden shapes (and the first edge shapes): n_seeds of the init,
 * mixed-sign and large-magnitude distributions, then, where the shape costs no more than the cheapest
 * public one, one case of each structured distribution an input allows (value patterns need no large
 * sizes, and on a GEMM-like task the large declared shapes would triple the time). Residue shapes are
 * many and exist for their sizes: one init case, one mixed, and one structured distribution taken in
 * turn. Timing shapes are large: the init distribution only. */
static uint64_t last_extent(const struct kf_task *t, size_t i, const struct kf_shape *s, uint64_t numel)
{
	const struct kf_tensor *te = &t->tensors[i];
	int64_t v;
	if (!te->rank || kf_expr_eval(te->shape[te->rank - 1], s, &v, NULL) || v < 1 || (uint64_t)v > numel)
		return numel;
	return (uint64_t)v;
}

/* What a shape costs the cpu backend: its tensors' elements plus its flops when the task declares them. */
static double shape_cost(const struct kf_task *t, const struct kf_shape *s)
{
	double cost = 0, f;
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t n;
		if (kf_task_numel(t, i, s, &n, NULL) == KF_OK)
			cost += (double)n;
	}
	return kf_task_flops(t, s, &f) ? cost + f : cost;
}

static void build_cases(struct vctx *c, struct vshape *v, size_t shape_index)
{
	const struct kf_task *t = c->t;
	bool want[KF_INPUT_DIST_COUNT] = {true};
	int seeds = c->o->n_seeds > 0 ? c->o->n_seeds : 2;
	enum kf_input_dist structured[KF_INPUT_DIST_COUNT];
	size_t n_structured = 0;

	if (c->o->strict)
		seeds += 2;
	for (size_t i = 0; i < t->n_tensors; i++) {
		if (!tensor_is_in(&t->tensors[i]))
			continue;
		for (int d = 1; d < KF_INPUT_DIST_COUNT; d++)
			if (kf_inputs_dist_allowed(&t->tensors[i], (enum kf_input_dist)d))
				want[d] = true;
	}
	for (int d = 0; d < KF_INPUT_DIST_COUNT; d++)
		if (want[d] && kf_input_dist_structured((enum kf_input_dist)d))
			structured[n_structured++] = (enum kf_input_dist)d;
	v->n_cases = 0;
#define ADD_CASE(dist_, s_)                                                                                  \
	do {                                                                                                 \
		if (v->n_cases < KF_ARRAY_SIZE(v->cases)) {                                                  \
			v->cases[v->n_cases].dist = (dist_);                                                 \
			v->cases[v->n_cases].seed =                                                          \
			    kf_mix64(c->res->seed ^ kf_mix64(((uint64_t)shape_index << 32) |                 \
							     ((uint64_t)(s_) << 8) | (uint64_t)(dist_)));    \
			v->n_cases++;                                                                        \
		}                                                                                            \
	} while (0)
	if (v->kind == KF_SHAPE_TIMING) {
		ADD_CASE(KF_INPUT_INIT, 0);
		ADD_CASE(KF_INPUT_INIT, 1);
		return;
	}
	if (v->residue) {
		ADD_CASE(KF_INPUT_INIT, 0);
		if (want[KF_INPUT_MIXED])
			ADD_CASE(KF_INPUT_MIXED, 0);
		if (n_structured)
			ADD_CASE(structured[(shape_index + (size_t)(c->res->seed % 7)) % n_structured], 0);
		return;
	}
	for (int s = 0; s < seeds; s++)
		for (int d = 0; d <= KF_INPUT_LARGE; d++)
			if (want[d])
				ADD_CASE((enum kf_input_dist)d, s);
	if (shape_cost(t, v->shape) <= c->structured_budget)
		for (size_t k = 0; k < n_structured; k++)
			ADD_CASE(structured[k], 0);
#undef ADD_CASE
}

static enum kf_status gen_inputs(struct vctx *c, struct vshape *v, struct kf_err *err)
{
	const struct kf_task *t = c->t;
	uint64_t t0 = now_ns();

	for (size_t k = 0; k < v->n_cases; k++) {
		for (size_t i = 0; i < t->n_tensors; i++) {
			struct kf_rng rng;
			if (!tensor_is_in(&t->tensors[i]))
				continue;
			v->in[k][i] = malloc(v->n_bytes[i] ? v->n_bytes[i] : 1);
			if (!v->in[k][i])
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory for inputs of '%s'",
						  t->tensors[i].name);
			kf_rng_seed(&rng, kf_mix64(v->cases[k].seed + i));
			kf_inputs_fill_rows(v->in[k][i], t->tensors[i].dtype, (size_t)v->numel[i],
					    (size_t)v->row[i], &t->tensors[i], v->cases[k].dist, &rng);
		}
	}
	__atomic_fetch_add(&c->parent_ns, now_ns() - t0, __ATOMIC_RELAXED);
	return KF_OK;
}

/* Arena layout: every case's inputs, then one output region of [guard|data|guard] per plan buffer. */
struct layout {
	int64_t in_off[24][KF_MAX_BUFFERS];
	int64_t out_off[KF_MAX_BUFFERS];
	size_t total;
};

static void make_layout(const struct vctx *c, const struct vshape *v, const struct kf_plan *p,
			struct layout *L)
{
	size_t off = 0;
	for (size_t k = 0; k < v->n_cases; k++)
		for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
			L->in_off[k][b] = -1;
			if (b < c->t->n_tensors && v->in[k][b]) {
				L->in_off[k][b] = (int64_t)off;
				off += round_up(v->n_bytes[b], 64);
			}
		}
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		L->out_off[b] = -1;
		if (b < p->n_buffers) {
			L->out_off[b] = (int64_t)off;
			off += region_bytes(p->buffers[b].n_bytes);
		}
	}
	L->total = off ? off : 4096;
}

static void step_init(struct kf_step *s, const struct layout *L, size_t k, uint32_t flags, uint32_t slot,
		      uint32_t poison, int timeout_ms)
{
	memset(s, 0, sizeof(*s));
	s->flags = flags;
	s->slot = slot;
	s->reps = 1;
	s->poison = poison;
	s->canary = GUARD_CANARY;
	s->timeout_ms = timeout_ms;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		s->in_off[b] = L->in_off[k][b];
		s->out_off[b] = L->out_off[b];
	}
}

/* ---- reference outputs (own worker, cached on disk per task, reference, shape and case) ---------- */

/* The most reference output one cache entry holds (larger ones are recomputed each time). */
#define REF_CACHE_ENTRY_MAX ((size_t)64 << 20)

static void ref_cache_name(const struct vctx *c, const struct vshape *v, size_t k, char *name, size_t n)
{
	char shape[512], key_src[1024], key[65];
	kf_shape_format(v->shape, shape, sizeof(shape));
	/* INPUTS_VERSION: bump whenever input generation changes, or cached outputs would belong to other
	 * inputs than the ones the same seed now makes. */
	snprintf(key_src, sizeof(key_src), "kforge-ref-%d|%s|%s|%s|%016" PRIx64 "|%d", INPUTS_VERSION,
		 c->t->hash, c->ref_hash, shape, v->cases[k].seed, (int)v->cases[k].dist);
	kf_sha256_hex(key_src, strlen(key_src), key);
	snprintf(name, n, "ref/%s.bin", key);
}

static size_t ref_out_bytes(const struct vctx *c, const struct vshape *v)
{
	size_t n = 0;
	for (size_t i = 0; i < c->t->n_tensors; i++)
		if (tensor_is_out(&c->t->tensors[i]))
			n += v->n_bytes[i];
	return n;
}

/* A cached reference output: only what kforge sealed with its key (kf_cache_blob_load), of exactly
 * the size the shape gives. */
static bool ref_cache_load(const struct vctx *c, struct vshape *v, size_t k)
{
	char name[128];
	size_t want = ref_out_bytes(c, v), off = 0;
	struct kf_buf b = KF_BUF_INIT(want ? want : 1);
	bool ok;

	if (!c->cache_dir[0] || want > REF_CACHE_ENTRY_MAX)
		return false;
	ref_cache_name(c, v, k, name, sizeof(name));
	ok = kf_cache_blob_load(c->cache_dir, name, &b) && b.len == want;
	for (size_t i = 0; i < c->t->n_tensors && ok; i++) {
		if (!tensor_is_out(&c->t->tensors[i]))
			continue;
		v->ref[k][i] = malloc(v->n_bytes[i] ? v->n_bytes[i] : 1);
		ok = v->ref[k][i] != NULL;
		if (ok)
			memcpy(v->ref[k][i], b.data + off, v->n_bytes[i]);
		off += v->n_bytes[i];
	}
	kf_buf_release(&b);
	if (!ok)
		for (size_t i = 0; i < c->t->n_tensors; i++) {
			free(v->ref[k][i]);
			v->ref[k][i] = NULL;
		}
	return ok;
}

static void ref_cache_store(const struct vctx *c, const struct vshape *v, size_t k)
{
	char name[128];
	struct kf_buf b = KF_BUF_INIT(REF_CACHE_ENTRY_MAX);
	if (!c->cache_dir[0])
		return;
	for (size_t i = 0; i < c->t->n_tensors; i++)
		if (tensor_is_out(&c->t->tensors[i]) && kf_buf_add(&b, v->ref[k][i], v->n_bytes[i]))
			goto out;
	ref_cache_name(c, v, k, name, sizeof(name));
	kf_cache_blob_store(c->cache_dir, name, b.data, b.len); /* a failed store is only a miss later */
out:
	kf_buf_release(&b);
}

/* Returns KF_OK with v->ref filled, KF_ERR_RUNTIME when the reference failed at this shape (msg in err). */
static enum kf_status run_reference(struct vctx *c, struct vshape *v, const struct kf_plan *p,
				    struct kf_err *err)
{
	struct kf_session *s = NULL;
	struct kf_step_result *r = NULL;
	struct layout L;
	enum kf_status st = KF_OK;
	size_t k, missing = 0;

	for (k = 0; k < v->n_cases; k++)
		if (!ref_cache_load(c, v, k))
			missing++;
	if (!missing)
		return KF_OK;

	make_layout(c, v, p, &L);
	struct kf_worker_opts wo = c->wopts;
	wo.shuffle_seed = 0; /* the reference runs in program order */
	st = kf_session_start(&wo, c->ref_c, p, L.total, &s, err);
	if (st) {
		/* A reference that cannot even start at this shape is a runtime failure of the reference
		 * (skipped at an edge shape, a task error elsewhere); no GPU or no memory stays what it is.
		 */
		if (st != KF_ERR_UNAVAILABLE && st != KF_ERR_NOMEM)
			st = KF_ERR_RUNTIME;
		kf_err_prefix(err, "reference");
		if (err)
			err->code = st;
		return st;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		kf_session_end(s, NULL);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	uint8_t *arena = kf_session_arena(s);
	for (k = 0; k < v->n_cases; k++)
		for (size_t b = 0; b < c->t->n_tensors; b++)
			if (L.in_off[k][b] >= 0)
				/* exactly the inputs, each with v->in[k][b] set (see make_layout):
				 * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
				memcpy(arena + L.in_off[k][b], v->in[k][b], v->n_bytes[b]);
	for (k = 0; k < v->n_cases && !st; k++) {
		struct kf_step step;
		if (v->ref[k][0] || ref_cache_load(c, v, k))
			continue;
		step_init(&step, &L, k,
			  KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT | (k ? 0 : KF_STEP_REALLOC), 0,
			  POISON_NAN, c->o->step_timeout_ms * 4);
		st = kf_session_step(s, &step, r, err);
		if (st)
			break;
		if (r->status) {
			st = kf_err_set(err, KF_ERR_RUNTIME, "reference failed (%s): %s",
					kf_status_name(r->status), r->msg);
			break;
		}
		for (size_t b = 0; b < c->t->n_tensors; b++) {
			if (!tensor_is_out(&c->t->tensors[b]))
				continue;
			v->ref[k][b] = malloc(v->n_bytes[b] ? v->n_bytes[b] : 1);
			if (!v->ref[k][b]) {
				st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
				break;
			}
			memcpy(v->ref[k][b], arena + L.out_off[b] + KF_GUARD_BYTES, v->n_bytes[b]);
		}
		if (!st)
			ref_cache_store(c, v, k);
	}
	free(r);
	kf_session_end(s, NULL);
	return st;
}

/* NMSE under which a large-magnitude case passes despite elementwise misses: about the square of a
 * few hundred ulps of the dtype, far below what a wrong kernel gives (a flipped sign, a dropped term,
 * a lower-precision accumulator all give NMSE >= 1e-4). */
static double large_nmse_bound(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F64:
		return 1e-12;
	case KF_DTYPE_F32:
		return 1e-8;
	case KF_DTYPE_F16:
		return 1e-5;
	case KF_DTYPE_BF16:
		return 1e-4;
	default:
		return 0; /* integers: exact */
	}
}

/* Offset inputs (mean 300 spreads) and constant rows make statistics cancel, and a few outliers make
 * logits built from them (GEMM then softmax) amplify fp32 rounding: a correct fp32 kernel that reduces
 * in another order than the reference misses the elementwise bound there by up to ~10x (measured: on
 * LayerNorm at offset 300, N <= 4096, two-pass and Welford fp32 reach NMSE <= 1e-7 while E[x^2] - E[x]^2
 * in fp32 gives >= 2e-5; the suite's GEMM+softmax references against double on outliers <= 1e-7). For
 * f32 the bound sits between the two. */
static double cancel_nmse_bound(enum kf_dtype dt)
{
	return dt == KF_DTYPE_F32 ? 1e-6 : large_nmse_bound(dt);
}

double kf_verify_nmse_fallback(enum kf_input_dist dist, enum kf_dtype dt)
{
	switch (dist) {
	case KF_INPUT_LARGE:
	case KF_INPUT_SORTED:
		return large_nmse_bound(dt);
	case KF_INPUT_OUTLIER:
	case KF_INPUT_OFFSET:
	case KF_INPUT_TIES:
		return cancel_nmse_bound(dt);
	default:
		return 0;
	}
}

/* ---- candidate checks -------------------------------------------------------------------------- */

struct outcome {
	enum kf_verdict verdict;
	char detail[600];
	char tensor[KF_NAME_MAX];
	struct kf_cmp cmp;
	size_t case_index;
};

static void fmt_val(char *buf, size_t n, double x)
{
	snprintf(buf, n, "%.9g", x);
}

/* Checks one step's copied-back buffers: guards, input integrity, outputs against the reference. */
static void check_step(struct vctx *c, const struct vshape *v, const struct kf_plan *p,
		       const struct layout *L, const uint8_t *arena, size_t k, struct outcome *o)
{
	const struct kf_task *t = c->t;
	uint64_t t0 = now_ns();

	memset(o, 0, sizeof(*o));
	o->verdict = KF_VERDICT_PASS;
	o->case_index = k;
	o->cmp.first_bad = -1;

	/* 1. guard zones: the worker fills KF_GUARD_BYTES before each buffer and everything from the end of
	 * its data (through the alignment padding) with the canary, the pattern starting afresh at the data's
	 * end; it copies back [guard | data | the first KF_GUARD_BYTES after the data]. */
	for (size_t b = 0; b < p->n_buffers; b++) {
		const uint8_t *reg = arena + L->out_off[b];
		size_t data = (size_t)p->buffers[b].n_bytes;
		int64_t before = kf_pattern_mismatch(reg, KF_GUARD_BYTES, GUARD_CANARY);
		int64_t after =
		    kf_pattern_mismatch(reg + KF_GUARD_BYTES + data, KF_GUARD_BYTES, GUARD_CANARY);
		if (before >= 0 || after >= 0) {
			o->verdict = KF_VERDICT_OUT_OF_BOUNDS;
			snprintf(o->tensor, sizeof(o->tensor), "%s", p->buffers[b].name);
			if (before >= 0)
				snprintf(o->detail, sizeof(o->detail),
					 "guard zone before '%s' was written (%lld bytes before its start)",
					 p->buffers[b].name, (long long)(KF_GUARD_BYTES - before));
			else
				snprintf(
				    o->detail, sizeof(o->detail),
				    "guard zone after '%s' was written (byte %lld past its end of %zu bytes)",
				    p->buffers[b].name, (long long)after, data);
			goto done;
		}
	}
	/* 2. input integrity */
	for (size_t b = 0; b < t->n_tensors; b++) {
		const struct kf_tensor *te = &t->tensors[b];
		const uint8_t *got = arena + L->out_off[b] + KF_GUARD_BYTES;
		if (te->role != KF_ROLE_INPUT)
			continue;
		if (memcmp(got, v->in[k][b], v->n_bytes[b])) {
			size_t es = kf_dtype_size(te->dtype), i = 0;
			char idx[128], g[32], w[32];
			while (i < v->numel[b] && !memcmp(got + i * es, v->in[k][b] + i * es, es))
				i++;
			kf_format_index(t, b, v->shape, (int64_t)i, idx, sizeof(idx));
			fmt_val(g, sizeof(g), kf_elem_get(got, te->dtype, i));
			fmt_val(w, sizeof(w), kf_elem_get(v->in[k][b], te->dtype, i));
			o->verdict = KF_VERDICT_INPUT_MODIFIED;
			snprintf(o->tensor, sizeof(o->tensor), "%s", te->name);
			o->cmp.first_bad = (int64_t)i;
			snprintf(o->detail, sizeof(o->detail), "input '%s' was modified: %s is %s, was %s",
				 te->name, idx, g, w);
			goto done;
		}
	}
	/* 3. outputs: NaN/Inf parity, tolerance, NMSE */
	for (size_t b = 0; b < t->n_tensors; b++) {
		const struct kf_tensor *te = &t->tensors[b];
		struct kf_cmp cmp;
		struct kf_tol tol;
		if (!tensor_is_out(te))
			continue;
		tol = kf_task_tolerance(t, te->dtype);
		kf_compare(arena + L->out_off[b] + KF_GUARD_BYTES, v->ref[k][b], te->dtype,
			   (size_t)v->numel[b], &tol, &cmp);
		/* Large-magnitude inputs exist to expose overflow (exp without max subtraction, narrow
		 * accumulators), which shows as NaN/Inf or as gross error; outliers, sorted runs, offsets
		 * and ties exist to expose kernels that assume independent zero-mean values (a partial
		 * maximum, E[x^2]-E[x]^2), which shows as NaN/Inf or as an error far above rounding. They
		 * also make many operators ill-conditioned (attention logits in the thousands, sums that
		 * cancel), where a correct kernel that adds in another order misses an elementwise bound
		 * on a few elements. So for those distributions, a tensor with NaN/Inf parity whose
		 * whole-tensor NMSE is under kf_verify_nmse_fallback passes. */
		if (cmp.verdict == KF_VERDICT_WRONG_OUTPUT &&
		    cmp.nmse <= kf_verify_nmse_fallback(v->cases[k].dist, te->dtype))
			cmp.verdict = KF_VERDICT_PASS;
		if (cmp.max_abs > o->cmp.max_abs)
			o->cmp.max_abs = cmp.max_abs;
		if (cmp.max_rel > o->cmp.max_rel)
			o->cmp.max_rel = cmp.max_rel;
		if (cmp.nmse > o->cmp.nmse || isnan(cmp.nmse))
			o->cmp.nmse = cmp.nmse;
		if (cmp.verdict != KF_VERDICT_PASS && o->verdict == KF_VERDICT_PASS) {
			char idx[128], g[32], w[32];
			double maxa = o->cmp.max_abs, maxr = o->cmp.max_rel, nm = o->cmp.nmse;
			o->verdict = cmp.verdict;
			o->cmp = cmp;
			o->cmp.max_abs = maxa;
			o->cmp.max_rel = maxr;
			o->cmp.nmse = nm;
			snprintf(o->tensor, sizeof(o->tensor), "%s", te->name);
			if (cmp.first_bad >= 0) {
				kf_format_index(t, b, v->shape, cmp.first_bad, idx, sizeof(idx));
				fmt_val(g, sizeof(g), cmp.got);
				fmt_val(w, sizeof(w), cmp.want);
				snprintf(o->detail, sizeof(o->detail),
					 "output '%s' %s: got %s, want %s (tolerance atol %g*%.3g + rtol "
					 "%g*|want|); "
					 "%" PRIu64 " of %" PRIu64 " elements bad",
					 te->name, idx, g, w, tol.atol, cmp.atol_scale, tol.rtol, cmp.n_bad,
					 v->numel[b]);
			} else {
				snprintf(o->detail, sizeof(o->detail),
					 "output '%s' NMSE %.3g over its bound %.3g", te->name, cmp.nmse,
					 tol.max_nmse);
			}
		}
	}
done:
	__atomic_fetch_add(&c->parent_ns, now_ns() - t0, __ATOMIC_RELAXED);
}

static enum kf_verdict verdict_of_step(const struct kf_step_result *r, char *detail, size_t n)
{
	switch (r->status) {
	case KF_OK:
		return KF_VERDICT_PASS;
	case KF_ERR_TIMEOUT:
		snprintf(detail, n, "launch ran past its limit and was killed: %s", r->msg);
		return KF_VERDICT_TIMEOUT;
	case KF_ERR_INVALID:
		snprintf(detail, n, "%s", r->msg);
		return KF_VERDICT_INVALID_LAUNCH;
	case KF_ERR_UNSUPPORTED:
		snprintf(detail, n, "%s", r->msg);
		return KF_VERDICT_UNSUPPORTED;
	default:
		snprintf(detail, n, "%s", r->msg[0] ? r->msg : kf_status_name(r->status));
		return KF_VERDICT_RUNTIME_ERROR;
	}
}

static enum kf_verdict session_start_verdict(enum kf_status st)
{
	switch (st) {
	case KF_ERR_INVALID:
		return KF_VERDICT_INVALID_LAUNCH;
	case KF_ERR_UNSUPPORTED:
		return KF_VERDICT_UNSUPPORTED;
	case KF_ERR_TIMEOUT:
		return KF_VERDICT_TIMEOUT;
	default:
		return KF_VERDICT_RUNTIME_ERROR;
	}
}

/* One fresh worker, one launch of case k: does the candidate get this case right as its first launch? */
static enum kf_status fresh_recheck(struct vctx *c, const struct vshape *v, const struct kf_plan *p,
				    const struct layout *L, size_t k, struct outcome *o, struct kf_err *err)
{
	struct kf_session *s = NULL;
	struct kf_step_result *r;
	struct kf_step step;
	enum kf_status st = kf_session_start(&c->wopts, c->cand_c, p, L->total, &s, err);

	memset(o, 0, sizeof(*o));
	if (st) {
		o->verdict = session_start_verdict(st);
		return st == KF_ERR_UNAVAILABLE || st == KF_ERR_NOMEM ? st : KF_OK;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		kf_session_end(s, NULL);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t b = 0; b < c->t->n_tensors; b++)
		if (L->in_off[k][b] >= 0)
			memcpy(kf_session_arena(s) + L->in_off[k][b], v->in[k][b], v->n_bytes[b]);
	step_init(&step, L, k, KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT, 0,
		  POISON_NAN, c->o->step_timeout_ms);
	st = kf_session_step(s, &step, r, err);
	if (!st) {
		o->verdict = verdict_of_step(r, o->detail, sizeof(o->detail));
		if (o->verdict == KF_VERDICT_PASS)
			check_step(c, v, p, L, kf_session_arena(s), k, o);
	}
	free(r);
	kf_session_end(s, NULL);
	return st;
}

static void report_from(struct kf_shape_report *rep, const struct vshape *v, const struct outcome *o)
{
	rep->status = o->verdict;
	snprintf(rep->detail, sizeof(rep->detail), "%s", o->detail);
	snprintf(rep->tensor, sizeof(rep->tensor), "%s", o->tensor);
	rep->dist = v->cases[o->case_index].dist;
	rep->case_seed = v->cases[o->case_index].seed;
	rep->n_bad = o->cmp.n_bad;
	rep->first_bad = o->cmp.first_bad;
	rep->got = o->cmp.got;
	rep->want = o->cmp.want;
	if (o->cmp.max_abs > rep->max_abs)
		rep->max_abs = o->cmp.max_abs;
	if (o->cmp.max_rel > rep->max_rel)
		rep->max_rel = o->cmp.max_rel;
	if (o->cmp.nmse > rep->nmse || isnan(o->cmp.nmse))
		rep->nmse = o->cmp.nmse;
}

/* The candidate's steps at one shape: >= 8 launches in one worker. Steps 0 and 1 run case 0 under the
 * two poison patterns at two addresses (determinism). Later cases then alternate: fresh values at the
 * address of the step just before (caching keyed by the last pointer), fresh values at an older
 * address, and a fresh allocation; the last step repeats case 0 at step 0's address. */
struct plan_step {
	size_t k;
	uint32_t slot, flags, poison;
};

static size_t make_schedule(const struct vshape *v, struct plan_step *ps, size_t max)
{
	/* Residue shapes exist for their sizes (tails): each case once and the determinism pair; the
	 * statefulness schedule runs at every other shape. */
	const size_t min_launches = v->residue ? 0 : MIN_LAUNCHES;
	const uint32_t base = KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT;
	uint32_t prev_slot = 1, fresh = 2;
	size_t n = 0, k = 1;

	ps[n++] = (struct plan_step){0, 0, base | KF_STEP_REALLOC, POISON_NAN};
	ps[n++] = (struct plan_step){0, 1, base | KF_STEP_REALLOC, POISON_BIG};
	while (n < max - 1 && (k < v->n_cases || n + 1 < min_launches)) {
		size_t kk = k % v->n_cases;
		uint32_t poison = n & 1 ? POISON_BIG : POISON_NAN;
		switch (n % 3) {
		case 2: /* same address as the step before, fresh values */
			ps[n++] = (struct plan_step){kk, prev_slot, base, poison};
			break;
		case 0: /* an older address */
			ps[n++] = (struct plan_step){kk, 0, base, poison};
			prev_slot = 0;
			break;
		default: /* a fresh allocation */
			prev_slot = fresh;
			ps[n++] = (struct plan_step){kk, fresh, base | KF_STEP_REALLOC, poison};
			fresh = fresh + 1 < KF_MAX_SLOTS ? fresh + 1 : 2;
			break;
		}
		k++;
	}
	ps[n++] = (struct plan_step){0, 0, base, POISON_NAN};
	return n;
}

/* ---- the cpu sanitizer pass ------------------------------------------------------------------- */

/* Shapes the sanitizer covers: the smallest public and the smallest hidden one and the edge shapes,
 * at most SAN_MAX_SHAPES, none whose tensors pass SAN_MAX_BYTES: an instrumented run checks every
 * access of every thread (about 10-50x the plain run), so these keep a verification within seconds
 * while covering the tails and the sizes the edge shapes probe. Failing shapes are re-run under the
 * sanitizer whatever their size, to name the line. */
#define SAN_MAX_SHAPES 6
#define SAN_MAX_BYTES ((uint64_t)16 << 20)
#define SAN_STEP_MAX_MS 15000 /* one sanitized launch */

static bool san_wanted(const struct vctx *c)
{
	return c->o->backend == KF_BACKEND_CPU && !c->o->no_sanitizer;
}

static uint64_t shape_bytes(const struct kf_task *t, const struct kf_shape *sh)
{
	uint64_t total = 0;
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t ne = 0;
		if (kf_task_numel(t, i, sh, &ne, NULL) || ne <= 0)
			return UINT64_MAX;
		total += (uint64_t)ne * kf_dtype_size(t->tensors[i].dtype);
	}
	return total;
}

static void san_select(const struct kf_task *t, const struct kf_checked_shape *shapes, size_t n, bool *pick,
		       struct kf_verify_result *res)
{
	size_t best[2] = {SIZE_MAX, SIZE_MAX}, n_pick = 0, n_big = 0;
	uint64_t best_bytes[2] = {UINT64_MAX, UINT64_MAX};
	for (size_t i = 0; i < n; i++) {
		uint64_t b = shape_bytes(t, &shapes[i].shape);
		int k = shapes[i].kind == KF_SHAPE_PUBLIC ? 0 : shapes[i].kind == KF_SHAPE_HIDDEN ? 1 : -1;
		if (k >= 0 && b < best_bytes[k]) {
			best_bytes[k] = b;
			best[k] = i;
		}
	}
	/* the smallest public and hidden shape, the task's edge shapes, then the run's residue shapes */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			bool edge = shapes[i].kind == KF_SHAPE_EDGE;
			bool want = pass == 0 ? i == best[0] || i == best[1] || (edge && !shapes[i].residue)
					      : edge && shapes[i].residue;
			if (!want || pick[i])
				continue;
			if (shape_bytes(t, &shapes[i].shape) > SAN_MAX_BYTES) {
				n_big++;
				continue;
			}
			if (n_pick < SAN_MAX_SHAPES) {
				pick[i] = true;
				n_pick++;
			}
		}
	if (n_big)
		snprintf(res->san_note, sizeof(res->san_note),
			 "%zu of the shapes it would cover hold over %llu MiB of tensors: not sanitized",
			 n_big, (unsigned long long)(SAN_MAX_BYTES >> 20));
}

/* The instrumented build, once per verification (cached on disk like every compile). NULL, with the
 * reason in res->san_note, when this machine cannot make it (no clang++-14). */
static struct kf_compiled *san_module(struct vctx *c)
{
	pthread_mutex_lock(&c->san_mu);
	if (!c->san_tried) {
		struct kf_compile_opts co = {
		    .backend = KF_BACKEND_CPU, .arch = c->o->arch, .instrument = true};
		struct kf_err e = KF_ERR_INIT;
		const char *why = kf_cpu_sanitizer_unavailable();
		c->san_tried = true;
		enum kf_status st = why ? KF_ERR_UNAVAILABLE : kf_compile(c->cand_kf, &co, &c->cand_san, &e);
		if (why) {
			snprintf(c->res->san_note, sizeof(c->res->san_note), "no sanitizer pass: %s", why);
		} else if (st) {
			const char *log = c->cand_san ? c->cand_san->log : "";
			snprintf(c->res->san_note, sizeof(c->res->san_note),
				 "the sanitizer build failed (%s): %.200s", kf_status_name(st),
				 log[0] ? log : e.msg);
			kf_compiled_free(c->cand_san);
			c->cand_san = NULL;
		}
	}
	pthread_mutex_unlock(&c->san_mu);
	return c->cand_san;
}

static enum kf_verdict san_verdict(uint32_t kind)
{
	switch (kind) {
	case KF_RT_SAN_OOB:
		return KF_VERDICT_OUT_OF_BOUNDS;
	case KF_RT_SAN_UNINIT:
		return KF_VERDICT_UNINITIALIZED_READ;
	case KF_RT_SAN_RACE:
		return KF_VERDICT_RACE;
	default:
		return KF_VERDICT_UNDEFINED_BEHAVIOR;
	}
}

static const char *san_op_word(uint32_t op)
{
	switch (op) {
	case KF_RT_SAN_LOAD:
		return "reads";
	case KF_RT_SAN_STORE:
		return "writes";
	case KF_RT_SAN_ATOMIC:
		return "atomically updates";
	default:
		return "touches";
	}
}

static void san_at(char *out, size_t cap, const char *file, int line)
{
	if (line > 0)
		snprintf(out, cap, "%s:%d", file, line);
	else
		snprintf(out, cap, "%s (line not found)", file);
}

static void san_who(char *out, size_t cap, const struct kf_rt_san_access *a)
{
	snprintf(out, cap, "thread (%u,%u,%u) of block (%u,%u,%u)", a->thread[0], a->thread[1], a->thread[2],
		 a->block[0], a->block[1], a->block[2]);
}

/* Where the finding's address is, in the user's terms. */
static void san_region(char *out, size_t cap, const struct kf_plan *p, const struct kf_rt_san_finding *f,
		       const struct kf_san_where *w)
{
	const char *name = f->index >= 0 && (size_t)f->index < p->n_buffers ? p->buffers[f->index].name : "?";
	long long off = (long long)f->offset;
	unsigned long long nb = (unsigned long long)f->region_bytes;
	switch (f->region) {
	case KF_RT_SAN_GLOBAL:
		if (off >= (long long)nb)
			snprintf(out, cap, "'%s' at byte %lld, %lld bytes past its end (%llu bytes)", name,
				 off, off - (long long)nb, nb);
		else if (off < 0)
			snprintf(out, cap, "'%s' at byte %lld, %lld bytes before its start", name, off, -off);
		else
			snprintf(out, cap, "'%s' at byte %lld of %llu", name, off, nb);
		break;
	case KF_RT_SAN_SHARED:
		if (w->have_var)
			snprintf(out, cap, "static shared memory ('%s' byte %llu)", w->var,
				 (unsigned long long)w->var_offset);
		else
			snprintf(out, cap, "static shared memory (byte %llu of the block's)",
				 (unsigned long long)f->tls_offset);
		break;
	case KF_RT_SAN_DSHARED:
		if (off >= (long long)nb)
			snprintf(out, cap, "dynamic shared memory at byte %lld, past the launch's %llu bytes",
				 off, nb);
		else
			snprintf(out, cap, "dynamic shared memory at byte %lld of %llu", off, nb);
		break;
	case KF_RT_SAN_LOCAL:
		snprintf(out, cap, "%s", f->detail);
		break;
	case KF_RT_SAN_MODULE:
		snprintf(out, cap, "a __device__ or __constant__ global");
		break;
	default:
		if (f->index >= 0 && (size_t)f->index < p->n_buffers)
			snprintf(
			    out, cap,
			    "address 0x%llx, in no allocation of the plan (%lld bytes %s '%s', %llu bytes)",
			    (unsigned long long)f->addr, off >= (long long)nb ? off - (long long)nb : -off,
			    off >= (long long)nb ? "past the end of" : "before the start of", name, nb);
		else
			snprintf(out, cap, "address 0x%llx, %s", (unsigned long long)f->addr, f->detail);
	}
}

static void san_message(const struct vctx *c, const struct kf_plan *p, const struct kf_rt_san_finding *f,
			const struct kf_san_where *w, char *out, size_t cap)
{
	const char *path = c->cand_kf->path ? c->cand_kf->path : "kernel.cu", *slash = strrchr(path, '/');
	const char *file = slash ? slash + 1 : path;
	const char *kernel = f->launch < p->n_launches ? p->launches[f->launch].kernel : "?";
	char at[160], who[96], where[300], pat[160], pwho[96];
	san_at(at, sizeof(at), file, w->line);
	san_who(who, sizeof(who), &f->cur);
	san_region(where, sizeof(where), p, f, w);
	switch (f->kind) {
	case KF_RT_SAN_RACE:
		san_at(pat, sizeof(pat), file, w->prev_line);
		if (f->prev.op)
			san_who(pwho, sizeof(pwho), &f->prev);
		else
			snprintf(pwho, sizeof(pwho), "other threads");
		snprintf(
		    out, cap,
		    "race at %s: %s %s %u bytes of %s, which %s %s at %s, with no %s between (launch %u, "
		    "kernel '%s')",
		    at, who, san_op_word(f->cur.op), f->cur.size, where, pwho,
		    (f->flags & KF_RT_SAN_F_PREV_WRITE) ? "wrote" : "read", pat,
		    (f->flags & KF_RT_SAN_F_SAME_WARP)
			? "__syncthreads or __syncwarp (one warp: a race under "
			  "independent thread scheduling)"
		    : f->prev.block[0] != f->cur.block[0] || f->prev.block[1] != f->cur.block[1] ||
			    f->prev.block[2] != f->cur.block[2]
			? "ordering (other blocks: atomics, or __threadfence after the write)"
			: "__syncthreads",
		    f->launch + 1, kernel);
		break;
	case KF_RT_SAN_UNINIT:
		snprintf(out, cap,
			 "uninitialized_read at %s: %s %s %u bytes of %s, %s (launch %u, kernel '%s')", at,
			 who, san_op_word(f->cur.op), f->cur.size, where, f->detail, f->launch + 1, kernel);
		break;
	case KF_RT_SAN_OOB:
		snprintf(out, cap, "out_of_bounds at %s: %s %s %u bytes at %s (launch %u, kernel '%s')", at,
			 who, san_op_word(f->cur.op), f->cur.size, where, f->launch + 1, kernel);
		break;
	default:
		snprintf(out, cap, "undefined_behavior at %s: %s: %s (mask 0x%08x; launch %u, kernel '%s')",
			 at, who, f->detail, f->mask, f->launch + 1, kernel);
	}
}

/* One launch of case k under the sanitizer, in its own worker. Sets *found (and rep's verdict and
 * detail, keeping `was` as the run's own verdict in the words) on a finding; a clean run marks the
 * shape sanitized. Returns a harness error only. */
static enum kf_status sanitize_case(struct vctx *c, const struct vshape *v, const struct kf_plan *p,
				    const struct layout *L, size_t k, struct kf_shape_report *rep,
				    const char *was, bool *found, struct kf_err *err)
{
	struct kf_compiled *m = san_module(c);
	struct kf_session *s = NULL;
	struct kf_step_result *r = NULL;
	struct kf_step step;
	struct kf_err e2 = KF_ERR_INIT;
	uint64_t t0 = now_ns();
	enum kf_status st;

	*found = false;
	if (!m)
		return KF_OK;
	/* program order: the happens-before checks need no shuffle, and the report is then the same for
	 * every seed */
	struct kf_worker_opts wo = c->wopts;
	wo.shuffle_seed = 0;
	st = kf_session_start(&wo, m, p, L->total, &s, &e2);
	if (st) {
		if (st == KF_ERR_NOMEM || st == KF_ERR_UNAVAILABLE) {
			*err = e2;
			return st;
		}
		pthread_mutex_lock(&c->san_mu);
		snprintf(c->res->san_note, sizeof(c->res->san_note),
			 "the sanitizer's worker did not start: %.200s", e2.msg);
		pthread_mutex_unlock(&c->san_mu);
		return KF_OK;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		kf_session_end(s, NULL);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t b = 0; b < c->t->n_tensors; b++)
		if (L->in_off[k][b] >= 0)
			memcpy(kf_session_arena(s) + L->in_off[k][b], v->in[k][b], v->n_bytes[b]);
	/* every access is checked: more time than a plain launch, but a bounded share of a verification
	 * (a run stopped at its limit is a note, never a verdict) */
	int limit_ms =
	    c->o->step_timeout_ms * 5 < SAN_STEP_MAX_MS ? c->o->step_timeout_ms * 5 : SAN_STEP_MAX_MS;
	step_init(&step, L, k, KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT, 0,
		  POISON_NAN, limit_ms);
	st = kf_session_step(s, &step, r, &e2);
	if (!st) {
		char reached[400] = "";
		__atomic_fetch_add(&c->res->san_accesses, r->san_accesses, __ATOMIC_RELAXED);
		if (r->san.kind == KF_RT_SAN_WARP_UB && r->status == KF_OK) {
			/* a shuffle took an undefined value (poison here): undefined behaviour when it
			 * reached the output, a value the kernel discarded when the output is right */
			struct outcome o;
			check_step(c, v, p, L, kf_session_arena(s), k, &o);
			if (o.verdict == KF_VERDICT_PASS)
				r->san.kind = KF_RT_SAN_NONE;
			else
				snprintf(reached, sizeof(reached),
					 "; the value reached the output (%s: %.300s)",
					 kf_verdict_name(o.verdict), o.detail);
		}
		if (r->san.kind != KF_RT_SAN_NONE) {
			struct kf_san_where w;
			struct kf_err e3 = KF_ERR_INIT;
			char msg[sizeof(rep->detail)];
			if (kf_cpu_san_locate(m, c->cand_kf->path ? c->cand_kf->path : "kernel.cu", &r->san,
					      &w, &e3))
				memset(&w, 0, sizeof(w)); /* the finding stands without its line */
			san_message(c, p, &r->san, &w, msg, sizeof(msg));
			if (reached[0]) {
				size_t ml = strlen(msg);
				snprintf(msg + ml, sizeof(msg) - ml, "%s", reached);
			}
			rep->status = san_verdict(r->san.kind);
			if (was && *was)
				snprintf(rep->detail, sizeof(rep->detail), "%.420s (the plain run: %s)", msg,
					 was);
			else
				snprintf(rep->detail, sizeof(rep->detail), "%s", msg);
			rep->sanitized = true;
			*found = true;
		} else if (r->status == KF_OK) {
			/* the instrumented build is clang's, the plain one g++'s: a kernel that tells them
			 * apart (`#ifdef __has_feature`) must compute the same outputs in both, or the
			 * sanitizer (and the cost model, which runs this build) vetted other code than the
			 * verdict */
			struct outcome o;
			o.verdict = KF_VERDICT_PASS;
			if (!(was && *was)) /* explaining a failed plain run: its own verdict stands */
				check_step(c, v, p, L, kf_session_arena(s), k, &o);
			if (o.verdict != KF_VERDICT_PASS) {
				rep->status = o.verdict;
				snprintf(
				    rep->detail, sizeof(rep->detail),
				    "the instrumented build (clang) computed other outputs than the plain "
				    "build: %.400s",
				    o.detail);
				*found = true;
			}
			rep->sanitized = true;
		} else {
			pthread_mutex_lock(&c->san_mu);
			snprintf(c->res->san_note, sizeof(c->res->san_note),
				 "the sanitized run at one shape ended without a finding: %.200s", r->msg);
			pthread_mutex_unlock(&c->san_mu);
		}
	}
	free(r);
	kf_session_end(s, NULL);
	__atomic_fetch_add(&c->san_ns, now_ns() - t0, __ATOMIC_RELAXED);
	if (st) {
		*err = e2;
		return st;
	}
	return KF_OK;
}

/* After a shape's plain checks: a failure a sanitizer can explain (wrong or NaN output, a
 * nondeterministic or stateful result, a crash or deadlock) is re-run under it at the failing case,
 * and a finding becomes the verdict with its line; a pass at a covered shape gets a sanitized run. */
static enum kf_status sanitize_shape(struct vctx *c, size_t si, const struct vshape *v,
				     const struct kf_plan *p, const struct layout *L,
				     struct kf_shape_report *rep, struct kf_err *err)
{
	bool explain = false, found;
	switch (rep->status) {
	case KF_VERDICT_WRONG_OUTPUT:
	case KF_VERDICT_NAN_MISMATCH:
	case KF_VERDICT_NONDETERMINISTIC:
	case KF_VERDICT_STATEFUL:
	case KF_VERDICT_OUT_OF_BOUNDS:
	case KF_VERDICT_INPUT_MODIFIED:
		explain = true;
		break;
	case KF_VERDICT_RUNTIME_ERROR:
		/* a fault (SIGSEGV/SIGBUS, or "AddressSanitizer: SEGV" from a sanitized worker) gets a
		 * line: the sanitizer stops before the access; a deadlock may be a bad mask */
		explain = strstr(rep->detail, "SEGV") || strstr(rep->detail, "BUS") ||
			  strstr(rep->detail, "deadlock");
		if (!explain)
			return KF_OK;
		break;
	case KF_VERDICT_PASS:
		if (!c->san_pick || !c->san_pick[si])
			return KF_OK;
		break;
	default:
		return KF_OK;
	}
	size_t k = 0;
	if (explain)
		for (size_t i = 0; i < v->n_cases; i++)
			if (v->cases[i].seed == rep->case_seed)
				k = i;
	char was[sizeof(rep->detail)];
	snprintf(was, sizeof(was), "%s: %.500s", kf_verdict_name(rep->status), rep->detail);
	enum kf_status st = sanitize_case(c, v, p, L, k, rep, explain ? was : NULL, &found, err);
	if (!st && found) {
		/* the finding's case, so the reason names its inputs */
		rep->dist = v->cases[k].dist;
		rep->case_seed = v->cases[k].seed;
	}
	return st;
}

/* Checks the candidate at one shape. Returns a harness error, or KF_OK with rep->status set.
 * *skipped is set when the reference itself is not defined at an edge shape. */
static enum kf_status check_shape(struct vctx *c, size_t si, const struct kf_shape *shape,
				  enum kf_shape_kind kind, bool residue, struct kf_shape_report *rep,
				  bool *skipped, struct kf_err *err)
{
	const struct kf_task *t = c->t;
	struct vshape *v = calloc(1, sizeof(*v));
	struct kf_plan *pc = NULL, *pr = NULL;
	struct kf_session *s = NULL;
	struct kf_step_result *r = NULL;
	struct outcome *oc = NULL;
	struct plan_step ps[40];
	struct layout *L = calloc(1, sizeof(*L));
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st = KF_OK;
	size_t n_steps, done_steps = 0;
	char shape_txt[256];
	bool laid_out = false;

	*skipped = false;
	memset(rep, 0, sizeof(*rep));
	rep->shape = *shape;
	rep->kind = kind;
	rep->first_bad = -1;
	if (!v || !L) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	v->shape = shape;
	v->kind = kind;
	v->residue = residue;
	v->n_tensors = t->n_tensors;
	kf_shape_format(shape, shape_txt, sizeof(shape_txt));

	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t ne;
		if (kf_task_numel(t, i, shape, &ne, &e2) || ne <= 0) {
			if (kind == KF_SHAPE_EDGE) {
				*skipped = true;
				goto out;
			}
			st = kf_err_set(err, KF_ERR_INVALID, "%s: tensor '%s' has no elements at %s", t->path,
					t->tensors[i].name, shape_txt);
			goto out;
		}
		v->numel[i] = (uint64_t)ne;
		v->n_bytes[i] = (uint64_t)ne * kf_dtype_size(t->tensors[i].dtype);
		v->row[i] = last_extent(t, i, shape, (uint64_t)ne);
	}
	if (kf_plan_make(c->ref_kf, t, shape, &pr, &e2)) {
		if (kind == KF_SHAPE_EDGE) {
			*skipped = true;
			goto out;
		}
		st = kf_err_set(err, KF_ERR_INVALID, "reference at %s: %s", shape_txt, e2.msg);
		goto out;
	}
	if (c->cand_lib ? kf_libcall_plan(c->cand_lib, t, shape, &pc, &e2)
			: kf_plan_make(c->cand_kf, t, shape, &pc, &e2)) {
		rep->status = KF_VERDICT_INVALID_LAUNCH;
		snprintf(rep->detail, sizeof(rep->detail), "%s", e2.msg);
		goto out;
	}
	build_cases(c, v, si);
	st = gen_inputs(c, v, err);
	if (st)
		goto out;
	/* One deadline for the whole verification: past it, what is left is a timeout, not a verdict of
	 * the reference. */
	if (c->wopts.deadline_ms > 0 && kf_now_ms() >= c->wopts.deadline_ms) {
		rep->status = KF_VERDICT_TIMEOUT;
		snprintf(rep->detail, sizeof(rep->detail),
			 "the verification's deadline passed before this shape");
		st = KF_OK;
		goto out;
	}
	st = run_reference(c, v, pr, &e2);
	if (st == KF_ERR_RUNTIME && c->wopts.deadline_ms > 0 && kf_now_ms() >= c->wopts.deadline_ms) {
		rep->status = KF_VERDICT_TIMEOUT;
		snprintf(rep->detail, sizeof(rep->detail),
			 "the verification's deadline passed at this shape");
		st = KF_OK;
		goto out;
	}
	if (st == KF_ERR_RUNTIME) {
		if (kind == KF_SHAPE_EDGE) {
			st = KF_OK;
			*skipped = true;
			goto out;
		}
		st = kf_err_set(err, KF_ERR_INVALID, "the reference fails at %s: %s", shape_txt, e2.msg);
		goto out;
	} else if (st) {
		*err = e2;
		goto out;
	}

	make_layout(c, v, pc, L);
	laid_out = true;
	n_steps = make_schedule(v, ps, KF_ARRAY_SIZE(ps));
	r = malloc(sizeof(*r));
	oc = calloc(n_steps, sizeof(*oc));
	if (!r || !oc) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto out;
	}
	st = kf_session_start(&c->wopts, c->cand_c, pc, L->total, &s, &e2);
	if (st) {
		if (st == KF_ERR_UNAVAILABLE || st == KF_ERR_NOMEM) {
			*err = e2;
			goto out;
		}
		st = KF_OK;
		rep->status = session_start_verdict(e2.code);
		snprintf(rep->detail, sizeof(rep->detail), "%s", e2.msg);
		goto out;
	}
	{
		uint8_t *arena = kf_session_arena(s);
		for (size_t k = 0; k < v->n_cases; k++)
			for (size_t b = 0; b < t->n_tensors; b++)
				if (L->in_off[k][b] >= 0)
					memcpy(arena + L->in_off[k][b], v->in[k][b], v->n_bytes[b]);
	}
	for (size_t i = 0; i < n_steps; i++) {
		struct kf_step step;
		step_init(&step, L, ps[i].k, ps[i].flags, ps[i].slot, ps[i].poison, c->o->step_timeout_ms);
		st = kf_session_step(s, &step, r, &e2);
		if (st) {
			*err = e2;
			goto out;
		}
		done_steps++;
		rep->launches++;
		oc[i].case_index = ps[i].k;
		oc[i].verdict = verdict_of_step(r, oc[i].detail, sizeof(oc[i].detail));
		if (oc[i].verdict != KF_VERDICT_PASS) {
			/* A crash, timeout or bad launch ends the shape. */
			report_from(rep, v, &oc[i]);
			goto out;
		}
		check_step(c, v, pc, L, kf_session_arena(s), ps[i].k, &oc[i]);
		if (r->worker_dead)
			break;
	}

	/* Decide. */
	for (size_t i = 0; i < done_steps; i++) {
		struct outcome *o = &oc[i];
		if (o->verdict == KF_VERDICT_PASS) {
			report_from(rep, v, o); /* accumulate error statistics */
			rep->status = KF_VERDICT_PASS;
			continue;
		}
		if (o->verdict == KF_VERDICT_WRONG_OUTPUT || o->verdict == KF_VERDICT_NAN_MISMATCH) {
			bool same_case_passed = false, earlier_passed = false;
			for (size_t j = 0; j < done_steps; j++) {
				if (j != i && oc[j].case_index == o->case_index &&
				    oc[j].verdict == KF_VERDICT_PASS)
					same_case_passed = true;
				if (j < i && oc[j].verdict == KF_VERDICT_PASS)
					earlier_passed = true;
			}
			if (same_case_passed) {
				report_from(rep, v, o);
				rep->status = KF_VERDICT_NONDETERMINISTIC;
				snprintf(rep->detail, sizeof(rep->detail),
					 "the same inputs gave different results in two launches (different "
					 "poison or "
					 "address): %.500s",
					 o->detail);
				goto out;
			}
			if (earlier_passed) {
				struct outcome fresh;
				st = fresh_recheck(c, v, pc, L, o->case_index, &fresh, &e2);
				if (st) {
					*err = e2;
					goto out;
				}
				if (fresh.verdict == KF_VERDICT_PASS) {
					report_from(rep, v, o);
					rep->status = KF_VERDICT_STATEFUL;
					snprintf(rep->detail, sizeof(rep->detail),
						 "launch %zu in the same worker was wrong after earlier "
						 "launches were right, "
						 "while a fresh process gets the same inputs right: %.450s",
						 i + 1, o->detail);
					goto out;
				}
			}
		}
		report_from(rep, v, o);
		goto out;
	}
out:
	if (s)
		kf_session_end(s, NULL);
	if (!st && !*skipped && laid_out && san_wanted(c))
		st = sanitize_shape(c, si, v, pc, L, rep, err);
	free(r);
	free(oc);
	if (v) {
		vshape_release(v);
		free(v);
	}
	free(L);
	kf_plan_free(pc);
	kf_plan_free(pr);
	return st;
}

/* ---- the whole protocol ------------------------------------------------------------------------ */

static uint64_t secret_seed(void)
{
	uint64_t s = 0;
	if (getrandom(&s, sizeof(s), 0) != sizeof(s))
		s = kf_mix64(kf_now_ns() ^ (uint64_t)getpid());
	return s ? s : 1;
}

static void result_reason(struct kf_verify_result *res, enum kf_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void result_reason(struct kf_verify_result *res, enum kf_verdict v, const char *fmt, ...)
{
	va_list ap;
	res->status = v;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

static char *first_lines(const char *log, int n)
{
	struct kf_buf b = KF_BUF_INIT(600);
	const char *p = log;
	for (int i = 0; i < n && p && *p; i++) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0 || strstr(p, "ptxas info") == p) {
			i--;
			p = e ? e + 1 : NULL;
			continue;
		}
		if (b.len)
			kf_buf_adds(&b, " | ");
		kf_buf_add_truncated(&b, p, len);
		p = e ? e + 1 : NULL;
	}
	return kf_buf_detach(&b, NULL);
}

#define VERIFY_THREADS 2

struct shape_pool {
	struct vctx *c;
	const struct kf_checked_shape *shapes;
	size_t n;
	size_t next; /* next shape to take (under mu) */
	bool stop;   /* a shape failed (and not all_shapes), or a harness error */
	enum kf_status st;
	struct kf_err err;
	struct kf_shape_report *reports;
	int *state; /* 0 not taken, 1 skipped, 2 checked */
	pthread_mutex_t mu;
};

static void *shape_thread(void *arg)
{
	struct shape_pool *p = arg;
	for (;;) {
		size_t i;
		bool skipped = false;
		struct kf_err e = KF_ERR_INIT;
		enum kf_status st;

		pthread_mutex_lock(&p->mu);
		if (p->stop || p->next >= p->n) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		st = check_shape(p->c, i, &p->shapes[i].shape, p->shapes[i].kind, p->shapes[i].residue,
				 &p->reports[i], &skipped, &e);
		pthread_mutex_lock(&p->mu);
		if (st) {
			if (!p->st) {
				p->st = st;
				p->err = e;
			}
			p->stop = true;
		} else {
			p->state[i] = skipped ? 1 : 2;
			if (!skipped && p->reports[i].status != KF_VERDICT_PASS && !p->c->o->all_shapes)
				p->stop = true;
		}
		if (kf_verify_interrupted && *kf_verify_interrupted)
			p->stop = true;
		pthread_mutex_unlock(&p->mu);
	}
}

static enum kf_status run_protocol(struct vctx *c, struct kf_err *err)
{
	const struct kf_task *t = c->t;
	struct kf_verify_result *res = c->res;
	struct kf_compile_opts co = {0};
	struct kf_checked_shape *shapes = NULL;
	size_t n_shapes = 0, n_checked = 0, by_kind[4] = {0};
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st;

	/* a library call: no scan, no compile; a backend without the library cannot run it at all */
	if (c->cand_lib) {
		st = kf_libcall_module(c->cand_lib, c->o->backend, &c->cand_c, &e2);
		res->compiled = c->cand_c;
		if (st) {
			*err = e2;
			return st;
		}
	}
	/* The static scan for constructs this backend cannot run is part of a kernel file's compile, after
	 * NVRTC's: a file NVRTC rejects is compile_error on every backend, never unsupported. */
	co.backend = c->o->backend;
	co.arch = c->o->arch;
	if (c->wopts.deadline_ms > 0) {
		double left = c->wopts.deadline_ms - kf_now_ms();
		co.timeout_ms = left < 1000 ? 1000 : left < 60000 ? (int)left : 0;
	}
	/* NVRTC first on every backend (check 0): what the GPU compiler rejects never runs anywhere */
	st = kf_compile_checked(c->ref_kf, &co, &c->ref_c, &e2);
	if (st == KF_ERR_COMPILE) {
		char *l = first_lines(c->ref_c ? c->ref_c->log : "", 3);
		st = kf_err_set(err, KF_ERR_INVALID, "reference '%s' does not compile: %s", t->reference,
				l && *l ? l : e2.msg);
		free(l);
		return st;
	} else if (st) {
		*err = e2;
		return st == KF_ERR_UNSUPPORTED || st == KF_ERR_TIMEOUT
			   ? kf_err_prefix(err, "reference '%s'", t->reference)
			   : st;
	}
	snprintf(c->ref_hash, sizeof(c->ref_hash), "%s", c->ref_c->key);

	st = c->cand_lib ? KF_OK : kf_compile_checked(c->cand_kf, &co, &c->cand_c, &e2);
	res->compiled = c->cand_c;
	if (c->cand_c) {
		free(res->compile_log);
		res->compile_log = kf_strdup(c->cand_c->log ? c->cand_c->log : "");
	}
	switch (st) {
	case KF_OK:
		break;
	case KF_ERR_COMPILE: {
		/* a rejection names its compiler: NVRTC on every backend, then the host's */
		char *l = first_lines(
		    c->cand_c && c->cand_c->log && c->cand_c->log[0] ? c->cand_c->log : e2.msg, 3);
		bool nvrtc = c->cand_c && c->cand_c->backend == KF_BACKEND_CUDA;
		result_reason(res, KF_VERDICT_COMPILE_ERROR, "%s%s%s%s", nvrtc ? "nvrtc " : "",
			      nvrtc ? c->cand_c->arch : "", nvrtc ? ": " : "", l);
		free(l);
		return KF_OK;
	}
	case KF_ERR_LIMIT:
	case KF_ERR_CRASH:
		/* the candidate took the compiler past its memory or killed it: its own failure */
		result_reason(res, KF_VERDICT_COMPILE_ERROR, "%s", e2.msg);
		return KF_OK;
	case KF_ERR_TIMEOUT:
		result_reason(res, KF_VERDICT_TIMEOUT, "compile: %s", e2.msg);
		return KF_OK;
	case KF_ERR_UNSUPPORTED:
		result_reason(res, KF_VERDICT_UNSUPPORTED, "%s", e2.msg);
		return KF_OK;
	default:
		*err = e2;
		return st;
	}

	if (c->cand_c) /* set on KF_OK */
		snprintf(res->gpu_arch, sizeof(res->gpu_arch), "%s",
			 c->cand_c->gpu_arch[0]                  ? c->cand_c->gpu_arch
			 : c->cand_c->backend == KF_BACKEND_CUDA ? c->cand_c->arch
								 : "");
	st = kf_verify_shapes(t, !c->o->no_edge_shapes, c->o->timing_shapes, c->o->strict, res->seed, &shapes,
			      &n_shapes, err);
	if (st)
		return st;
	bool *san_pick = calloc(n_shapes ? n_shapes : 1, sizeof(bool));
	if (!san_pick) {
		free(shapes);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	if (san_wanted(c))
		san_select(t, shapes, n_shapes, san_pick, res);
	else if (c->o->backend == KF_BACKEND_CPU)
		snprintf(res->san_note, sizeof(res->san_note), "the sanitizer pass was turned off");
	c->san_pick = san_pick;
	res->shapes = calloc(n_shapes ? n_shapes : 1, sizeof(*res->shapes));
	if (!res->shapes) {
		free(shapes);
		free(san_pick);
		c->san_pick = NULL;
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_public; i++) {
		double cost = shape_cost(t, &t->shapes_public[i]);
		if (!i || cost < c->structured_budget)
			c->structured_budget = cost;
	}
	res->status = KF_VERDICT_PASS;
	{
		struct shape_pool pool;
		memset(&pool, 0, sizeof(pool));
		pool.c = c;
		pool.shapes = shapes;
		pool.n = n_shapes;
		pthread_t tid[VERIFY_THREADS];
		size_t n_threads = n_shapes < VERIFY_THREADS ? n_shapes : VERIFY_THREADS, started = 0;
		pool.reports = calloc(n_shapes ? n_shapes : 1, sizeof(*pool.reports));
		pool.state = calloc(n_shapes ? n_shapes : 1, sizeof(*pool.state));
		if (!pool.reports || !pool.state) {
			free(pool.reports);
			free(pool.state);
			free(shapes);
			free(san_pick);
			c->san_pick = NULL;
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		pthread_mutex_init(&pool.mu, NULL);
		/* Shapes are independent: check them on up to VERIFY_THREADS threads (most of a shape's time
		 * is spent waiting for its workers). Each thread starts and ends its own sessions. */
		for (size_t k = 1; k < n_threads; k++)
			if (pthread_create(&tid[started], NULL, shape_thread, &pool) == 0)
				started++;
		shape_thread(&pool);
		for (size_t k = 0; k < started; k++)
			pthread_join(tid[k], NULL);
		pthread_mutex_destroy(&pool.mu);
		st = pool.st;
		if (st)
			*err = pool.err;
		/* Report in shape order up to the first failing shape: threads take shapes in order and
		 * finish what they took, so every shape before the first failure was checked; what a thread
		 * finished after it is dropped, which keeps the result identical for the same seed. */
		for (size_t i = 0; i < n_shapes && !st; i++) {
			struct kf_shape_report *rep = &pool.reports[i];
			char shape_txt[256];
			if (pool.state[i] != 2)
				continue; /* skipped edge shape, or never taken after a failure */
			res->shapes[res->n_shapes++] = *rep;
			res->launches += rep->launches;
			if (rep->sanitized)
				res->san_shapes++;
			n_checked++;
			by_kind[shapes[i].kind]++;
			if (c->o->verbose)
				fprintf(stderr, "verify: shape %zu/%zu %s\n", i + 1, n_shapes,
					kf_verdict_name(rep->status));
			if (rep->status != KF_VERDICT_PASS && res->status == KF_VERDICT_PASS) {
				kf_shape_format(&rep->shape, shape_txt, sizeof(shape_txt));
				result_reason(
				    res, rep->status,
				    "%s at %s (%s shape, %s inputs, case seed 0x%016" PRIx64 "): %s",
				    kf_verdict_name(rep->status), shape_txt, kf_shape_kind_name(rep->kind),
				    kf_input_dist_name(rep->dist), rep->case_seed, rep->detail);
				if (!c->o->all_shapes)
					break;
			}
		}
		free(pool.reports);
		free(pool.state);
	}
	free(shapes);
	free(san_pick);
	c->san_pick = NULL;
	res->sanitizer = res->san_shapes > 0;
	res->san_ms = (double)c->san_ns / 1e6;
	if (st)
		return st;
	if (res->status == KF_VERDICT_PASS) {
		char san[160] = "";
		if (res->sanitizer)
			snprintf(
			    san, sizeof(san),
			    "; cpu sanitizer (memcheck, initcheck, racecheck, warp UB) clean at %u of them",
			    res->san_shapes);
		result_reason(
		    res, KF_VERDICT_PASS,
		    "%zu shapes passed (%zu public, %zu hidden, %zu edge, %zu timing), %u launches checked%s",
		    n_checked, by_kind[KF_SHAPE_PUBLIC], by_kind[KF_SHAPE_HIDDEN], by_kind[KF_SHAPE_EDGE],
		    by_kind[KF_SHAPE_TIMING], res->launches, san);
	}
	return KF_OK;
}

/* The protocol for a kernel given as source text, or for library baseline lib (source NULL). */
static enum kf_status verify_run(const struct kf_task *t, const char *name, const char *source, size_t len,
				 const struct kf_baseline *lib, const struct kf_verify_opts *o,
				 struct kf_verify_result **out, struct kf_err *err)
{
	struct kf_verify_opts defaults;
	struct vctx c;
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st;
	uint64_t t0 = now_ns();

	*out = NULL;
	if (!o) {
		kf_verify_opts_init(&defaults);
		o = &defaults;
	}
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.o = o;
	c.res = calloc(1, sizeof(*c.res));
	if (!c.res)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	pthread_mutex_init(&c.san_mu, NULL);
	c.res->backend = o->backend;
	c.res->seed = o->seed ? o->seed : secret_seed();
	c.res->strict = o->strict;
	c.res->compile_log = kf_strdup("");
	c.cand_lib = lib;
	if (lib)
		kf_sha256_hex(lib->canon, strlen(lib->canon), c.res->kernel_hash);
	else
		kf_sha256_hex(source, len, c.res->kernel_hash);
	cache_dir_init(&c);
	c.wopts.backend = o->backend;
	c.wopts.worker_path = o->worker_path;
	c.wopts.start_timeout_ms = 30000;
	c.wopts.shuffle_seed = o->shuffle && o->backend == KF_BACKEND_CPU ? (kf_mix64(c.res->seed) | 1) : 0;
	if (o->deadline_s > 0)
		c.wopts.deadline_ms = kf_now_ms() + 1000.0 * o->deadline_s;

	st = kf_kfile_load(t->reference, &c.ref_kf, err);
	if (!st)
		st = kf_kfile_bind(c.ref_kf, t, err);
	if (st) {
		kf_err_prefix(err, "reference");
		st = st == KF_ERR_NOMEM ? st : KF_ERR_INVALID;
		goto fail;
	}
	if (!lib &&
	    (kf_kfile_parse(name, source, len, &c.cand_kf, &e2) || kf_kfile_bind(c.cand_kf, t, &e2))) {
		if (e2.code == KF_ERR_NOMEM) {
			*err = e2;
			st = KF_ERR_NOMEM;
			goto fail;
		}
		result_reason(c.res, KF_VERDICT_INVALID_LAUNCH, "%s", e2.msg);
		st = KF_OK;
	} else {
		st = run_protocol(&c, err);
	}
	/* A verdict reached after a cancellation was asked for is no verdict: the cancellation kills the
	 * workers and compilers, and a killed one reads as a crash, a failed start or a compile error, so a
	 * correct kernel would leave as runtime_error (seen on a GPU, where a verification starts ~100
	 * workers). Whatever the protocol returned, the answer is "interrupted". */
	if (kf_cancelled() && st != KF_ERR_NOMEM)
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted before a verdict (none recorded)");
	if (st)
		goto fail;
	c.res->elapsed_ms = (double)(now_ns() - t0) / 1e6;
	c.res->parent_ms = (double)c.parent_ns / 1e6;
	kf_compiled_free(c.cand_san);
	pthread_mutex_destroy(&c.san_mu);
	kf_compiled_free(c.ref_c);
	kf_kfile_free(c.ref_kf);
	kf_kfile_free(c.cand_kf);
	*out = c.res;
	return KF_OK;
fail:
	kf_compiled_free(c.cand_san);
	pthread_mutex_destroy(&c.san_mu);
	if (c.res->compiled != c.cand_c)
		kf_compiled_free(c.cand_c);
	kf_compiled_free(c.ref_c);
	kf_kfile_free(c.ref_kf);
	kf_kfile_free(c.cand_kf);
	kf_verify_result_free(c.res);
	return st;
}

enum kf_status kf_verify_source(const struct kf_task *t, const char *name, const char *source, size_t len,
				const struct kf_verify_opts *o, struct kf_verify_result **out,
				struct kf_err *err)
{
	return verify_run(t, name, source, len, NULL, o, out, err);
}

/* A kernel baseline is a file, verified like a candidate from its source. */
static enum kf_status verify_file(const struct kf_task *t, const char *kernel_path,
				  const struct kf_verify_opts *o, struct kf_verify_result **out,
				  struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(4u << 20);
	enum kf_status st = kf_buf_read_file(&b, kernel_path, err);
	*out = NULL;
	if (st) {
		kf_buf_release(&b);
		return st == KF_ERR_NOMEM ? st : KF_ERR_NOTFOUND;
	}
	st = kf_verify_source(t, kernel_path, b.data, b.len, o, out, err);
	kf_buf_release(&b);
	return st;
}

enum kf_status kf_verify_baseline(const struct kf_task *t, const struct kf_baseline *b,
				  const struct kf_verify_opts *o, struct kf_verify_result **out,
				  struct kf_err *err)
{
	*out = NULL;
	if (b->kind == KF_BASELINE_KERNEL)
		return verify_file(t, b->kernel, o, out, err);
	return verify_run(t, b->name, NULL, 0, b, o, out, err);
}

void kf_verify_result_free(struct kf_verify_result *r)
{
	if (!r)
		return;
	free(r->shapes);
	free(r->compile_log);
	kf_compiled_free(r->compiled);
	free(r);
}

/* ---- kforge tasks lint: degenerate tasks -------------------------------------------------------- */

static void add_finding(struct kf_lint_finding **f, size_t *n, const char *check, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_finding(struct kf_lint_finding **f, size_t *n, const char *check, const char *fmt, ...)
{
	struct kf_lint_finding *nf = realloc(*f, (*n + 1) * sizeof(**f));
	va_list ap;
	if (!nf)
		return;
	*f = nf;
	snprintf(nf[*n].check, sizeof(nf[*n].check), "%s", check);
	nf[*n].warning = false;
	va_start(ap, fmt);
	vsnprintf(nf[*n].detail, sizeof(nf[*n].detail), fmt, ap);
	va_end(ap);
	(*n)++;
}

static bool outputs_equal(const struct vctx *c, const struct vshape *v, size_t a, size_t b)
{
	for (size_t i = 0; i < c->t->n_tensors; i++)
		if (tensor_is_out(&c->t->tensors[i]) && memcmp(v->ref[a][i], v->ref[b][i], v->n_bytes[i]))
			return false;
	return true;
}

/* At one shape: case 0 and 1 are two seeds; case 2+j is case 0 with input j drawn from another seed. */
static enum kf_status lint_shape(struct vctx *c, const struct kf_shape *shape, struct kf_lint_finding **f,
				 size_t *n, struct kf_err *err)
{
	const struct kf_task *t = c->t;
	struct vshape *v = calloc(1, sizeof(*v));
	struct kf_plan *pr = NULL;
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st = KF_OK;
	size_t inputs[KF_MAX_BUFFERS], n_inputs = 0;
	char shape_txt[256];

	if (!v)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	kf_shape_format(shape, shape_txt, sizeof(shape_txt));
	v->shape = shape;
	v->kind = KF_SHAPE_PUBLIC;
	v->n_tensors = t->n_tensors;
	for (size_t i = 0; i < t->n_tensors; i++) {
		int64_t ne;
		if (kf_task_numel(t, i, shape, &ne, &e2) || ne <= 0) {
			st = kf_err_set(err, KF_ERR_INVALID, "tensor '%s' has no elements at %s",
					t->tensors[i].name, shape_txt);
			goto out;
		}
		v->numel[i] = (uint64_t)ne;
		v->n_bytes[i] = (uint64_t)ne * kf_dtype_size(t->tensors[i].dtype);
		v->row[i] = last_extent(t, i, shape, (uint64_t)ne);
		if (t->tensors[i].role == KF_ROLE_INPUT && n_inputs < KF_ARRAY_SIZE(v->cases) - 2)
			inputs[n_inputs++] = i;
	}
	if (kf_plan_make(c->ref_kf, t, shape, &pr, &e2)) {
		add_finding(f, n, "reference_error", "at %s: %s", shape_txt, e2.msg);
		goto out;
	}
	v->n_cases = 2 + n_inputs;
	for (size_t k = 0; k < v->n_cases; k++) {
		v->cases[k].dist = k < 2 ? KF_INPUT_INIT : (enum kf_input_dist)(KF_INPUT_DIST_COUNT + k);
		v->cases[k].seed = kf_mix64(c->res->seed + k);
	}
	st = gen_inputs(c, v, err); /* every case drawn from its own seed ... */
	if (st)
		goto out;
	for (size_t j = 0; j < n_inputs; j++) /* ... then case 2+j takes case 0's inputs but for input j */
		for (size_t i = 0; i < t->n_tensors; i++)
			if (v->in[0][i] && i != inputs[j])
				memcpy(v->in[2 + j][i], v->in[0][i], v->n_bytes[i]);
	st = run_reference(c, v, pr, &e2);
	if (st == KF_ERR_RUNTIME) {
		add_finding(f, n, "reference_error", "at %s: %s", shape_txt, e2.msg);
		st = KF_OK;
		goto out;
	} else if (st) {
		*err = e2;
		goto out;
	}
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *te = &t->tensors[i];
		struct kf_tol tol = kf_task_tolerance(t, te->dtype);
		double maxv = 0;
		if (!tensor_is_out(te))
			continue;
		for (size_t k = 0; k < 2; k++)
			for (size_t e = 0; e < v->numel[i]; e++) {
				double x = fabs(kf_elem_get(v->ref[k][i], te->dtype, e));
				if (!(x <= maxv))
					maxv = x; /* NaN propagates as "not near zero" */
			}
		if (maxv <= tol.atol)
			add_finding(f, n, "near_zero_output",
				    "every value of output '%s' is within atol %g of zero at %s (max |y| = "
				    "%g): a kernel "
				    "that writes zeros would pass",
				    te->name, tol.atol, shape_txt, maxv);
	}
	if (t->n_tensors && n_inputs && outputs_equal(c, v, 0, 1))
		add_finding(f, n, "seed_independent",
			    "the outputs at %s are identical for two different input seeds: a kernel that "
			    "ignores its "
			    "inputs would pass",
			    shape_txt);
	for (size_t j = 0; j < n_inputs; j++)
		if (outputs_equal(c, v, 0, 2 + j))
			add_finding(
			    f, n, "input_ignored",
			    "changing input '%s' does not change any output at %s: a kernel that never reads "
			    "it would pass",
			    t->tensors[inputs[j]].name, shape_txt);
out:
	vshape_release(v);
	free(v);
	kf_plan_free(pr);
	return st;
}

/* A constraint that leaves a free dim one residue mod 32 (a multiple_of of 32 or more, or a range of one
 * allowed value) removes every tail case of it from the verifier's shapes: worth a warning, since a
 * kernel that mishandles N % 32 != 0 can then never be caught. */
static void lint_constraints(const struct kf_task *t, struct kf_lint_finding **f, size_t *n)
{
	for (size_t d = 0; d < t->n_dims && d < KF_MAX_DIMS; d++) {
		const struct kf_dim_constraint *c = &t->constraints[d];
		int64_t maxv = 0, hi, v;
		bool seen[32] = {0};
		int n_res = 0;
		if (!c->set || kf_task_dim_fixed(t, d))
			continue;
		for (int set = 0; set < 2; set++)
			for (size_t i = 0; i < (set ? t->n_hidden : t->n_public); i++) {
				const struct kf_shape *s = set ? &t->shapes_hidden[i] : &t->shapes_public[i];
				if (kf_shape_get(s, t->dims[d], &v) && v > maxv)
					maxv = v;
			}
		hi = c->max < maxv ? c->max : maxv;
		v = (c->min + c->multiple_of - 1) / c->multiple_of * c->multiple_of;
		for (int k = 0; k < 32 && v <= hi; k++, v += c->multiple_of)
			if (!seen[v % 32]) {
				seen[v % 32] = true;
				n_res++;
			}
		if (n_res <= 1) {
			add_finding(f, n, "constraint_no_tails",
				    "constraints.%s (multiple_of %lld, %lld..%lld) leaves %s one residue mod "
				    "32 in the "
				    "declared range: no tail case of %s is ever checked",
				    t->dims[d], (long long)c->multiple_of, (long long)c->min, (long long)hi,
				    t->dims[d], t->dims[d]);
			if (*n)
				(*f)[*n - 1].warning = true;
		}
	}
}

enum kf_status kf_task_lint(const struct kf_task *t, enum kf_backend_kind b,
			    struct kf_lint_finding **findings, size_t *n, struct kf_err *err)
{
	struct vctx c;
	struct kf_verify_opts o;
	struct kf_compile_opts co = {0};
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st;

	*findings = NULL;
	*n = 0;
	kf_verify_opts_init(&o);
	o.backend = b;
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.o = &o;
	c.res = calloc(1, sizeof(*c.res));
	if (!c.res)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	c.res->seed = 0x6b666f7267656c69ull; /* lint is deterministic: a fixed seed */
	lint_constraints(t, findings, n);
	cache_dir_init(&c);
	c.wopts.backend = b;
	c.wopts.start_timeout_ms = 30000;

	st = kf_kfile_load(t->reference, &c.ref_kf, err);
	if (!st)
		st = kf_kfile_bind(c.ref_kf, t, err);
	if (st)
		goto out;
	co.backend = b;
	st = kf_compile_checked(c.ref_kf, &co, &c.ref_c, &e2);
	if (st) {
		add_finding(findings, n, "reference_error", "reference does not compile: %s",
			    c.ref_c && c.ref_c->log ? c.ref_c->log : e2.msg);
		st = KF_OK;
		goto out;
	}
	snprintf(c.ref_hash, sizeof(c.ref_hash), "%s", c.ref_c->key);
	for (size_t i = 0; i < t->n_public && i < 2 && !st; i++)
		st = lint_shape(&c, &t->shapes_public[i], findings, n, err);
out:
	kf_compiled_free(c.ref_c);
	kf_kfile_free(c.ref_kf);
	kf_verify_result_free(c.res);
	if (st) {
		free(*findings);
		*findings = NULL;
		*n = 0;
	}
	return st;
}
