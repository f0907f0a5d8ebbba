/* `kforge export --header`: a C/C++ header with the kernel source and a launcher that runs the launch plan
 * through the CUDA runtime API exactly as kforge's harness does (the same argument bytes through
 * cudaLaunchKernel's void **args, grid, block and dynamic shared memory from the directives' expressions,
 * scratch buffers carved from one workspace, launches in file order on one stream). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/export_int.h"

#define ADD(...)                                                                                             \
	do {                                                                                                 \
		if (!st)                                                                                     \
			st = kf_buf_addf(b, __VA_ARGS__);                                                    \
	} while (0)

static void upper(const char *s, char *out, size_t n)
{
	size_t i = 0;
	for (; s[i] && i + 1 < n; i++)
		out[i] = (char)toupper((unsigned char)s[i]);
	out[i] = '\0';
}

/* ---- checks ---- */

/* The names every tensor, dim and param takes in C and in Python must be distinct (a keyword gets '_'
 * appended, which could meet another name). */
static enum kf_status check_names(const struct kf_task *t, enum ex_lang lang, struct kf_err *err)
{
	char names[KF_MAX_DIMS + 64][EX_NAME_MAX];
	const char *orig[KF_MAX_DIMS + 64];
	size_t n = 0;
	if (t->n_tensors + t->n_dims + t->n_params > KF_ARRAY_SIZE(names))
		return kf_err_set(err, KF_ERR_LIMIT,
				  "task '%s' has too many tensors, dims and params to export", t->name);
	for (size_t i = 0; i < t->n_tensors; i++)
		orig[n] = t->tensors[i].name, ex_name(lang, orig[n], names[n]), n++;
	for (size_t i = 0; i < t->n_dims; i++)
		orig[n] = t->dims[i], ex_name(lang, orig[n], names[n]), n++;
	for (size_t i = 0; i < t->n_params; i++)
		orig[n] = t->params[i].name, ex_name(lang, orig[n], names[n]), n++;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return kf_err_set(
				    err, KF_ERR_INVALID,
				    "task '%s': '%s' and '%s' would both be named '%s' in the %s "
				    "export; rename one",
				    t->name, orig[j], orig[i], names[i], lang == EX_C ? "C++" : "Python");
	return KF_OK;
}

static enum kf_status check_expr(const struct kf_task *t, const struct kf_kfile *k, int line,
				 const char *what, const char *e, struct kf_err *err)
{
	struct kf_buf tmp = KF_BUF_INIT(1 << 20);
	struct kf_err e2 = KF_ERR_INIT;
	enum kf_status st = ex_expr(&tmp, EX_C, e, t, &e2);
	if (!st)
		st = ex_expr(&tmp, EX_PY, e, t, &e2);
	kf_buf_release(&tmp);
	if (st)
		return kf_err_set(err, KF_ERR_INVALID, "%s:%d: %s: %s", k->path, line, what, e2.msg);
	return KF_OK;
}

enum kf_status ex_check(const struct kf_task *t, const struct kf_kfile *k, struct kf_err *err)
{
	enum kf_status st;
	if (!k->n_launches)
		return kf_err_set(err, KF_ERR_INVALID, "%s: no kforge:launch directive", k->path);
	if ((st = check_names(t, EX_C, err)) || (st = check_names(t, EX_PY, err)))
		return st;
	for (size_t i = 0; i < t->n_params; i++)
		if (kf_dtype_is_float(t->params[i].dtype) && !isfinite(t->params[i].value))
			return kf_err_set(err, KF_ERR_INVALID, "task '%s': param '%s' is not finite", t->name,
					  t->params[i].name);
	for (size_t i = 0; i < t->n_tensors; i++)
		for (size_t r = 0; r < t->tensors[i].rank; r++) {
			struct kf_buf tmp = KF_BUF_INIT(1 << 20);
			struct kf_err e2 = KF_ERR_INIT;
			st = ex_expr(&tmp, EX_PY, t->tensors[i].shape[r], t, &e2);
			if (!st)
				st = ex_expr(&tmp, EX_C, t->tensors[i].shape[r], t, &e2);
			kf_buf_release(&tmp);
			if (st)
				return kf_err_set(err, KF_ERR_INVALID, "%s: tensors[%zu].shape[%zu]: %s",
						  t->path, i, r, e2.msg);
		}
	for (size_t i = 0; i < k->n_scratch; i++)
		if ((st = check_expr(t, k, k->scratch[i].line, "scratch count", k->scratch[i].count, err)))
			return st;
	for (size_t i = 0; i < k->n_launches; i++) {
		const struct kf_launch *l = &k->launches[i];
		for (size_t g = 0; g < l->grid_rank; g++)
			if ((st = check_expr(t, k, l->line, "grid", l->grid[g], err)))
				return st;
		for (size_t g = 0; g < l->block_rank; g++)
			if ((st = check_expr(t, k, l->line, "block", l->block[g], err)))
				return st;
		if (l->smem && (st = check_expr(t, k, l->line, "smem", l->smem, err)))
			return st;
		for (size_t a = 0; a < l->n_args; a++) {
			if (l->args[a].kind == KF_ARG_UNBOUND)
				return kf_err_set(err, KF_ERR_INTERNAL, "%s:%d: argument '%s' is not bound",
						  k->path, l->line, l->args[a].name);
			if ((l->args[a].kind == KF_ARG_EXPR || l->args[a].kind == KF_ARG_EXPR_LONG) &&
			    (st = check_expr(t, k, l->line, "argument", l->args[a].name, err)))
				return st;
		}
	}
	/* The planner's own checks at the task's shapes: a plan that kforge cannot make is not exported. */
	for (size_t i = 0; i < t->n_public; i++) {
		struct kf_plan *p = NULL;
		if ((st = kf_plan_make(k, t, &t->shapes_public[i], &p, err)))
			return st;
		kf_plan_free(p);
	}
	return KF_OK;
}

