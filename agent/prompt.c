/* Prompt building: a small {{name}} / {{#name}}...{{/name}} template renderer, and the builder that fills
 * the templates in agent/prompts/ with the task (public shapes only: hidden shapes and their values never
 * reach the LLM), the reference, the grammar, the target, knowledge-base examples and the parent's feedback.
 */
#include "agent.h"
#include "embed.h"
#include "profiler/profiler.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATE_MAX_BYTES (256u << 10)
#define COMPILE_LOG_MAX 3000u /* bytes of compiler output shown: the first errors are the useful ones */
#define CHECK_TEXT_MAX 1000u
#define PROFILE_MAX 3000u
#define SOURCE_MAX (64u << 10)  /* the parent and the reference */
#define EXAMPLE_MAX (12u << 10) /* each knowledge-base example */
#define EXAMPLES_MAX 8
#define FIELD_MAX (256u << 10) /* any one rendered variable */
#define HISTORY_MAX 8          /* earlier attempts shown */
#define BEST_MAX 3             /* the run's best kernels shown (the first with its source) */
#define LESSONS_MAX 6
#define NOTE_MAX 300u

/* ---- the renderer ----------------------------------------------------------------------------- */

/* The label a figure of this run's clock carries in a prompt: "cpu", "model" (the cost model) or "gpu". */
static const char *clock_label(const char *clock)
{
	return clock && (!strcmp(clock, "cpu") || !strcmp(clock, "model")) ? clock : "gpu";
}

static const struct kf_tmpl_var *find_var(const struct kf_tmpl_var *vars, size_t n, const char *name,
					  size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(vars[i].name) == len && !memcmp(vars[i].name, name, len))
			return &vars[i];
	return NULL;
}

static size_t line_no(const char *t, size_t pos)
{
	size_t n = 1;
	for (size_t i = 0; i < pos; i++)
		n += t[i] == '\n';
	return n;
}

/* Renders t[*pos, len) until the end or the {{/closing}} tag. A section tag alone on its line takes its
 * line with it (mustache's "standalone" rule), so sections do not leave blank lines behind. */
static enum kf_status render(const char *t, size_t len, size_t *pos, const char *closing, size_t closing_len,
			     bool emit, const struct kf_tmpl_var *vars, size_t n_vars, struct kf_buf *out,
			     struct kf_err *err)
{
	while (*pos < len) {
		const char *open = memmem(t + *pos, len - *pos, "{{", 2), *close;
		size_t tag_at, tag_end, name_at, name_len, lit_end;
		char kind;
		const struct kf_tmpl_var *v;

		if (!open) {
			if (emit && kf_buf_add(out, t + *pos, len - *pos))
				return kf_err_set(err, KF_ERR_LIMIT, "prompt larger than %zu bytes",
						  out->max);
			*pos = len;
			break;
		}
		tag_at = (size_t)(open - t);
		close = memmem(open + 2, len - tag_at - 2, "}}", 2);
		if (!close)
			return kf_err_set(err, KF_ERR_INVALID, "line %zu: '{{' without '}}'",
					  line_no(t, tag_at));
		tag_end = (size_t)(close - t) + 2;
		kind = t[tag_at + 2];
		name_at = tag_at + 2 + (kind == '#' || kind == '^' || kind == '/');
		name_len = (size_t)(close - t) - name_at;
		while (name_len && t[name_at] == ' ')
			name_at++, name_len--;
		while (name_len && t[name_at + name_len - 1] == ' ')
			name_len--;
		for (size_t i = 0; i < name_len; i++)
			if (!(isalnum((unsigned char)t[name_at + i]) || t[name_at + i] == '_'))
				return kf_err_set(err, KF_ERR_INVALID, "line %zu: bad tag name '%.*s'",
						  line_no(t, tag_at), (int)name_len, t + name_at);
		if (!name_len)
			return kf_err_set(err, KF_ERR_INVALID, "line %zu: empty tag", line_no(t, tag_at));

		lit_end = tag_at;
		if (kind == '#' || kind == '^' || kind == '/') {
			/* standalone: only blanks between the line start and the tag, and the tag and the
			 * line end */
			size_t ls = tag_at, le = tag_end;
			while (ls > *pos && (t[ls - 1] == ' ' || t[ls - 1] == '\t'))
				ls--;
			while (le < len && (t[le] == ' ' || t[le] == '\t'))
				le++;
			if ((ls == 0 || t[ls - 1] == '\n') && (le == len || t[le] == '\n')) {
				lit_end = ls;
				tag_end = le < len ? le + 1 : le;
			}
		}
		if (emit && kf_buf_add(out, t + *pos, lit_end - *pos))
			return kf_err_set(err, KF_ERR_LIMIT, "prompt larger than %zu bytes", out->max);
		*pos = tag_end;

		if (kind == '/') {
			if (closing && name_len == closing_len && !memcmp(t + name_at, closing, name_len))
				return KF_OK;
			return kf_err_set(err, KF_ERR_INVALID, "line %zu: '{{/%.*s}}' closes nothing",
					  line_no(t, tag_at), (int)name_len, t + name_at);
		}
		v = find_var(vars, n_vars, t + name_at, name_len);
		if (!v)
			return kf_err_set(err, KF_ERR_INVALID, "line %zu: unknown template variable '%.*s'",
					  line_no(t, tag_at), (int)name_len, t + name_at);
		if (kind == '#' || kind == '^') {
			bool nonempty = v->value && v->value[0];
			enum kf_status st =
			    render(t, len, pos, t + name_at, name_len,
				   emit && (kind == '#' ? nonempty : !nonempty), vars, n_vars, out, err);
			if (st)
				return st;
			continue;
		}
		/* Values go in verbatim and are never expanded again: LLM text may contain "{{". */
		if (emit && v->value && kf_buf_adds(out, v->value))
			return kf_err_set(err, KF_ERR_LIMIT, "prompt larger than %zu bytes", out->max);
	}
	if (closing)
		return kf_err_set(err, KF_ERR_INVALID, "section '%.*s' is never closed", (int)closing_len,
				  closing);
	return KF_OK;
}

