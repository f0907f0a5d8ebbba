/* Internals shared by the export generators (export/): names made safe for C++ and Python, and the
 * directive grammar's integer expressions translated into checked helper calls with kforge's semantics. */
#ifndef KF_EXPORT_INT_H
#define KF_EXPORT_INT_H

#include "export/export.h"

#define EX_NAME_MAX 80

enum ex_lang { EX_C, EX_PY };

/* The name a task tensor, dim or param takes in generated code: itself, with '_' appended when it is a
 * keyword of the language (C++ with CUDA, or Python) or could clash with the generator's own names
 * (kf_..., kforge_..., workspace, stream, and for Python the module's _-prefixed names). */
void ex_name(enum ex_lang lang, const char *name, char out[EX_NAME_MAX]);

/* Appends src translated into lang: C `kforge_e_mul(kforge_e_add(B, 1LL, &kf_bad), N, &kf_bad)` (the dims
 * being int64_t variables named by ex_name; kf_bad an int in scope that the helpers set on an overflow or
 * a zero divisor), Python `_e_mul(_e_add(D["B"], 1), D["N"])` (D the dims dict; the helpers raise
 * ValueError). Every name must be one of t's dims. KF_ERR_PARSE / KF_ERR_INVALID otherwise, naming what. */
enum kf_status ex_expr(struct kf_buf *b, enum ex_lang lang, const char *src, const struct kf_task *t,
		       struct kf_err *err);

/* Appends s as a C string literal body (no quotes): \\ \" \n \t and octal escapes for other bytes
 * outside printable ASCII; "??" is broken so no trigraph forms. */
enum kf_status ex_c_string(struct kf_buf *b, const char *s);
/* Appends s as one Python bytes literal per line, inside parentheses, decoded as UTF-8:
 * (b"line 1\n"\n b"line 2\n").decode("utf-8"). Every byte outside printable ASCII is a \xNN escape. */
enum kf_status ex_py_bytes(struct kf_buf *b, const char *s, size_t len, const char *indent);
/* Appends s as a Python str literal ("..." with escapes; non-ASCII as \uXXXX is not needed: s is
 * reduced to printable ASCII first). */
enum kf_status ex_py_str(struct kf_buf *b, const char *s);
/* One line of s, control characters and "*" "/" pairs removed, for a comment; at most n-1 bytes. */
void ex_comment_text(const char *s, char *out, size_t n);

/* The C type a tensor of dtype dt has in the launcher's signature ("float", "int64_t"; "void" for f16 and
 * bf16, whose types are C++-only), and the torch dtype name ("torch.float32") and C++ scalar type
 * ("at::kFloat"). */
const char *ex_c_elem_type(enum kf_dtype dt);
const char *ex_torch_dtype(enum kf_dtype dt);
const char *ex_aten_scalar(enum kf_dtype dt);
/* The C type of a param of dtype dt in the launcher's signature (float, double, int32_t, int64_t). */
const char *ex_c_param_type(enum kf_dtype dt);

/* Appends the launcher's implementation part (the kernel source, the expression helpers, the workspace
 * size function and the launch function) for k bound to t, named kforge_<ident>_*. Shared by the header
 * and the torch module. */
enum kf_status ex_c_implementation(struct kf_buf *b, const struct kf_task *t, const struct kf_kfile *k,
				   const char *ident, const char *origin, struct kf_err *err);
/* Appends the launcher's prototypes (C linkage, no trailing text) and their documentation comment. */
enum kf_status ex_c_prototypes(struct kf_buf *b, const struct kf_task *t, const char *ident);
/* Checks that the export can work: every expression translates, and the plan can be made at every public
 * shape (the same checks kforge's planner makes). */
enum kf_status ex_check(const struct kf_task *t, const struct kf_kfile *k, struct kf_err *err);
/* The identifier to use (o->ident, checked, or the default for t). */
enum kf_status ex_ident(const struct kf_task *t, const struct kf_export_opts *o, char out[64],
			struct kf_err *err);

#endif