/* ---- signatures ---- */

static enum kf_status dims_params(struct kf_buf *b, const struct kf_task *t, bool params)
{
	enum kf_status st = KF_OK;
	char nm[EX_NAME_MAX];
	bool first = true;
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_C, t->dims[i], nm);
		ADD("%sint64_t %s", first ? "" : ", ", nm);
		first = false;
	}
	for (size_t i = 0; params && i < t->n_params; i++) {
		ex_name(EX_C, t->params[i].name, nm);
		ADD("%s%s %s", first ? "" : ", ", ex_c_param_type(t->params[i].dtype), nm);
		first = false;
	}
	if (first)
		ADD("void");
	return st;
}

static enum kf_status sig_workspace(struct kf_buf *b, const struct kf_task *t, const char *ident)
{
	enum kf_status st = kf_buf_addf(b, "size_t kforge_%s_workspace_bytes(", ident);
	if (!st)
		st = dims_params(b, t, false);
	return st ? st : kf_buf_adds(b, ")");
}

static enum kf_status sig_launch(struct kf_buf *b, const struct kf_task *t, const char *ident)
{
	enum kf_status st = kf_buf_addf(b, "cudaError_t kforge_%s_launch(", ident);
	char nm[EX_NAME_MAX];
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		ex_name(EX_C, x->name, nm);
		ADD("%s%s *%s, ", x->role == KF_ROLE_INPUT ? "const " : "", ex_c_elem_type(x->dtype), nm);
	}
	if (t->n_dims || t->n_params) {
		if (!st)
			st = dims_params(b, t, true);
		ADD(", ");
	}
	ADD("void *workspace, size_t workspace_bytes, cudaStream_t stream)");
	return st;
}

static void param_literal(const struct kf_param *q, char *out, size_t n)
{
	if (q->dtype == KF_DTYPE_F32)
		snprintf(out, n, "%.9gf", (double)(float)q->value);
	else if (q->dtype == KF_DTYPE_F64)
		snprintf(out, n, "%.17g", q->value);
	else if (q->dtype == KF_DTYPE_I32)
		snprintf(out, n, "%lld", (long long)q->ivalue);
	else
		snprintf(out, n, "%lldLL", (long long)q->ivalue);
	/* "1f" is not a C literal: a float literal needs a point or an exponent */
	if (q->dtype == KF_DTYPE_F32 && !strpbrk(out, ".eEn")) {
		size_t l = strlen(out);
		if (l + 2 < n) {
			out[l - 1] = '.';
			out[l] = '0';
			out[l + 1] = 'f';
			out[l + 2] = '\0';
		}
	}
}