enum kf_status kf_tmpl_render(const char *tmpl, size_t len, const struct kf_tmpl_var *vars, size_t n_vars,
			      struct kf_buf *out, struct kf_err *err)
{
	size_t pos = 0;
	return render(tmpl, len, &pos, NULL, 0, true, vars, n_vars, out, err);
}

/* ---- templates: embedded, or a file in the prompts folder (kf_prompt_set_dir, $KFORGE_PROMPTS) -- */

static char prompt_dir[4096]; /* set before the first template is read; "" = $KFORGE_PROMPTS */

void kf_prompt_set_dir(const char *dir)
{
	snprintf(prompt_dir, sizeof(prompt_dir), "%s", dir ? dir : "");
}

const char *kf_prompt_dir(void)
{
	const char *env = getenv("KFORGE_PROMPTS");
	return prompt_dir[0] ? prompt_dir : env && env[0] ? env : NULL;
}

struct tmpl_cache {
	char name[64];
	char *text;
	size_t len;
};
static struct tmpl_cache cache[48];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

const char *kf_prompt_template(const char *name, size_t *len, struct kf_err *err)
{
	const char *dir = kf_prompt_dir();
	char path[8192];
	const char *data;

	if (dir) {
		struct kf_buf b = KF_BUF_INIT(TEMPLATE_MAX_BYTES);
		struct kf_err ferr = KF_ERR_INIT;
		enum kf_status st;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		st = kf_buf_read_file(&b, path, &ferr);
		if (st == KF_OK) {
			struct tmpl_cache *slot = NULL;
			pthread_mutex_lock(&cache_lock);
			for (size_t i = 0; i < KF_ARRAY_SIZE(cache) && !slot; i++)
				if (!cache[i].text || !strcmp(cache[i].name, name))
					slot = &cache[i];
			if (!slot)
				slot = &cache[0];
			free(slot->text);
			snprintf(slot->name, sizeof(slot->name), "%s", name);
			slot->text = kf_buf_detach(&b, &slot->len);
			data = slot->text;
			if (len)
				*len = slot->len;
			pthread_mutex_unlock(&cache_lock);
			if (!data)
				kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			return data;
		}
		kf_buf_release(&b);
		if (st != KF_ERR_NOTFOUND) {
			kf_err_set(err, st, "%s", ferr.msg);
			return NULL;
		}
		/* not overridden: fall back to the built-in one */
	}
	snprintf(path, sizeof(path), "agent/prompts/%s", name);
	data = kf_embed_find(path, len);
	if (!data)
		kf_err_set(err, KF_ERR_NOTFOUND, "no prompt template '%s'", name);
	return data;
}

static enum kf_status render_named(const char *name, const struct kf_tmpl_var *vars, size_t n,
				   struct kf_buf *out, struct kf_err *err)
{
	size_t len = 0;
	const char *t = kf_prompt_template(name, &len, err);
	enum kf_status st;
	if (!t)
		return err ? err->code : KF_ERR_NOTFOUND;
	st = kf_tmpl_render(t, len, vars, n, out, err);
	if (st)
		kf_err_prefix(err, "template '%s'", name);
	return st;
}

/* ---- hidden shapes -------------------------------------------------------------------------- */

static bool shape_equal(const struct kf_shape *a, const struct kf_shape *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		int64_t v;
		if (!kf_shape_get(b, a->names[i], &v) || v != a->values[i])
			return false;
	}
	return true;
}

static bool shape_in(const struct kf_shape *s, const struct kf_shape *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (shape_equal(s, &set[i]))
			return true;
	return false;
}

static bool value_shown(const struct kf_task *t, int64_t v)
{
	for (size_t i = 0; i < t->n_public; i++)
		for (size_t d = 0; d < t->shapes_public[i].n; d++)
			if (t->shapes_public[i].values[d] == v)
				return true;
	for (size_t i = 0; i < t->n_timing; i++)
		if (!shape_in(&t->shapes_timing[i], t->shapes_hidden, t->n_hidden))
			for (size_t d = 0; d < t->shapes_timing[i].n; d++)
				if (t->shapes_timing[i].values[d] == v)
					return true;
	return false;
}

/* Is v a dim value only a hidden shape has? Small values (< 100) are left alone in free text: "3" is in
 * every compiler log; they are redacted where they appear as "DIM=v" instead. */
static bool hidden_value(const struct kf_task *t, int64_t v, bool any_size)
{
	if (!any_size && v < 100)
		return false;
	for (size_t i = 0; i < t->n_hidden; i++)
		for (size_t d = 0; d < t->shapes_hidden[i].n; d++) {
			int64_t h = t->shapes_hidden[i].values[d];
			/* N-1 is the last index of a dim of size N ("y[2, 4098]" gives N away): redact the
			 * neighbours of large hidden values too. */
			if ((h == v || (h >= 100 && (h == v + 1 || h == v - 1))) && !value_shown(t, h))
				return !value_shown(t, v);
		}
	return false;
}

/* Copies text (bounded, with a cut marker) into out with hidden-only dim values replaced by "?":
 * verifier messages and profiler text may name the shape they ran at. */
static enum kf_status add_redacted(struct kf_buf *out, const struct kf_task *t, const char *text, size_t max)
{
	struct kf_buf tmp = KF_BUF_INIT(max);
	size_t n = strlen(text), i = 0;
	enum kf_status st = kf_buf_add_truncated(&tmp, text, n);

	if (st)
		return st;
	while (!st && i < tmp.len) {
		const char *p = tmp.data + i;
		if (isdigit((unsigned char)*p) && (i == 0 || !isalnum((unsigned char)p[-1]))) {
			size_t j = 0;
			int64_t v = 0;
			bool eq;
			while (i + j < tmp.len && isdigit((unsigned char)p[j]) && j < 18)
				v = v * 10 + (p[j] - '0'), j++;
			eq = i > 0 && (p[-1] == '=' || (i > 1 && p[-1] == ' ' && p[-2] == ':'));
			if ((i + j >= tmp.len || !isalnum((unsigned char)p[j])) && hidden_value(t, v, eq))
				st = kf_buf_addch(out, '?');
			else
				st = kf_buf_add(out, p, j);
			i += j;
			continue;
		}
		st = kf_buf_addch(out, *p);
		i++;
	}
	kf_buf_release(&tmp);
	return st;
}

