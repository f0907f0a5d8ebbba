/* Prompt building: a small {{name}} / {{#name}}...{{/name}} template renderer, and the builder that fills
 * the templates in agent/prompts/ with the task (public shapes only: hidden shapes and their values never
 * reach the LLM), the reference, the grammar, the target, knowledge-base examples and the parent's feedback.
 */
#include "agent.h"
#include "embed.h"

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

/* ---- the renderer ----------------------------------------------------------------------------- */

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

/* ---- templates: embedded, or a file in $KFORGE_PROMPTS ---------------------------------------- */

struct tmpl_cache {
	char name[64];
	char *text;
	size_t len;
};
static struct tmpl_cache cache[16];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

const char *kf_prompt_template(const char *name, size_t *len, struct kf_err *err)
{
	const char *dir = getenv("KFORGE_PROMPTS");
	char path[4096];
	const char *data;

	if (dir && dir[0]) {
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
		st = kf_buf_addf(
		    &edits,
		    "Note: %d of your %d SEARCH/REPLACE edits did not match the parent and were skipped; "
		    "SEARCH text must be copied exactly.",
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

enum kf_status kf_prompt_build(const struct kf_prompt_input *in, struct kf_buf *system, struct kf_buf *user,
			       struct kf_err *err)
{
	const struct kf_task *t = in->task;
	enum kf_edit_mode mode = in->parent_source ? in->mode : KF_EDIT_FULL;
	struct kf_buf grammar = KF_BUF_INIT(TEMPLATE_MAX_BYTES), answer = KF_BUF_INIT(TEMPLATE_MAX_BYTES);
	struct kf_buf dims = KF_BUF_INIT(FIELD_MAX), pub = KF_BUF_INIT(FIELD_MAX),
		      timing = KF_BUF_INIT(FIELD_MAX);
	struct kf_buf tensors = KF_BUF_INIT(FIELD_MAX), params = KF_BUF_INIT(FIELD_MAX),
		      tol = KF_BUF_INIT(FIELD_MAX);
	struct kf_buf work = KF_BUF_INIT(FIELD_MAX), target = KF_BUF_INIT(FIELD_MAX),
		      ref = KF_BUF_INIT(SOURCE_MAX);
	struct kf_buf examples = KF_BUF_INIT(EXAMPLES_MAX * (EXAMPLE_MAX + 1024)),
		      parent = KF_BUF_INIT(SOURCE_MAX);
	struct kf_buf feedback = KF_BUF_INIT(FIELD_MAX), level = KF_BUF_INIT(16);
	enum kf_status st = KF_OK;

	if (!t || !in->reference_source)
		return kf_err_set(err, KF_ERR_INVALID, "a prompt needs a task and its reference source");
	kf_err_clear(err);

	st = render_named("grammar.txt", NULL, 0, &grammar, err);
	if (!st)
		st = render_named(mode == KF_EDIT_DIFF ? "edit_diff.txt" : "edit_full.txt", NULL, 0, &answer,
				  err);
	if (st)
		goto out;
	for (size_t i = 0; i < t->n_dims && !st; i++)
		st = kf_buf_addf(&dims, "%s%s", i ? ", " : "", t->dims[i]);
	if (!st)
		st = add_shapes(&pub, t->shapes_public, t->n_public, t, false);
	if (!st)
		st = add_shapes(&timing, t->shapes_timing, t->n_timing, t, true);
	if (!st)
		st = add_tensors(&tensors, t);
	if (!st)
		st = add_params(&params, t);
	if (!st)
		st = add_tolerance(&tol, t);
	if (!st && (t->flops || t->bytes))
		st = kf_buf_addf(&work, "%s%s%s%s%s", t->flops ? "flops = " : "", t->flops ? t->flops : "",
				 t->flops && t->bytes ? ", " : "", t->bytes ? "minimum bytes moved = " : "",
				 t->bytes ? t->bytes : "");
	if (!st)
		st = add_target(&target, in->device, in->arch);
	if (!st)
		st = add_source(&ref, in->reference_source);
	if (!st && in->parent_source)
		st = add_source(&parent, in->parent_source);
	if (!st)
		st = kf_buf_addf(&level, "%d", t->level);
	if (st) {
		kf_err_set(err, st, "task text does not fit in the prompt");
		goto out;
	}
	if (in->n_examples && in->examples)
		st = add_examples(&examples, in, err);
	if (!st && in->feedback && in->parent_source)
		st = add_feedback(&feedback, in, err);
	if (st)
		goto out;
	trim_nl(&grammar);
	trim_nl(&answer);
	trim_nl(&examples);
	trim_nl(&feedback);
	{
		struct kf_tmpl_var sv[] = {{"grammar", grammar.data}, {"answer_format", answer.data}};
		st = render_named("system.txt", sv, KF_ARRAY_SIZE(sv), system, err);
	}
	if (!st) {
		bool correct = in->feedback && in->feedback->correct;
		struct kf_tmpl_var uv[] = {
		    {"title", t->title},
		    {"name", t->name},
		    {"category", t->category},
		    {"level", level.data},
		    {"description", t->description},
		    {"dims", dims.data},
		    {"public_shapes", pub.data},
		    {"timing_shapes", timing.data},
		    {"tensors", tensors.data},
		    {"params", params.data},
		    {"tolerance", tol.data},
		    {"work", work.data},
		    {"target", target.data},
		    {"reference", ref.data},
		    {"examples", examples.data},
		    {"parent", parent.data},
		    {"feedback", feedback.data},
		    {"correct", correct ? "yes" : ""},
		    {"answer_format", answer.data},
		};
		st = render_named("user.txt", uv, KF_ARRAY_SIZE(uv), user, err);
	}
out:
	kf_buf_release(&grammar);
	kf_buf_release(&answer);
	kf_buf_release(&dims);
	kf_buf_release(&pub);
	kf_buf_release(&timing);
	kf_buf_release(&tensors);
	kf_buf_release(&params);
	kf_buf_release(&tol);
	kf_buf_release(&work);
	kf_buf_release(&target);
	kf_buf_release(&ref);
	kf_buf_release(&examples);
	kf_buf_release(&parent);
	kf_buf_release(&feedback);
	kf_buf_release(&level);
	return st;
}