/* The plan as comment lines: " *   1. kernel grid=(...) block=(...) smem=(...) args=(...)". */
static enum kf_status plan_comment(struct kf_buf *b, const struct kf_kfile *k, const char *lead)
{
	enum kf_status st = KF_OK;
	char txt[512];
	for (size_t i = 0; i < k->n_scratch; i++) {
		ex_comment_text(k->scratch[i].name, txt, sizeof(txt));
		ADD("%sscratch %s: %s x ", lead, txt, kf_dtype_name(k->scratch[i].dtype));
		ex_comment_text(k->scratch[i].count, txt, sizeof(txt));
		ADD("(%s) elements\n", txt);
	}
	for (size_t i = 0; i < k->n_launches; i++) {
		const struct kf_launch *l = &k->launches[i];
		for (size_t z = 0; z < k->n_zeros; z++)
			if (k->zeros[z].before == i) {
				ex_comment_text(k->zeros[z].name, txt, sizeof(txt));
				ADD("%s   %s set to byte 0x%02x first (kforge:zero)\n", lead, txt,
				    k->zeros[z].byte);
			}
		ex_comment_text(l->kernel, txt, sizeof(txt));
		ADD("%s%zu. %s grid=(", lead, i + 1, txt);
		for (size_t g = 0; g < l->grid_rank; g++) {
			ex_comment_text(l->grid[g], txt, sizeof(txt));
			ADD("%s%s", g ? ", " : "", txt);
		}
		ADD(") block=(");
		for (size_t g = 0; g < l->block_rank; g++) {
			ex_comment_text(l->block[g], txt, sizeof(txt));
			ADD("%s%s", g ? ", " : "", txt);
		}
		ADD(")");
		if (l->smem) {
			ex_comment_text(l->smem, txt, sizeof(txt));
			ADD(" smem=(%s)", txt);
		}
		ADD(" args=(");
		for (size_t a = 0; a < l->n_args; a++) {
			ex_comment_text(l->args[a].name, txt, sizeof(txt));
			ADD("%s%s%s%s", a ? ", " : "", l->args[a].is_long ? "long(" : "", txt,
			    l->args[a].is_long ? ")" : "");
		}
		ADD(")\n");
	}
	return st;
}