/* ---- task, target, examples, feedback ---------------------------------------------------------- */

static enum kf_status add_shapes(struct kf_buf *b, const struct kf_shape *s, size_t n,
				 const struct kf_task *t, bool skip_hidden)
{
	char line[KF_MAX_DIMS * (KF_NAME_MAX + 24)];
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < n && !st; i++) {
		if (skip_hidden && shape_in(&s[i], t->shapes_hidden, t->n_hidden))
			continue;
		kf_shape_format(&s[i], line, sizeof(line));
		st = kf_buf_addf(b, "- %s\n", line);
	}
	if (!st && b->len && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	return st;
}

static enum kf_status add_tensors(struct kf_buf *b, const struct kf_task *t)
{
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < t->n_tensors && !st; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		st = kf_buf_addf(b, "%s- %s: %s %s [", i ? "\n" : "", x->name, kf_role_name(x->role),
				 kf_dtype_name(x->dtype));
		for (size_t d = 0; d < x->rank && !st; d++)
			st = kf_buf_addf(b, "%s%s", d ? ", " : "", x->shape[d]);
		if (!st)
			st = kf_buf_addf(b, "] as `%s%s *`", x->role == KF_ROLE_INPUT ? "const " : "",
					 kf_dtype_ctype(x->dtype));
		if (!st && x->init.dist == KF_DIST_NORMAL)
			st = kf_buf_addf(b, ", typically normal(mean %g, std %g)", x->init.a, x->init.b);
		else if (!st && x->init.dist == KF_DIST_UNIFORM)
			st = kf_buf_addf(b, ", typically uniform in [%g, %g)", x->init.a, x->init.b);
		else if (!st && x->init.dist == KF_DIST_RANDINT)
			st = kf_buf_addf(b, ", typically integers in [%g, %g)", x->init.a, x->init.b);
		if (!st && x->has_domain)
			st = kf_buf_addf(b, ", values always in [%g, %g]", x->domain_lo, x->domain_hi);
		else if (!st && x->role != KF_ROLE_OUTPUT && kf_dtype_is_float(x->dtype))
			st = kf_buf_adds(b, " (any finite values may be tested)");
	}
	return st;
}

static enum kf_status add_params(struct kf_buf *b, const struct kf_task *t)
{
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < t->n_params && !st; i++) {
		const struct kf_param *p = &t->params[i];
		if (p->dtype == KF_DTYPE_F32 || p->dtype == KF_DTYPE_F64)
			st = kf_buf_addf(b, "%s- %s: %s = %.9g", i ? "\n" : "", p->name,
					 kf_dtype_name(p->dtype), p->value);
		else
			st = kf_buf_addf(b, "%s- %s: %s = %lld", i ? "\n" : "", p->name,
					 kf_dtype_name(p->dtype), (long long)p->ivalue);
	}
	return st;
}

static enum kf_status add_tolerance(struct kf_buf *b, const struct kf_task *t)
{
	bool seen[KF_DTYPE_COUNT] = {false};
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < t->n_tensors && !st; i++) {
		enum kf_dtype dt = t->tensors[i].dtype;
		struct kf_tol tol;
		if (t->tensors[i].role == KF_ROLE_INPUT || seen[dt])
			continue;
		seen[dt] = true;
		tol = kf_task_tolerance(t, dt);
		if (tol.atol == 0 && tol.rtol == 0)
			st = kf_buf_addf(b, "%s%s outputs must match exactly", b->len ? "; " : "",
					 kf_dtype_name(dt));
		else
			st = kf_buf_addf(b, "%s%s |out - ref| <= %g + %g*|ref| per element",
					 b->len ? "; " : "", kf_dtype_name(dt), tol.atol, tol.rtol);
		if (!st && tol.max_nmse > 0)
			st = kf_buf_addf(b, ", NMSE <= %g", tol.max_nmse);
	}
	return st;
}

static enum kf_status add_target(struct kf_buf *b, const struct kf_device_info *d, const char *arch)
{
	if (!d)
		return kf_buf_addf(
		    b,
		    "CUDA architecture %s (device limits unknown here: assume at most 1024 threads per "
		    "block and 48 KiB of shared memory per block without opt-in).",
		    arch ? arch : "sm_90");
	if (!strcmp(d->backend, "cpu"))
		return kf_buf_addf(
		    b,
		    "CUDA architecture %s. On this machine the kernel is verified on kforge's CPU backend "
		    "(%s, %d threads), which runs the same CUDA source but cannot run inline PTX, wmma/mma, "
		    "TMA, CUTLASS/CuTe or CUB: avoid them. Limits: at most %d threads per block, %d bytes "
		    "of shared memory per block.",
		    arch ? arch : "sm_90", d->name, d->sm_count, d->max_threads_per_block,
		    d->max_smem_per_block);
	return kf_buf_addf(
	    b,
	    "%s (%s, compute capability %d.%d), %d SMs, %.0f GiB global memory, %.0f MiB L2 cache.\n"
	    "Limits: %d threads per block, block dims up to (%d, %d, %d), grid up to (%d, %d, %d); "
	    "shared memory %d bytes per block by default, %d with the opt-in attribute.\n"
	    "Clocks: SM %d MHz, memory %d MHz on a %d-bit bus.",
	    d->name, d->arch, d->cc_major, d->cc_minor, d->sm_count,
	    (double)d->global_mem_bytes / (1024.0 * 1024 * 1024), (double)d->l2_bytes / (1024.0 * 1024),
	    d->max_threads_per_block, d->max_block[0], d->max_block[1], d->max_block[2], d->max_grid[0],
	    d->max_grid[1], d->max_grid[2], d->max_smem_per_block, d->max_smem_per_block_optin,
	    d->sm_clock_khz / 1000, d->mem_clock_khz / 1000, d->mem_bus_width_bits);
}

