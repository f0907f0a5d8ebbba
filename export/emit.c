/* The export generators' building blocks: names that cannot clash with either language's keywords or the
 * generated code's own names, the directive grammar's integer expressions (core/expr.c) translated into
 * calls of checked helpers with the same semantics, and string literals for C and Python. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "export/export_int.h"

/* C, C++20 and CUDA words a name must not be, plus the generated code's own parameters. */
static const char *const c_words[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default",
    "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
    "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
    "register", "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
    "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq", "dim3", "NULL", "main", "std", "at", "torch", "c10",
    /* the launcher's own parameters and the torch wrapper's */
    "workspace", "workspace_bytes", "stream", "tensors", "dims", "params", "guard"};

static const char *const py_words[] = {
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case",
    "type", "torch", "math", "os", "sys", "D", "dims", "out", "self",
    /* what the generated function's body calls or names */
    "int", "float", "name", "S", "device", "load", "TypeError", "ValueError", "isinstance", "tuple", "len",
    "print", "range", "min", "max", "abs"};

void ex_name(enum ex_lang lang, const char *name, char out[EX_NAME_MAX])
{
	const char *const *w = lang == EX_C ? c_words : py_words;
	size_t n = lang == EX_C ? KF_ARRAY_SIZE(c_words) : KF_ARRAY_SIZE(py_words);
	bool clash = !strncmp(name, "kf_", 3) || !strncmp(name, "kforge_", 7) || !strncmp(name, "KF_", 3) ||
		     !strncmp(name, "KFORGE_", 7) || (lang == EX_PY && name[0] == '_') ||
		     (lang == EX_C && name[0] == '_' && (isupper((unsigned char)name[1]) || name[1] == '_'));
	for (size_t i = 0; i < n && !clash; i++)
		if (!strcmp(name, w[i]))
			clash = true;
	snprintf(out, EX_NAME_MAX, "%s%s", name, clash ? "_" : "");
}

/* ---- expressions ---- */

#define EX_MAX_DEPTH 64

struct xp {
	const char *src;
	size_t pos;
	int depth;
	enum ex_lang lang;
	const struct kf_task *t;
	struct kf_err *err;
};

static void xp_ws(struct xp *p)
{
	while (p->src[p->pos] && isspace((unsigned char)p->src[p->pos]))
		p->pos++;
}

static enum kf_status xp_syntax(struct xp *p, const char *what)
{
	return kf_err_set(p->err, KF_ERR_PARSE, "expected %s at column %zu in '%s'", what, p->pos + 1,
			  p->src);
}

/* Appends "name(a, b)" in the language: the C helpers take the overflow flag last. */
static enum kf_status xp_call(struct xp *p, struct kf_buf *b, const char *op, const struct kf_buf *x,
			      const struct kf_buf *y)
{
	if (p->lang == EX_C)
		return y ? kf_buf_addf(b, "kforge_e_%s(%s, %s, &kf_bad)", op, x->data, y->data)
			 : kf_buf_addf(b, "kforge_e_%s(%s, &kf_bad)", op, x->data);
	return y ? kf_buf_addf(b, "_e_%s(%s, %s)", op, x->data, y->data)
		 : kf_buf_addf(b, "_e_%s(%s)", op, x->data);
}

static enum kf_status xp_sum(struct xp *p, struct kf_buf *out);

static enum kf_status xp_primary(struct xp *p, struct kf_buf *out)
{
	enum kf_status st = KF_OK;
	char c;