enum kf_status ex_c_prototypes(struct kf_buf *b, const struct kf_task *t, const char *ident)
{
	enum kf_status st = KF_OK;
	ADD("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	ADD("/* Device bytes the plan's scratch buffers need at these dims (each rounded up to 256 bytes);\n"
	    " * SIZE_MAX when an expression overflows or a scratch buffer would be empty. */\n");
	if (!st)
		st = sig_workspace(b, t, ident);
	ADD(";\n\n/* Runs the plan on stream. workspace: NULL (the launcher allocates and frees it on the "
	    "stream\n"
	    " * with cudaMallocAsync / cudaFreeAsync) or at least kforge_%s_workspace_bytes() bytes of "
	    "device\n"
	    " * memory. Returns the first CUDA error: cudaErrorInvalidValue when a dim does not fit an int\n"
	    " * argument, an expression overflows or the workspace is too small, "
	    "cudaErrorInvalidConfiguration\n"
	    " * for a grid, block or shared-memory size outside CUDA's limits. Errors during execution "
	    "surface\n"
	    " * at the next synchronisation, as for any kernel launch. */\n",
	    ident);
	if (!st)
		st = sig_launch(b, t, ident);
	ADD(";\n\n#ifdef __cplusplus\n}\n#endif\n");
	return st;
}

/* ---- implementation ---- */

static const char helpers[] =
    "#ifndef KFORGE_EXPORT_HELPERS_1\n"
    "#define KFORGE_EXPORT_HELPERS_1\n"
    "/* The directive grammar's integer arithmetic as kforge evaluates it (core/expr.c): 64-bit, '/' "
    "truncates\n"
    " * toward zero, '%' takes the dividend's sign, cdiv is the ceiling for every sign; an overflow or a "
    "zero\n"
    " * divisor sets *bad instead of being undefined behaviour. */\n"
    "static inline long long kforge_e_add(long long a, long long b, int *bad)\n"
    "{\n\tlong long r;\n\tif (__builtin_add_overflow(a, b, &r)) {\n\t\t*bad = 1;\n\t\treturn 1;\n\t}\n"
    "\treturn r;\n}\n"
    "static inline long long kforge_e_sub(long long a, long long b, int *bad)\n"
    "{\n\tlong long r;\n\tif (__builtin_sub_overflow(a, b, &r)) {\n\t\t*bad = 1;\n\t\treturn 1;\n\t}\n"
    "\treturn r;\n}\n"
    "static inline long long kforge_e_mul(long long a, long long b, int *bad)\n"
    "{\n\tlong long r;\n\tif (__builtin_mul_overflow(a, b, &r)) {\n\t\t*bad = 1;\n\t\treturn 1;\n\t}\n"
    "\treturn r;\n}\n"
    "static inline long long kforge_e_neg(long long a, int *bad)\n"
    "{\n\treturn kforge_e_sub(0, a, bad);\n}\n"
    "static inline int kforge_e_divisor_bad(long long a, long long b, int *bad)\n"
    "{\n\tif (b == 0 || (a == LLONG_MIN && b == -1)) {\n\t\t*bad = 1;\n\t\treturn 1;\n\t}\n"
    "\treturn 0;\n}\n"
    "static inline long long kforge_e_div(long long a, long long b, int *bad)\n"
    "{\n\treturn kforge_e_divisor_bad(a, b, bad) ? 1 : a / b;\n}\n"
    "static inline long long kforge_e_mod(long long a, long long b, int *bad)\n"
    "{\n\treturn kforge_e_divisor_bad(a, b, bad) ? 1 : a % b;\n}\n"
    "static inline long long kforge_e_cdiv(long long a, long long b, int *bad)\n"
    "{\n\tlong long q, r;\n\tif (kforge_e_divisor_bad(a, b, bad))\n\t\treturn 1;\n"
    "\tq = a / b;\n\tr = a % b;\n\treturn (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;\n}\n"
    "static inline long long kforge_e_min(long long a, long long b, int *bad)\n"
    "{\n\t(void)bad;\n\treturn a < b ? a : b;\n}\n"
    "static inline long long kforge_e_max(long long a, long long b, int *bad)\n"
    "{\n\t(void)bad;\n\treturn a > b ? a : b;\n}\n"
    "/* A dim or expression passed as an int argument must fit one (kforge's planner refuses it too). */\n"
    "static inline int kforge_e_int(long long v, int *bad)\n"
    "{\n\tif (v < INT_MIN || v > INT_MAX) {\n\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn (int)v;\n}\n"
    "/* Unsigned parameters take 0..UINT_MAX (4 bytes) or 0..2^63-1 (8 bytes), as the planner checks. */\n"
    "static inline unsigned kforge_e_u32(long long v, int *bad)\n"
    "{\n\tif (v < 0 || v > (long long)UINT_MAX) {\n\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn "
    "(unsigned)v;\n}\n"
    "static inline unsigned long long kforge_e_u64(long long v, int *bad)\n"
    "{\n\tif (v < 0) {\n\t\t*bad = 1;\n\t\treturn 0;\n\t}\n\treturn (unsigned long long)v;\n}\n"
    "/* The bytes of numel elements of elem bytes (a kforge:zero of a tensor). */\n"
    "static inline size_t kforge_e_bytes(long long numel, size_t elem, int *bad)\n"
    "{\n\tsize_t n;\n\tif (numel < 0 || __builtin_mul_overflow((size_t)numel, elem, &n)) {\n\t\t*bad = 1;\n"
    "\t\treturn 0;\n\t}\n\treturn n;\n}\n"
    "/* Adds a scratch buffer of count elements of elem bytes to a workspace of total bytes, 256-aligned. "
    "*/\n"
    "static inline size_t kforge_e_ws(size_t total, long long count, size_t elem, int *bad)\n"
    "{\n\tsize_t n;\n\tif (count < 1 || __builtin_mul_overflow((size_t)count, elem, &n) ||\n"
    "\t    __builtin_add_overflow(n, (size_t)255, &n) || __builtin_add_overflow(total, n & ~(size_t)255, "
    "&n)) {\n"
    "\t\t*bad = 1;\n\t\treturn total;\n\t}\n\treturn n;\n}\n"
    "/* CUDA's generic limits, as kforge's planner checks them (device limits are the driver's). */\n"
    "static inline int kforge_e_config_ok(const long long g[3], const long long b[3], long long smem)\n"
    "{\n\tstatic const long long gmax[3] = {2147483647LL, 65535LL, 65535LL}, bmax[3] = {1024, 1024, 64};\n"
    "\tfor (int i = 0; i < 3; i++)\n\t\tif (g[i] < 1 || g[i] > gmax[i] || b[i] < 1 || b[i] > bmax[i])\n"
    "\t\t\treturn 0;\n"
    "\treturn b[0] * b[1] * b[2] <= 1024 && smem >= 0 && smem <= (long long)UINT_MAX;\n}\n"
    "#endif /* KFORGE_EXPORT_HELPERS_1 */\n";

/* Appends an expression, or "1LL" when e is NULL (a missing grid/block rank). */
static enum kf_status expr_or_one(struct kf_buf *b, const struct kf_task *t, const char *e,
				  struct kf_err *err)
{
	return e ? ex_expr(b, EX_C, e, t, err) : kf_buf_adds(b, "1LL");
}

static enum kf_status void_dims(struct kf_buf *b, const struct kf_task *t)
{
	enum kf_status st = KF_OK;
	char nm[EX_NAME_MAX];
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_C, t->dims[i], nm);
		ADD("\t(void)%s;\n", nm);
	}
	return st;
}