static enum kf_status add_examples(struct kf_buf *b, const struct kf_prompt_input *in, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	size_t n = in->n_examples < EXAMPLES_MAX ? in->n_examples : EXAMPLES_MAX;
	for (size_t i = 0; i < n && !st; i++) {
		const struct kf_prompt_example *e = &in->examples[i];
		struct kf_buf src = KF_BUF_INIT(EXAMPLE_MAX);
		char num[16], speed[32] = "";
		snprintf(num, sizeof(num), "%zu", i + 1);
		if (e->speedup > 0)
			snprintf(speed, sizeof(speed), "%.2fx", e->speedup);
		st =
		    kf_buf_add_truncated(&src, e->source ? e->source : "", e->source ? strlen(e->source) : 0);
		if (!st) {
			struct kf_tmpl_var v[] = {
			    {"n", num},        {"task", e->task_name}, {"speedup", speed},
			    {"tags", e->tags}, {"change", e->change},  {"source", src.data}};
			if (i)
				st = kf_buf_addch(b, '\n');
			if (!st)
				st = render_named("example.txt", v, KF_ARRAY_SIZE(v), b, err);
		}
		kf_buf_release(&src);
	}
	if (st && err && !err->code)
		kf_err_set(err, st, "examples do not fit in the prompt");
	return st;
}

static enum kf_status add_feedback(struct kf_buf *b, const struct kf_prompt_input *in, struct kf_err *err)
{
	const struct kf_prompt_feedback *f = in->feedback;
	const struct kf_task *t = in->task;
	struct kf_buf log = KF_BUF_INIT(COMPILE_LOG_MAX + 64), check = KF_BUF_INIT(CHECK_TEXT_MAX + 64),
		      prof = KF_BUF_INIT(PROFILE_MAX + 64), edits = KF_BUF_INIT(512);
	char shape[KF_MAX_DIMS * (KF_NAME_MAX + 24)] = "", maxerr[64] = "";
	enum kf_status st = KF_OK;

	if (f->compile_log && f->compile_log[0])
		st = add_redacted(&log, t, f->compile_log, COMPILE_LOG_MAX);
	if (!st && f->failing_check && f->failing_check[0])
		st = add_redacted(&check, t, f->failing_check, CHECK_TEXT_MAX);
	if (!st && f->profile_text && f->profile_text[0])
		st = add_redacted(&prof, t, f->profile_text, PROFILE_MAX);
	if (!st && f->failing_shape) {
		/* Never show a hidden shape: say only that it was one. */
		if (shape_in(f->failing_shape, t->shapes_hidden, t->n_hidden))
			snprintf(shape, sizeof(shape), "one of the hidden shapes (not shown)");
		else {
			struct kf_buf sb = KF_BUF_INIT(sizeof(shape) - 1);
			char raw[sizeof(shape)];
			kf_shape_format(f->failing_shape, raw, sizeof(raw));
			st = add_redacted(&sb, t, raw, sizeof(shape) - 64);
			snprintf(shape, sizeof(shape), "%s", sb.data);
			kf_buf_release(&sb);
		}
	}
	if (!st && f->max_error >= 0 && !f->correct && (f->failing_check || f->failing_shape))
		snprintf(maxerr, sizeof(maxerr), "%.6g", f->max_error);
	if (!st && f->edits_unmatched > 0)
		st = kf_buf_addf(&edits,
				 "Note: %d of your %d SEARCH/REPLACE edits in the last reply about this "
				 "kernel did not match it, "
				 "so that reply was not evaluated; SEARCH text must be copied exactly.",
				 f->edits_unmatched, f->edits_total);
	if (!st) {
		/* Correctness first; profiler detail only once the kernel is correct. */
		if (f->correct) {
			struct kf_tmpl_var v[] = {{"profile", prof.data}, {"edits", edits.data}};
			st = render_named("feedback_correct.txt", v, KF_ARRAY_SIZE(v), b, err);
		} else {
			struct kf_tmpl_var v[] = {{"verdict", f->verdict},   {"check", check.data},
						  {"shape", shape},          {"max_error", maxerr},
						  {"compile_log", log.data}, {"edits", edits.data}};
			st = render_named("feedback_wrong.txt", v, KF_ARRAY_SIZE(v), b, err);
		}
	} else if (err) {
		kf_err_set(err, st, "feedback does not fit in the prompt");
	}
	kf_buf_release(&log);
	kf_buf_release(&check);
	kf_buf_release(&prof);
	kf_buf_release(&edits);
	return st;
}

static enum kf_status add_source(struct kf_buf *b, const char *src);

/* ---- target facts, the baseline, the playbook ----------------------------------------------------- */

static void tflops(char *out, size_t n, double f)
{
	if (f >= 1e12)
		snprintf(out, n, "%.0f", f / 1e12);
	else
		snprintf(out, n, "%.2f", f / 1e12);
}

/* The target's figures an expert keeps in mind: bandwidth, peaks per dtype on CUDA and tensor cores,
 * per-SM resources, L2, the ridge point. From the device when there is one, else the roofline table's
 * representative part of the arch. */