	if (++p->depth > EX_MAX_DEPTH)
		return kf_err_set(p->err, KF_ERR_PARSE, "expression nested too deeply in '%.80s'", p->src);
	xp_ws(p);
	c = p->src[p->pos];
	if (c == '(') {
		p->pos++;
		if ((st = xp_sum(p, out)))
			return st;
		xp_ws(p);
		if (p->src[p->pos] != ')')
			return xp_syntax(p, "')'");
		p->pos++;
	} else if (c == '-' || c == '+') {
		struct kf_buf v = KF_BUF_INIT(1 << 20);
		p->pos++;
		st = xp_primary(p, &v);
		if (!st)
			st = c == '-' ? xp_call(p, out, "neg", &v, NULL) : kf_buf_adds(out, v.data);
		kf_buf_release(&v);
		if (st)
			return st;
	} else if (isdigit((unsigned char)c)) {
		int64_t v = 0;
		while (isdigit((unsigned char)p->src[p->pos])) {
			if (__builtin_mul_overflow(v, (int64_t)10, &v) ||
			    __builtin_add_overflow(v, (int64_t)(p->src[p->pos] - '0'), &v))
				return kf_err_set(p->err, KF_ERR_RANGE,
						  "integer literal out of range in '%s'", p->src);
			p->pos++;
		}
		if (isalnum((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_')
			return xp_syntax(p, "an operator after a number");
		if ((st = kf_buf_addf(out, p->lang == EX_C ? "%lldLL" : "%lld", (long long)v)))
			return st;
	} else if (isalpha((unsigned char)c) || c == '_') {
		size_t start = p->pos, len;
		char name[KF_NAME_MAX];
		while (isalnum((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_')
			p->pos++;
		len = p->pos - start;
		if (len >= KF_NAME_MAX)
			return kf_err_set(p->err, KF_ERR_PARSE, "name too long in '%.80s'", p->src);
		memcpy(name, p->src + start, len);
		name[len] = '\0';
		xp_ws(p);
		if (p->src[p->pos] == '(') {
			struct kf_buf x = KF_BUF_INIT(1 << 20), y = KF_BUF_INIT(1 << 20);
			if (strcmp(name, "cdiv") && strcmp(name, "min") && strcmp(name, "max"))
				return kf_err_set(p->err, KF_ERR_PARSE,
						  "unknown function '%s' in '%s' (only cdiv, min, max)", name,
						  p->src);
			p->pos++;
			st = xp_sum(p, &x);
			xp_ws(p);
			if (!st && p->src[p->pos] != ',')
				st = xp_syntax(p, "','");
			if (!st) {
				p->pos++;
				st = xp_sum(p, &y);
			}
			xp_ws(p);
			if (!st && p->src[p->pos] != ')')
				st = xp_syntax(p, "')'");
			if (!st) {
				p->pos++;
				st = xp_call(p, out, name, &x, &y);
			}
			kf_buf_release(&x);
			kf_buf_release(&y);
			if (st)
				return st;
		} else {
			char nm[EX_NAME_MAX];
			if (kf_task_dim_index(p->t, name) < 0)
				return kf_err_set(p->err, KF_ERR_INVALID, "unknown dim '%s' in '%s'", name,
						  p->src);
			if (p->lang == EX_C) {
				ex_name(EX_C, name, nm);
				st = kf_buf_adds(out, nm);
			} else {
				st = kf_buf_addf(out, "D[\"%s\"]", name);
			}
			if (st)
				return st;
		}
	} else {
		return xp_syntax(p, "a number, a dim or '('");
	}
	p->depth--;
	return KF_OK;
}

/* One precedence level: operands joined left to right by ops ("*", "/", "%" or "+", "-"). */
static enum kf_status xp_level(struct xp *p, struct kf_buf *out, bool product)
{
	struct kf_buf acc = KF_BUF_INIT(1 << 20), rhs = KF_BUF_INIT(1 << 20), tmp = KF_BUF_INIT(1 << 20);
	enum kf_status st = product ? xp_primary(p, &acc) : xp_level(p, &acc, true);
	while (!st) {
		char op;
		xp_ws(p);
		op = p->src[p->pos];
		if (product ? (op != '*' && op != '/' && op != '%') : (op != '+' && op != '-'))
			break;
		p->pos++;
		kf_buf_reset(&rhs);
		kf_buf_reset(&tmp);
		st = product ? xp_primary(p, &rhs) : xp_level(p, &rhs, true);
		if (!st)
			st = xp_call(p, &tmp,
				     op == '*'   ? "mul"
				     : op == '/' ? "div"
				     : op == '%' ? "mod"
				     : op == '+' ? "add"
						 : "sub",
				     &acc, &rhs);
		if (!st) {
			kf_buf_reset(&acc);
			st = kf_buf_adds(&acc, tmp.data);
		}
	}
	if (!st)
		st = kf_buf_adds(out, acc.data);
	kf_buf_release(&acc);
	kf_buf_release(&rhs);
	kf_buf_release(&tmp);
	return st;
}

static enum kf_status xp_sum(struct xp *p, struct kf_buf *out)
{
	return xp_level(p, out, false);
}

enum kf_status ex_expr(struct kf_buf *b, enum ex_lang lang, const char *src, const struct kf_task *t,
		       struct kf_err *err)
{
	struct xp p = {.src = src ? src : "", .lang = lang, .t = t, .err = err};
	struct kf_buf tmp = KF_BUF_INIT(1 << 20);
	enum kf_status st;

	if (strlen(p.src) > 4096)
		return kf_err_set(err, KF_ERR_PARSE, "expression longer than 4096 characters");
	xp_ws(&p);
	if (!p.src[p.pos])
		return kf_err_set(err, KF_ERR_PARSE, "empty expression");
	st = xp_sum(&p, &tmp);
	xp_ws(&p);
	if (!st && p.src[p.pos])
		st = xp_syntax(&p, "an operator");
	if (!st)
		st = kf_buf_adds(b, tmp.data);
	kf_buf_release(&tmp);
	if (st && err && !err->code)
		kf_err_set(err, st, "cannot translate '%.200s': %s", p.src, kf_status_name(st));
	return st;
}

/* ---- literals and comments ---- */

enum kf_status ex_c_string(struct kf_buf *b, const char *s)
{
	enum kf_status st = KF_OK;
	for (const unsigned char *p = (const unsigned char *)s; *p && !st; p++) {
		if (*p == '\\' || *p == '"')
			st = kf_buf_addf(b, "\\%c", *p);
		else if (*p == '\n')
			st = kf_buf_adds(b, "\\n");
		else if (*p == '\t')
			st = kf_buf_adds(b, "\\t");
		else if (*p == '?' && p[1] == '?')
			st = kf_buf_adds(b, "?\\"); /* "?\?" never forms a trigraph */
		else if (*p < 0x20 || *p >= 0x7f)
			st = kf_buf_addf(b, "\\%03o", *p);
		else
			st = kf_buf_addch(b, (char)*p);
	}
	return st;
}

enum kf_status ex_py_bytes(struct kf_buf *b, const char *s, size_t len, const char *indent)
{
	enum kf_status st = kf_buf_adds(b, "(\n");
	size_t i = 0;
	if (!len && !st)
		st = kf_buf_addf(b, "%sb\"\"\n", indent);
	while (i < len && !st) {
		st = kf_buf_addf(b, "%sb\"", indent);
		for (; i < len && !st; i++) {
			unsigned char c = (unsigned char)s[i];
			if (c == '\\' || c == '"')
				st = kf_buf_addf(b, "\\%c", c);
			else if (c == '\n')
				st = kf_buf_adds(b, "\\n");
			else if (c == '\t')
				st = kf_buf_adds(b, "\\t");
			else if (c < 0x20 || c >= 0x7f)
				st = kf_buf_addf(b, "\\x%02x", c);
			else
				st = kf_buf_addch(b, (char)c);
			if (c == '\n') {
				i++;
				break;
			}
		}
		if (!st)
			st = kf_buf_adds(b, "\"\n");
	}
	if (!st)
		st = kf_buf_adds(b, ").decode(\"utf-8\")");
	return st;
}

enum kf_status ex_py_str(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_addch(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p && !st; p++) {
		if (*p == '\\' || *p == '"')
			st = kf_buf_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			st = kf_buf_addf(b, "\\x%02x", *p);
		else
			st = kf_buf_addch(b, (char)*p);
	}
	return st ? st : kf_buf_addch(b, '"');
}

void ex_comment_text(const char *s, char *out, size_t n)
{
	size_t j = 0;
	if (!n)
		return;
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && j + 1 < n; p++) {
		if (*p < 0x20 || *p == 0x7f)
			continue;
		if ((*p == '*' && p[1] == '/') || (*p == '/' && p[1] == '*')) {
			p++;
			continue;
		}
		out[j++] = (char)*p;
	}
	out[j] = '\0';
}

/* ---- types ---- */

const char *ex_c_elem_type(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F64:
		return "double";
	case KF_DTYPE_F32:
		return "float";
	case KF_DTYPE_I64:
		return "int64_t";
	case KF_DTYPE_I32:
		return "int32_t";
	case KF_DTYPE_I16:
		return "int16_t";
	case KF_DTYPE_I8:
		return "int8_t";
	case KF_DTYPE_U8:
		return "uint8_t";
	default:
		return "void"; /* f16, bf16: __half and __nv_bfloat16 are C++ types */
	}
}

const char *ex_torch_dtype(enum kf_dtype dt)
{
	static const char *const names[KF_DTYPE_COUNT] = {
	    [KF_DTYPE_F64] = "torch.float64", [KF_DTYPE_F32] = "torch.float32",
	    [KF_DTYPE_F16] = "torch.float16", [KF_DTYPE_BF16] = "torch.bfloat16",
	    [KF_DTYPE_I64] = "torch.int64",   [KF_DTYPE_I32] = "torch.int32",
	    [KF_DTYPE_I16] = "torch.int16",   [KF_DTYPE_I8] = "torch.int8",
	    [KF_DTYPE_U8] = "torch.uint8"};
	return (unsigned)dt < KF_DTYPE_COUNT ? names[dt] : "None";
}

const char *ex_aten_scalar(enum kf_dtype dt)
{
	static const char *const names[KF_DTYPE_COUNT] = {
	    [KF_DTYPE_F64] = "at::kDouble",    [KF_DTYPE_F32] = "at::kFloat", [KF_DTYPE_F16] = "at::kHalf",
	    [KF_DTYPE_BF16] = "at::kBFloat16", [KF_DTYPE_I64] = "at::kLong",  [KF_DTYPE_I32] = "at::kInt",
	    [KF_DTYPE_I16] = "at::kShort",     [KF_DTYPE_I8] = "at::kChar",   [KF_DTYPE_U8] = "at::kByte"};
	return (unsigned)dt < KF_DTYPE_COUNT ? names[dt] : "at::kFloat";
}

const char *ex_c_param_type(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F64:
		return "double";
	case KF_DTYPE_I32:
		return "int32_t";
	case KF_DTYPE_I64:
		return "int64_t";
	default:
		return "float";
	}
}

bool kf_export_ident_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (!n || n > 48 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	if (!strncmp(s, "kf_", 3))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

void kf_export_ident_default(const char *task_name, char *out, size_t n)
{
	size_t j = 0;
	if (!n)
		return;
	if (task_name && isdigit((unsigned char)task_name[0]) && j + 1 < n)
		out[j++] = 'k';
	for (const char *p = task_name ? task_name : ""; *p && j + 1 < n && j < 48; p++)
		out[j++] = (isalnum((unsigned char)*p) || *p == '_') ? *p : '_';
	if (!j && n > 1)
		out[j++] = 'k';
	out[j] = '\0';
	if (!strncmp(out, "kf_", 3) && n > 1)
		out[0] = 'K';
}

enum kf_status ex_ident(const struct kf_task *t, const struct kf_export_opts *o, char out[64],
			struct kf_err *err)
{
	if (o && o->ident) {
		if (!kf_export_ident_ok(o->ident))
			return kf_err_set(err, KF_ERR_INVALID,
					  "--name '%.80s' is not an identifier of at most 48 characters "
					  "([A-Za-z_][A-Za-z0-9_]*, not starting with 'kf_')",
					  o->ident);
		snprintf(out, 64, "%s", o->ident);
		return KF_OK;
	}
	kf_export_ident_default(t->name, out, 64);
	return KF_OK;
}