/* The workspace layout: for each scratch buffer, kf_o (the offset so far) then its size added. With ptrs,
 * also a pointer kf_s<i> into kf_ws. */
static enum kf_status ws_layout(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
				bool ptrs, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	for (size_t i = 0; i < k->n_scratch && !st; i++) {
		if (ptrs)
			ADD("\tchar *kf_s%zu = kf_ws ? kf_ws + kf_o : NULL;\n", i);
		ADD("\tkf_o = kforge_e_ws(kf_o, ");
		if (!st)
			st = ex_expr(b, EX_C, k->scratch[i].count, t, err);
		ADD(", %zu, &kf_bad); /* scratch %s (line %d) */\n", kf_dtype_size(k->scratch[i].dtype),
		    k->scratch[i].name, k->scratch[i].line);
	}
	return st;
}

/* The kforge:zero fills before launch li, as the harness does them: a memset on the stream of the whole
 * buffer (a scratch buffer's count, or the tensor's elements at these dims). */
static enum kf_status zero_fills(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
				 size_t li, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	char nm[EX_NAME_MAX];
	for (size_t z = 0; z < k->n_zeros && !st; z++) {
		const struct kf_zero *zr = &k->zeros[z];
		if (zr->before != li)
			continue;
		ADD("\tif (kf_e == cudaSuccess) { /* kforge:zero %s byte=0x%02x, line %d */\n\t\tsize_t kf_n "
		    "= ",
		    zr->name, zr->byte, zr->line);
		if (zr->is_scratch) {
			const struct kf_scratch *sc = &k->scratch[zr->index];
			ADD("kforge_e_bytes(");
			if (!st)
				st = ex_expr(b, EX_C, sc->count, t, err);
			ADD(", %zu, &kf_bad);\n\t\tvoid *kf_p = kf_s%d;\n", kf_dtype_size(sc->dtype),
			    zr->index);
		} else {
			const struct kf_tensor *x = &t->tensors[zr->index];
			struct kf_buf e = KF_BUF_INIT(1 << 20);
			/* numel: the product of the shape's expressions, checked */
			for (size_t r = 0; r < x->rank && !st; r++) {
				struct kf_buf d = KF_BUF_INIT(1 << 20), prod = KF_BUF_INIT(1 << 20);
				st = ex_expr(&d, EX_C, x->shape[r], t, err);
				if (!st && r)
					st = kf_buf_addf(&prod, "kforge_e_mul(%s, %s, &kf_bad)", e.data,
							 d.data);
				else if (!st)
					st = kf_buf_adds(&prod, d.data);
				if (!st) {
					kf_buf_reset(&e);
					st = kf_buf_adds(&e, prod.data);
				}
				kf_buf_release(&d);
				kf_buf_release(&prod);
			}
			ex_name(EX_C, x->name, nm);
			ADD("kforge_e_bytes(%s, %zu, &kf_bad);\n\t\tvoid *kf_p = (void *)%s;\n",
			    x->rank ? e.data : "1LL", kf_dtype_size(x->dtype), nm);
			kf_buf_release(&e);
		}
		ADD("\t\tkf_e = kf_bad ? cudaErrorInvalidValue : cudaMemsetAsync(kf_p, 0x%02x, kf_n, "
		    "stream);\n\t}\n",
		    zr->byte);
	}
	return st;
}