static enum kf_status add_facts(struct kf_buf *b, const struct kf_device_info *d, const char *arch,
				const char *clock)
{
	struct kf_peaks dev;
	const struct kf_peaks *pk = NULL;
	bool gpu = d && !strcmp(d->backend, "cuda");
	const char *a = gpu && d->arch[0] ? d->arch : arch ? arch : "sm_90";
	const struct kf_arch_limits *L = kf_arch_limits_find(a);
	enum kf_status st = KF_OK;
	char f64[16], f32[16], tf32[16], f16[16], f8[16];
	int sms = 0;
	double l2 = 0;

	if (gpu && !kf_peaks_from_device(d->name, d->arch, d->sm_count, d->sm_clock_khz, d->mem_clock_khz,
					 d->mem_bus_width_bits, &dev, NULL)) {
		pk = &dev;
		sms = d->sm_count;
		l2 = (double)d->l2_bytes;
	} else {
		pk = kf_peaks_table_guess(gpu ? d->name : NULL, a);
		if (pk) {
			sms = pk->sm_count;
			l2 = pk->l2_bytes;
		}
	}
	if (!pk)
		return KF_OK; /* an arch the table does not know: no facts rather than wrong ones */
	tflops(f64, sizeof(f64), pk->flops[KF_PEAK_F64]);
	tflops(f32, sizeof(f32), pk->flops[KF_PEAK_F32]);
	tflops(tf32, sizeof(tf32), pk->flops[KF_PEAK_TF32_TC]);
	tflops(f16, sizeof(f16), pk->flops[KF_PEAK_F16_TC]);
	/* FP8 tensor cores exist from sm_89 on, at twice the FP16 rate */
	bool fp8 = strncmp(pk->arch, "sm_8", 4) ? strcmp(pk->arch, "sm_80") != 0 : !strcmp(pk->arch, "sm_89");
	tflops(f8, sizeof(f8), 2 * pk->flops[KF_PEAK_F16_TC]);
	st = kf_buf_addf(b, "Target facts (%s, %s; %s):\n- DRAM bandwidth %.2f TB/s", pk->name, pk->arch,
			 gpu ? "from the device" : "datasheet peaks, dense", pk->dram_bytes_per_s / 1e12);
	if (!st && sms)
		st = kf_buf_addf(b, "; %d SMs", sms);
	if (!st && l2 > 0)
		st = kf_buf_addf(b, "; L2 %.0f MiB", l2 / (1024.0 * 1024.0));
	if (!st)
		st = kf_buf_addf(b,
				 "\n- CUDA cores: FP32 %s TFLOP/s, FP64 %s TFLOP/s; tensor cores: TF32 %s, "
				 "FP16/BF16 %s%s%s "
				 "TFLOP/s (FP32 accumulate)",
				 f32, f64, tf32, f16, fp8 ? ", FP8 " : "", fp8 ? f8 : "");
	if (!st && L)
		st = kf_buf_addf(b,
				 "\n- per SM: %d KiB shared memory (%d KiB per block with the opt-in), %d "
				 "32-bit registers "
				 "(at most %d per thread), %d threads, %d blocks",
				 L->smem_per_sm_bytes / 1024, L->max_smem_per_block_bytes / 1024,
				 L->regs_per_sm, L->max_regs_per_thread, L->max_warps_per_sm * L->warp_size,
				 L->max_blocks_per_sm);
	if (!st && pk->dram_bytes_per_s > 0)
		st = kf_buf_addf(
		    b,
		    "\n- ridge point: %.0f FLOP/byte on FP32 CUDA cores, %.0f on FP16 tensor cores (below it "
		    "a kernel is memory-bound)",
		    pk->flops[KF_PEAK_F32] / pk->dram_bytes_per_s,
		    pk->flops[KF_PEAK_F16_TC] / pk->dram_bytes_per_s);
	if (!st && clock && !strcmp(clock, "model"))
		st = kf_buf_adds(
		    b, "\n- This run has no GPU: kernels are verified on kforge's CPU backend and ranked by "
		       "its GPU "
		       "cost model (\"model\" figures: predicted from the memory traffic per warp, L2 reuse, "
		       "shared-memory bank conflicts, occupancy and instruction counts of an instrumented "
		       "run, not "
		       "measured on a GPU). Optimize for the GPU: coalesced accesses, data reuse, few bank "
		       "conflicts, "
		       "enough warps.");
	if (!st && clock && !strcmp(clock, "cpu"))
		st = kf_buf_adds(
		    b,
		    "\n- This run has no GPU: kernels are verified and timed on kforge's CPU backend, so "
		    "every "
		    "time and speedup it reports is a CPU-clock figure, not GPU speed. Optimize for the GPU "
		    "above all the same.");
	return st;
}

/* "cuBLAS" for "cublas.gemm", "cuBLASLt" for "cublasLt.matmul", "cuDNN" for "cudnn.conv_fwd". */
static const char *library_name(const char *op)
{
	if (!strncmp(op, "cublasLt.", 9))
		return "cuBLASLt";
	if (!strncmp(op, "cublas.", 7))
		return "cuBLAS";
	if (!strncmp(op, "cudnn.", 6))
		return "cuDNN";
	return "the library";
}

/* The task's baselines as part of the target: on a GPU their times at the shape ("cuBLAS takes X us
 * here"); on the cpu backend only the CPU-clock ratio to the reference, said to be one, and for a library
 * call that cannot run there no number at all. Baselines that were rejected or failed are left out. */
static enum kf_status add_vs(struct kf_buf *b, const struct kf_prompt_baseline *bl)
{
	bool cpu = bl->clock && !strcmp(bl->clock, "cpu");
	enum kf_status st = KF_OK;
	int shown = 0, timed = 0;
	for (size_t i = 0; i < bl->n_baselines && i < KF_ARRAY_SIZE(bl->baselines) && !st; i++) {
		const struct kf_prompt_vs *v = &bl->baselines[i];
		char t[32], who[200];
		bool is_timed = v->median_ns > 0 && v->ratio > 0;
		if (!v->name)
			continue;
		if (v->library)
			snprintf(who, sizeof(who), "%s (`%s`, the library call a user would otherwise run)",
				 library_name(v->name), v->name);
		else
			snprintf(who, sizeof(who), "`%s` (a tuned kernel shipped with the task)", v->name);
		kf_format_ns(v->median_ns, t, sizeof(t));
		if (is_timed && !cpu)
			st = kf_buf_addf(
			    b, "\n- %s takes %s here (median, GPU clock): %.2fx the reference's time", who, t,
			    v->ratio);
		else if (is_timed)
			st = kf_buf_addf(
			    b,
			    "\n- %s took %.2fx the reference's time here on the CPU clock (kforge's "
			    "CPU backend: not a GPU time; a CPU-clock ratio says little about the GPU, "
			    "where warp-level code, slow on CPU fibers, pays off)",
			    who, v->ratio);
		else if (v->library && cpu && v->status && !strcmp(v->status, "unavailable"))
			st = kf_buf_addf(b, "\n- %s cannot run on the CPU backend: no time for it here", who);
		else
			continue;
		shown++;
		timed += is_timed;
	}
	if (!st && timed && !cpu)
		st = kf_buf_adds(b,
				 "\n- the target is to beat the fastest of these: a kernel slower than what "
				 "a user already has is no win");
	else if (!st && shown && cpu)
		st = kf_buf_adds(b, "\n- on the GPU, the target is to beat these");
	return st;
}