static enum kf_status launch_block(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
				   size_t li, struct kf_err *err)
{
	const struct kf_launch *l = &k->launches[li];
	enum kf_status st = KF_OK;
	char nm[EX_NAME_MAX], txt[256];

	ex_comment_text(l->kernel, txt, sizeof(txt));
	ADD("\tif (kf_e == cudaSuccess) { /* launch %zu: %s, line %d of the kernel file */\n", li + 1, txt,
	    l->line);
	ADD("\t\tlong long kf_g[3] = {");
	for (size_t g = 0; g < 3 && !st; g++) {
		if (g)
			ADD(", ");
		if (!st)
			st = expr_or_one(b, t, g < l->grid_rank ? l->grid[g] : NULL, err);
	}
	ADD("};\n\t\tlong long kf_b[3] = {");
	for (size_t g = 0; g < 3 && !st; g++) {
		if (g)
			ADD(", ");
		if (!st)
			st = expr_or_one(b, t, g < l->block_rank ? l->block[g] : NULL, err);
	}
	ADD("};\n\t\tlong long kf_smem = ");
	if (!st)
		st = l->smem ? ex_expr(b, EX_C, l->smem, t, err) : kf_buf_adds(b, "0LL");
	ADD(";\n");
	for (size_t a = 0; a < l->n_args && !st; a++) {
		const struct kf_arg *x = &l->args[a];
		switch (x->kind) {
		case KF_ARG_TENSOR:
			ex_name(EX_C, t->tensors[x->index].name, nm);
			ADD("\t\tvoid *kf_a%zu = (void *)%s;\n", a, nm);
			break;
		case KF_ARG_SCRATCH:
			ADD("\t\tvoid *kf_a%zu = (void *)kf_s%d;\n", a, x->index);
			break;
		case KF_ARG_DIM_INT:
		case KF_ARG_DIM_LONG:
		case KF_ARG_EXPR:
		case KF_ARG_EXPR_LONG:
		case KF_ARG_LITERAL: {
			/* the value, then its parameter's width and sign, checked as the planner checks them
			 */
			struct kf_buf v = KF_BUF_INIT(1 << 20);
			if (x->kind == KF_ARG_LITERAL) {
				st = kf_buf_addf(&v, "%lldLL", (long long)x->literal);
			} else if (x->kind == KF_ARG_DIM_INT || x->kind == KF_ARG_DIM_LONG) {
				ex_name(EX_C, t->dims[x->index], nm);
				st = kf_buf_adds(&v, nm);
			} else {
				st = ex_expr(&v, EX_C, x->name, t, err);
			}
			if (!st && x->width == 8 && x->is_unsigned)
				ADD("\t\tunsigned long long kf_a%zu = kforge_e_u64(%s, &kf_bad);\n", a,
				    v.data);
			else if (!st && x->width == 8)
				ADD("\t\tlong long kf_a%zu = (long long)(%s);\n", a, v.data);
			else if (!st && x->is_unsigned)
				ADD("\t\tunsigned kf_a%zu = kforge_e_u32(%s, &kf_bad);\n", a, v.data);
			else if (!st)
				ADD("\t\tint kf_a%zu = kforge_e_int(%s, &kf_bad);\n", a, v.data);
			kf_buf_release(&v);
			break;
		}
		case KF_ARG_PARAM: {
			const struct kf_param *q = &t->params[x->index];
			const char *ty = q->dtype == KF_DTYPE_F32   ? "float"
					 : q->dtype == KF_DTYPE_F64 ? "double"
					 : q->dtype == KF_DTYPE_I32 ? "int"
								    : "long long";
			ex_name(EX_C, q->name, nm);
			ADD("\t\t%s kf_a%zu = (%s)%s;\n", ty, a, ty, nm);
			break;
		}
		default:
			st = kf_err_set(err, KF_ERR_INTERNAL, "%s:%d: argument '%s' of an unknown kind",
					k->path, l->line, x->name);
		}
	}
	if (l->n_args) {
		ADD("\t\tvoid *kf_args[] = {");
		for (size_t a = 0; a < l->n_args; a++)
			ADD("%s&kf_a%zu", a ? ", " : "", a);
		ADD("};\n");
	} else {
		ADD("\t\tvoid **kf_args = NULL;\n");
	}
	ADD("\t\tconst void *kf_fn = (const void *)&%s;\n", l->kernel);
	ADD("\t\tif (kf_bad)\n\t\t\tkf_e = cudaErrorInvalidValue;\n"
	    "\t\telse if (!kforge_e_config_ok(kf_g, kf_b, kf_smem))\n\t\t\tkf_e = "
	    "cudaErrorInvalidConfiguration;\n"
	    "\t\t/* above the default 48 KiB of dynamic shared memory a kernel must opt in, as the harness "
	    "does */\n"
	    "\t\telse if (kf_smem > 49152)\n"
	    "\t\t\tkf_e = cudaFuncSetAttribute(kf_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, "
	    "(int)kf_smem);\n"
	    "\t\tif (kf_e == cudaSuccess)\n"
	    "\t\t\tkf_e = cudaLaunchKernel(kf_fn, dim3((unsigned)kf_g[0], (unsigned)kf_g[1], "
	    "(unsigned)kf_g[2]),\n"
	    "\t\t\t\t\t\tdim3((unsigned)kf_b[0], (unsigned)kf_b[1], (unsigned)kf_b[2]), kf_args,\n"
	    "\t\t\t\t\t\t(size_t)kf_smem, stream);\n\t}\n");
	return st;
}

enum kf_status ex_c_implementation(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
				   const char *ident, const char *origin, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	char txt[512], nm[EX_NAME_MAX];

	ex_comment_text(origin, txt, sizeof(txt));
	ADD("#include <limits.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <cuda_runtime.h>\n\n");
	ADD("/* ==== the kernel file (%s), verbatim ==== */\n", txt);
	if (!st)
		st = kf_buf_add(b, k->source, k->source_len);
	if (k->source_len && k->source[k->source_len - 1] != '\n')
		ADD("\n");
	ADD("/* ==== end of the kernel file ==== */\n\n%s\n", helpers);

	ADD("extern \"C\" ");
	if (!st)
		st = sig_workspace(b, t, ident);
	ADD("\n{\n\tint kf_bad = 0;\n\tsize_t kf_o = 0;\n");
	if (!st)
		st = void_dims(b, t);
	if (!st)
		st = ws_layout(b, t, k, false, err);
	ADD("\treturn kf_bad ? SIZE_MAX : kf_o;\n}\n\n");

	ADD("extern \"C\" ");
	if (!st)
		st = sig_launch(b, t, ident);
	ADD("\n{\n\tint kf_bad = 0;\n\tcudaError_t kf_e = cudaSuccess;\n\tvoid *kf_own = NULL;\n"
	    "\tchar *kf_ws = (char *)workspace;\n");
	if (k->n_scratch)
		ADD("\tsize_t kf_o = 0;\n");
	ADD("\tsize_t kf_need = kforge_%s_workspace_bytes(", ident);
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_name(EX_C, t->dims[i], nm);
		ADD("%s%s", i ? ", " : "", nm);
	}
	ADD(");\n\n\tif (kf_need == SIZE_MAX)\n\t\treturn cudaErrorInvalidValue;\n"
	    "\tif (kf_need && !kf_ws) {\n\t\tkf_e = cudaMallocAsync(&kf_own, kf_need, stream);\n"
	    "\t\tif (kf_e != cudaSuccess)\n\t\t\treturn kf_e;\n\t\tkf_ws = (char *)kf_own;\n"
	    "\t} else if (kf_need > workspace_bytes) {\n\t\treturn cudaErrorInvalidValue;\n\t}\n");
	if (!st)
		st = void_dims(b, t);
	for (size_t i = 0; i < t->n_params; i++) {
		ex_name(EX_C, t->params[i].name, nm);
		ADD("\t(void)%s;\n", nm);
	}
	if (!st)
		st = ws_layout(b, t, k, true, err);
	for (size_t i = 0; i < k->n_launches && !st; i++) {
		st = zero_fills(b, t, k, i, err);
		if (!st)
			st = launch_block(b, t, k, i, err);
	}
	ADD("\tif (kf_own) {\n\t\tcudaError_t kf_f = cudaFreeAsync(kf_own, stream);\n"
	    "\t\tif (kf_e == cudaSuccess)\n\t\t\tkf_e = kf_f;\n\t}\n\treturn kf_e;\n}\n");
	if (st && err && !err->code)
		kf_err_set(err, st, "cannot write the launcher: %s", kf_status_name(st));
	return st;
}