static enum kf_status add_baseline(struct kf_buf *b, const struct kf_task *t,
				   const struct kf_prompt_baseline *bl)
{
	char ref[32], floor[32];
	enum kf_status st = KF_OK;
	struct kf_buf shape = KF_BUF_INIT(512);
	if (!bl || (bl->ref_ns <= 0 && bl->floor_ns <= 0 && !bl->n_baselines))
		return KF_OK;
	if (bl->shape && (st = add_redacted(&shape, t, bl->shape, 400)))
		return st;
	kf_format_ns(bl->ref_ns, ref, sizeof(ref));
	kf_format_ns(bl->floor_ns, floor, sizeof(floor));
	st = kf_buf_addf(b, "At the shape this run times%s%s:", shape.len ? ", " : "", shape.data);
	if (!st && bl->ref_ns > 0)
		st = kf_buf_addf(b, "\n- the reference takes %s (median%s)", ref,
				 bl->clock && !strcmp(bl->clock, "cpu")
				     ? "; CPU clock, kforge's CPU backend: not a GPU time"
				     : ", GPU clock");
	if (!st && bl->floor_ns > 0)
		st = kf_buf_addf(
		    b,
		    "\n- the roofline floor on the target is %s (%s-bound at the peaks of %s): no kernel can "
		    "be faster",
		    floor, bl->bound ? bl->bound : "memory", bl->peaks ? bl->peaks : "the target");
	if (!st && bl->ref_ns > 0 && bl->floor_ns > 0 && bl->clock && strcmp(bl->clock, "cpu"))
		st = kf_buf_addf(b, "\n- so the reference runs at %.0f%% of the speed of light",
				 100.0 * bl->floor_ns / bl->ref_ns);
	if (!st)
		st = add_vs(b, bl);
	kf_buf_release(&shape);
	return st;
}

const char *kf_prompt_playbook(const char *category)
{
	static const struct {
		const char *prefix, *file;
	} map[] = {
	    {"gemm", "playbook_gemm.txt"},
	    {"mlp", "playbook_gemm.txt"},
	    {"gemv", "playbook_reduction.txt"},
	    {"reduction", "playbook_reduction.txt"},
	    {"loss", "playbook_reduction.txt"},
	    {"pool", "playbook_reduction.txt"},
	    {"softmax", "playbook_norm.txt"},
	    {"norm", "playbook_norm.txt"},
	    {"activation", "playbook_elementwise.txt"},
	    {"elementwise", "playbook_elementwise.txt"},
	    {"layout", "playbook_elementwise.txt"},
	    {"gather", "playbook_elementwise.txt"},
	    {"conv", "playbook_conv.txt"},
	    {"attention", "playbook_attention.txt"},
	    {"transformer", "playbook_attention.txt"},
	    {"scan", "playbook_scan.txt"},
	    {"ssm", "playbook_scan.txt"},
	    {"rnn", "playbook_scan.txt"},
	};
	for (size_t i = 0; category && i < KF_ARRAY_SIZE(map); i++)
		if (!strncmp(category, map[i].prefix, strlen(map[i].prefix)))
			return map[i].file;
	return "playbook_other.txt";
}

/* ---- the run's memory: strategy, history, best kernels, inspiration, lessons ------------------------- */

static enum kf_status add_line_redacted(struct kf_buf *b, const struct kf_task *t, const char *text,
					size_t max)
{
	/* one line: newlines in model text or verifier messages become spaces */
	struct kf_buf tmp = KF_BUF_INIT(max + 64);
	enum kf_status st = add_redacted(&tmp, t, text, max);
	for (size_t i = 0; i < tmp.len; i++)
		if (tmp.data[i] == '\n' || tmp.data[i] == '\r')
			tmp.data[i] = ' ';
	if (!st)
		st = kf_buf_add(b, tmp.data, tmp.len);
	kf_buf_release(&tmp);
	return st;
}

static enum kf_status add_history(struct kf_buf *b, const struct kf_prompt_input *in)
{
	enum kf_status st = KF_OK;
	size_t n = in->n_history, first = n > HISTORY_MAX ? n - HISTORY_MAX : 0;
	for (size_t i = first; i < n && !st; i++) {
		const struct kf_prompt_attempt *a = &in->history[i];
		char from[40];
		if (a->parent_id)
			snprintf(from, sizeof(from), "#%lld", (long long)a->parent_id);
		else
			snprintf(from, sizeof(from), "the reference");
		if (a->id)
			st =
			    kf_buf_addf(b, "%s- #%lld (from %s)", b->len ? "\n" : "", (long long)a->id, from);
		else
			st = kf_buf_addf(b, "%s- a reply to %s", b->len ? "\n" : "", from);
		if (!st && a->rationale && a->rationale[0]) {
			st = kf_buf_adds(b, ": \"");
			if (!st)
				st = add_line_redacted(b, in->task, a->rationale, NOTE_MAX);
			if (!st)
				st = kf_buf_adds(b, "\"");
		}
		if (!st)
			st = kf_buf_addf(b, " -> %s", a->verdict ? a->verdict : "?");
		if (!st && a->speedup > 0)
			st = kf_buf_addf(b, ", %.2fx (%s)", a->speedup, clock_label(in->clock));
		if (!st && a->note && a->note[0]) {
			st = kf_buf_adds(b, ": ");
			if (!st)
				st = add_line_redacted(b, in->task, a->note, NOTE_MAX);
		}
	}
	return st;
}