/* The header's opening comment: what it is, how to use it, the tensors, dims, params and plan. */
static enum kf_status doc(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
			  const char *ident, const char *id_up, const char *origin)
{
	enum kf_status st = KF_OK;
	char txt[512], lit[64];

	ex_comment_text(t->title, txt, sizeof(txt));
	ADD("/* kforge_%s: %s", ident, txt);
	ex_comment_text(t->name, txt, sizeof(txt));
	ADD(" (task %s), generated by `kforge export --header`.\n", txt);
	ex_comment_text(origin, txt, sizeof(txt));
	ADD(" * Kernel: %s\n *\n", txt);
	ADD(" * In exactly one .cu file, compiled by nvcc (e.g. nvcc -std=c++17 -arch=sm_90 -c):\n"
	    " *     #define KFORGE_%s_IMPLEMENTATION\n"
	    " *     #include \"this header\"\n"
	    " * Elsewhere (C or C++, any compiler) include it without the define, and link with that object "
	    "and\n"
	    " * the CUDA runtime (-lcudart). The launcher passes the arguments, grid, block and dynamic "
	    "shared memory\n"
	    " * exactly as kforge's harness did when it verified the kernel, through cudaLaunchKernel.\n *\n",
	    id_up);
	ADD(" * Tensors: contiguous, row-major, in device memory.\n");
	for (size_t i = 0; i < t->n_tensors; i++) {
		const struct kf_tensor *x = &t->tensors[i];
		ex_comment_text(x->name, txt, sizeof(txt));
		ADD(" *   %-10s %-6s %-5s [", txt, kf_role_name(x->role), kf_dtype_name(x->dtype));
		for (size_t r = 0; r < x->rank; r++) {
			ex_comment_text(x->shape[r], txt, sizeof(txt));
			ADD("%s%s", r ? ", " : "", txt);
		}
		ADD("]\n");
	}
	ADD(" * Dims:");
	for (size_t i = 0; i < t->n_dims; i++) {
		ex_comment_text(t->dims[i], txt, sizeof(txt));
		ADD("%s %s", i ? "," : "", txt);
	}
	ADD("%s.\n", t->n_dims ? "" : " none");
	for (size_t i = 0; i < t->n_params; i++) {
		ex_comment_text(t->params[i].name, txt, sizeof(txt));
		param_literal(&t->params[i], lit, sizeof(lit));
		ADD(" * Param %s (%s): the task's value is %s (KFORGE_%s_%s); kforge verified the kernel at "
		    "it.\n",
		    txt, kf_dtype_name(t->params[i].dtype), lit, id_up, txt);
	}
	ADD(" * The plan, in order on one stream:\n");
	if (!st)
		st = plan_comment(b, k, " *   ");
	ADD(" * Functions: kforge_%s_workspace_bytes, kforge_%s_launch. */\n", ident, ident);
	return st;
}

static enum kf_status header(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
			     const char *ident, const char *origin, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	char id_up[64], lit[64], nm[EX_NAME_MAX];

	upper(ident, id_up, sizeof(id_up));
	st = doc(b, t, k, ident, id_up, origin);
	ADD("#ifndef KFORGE_%s_H\n#define KFORGE_%s_H\n\n#include <stddef.h>\n#include <stdint.h>\n"
	    "#include <cuda_runtime_api.h>\n\n",
	    id_up, id_up);
	for (size_t i = 0; i < t->n_params; i++) {
		ex_comment_text(t->params[i].name, nm, sizeof(nm));
		param_literal(&t->params[i], lit, sizeof(lit));
		ADD("#define KFORGE_%s_%s (%s)\n", id_up, nm, lit);
	}
	if (t->n_params)
		ADD("\n");
	if (!st)
		st = ex_c_prototypes(b, t, ident);
	ADD("\n#endif /* KFORGE_%s_H */\n\n", id_up);
	ADD("#ifdef KFORGE_%s_IMPLEMENTATION\n#ifndef KFORGE_%s_IMPLEMENTED\n#define KFORGE_%s_IMPLEMENTED\n",
	    id_up, id_up, id_up);
	ADD("#ifndef __CUDACC__\n#error \"define KFORGE_%s_IMPLEMENTATION in one .cu file compiled by nvcc: "
	    "the kernel "
	    "source is CUDA C++\"\n#endif\n",
	    id_up);
	if (!st)
		st = ex_c_implementation(b, t, k, ident, origin, err);
	ADD("#endif /* KFORGE_%s_IMPLEMENTED */\n#endif /* KFORGE_%s_IMPLEMENTATION */\n", id_up, id_up);
	return st;
}

enum kf_status kf_export_header(const struct kf_task *t, const struct kf_kfile *k,
				const struct kf_export_opts *o, struct kf_buf *out, struct kf_err *err)
{
	char ident[64];
	size_t mark = out->len;
	enum kf_status st;

	if ((st = ex_ident(t, o, ident, err)) || (st = ex_check(t, k, err)))
		return st;
	st = header(out, t, k, ident, o && o->origin ? o->origin : k->path, err);
	if (st) {
		out->len = mark;
		out->data[mark] = '\0';
		if (err && !err->code)
			kf_err_set(err, st, "cannot write the header: %s", kf_status_name(st));
	}
	return st;
}