static enum kf_status add_kernel(struct kf_buf *b, const struct kf_prompt_example *e, bool with_source,
				 const char *clock)
{
	enum kf_status st = kf_buf_addf(b, "%s### ", b->len ? "\n\n" : "");
	if (!st && e->task_name)
		st = kf_buf_addf(b, "%s ", e->task_name);
	if (!st && e->speedup > 0)
		st = kf_buf_addf(b, "%.2fx over the reference (%s)", e->speedup, clock_label(clock));
	if (!st && e->tags && e->tags[0])
		st = kf_buf_addf(b, "; techniques: %s", e->tags);
	if (!st && e->change && e->change[0]) {
		struct kf_buf c = KF_BUF_INIT(NOTE_MAX + 8);
		kf_buf_add_truncated(&c, e->change, strlen(e->change));
		for (size_t i = 0; i < c.len; i++)
			if (c.data[i] == '\n')
				c.data[i] = ' ';
		st = kf_buf_addf(b, "\nWhat it changed: %s", c.data);
		kf_buf_release(&c);
	}
	if (!st && with_source && e->source) {
		st = kf_buf_adds(b, "\n```cuda\n");
		if (!st) {
			struct kf_buf src = KF_BUF_INIT(EXAMPLE_MAX);
			st = add_source(&src, e->source);
			if (!st)
				st = kf_buf_add(b, src.data, src.len);
			kf_buf_release(&src);
		}
		if (!st)
			st = kf_buf_adds(b, "\n```");
	}
	return st;
}

static enum kf_status add_lessons(struct kf_buf *b, const struct kf_prompt_input *in)
{
	enum kf_status st = KF_OK;
	size_t n = in->n_lessons < LESSONS_MAX ? in->n_lessons : LESSONS_MAX;
	for (size_t i = 0; i < n && !st; i++) {
		const struct kf_prompt_lesson *l = &in->lessons[i];
		st = kf_buf_addf(b, "%s- %s%s%stried \"", i ? "\n" : "", l->task_name ? "[" : "",
				 l->task_name ? l->task_name : "", l->task_name ? "] " : "");
		if (!st)
			st = add_line_redacted(b, in->task, l->tried ? l->tried : "", NOTE_MAX);
		if (!st)
			st = kf_buf_addf(b, "\" -> %s", l->verdict ? l->verdict : "?");
		if (!st && l->outcome && l->outcome[0]) {
			st = kf_buf_adds(b, ": ");
			if (!st)
				st = add_line_redacted(b, in->task, l->outcome, NOTE_MAX);
		}
	}
	return st;
}

static enum kf_status add_source(struct kf_buf *b, const char *src)
{
	size_t n = strlen(src);
	while (n && (src[n - 1] == '\n' || src[n - 1] == '\r'))
		n--; /* the template puts the closing fence on its own line */
	return kf_buf_add_truncated(b, src, n);
}

/* Rendered pieces end where their template ended; the outer template sets the spacing. */
static void trim_nl(struct kf_buf *b)
{
	while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == ' '))
		b->data[--b->len] = '\0';
}

/* Every buffer one prompt is built from (all bounded). */
struct parts {
	struct kf_buf grammar, answer, rules, dims, pub, timing, tensors, params, tol, work, target, facts,
	    baseline, playbook, ref, examples, examples_cpu, parent, feedback, level, strategy, history, best,
	    inspiration, lessons, job;
};

static void parts_init(struct parts *p)
{
	struct kf_buf *b = (struct kf_buf *)p;
	for (size_t i = 0; i < sizeof(*p) / sizeof(*b); i++)
		kf_buf_init(&b[i], FIELD_MAX);
	p->ref.max = p->parent.max = SOURCE_MAX;
	p->examples.max = EXAMPLES_MAX * (EXAMPLE_MAX + 1024);
	p->best.max = BEST_MAX * (EXAMPLE_MAX + 1024);
	p->inspiration.max = EXAMPLE_MAX + 1024;
}

static void parts_release(struct parts *p)
{
	struct kf_buf *b = (struct kf_buf *)p;
	for (size_t i = 0; i < sizeof(*p) / sizeof(*b); i++)
		kf_buf_release(&b[i]);
}

/* The system message and the static part of the user message (the same for every request of a run). */
static enum kf_status build_static(const struct kf_prompt_input *in, enum kf_edit_mode mode, struct parts *p,
				   struct kf_buf *system, struct kf_buf *user, struct kf_err *err)
{
	const struct kf_task *t = in->task;
	enum kf_status st;

	st = render_named("grammar.txt", NULL, 0, &p->grammar, err);
	if (!st)
		st = render_named("rules.txt", NULL, 0, &p->rules, err);
	if (!st)
		st = render_named(mode == KF_EDIT_DIFF ? "edit_diff.txt" : "edit_full.txt", NULL, 0,
				  &p->answer, err);
	if (!st)
		st = render_named(kf_prompt_playbook(t->category), NULL, 0, &p->playbook, err);
	if (st)
		return st;
	for (size_t i = 0; i < t->n_dims && !st; i++)
		st = kf_buf_addf(&p->dims, "%s%s", i ? ", " : "", t->dims[i]);
	/* the task's constraints are preconditions the kernel may rely on (a vector width, a tile) */
	for (size_t i = 0, n = 0; i < t->n_dims && i < KF_MAX_DIMS && !st; i++) {
		const struct kf_dim_constraint *c = &t->constraints[i];
		if (!c->set)
			continue;
		st = kf_buf_addf(&p->dims, "%s", n++ ? ", " : "; preconditions you may rely on: ");
		if (!st && c->multiple_of > 1)
			st =
			    kf_buf_addf(&p->dims, "%s %% %lld == 0, ", t->dims[i], (long long)c->multiple_of);
		if (!st)
			st = kf_buf_addf(&p->dims, "%lld <= %s", (long long)c->min, t->dims[i]);
		if (!st && c->max < KF_TASK_MAX_DIM_VALUE)
			st = kf_buf_addf(&p->dims, " <= %lld", (long long)c->max);
	}
	if (!st)
		st = add_shapes(&p->pub, t->shapes_public, t->n_public, t, false);
	if (!st)
		st = add_shapes(&p->timing, t->shapes_timing, t->n_timing, t, true);
	if (!st)
		st = add_tensors(&p->tensors, t);
	if (!st)
		st = add_params(&p->params, t);
	if (!st)
		st = add_tolerance(&p->tol, t);
	if (!st && (t->flops || t->bytes))
		st = kf_buf_addf(&p->work, "%s%s%s%s%s", t->flops ? "flops = " : "", t->flops ? t->flops : "",
				 t->flops && t->bytes ? ", " : "", t->bytes ? "minimum bytes moved = " : "",
				 t->bytes ? t->bytes : "");
	if (!st)
		st = add_target(&p->target, in->device, in->arch);
	if (!st)
		st = add_facts(&p->facts, in->device, in->arch, in->clock);
	if (!st)
		st = add_baseline(&p->baseline, t, in->baseline);
	if (!st)
		st = add_source(&p->ref, in->reference_source);
	if (!st)
		st = kf_buf_addf(&p->level, "%d", t->level);
	if (st)
		return kf_err_set(err, st, "task text does not fit in the prompt");
	trim_nl(&p->grammar);
	trim_nl(&p->rules);
	trim_nl(&p->answer);
	trim_nl(&p->playbook);
	{
		struct kf_tmpl_var sv[] = {
		    {"grammar", p->grammar.data}, {"rules", p->rules.data}, {"answer_format", ""}};
		st = render_named("system.txt", sv, KF_ARRAY_SIZE(sv), system, err);
	}
	if (!st) {
		struct kf_tmpl_var tv[] = {
		    {"title", t->title},
		    {"name", t->name},
		    {"category", t->category},
		    {"level", p->level.data},
		    {"description", t->description},
		    {"dims", p->dims.data},
		    {"public_shapes", p->pub.data},
		    {"timing_shapes", p->timing.data},
		    {"tensors", p->tensors.data},
		    {"params", p->params.data},
		    {"tolerance", p->tol.data},
		    {"work", p->work.data},
		    {"target", p->target.data},
		    {"facts", p->facts.data},
		    {"baseline", p->baseline.data},
		    {"playbook", p->playbook.data},
		    {"reference", p->ref.data},
		};
		st = render_named("task.txt", tv, KF_ARRAY_SIZE(tv), user, err);
	}
	if (!st) {
		trim_nl(user);
		st = kf_buf_adds(user, "\n\n");
	}
	return st;
}

enum kf_status kf_prompt_build(const struct kf_prompt_input *in, struct kf_buf *system, struct kf_buf *user,
			       size_t *user_static, struct kf_err *err)
{
	const struct kf_task *t = in->task;
	enum kf_edit_mode mode = in->parent_source ? in->mode : KF_EDIT_FULL;
	bool cpu = in->clock && !strcmp(in->clock, "cpu");
	struct parts p;
	enum kf_status st;

	if (!t || !in->reference_source)
		return kf_err_set(err, KF_ERR_INVALID, "a prompt needs a task and its reference source");
	kf_err_clear(err);
	parts_init(&p);
	if ((st = build_static(in, mode, &p, system, user, err)))
		goto out;
	if (user_static)
		*user_static = user->len;
	if (in->parent_source)
		st = add_source(&p.parent, in->parent_source);
	if (!st && in->strategy)
		st = kf_buf_add_truncated(&p.strategy, in->strategy, strlen(in->strategy));
	if (!st && in->n_history)
		st = add_history(&p.history, in);
	for (size_t i = 0; !st && i < in->n_best && i < BEST_MAX; i++)
		st = add_kernel(&p.best, &in->best[i], i == 0, in->clock);
	if (!st && in->inspiration)
		st = add_kernel(&p.inspiration, in->inspiration, true, in->clock);
	if (!st && in->n_lessons)
		st = add_lessons(&p.lessons, in);
	if (!st && in->n_examples && cpu)
		st = kf_buf_adds(
		    &p.examples_cpu,
		    "Their speedups are CPU-clock ratios from kforge's CPU backend (the same CUDA source run "
		    "on the CPU): they say nothing about GPU speed, and what wins on the CPU can lose on a "
		    "GPU.");
	if (st) {
		kf_err_set(err, st, "the run's memory does not fit in the prompt");
		goto out;
	}
	if (in->n_examples && in->examples)
		st = add_examples(&p.examples, in, err);
	if (!st && in->feedback && in->parent_source)
		st = add_feedback(&p.feedback, in, err);
	if (st)
		goto out;
	trim_nl(&p.examples);
	trim_nl(&p.feedback);
	{
		bool correct = in->feedback && in->feedback->correct;
		struct kf_tmpl_var uv[] = {
		    {"strategy", p.strategy.data},
		    {"examples", p.examples.data},
		    {"examples_cpu", p.examples_cpu.data},
		    {"lessons", p.lessons.data},
		    {"run_best", p.best.data},
		    {"inspiration", p.inspiration.data},
		    {"parent", p.parent.data},
		    {"history", p.history.data},
		    {"feedback", p.feedback.data},
		    {"correct", correct ? "yes" : ""},
		    {"variant", in->variant},
		    {"answer_format", p.answer.data},
		};
		st = render_named("user.txt", uv, KF_ARRAY_SIZE(uv), user, err);
	}
out:
	parts_release(&p);
	return st;
}

enum kf_status kf_prompt_build_strategies(const struct kf_prompt_input *in, int k, struct kf_buf *system,
					  struct kf_buf *user, size_t *user_static, struct kf_err *err)
{
	struct parts p;
	char kk[16];
	enum kf_status st;
	if (!in->task || !in->reference_source)
		return kf_err_set(err, KF_ERR_INVALID, "a prompt needs a task and its reference source");
	kf_err_clear(err);
	parts_init(&p);
	st = build_static(in, KF_EDIT_FULL, &p, system, user, err);
	if (!st && user_static)
		*user_static = user->len;
	snprintf(kk, sizeof(kk), "%d", k);
	if (!st) {
		struct kf_tmpl_var v[] = {{"k", kk}};
		st = render_named("strategies.txt", v, KF_ARRAY_SIZE(v), user, err);
	}
	parts_release(&p);
	return st;
}
