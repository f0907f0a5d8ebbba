/* A task inferred from a kernel file: the __global__ functions and their parameter lists read from the
 * source (comments, strings and preprocessor lines blanked first), parameters classified into tensors,
 * dims and params, and the launch directive proposed from the common indexing patterns (a 1-D or 2-D
 * global index with a bounds check, a block per row with a block-stride loop). Anything it cannot tell is
 * written as a field marked TODO. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "scaffold/scaffold.h"
#include "task.h"

#define SC_MAX_PARAMS 32
#define SC_MAX_KERNELS 32

enum sc_kind { SC_TENSOR, SC_DIM, SC_PARAM, SC_UNKNOWN };

struct sc_param {
	char name[64];
	char type[128]; /* type words, qualifiers removed: "float", "long long" */
	enum sc_kind kind;
	bool is_const; /* a pointer to const: an input */
	bool dtype_ok; /* dtype is known */
	enum kf_dtype dtype;
	bool is_long;   /* an 8-byte integer: passed as long(D) */
	bool is_vector; /* float4, __half2, ...: elements of the scalar dtype */
};

struct sc_kernel {
	char name[128];
	bool extern_c, is_template;
	size_t decl_start;           /* offset of the declaration's first token */
	size_t body_start, body_end; /* between the braces */
	long launch_bounds;          /* 0: none */
	size_t n_params;
	bool params_ok; /* the list was read (not too long, no macro) */
	struct sc_param params[SC_MAX_PARAMS];
};

/* ---- the code view: comments, literals and preprocessor lines blanked, offsets kept ---- */

static char *code_view(const char *src, size_t len)
{
	char *c = malloc(len + 1);
	size_t i = 0;
	bool line_start = true;
	if (!c)
		return NULL;
	memcpy(c, src, len);
	c[len] = '\0';
	while (i < len) {
		if (line_start) {
			size_t j = i;
			while (j < len && (c[j] == ' ' || c[j] == '\t'))
				j++;
			if (j < len && c[j] == '#') {
				/* a preprocessor line, with its continuations */
				while (j < len && c[j] != '\n') {
					if (c[j] == '\\' && j + 1 < len && c[j + 1] == '\n')
						j++;
					c[j] = c[j] == '\n' ? '\n' : ' ';
					j++;
				}
				i = j;
				continue;
			}
		}
		line_start = false;
		if (c[i] == '/' && i + 1 < len && c[i + 1] == '/') {
			while (i < len && c[i] != '\n')
				c[i++] = ' ';
		} else if (c[i] == '/' && i + 1 < len && c[i + 1] == '*') {
			c[i++] = ' ';
			c[i++] = ' ';
			while (i < len && !(c[i] == '*' && i + 1 < len && c[i + 1] == '/')) {
				if (c[i] != '\n')
					c[i] = ' ';
				i++;
			}
			if (i < len)
				c[i++] = ' ';
			if (i < len)
				c[i++] = ' ';
		} else if (c[i] == '"' || c[i] == '\'') {
			char q = c[i++];
			while (i < len && c[i] != q && c[i] != '\n') {
				if (c[i] == '\\' && i + 1 < len)
					c[i++] = ' ';
				c[i++] = ' ';
			}
			if (i < len && c[i] == q)
				i++;
		} else {
			if (c[i] == '\n')
				line_start = true;
			i++;
		}
	}
	return c;
}

static bool is_id(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

static bool word_at(const char *c, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);
	return i + n <= len && !strncmp(c + i, w, n) && (i == 0 || !is_id(c[i - 1])) &&
	       (i + n == len || !is_id(c[i + n]));
}

static size_t skip_ws(const char *c, size_t len, size_t i)
{
	while (i < len && isspace((unsigned char)c[i]))
		i++;
	return i;
}

/* i at an opening bracket: the index just past its match, or len. */
static size_t match(const char *c, size_t len, size_t i)
{
	char open = c[i], close = open == '(' ? ')' : open == '{' ? '}' : open == '[' ? ']' : '>';
	int depth = 0;
	for (; i < len; i++) {
		if (c[i] == open)
			depth++;
		else if (c[i] == close && --depth == 0)
			return i + 1;
	}
	return len;
}

/* ---- parameter declarations ---- */

static const struct {
	const char *type;
	enum kf_dtype dt;
	bool is_long, vector;
} elem_types[] = {
    {"float", KF_DTYPE_F32, false, false},
    {"double", KF_DTYPE_F64, false, false},
    {"__half", KF_DTYPE_F16, false, false},
    {"half", KF_DTYPE_F16, false, false},
    {"__nv_bfloat16", KF_DTYPE_BF16, false, false},
    {"nv_bfloat16", KF_DTYPE_BF16, false, false},
    {"int", KF_DTYPE_I32, false, false},
    {"signed", KF_DTYPE_I32, false, false},
    {"signed int", KF_DTYPE_I32, false, false},
    {"int32_t", KF_DTYPE_I32, false, false},
    {"unsigned", KF_DTYPE_I32, false, false},
    {"unsigned int", KF_DTYPE_I32, false, false},
    {"uint32_t", KF_DTYPE_I32, false, false},
    {"long", KF_DTYPE_I64, true, false},
    {"long int", KF_DTYPE_I64, true, false},
    {"long long", KF_DTYPE_I64, true, false},
    {"long long int", KF_DTYPE_I64, true, false},
    {"unsigned long", KF_DTYPE_I64, true, false},
    {"unsigned long long", KF_DTYPE_I64, true, false},
    {"int64_t", KF_DTYPE_I64, true, false},
    {"uint64_t", KF_DTYPE_I64, true, false},
    {"size_t", KF_DTYPE_I64, true, false},
    {"ptrdiff_t", KF_DTYPE_I64, true, false},
    {"short", KF_DTYPE_I16, false, false},
    {"int16_t", KF_DTYPE_I16, false, false},
    {"signed char", KF_DTYPE_I8, false, false},
    {"char", KF_DTYPE_I8, false, false},
    {"int8_t", KF_DTYPE_I8, false, false},
    {"unsigned char", KF_DTYPE_U8, false, false},
    {"uint8_t", KF_DTYPE_U8, false, false},
    {"float2", KF_DTYPE_F32, false, true},
    {"float4", KF_DTYPE_F32, false, true},
    {"double2", KF_DTYPE_F64, false, true},
    {"__half2", KF_DTYPE_F16, false, true},
    {"half2", KF_DTYPE_F16, false, true},
    {"__nv_bfloat162", KF_DTYPE_BF16, false, true},
    {"int2", KF_DTYPE_I32, false, true},
    {"int4", KF_DTYPE_I32, false, true},
};

/* Fills p from one declaration ("const float *__restrict__ x", "int N", "long long n = 4"). */
static void parse_param(const char *d, size_t n, struct sc_param *p)
{
	static const char *const quals[] = {"const",      "volatile", "__restrict__",
					    "__restrict", "restrict", "register"};
	char words[8][64];
	size_t nw = 0, ptr = 0;
	bool ref = false, const_before_ptr = false, array = false;

	memset(p, 0, sizeof(*p));
	p->kind = SC_UNKNOWN;
	for (size_t i = 0; i < n;) {
		if (d[i] == '=')
			break; /* a default argument */
		if (d[i] == '*') {
			ptr++;
			i++;
		} else if (d[i] == '&') {
			ref = true;
			i++;
		} else if (d[i] == '[') {
			array = true;
			i = i + 1 < n ? match(d, n, i) : n;
		} else if (is_id(d[i]) && !isdigit((unsigned char)d[i])) {
			size_t a = i;
			bool q = false;
			while (i < n && is_id(d[i]))
				i++;
			for (size_t k = 0; k < KF_ARRAY_SIZE(quals); k++)
				if (strlen(quals[k]) == i - a && !strncmp(d + a, quals[k], i - a)) {
					q = true;
					if (!strcmp(quals[k], "const") && !ptr)
						const_before_ptr = true;
				}
			if (!q && nw < KF_ARRAY_SIZE(words) && i - a < sizeof(words[0]))
				snprintf(words[nw++], sizeof(words[0]), "%.*s", (int)(i - a), d + a);
		} else {
			i++;
		}
	}
	if (nw < 2 || ref || ptr > 1)
		return; /* no name, a reference, a pointer to pointer: not a tensor, dim or param */
	snprintf(p->name, sizeof(p->name), "%s", words[nw - 1]);
	for (size_t i = 0; i + 1 < nw; i++) {
		const char *w = words[i];
		if (!strcmp(w, "std"))
			continue;
		size_t used = strlen(p->type);
		snprintf(p->type + used, sizeof(p->type) - used, "%s%s", used ? " " : "", w);
	}
	for (size_t k = 0; k < KF_ARRAY_SIZE(elem_types); k++) {
		if (strcmp(p->type, elem_types[k].type))
			continue;
		p->dtype_ok = true;
		p->dtype = elem_types[k].dt;
		p->is_long = elem_types[k].is_long;
		p->is_vector = elem_types[k].vector;
	}
	if (ptr || array) {
		p->kind = SC_TENSOR;
		p->is_const = const_before_ptr;
	} else if (p->dtype_ok && !p->is_vector && !kf_dtype_is_float(p->dtype) && p->dtype != KF_DTYPE_I8 &&
		   p->dtype != KF_DTYPE_U8 && p->dtype != KF_DTYPE_I16) {
		p->kind = SC_DIM;
	} else if (p->dtype_ok && !p->is_vector && (p->dtype == KF_DTYPE_F32 || p->dtype == KF_DTYPE_F64)) {
		p->kind = SC_PARAM;
	}
}

static void read_params(const char *c, size_t a, size_t b, struct sc_kernel *k)
{
	size_t start = a;
	int depth = 0;
	k->params_ok = true;
	if (skip_ws(c, b, a) == b)
		return; /* () */
	for (size_t i = a; i <= b; i++) {
		if (i < b && (c[i] == '(' || c[i] == '[' || c[i] == '<'))
			depth++;
		else if (i < b && (c[i] == ')' || c[i] == ']' || c[i] == '>'))
			depth--;
		if (i == b || (c[i] == ',' && depth == 0)) {
			if (k->n_params == SC_MAX_PARAMS) {
				k->params_ok = false;
				return;
			}
			parse_param(c + start, i - start, &k->params[k->n_params++]);
			start = i + 1;
		}
	}
	if (k->n_params == 1 && !k->params[0].name[0] && !strcmp(k->params[0].type, "")) {
		/* "(void)" */
		size_t v = skip_ws(c, b, a);
		if (word_at(c, b, v, "void"))
			k->n_params = 0;
	}
}

/* Every __global__ function with a body. */
static size_t find_kernels(const char *src, const char *c, size_t len, struct sc_kernel *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n < max; i++) {
		struct sc_kernel *k = &out[n];
		size_t j, name_end = 0, name_start = 0, bound;
		if (!word_at(c, len, i, "__global__"))
			continue;
		memset(k, 0, sizeof(*k));
		/* the declaration starts after the previous ; { } (or a preprocessor line, blanked) */
		bound = i;
		while (bound > 0 && c[bound - 1] != ';' && c[bound - 1] != '{' && c[bound - 1] != '}')
			bound--;
		k->decl_start = skip_ws(c, len, bound);
		for (j = k->decl_start; j < i; j++) {
			if (word_at(c, len, j, "template"))
				k->is_template = true;
			if (word_at(c, len, j, "extern") &&
			    strstr(src + j, "\"C\"") == src + skip_ws(src, len, j + 6))
				k->extern_c = true;
		}
		if (bound > 0 && c[bound - 1] == '{') {
			/* inside extern "C" { ... } */
			size_t e = bound - 1;
			while (e > 0 && isspace((unsigned char)src[e - 1]))
				e--;
			if (e >= 3 && !strncmp(src + e - 3, "\"C\"", 3))
				k->extern_c = true;
		}
		/* past __global__: return type, __launch_bounds__(...), the name, the parameter list */
		for (j = i + 10; j < len && c[j] != '(' && c[j] != ';' && c[j] != '{'; j++) {
			if (word_at(c, len, j, "__launch_bounds__")) {
				size_t p = skip_ws(c, len, j + 17);
				if (p < len && c[p] == '(') {
					k->launch_bounds = strtol(c + p + 1, NULL, 10);
					j = match(c, len, p) - 1;
				}
				continue;
			}
			if (is_id(c[j]) && (j == 0 || !is_id(c[j - 1]))) {
				name_start = j;
				while (j + 1 < len && is_id(c[j + 1]))
					j++;
				name_end = j + 1;
			}
		}
		if (j >= len || c[j] != '(' || !name_end)
			continue;
		snprintf(k->name, sizeof(k->name), "%.*s", (int)(name_end - name_start), c + name_start);
		{
			size_t close = match(c, len, j);
			read_params(c, j + 1, close - 1, k);
			j = skip_ws(c, len, close);
		}
		while (j < len && c[j] != '{' && c[j] != ';')
			j++;
		if (j >= len || c[j] != '{')
			continue; /* a declaration; the definition comes later */
		k->body_start = j + 1;
		k->body_end = match(c, len, j) - 1;
		i = k->body_end;
		n++;
	}
	return n;
}

/* ---- the launch pattern ---- */

/* s with whitespace removed, into a new string; one space stays where it separates two words
 * ("size_t i", "unsigned int"). */
static char *squeeze(const char *s, size_t n)
{
	char *o = calloc(n + 1, 1); /* zeroed: every byte past the end is a terminator */
	size_t j = 0;
	bool gap = false;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (isspace((unsigned char)s[i])) {
			gap = true;
			continue;
		}
		if (gap && j && is_id(o[j - 1]) && is_id(s[i]))
			o[j++] = ' ';
		gap = false;
		o[j++] = s[i];
	}
	o[j] = '\0';
	return o;
}

/* An index expression reduced for comparison: casts to integer types and parentheses removed. */
static void reduce_expr(const char *e, size_t n, char *out, size_t max)
{
	static const char *const casts[] = {
	    "(long long)", "(int64_t)", "(size_t)",   "(int)",     "(unsigned)",           "(unsigned int)",
	    "(uint64_t)",  "(long)",    "(uint32_t)", "(int32_t)", "(unsigned long long)", "(ptrdiff_t)"};
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < max;) {
		bool cut = false;
		for (size_t k = 0; k < KF_ARRAY_SIZE(casts); k++)
			if (!strncmp(e + i, casts[k], strlen(casts[k])) && i + strlen(casts[k]) <= n) {
				i += strlen(casts[k]);
				cut = true;
				break;
			}
		if (cut)
			continue;
		if (e[i] != '(' && e[i] != ')')
			out[j++] = e[i];
		i++;
	}
	out[j] = '\0';
}

static bool is_global_index(const char *r, char axis)
{
	char a[64], b[64], c[64], d[64];
	snprintf(a, sizeof(a), "blockIdx.%c*blockDim.%c+threadIdx.%c", axis, axis, axis);
	snprintf(b, sizeof(b), "blockDim.%c*blockIdx.%c+threadIdx.%c", axis, axis, axis);
	snprintf(c, sizeof(c), "threadIdx.%c+blockIdx.%c*blockDim.%c", axis, axis, axis);
	snprintf(d, sizeof(d), "threadIdx.%c+blockDim.%c*blockIdx.%c", axis, axis, axis);
	return !strcmp(r, a) || !strcmp(r, b) || !strcmp(r, c) || !strcmp(r, d);
}

/* The variable assigned the global index along axis ("i = blockIdx.x * blockDim.x + threadIdx.x"). */
static bool find_index_var(const char *s, char axis, char *var, size_t n)
{
	size_t len = strlen(s);
	for (size_t i = 1; i + 1 < len; i++) {
		char red[256];
		size_t a, e;
		char prev = s[i - 1], next = s[i + 1];
		if (s[i] != '=' || next == '=' || !prev || strchr("=!<>+-*/%&|^", prev))
			continue;
		a = i;
		while (a > 0 && is_id(s[a - 1]))
			a--;
		if (a == i || isdigit((unsigned char)s[a]))
			continue;
		e = i + 1;
		while (e < len && s[e] != ';' && s[e] != ',' && s[e] != '{' && s[e] != '}')
			e++;
		if (e - i > 200)
			continue;
		reduce_expr(s + i + 1, e - i - 1, red, sizeof(red));
		if (is_global_index(red, axis)) {
			snprintf(var, n, "%.*s", (int)(i - a), s + a);
			return true;
		}
	}
	return false;
}

static bool is_dim(const struct sc_kernel *k, const char *name)
{
	for (size_t i = 0; i < k->n_params; i++)
		if (k->params[i].kind == SC_DIM && !strcmp(k->params[i].name, name))
			return true;
	return false;
}

/* The dim an index is bounded by: "var<D", "var>=D", "D>var", "D<=var" in the squeezed body. */
static bool find_bound(const char *s, const char *var, const struct sc_kernel *k, char *dim, size_t n)
{
	size_t vl = strlen(var), len = strlen(s);
	for (size_t i = 0; i + vl < len; i++) {
		char w[64];
		size_t a, e;
		if (strncmp(s + i, var, vl) || (i && is_id(s[i - 1])) || is_id(s[i + vl]))
			continue;
		/* var<D or var>=D */
		a = i + vl;
		if (s[a] == '<' && s[a + 1] != '<' && s[a + 1] != '=')
			a += 1;
		else if (s[a] == '>' && s[a + 1] == '=')
			a += 2;
		else
			a = 0;
		if (a) {
			e = a;
			while (e < len && is_id(s[e]))
				e++;
			snprintf(w, sizeof(w), "%.*s", (int)(e - a), s + a);
			if (is_dim(k, w)) {
				snprintf(dim, n, "%s", w);
				return true;
			}
		}
		/* D>var or D<=var */
		if (i >= 2 && (s[i - 1] == '>' || (s[i - 1] == '=' && s[i - 2] == '<'))) {
			e = s[i - 1] == '>' ? i - 1 : i - 2;
			a = e;
			while (a > 0 && is_id(s[a - 1]))
				a--;
			snprintf(w, sizeof(w), "%.*s", (int)(e - a), s + a);
			if (is_dim(k, w)) {
				snprintf(dim, n, "%s", w);
				return true;
			}
		}
	}
	return false;
}

/* A block-stride loop "for(...=threadIdx.x;...<D;...+=blockDim.x)": its bound. */
static bool find_block_loop(const char *s, const struct sc_kernel *k, char *dim, size_t n)
{
	const char *p = s;
	while ((p = strstr(p, "=threadIdx.x;"))) {
		const char *q = p + 13, *lt = strchr(q, '<'), *semi = strchr(q, ';');
		if (lt && semi && lt < semi && strstr(semi, "+=blockDim.x") &&
		    strstr(semi, "+=blockDim.x") - semi < 40) {
			char w[64];
			size_t a = (size_t)(lt - s) + 1, e = a;
			while (s[e] && is_id(s[e]))
				e++;
			snprintf(w, sizeof(w), "%.*s", (int)(e - a), s + a);
			if (is_dim(k, w)) {
				snprintf(dim, n, "%s", w);
				return true;
			}
		}
		p = q;
	}
	return false;
}

struct launch_guess {
	char grid[256], block[64], smem[128];
	bool grid_todo, smem_todo;
	char how[200]; /* what pattern it came from */
};

static void guess_launch(const char *code, size_t len, const struct sc_kernel *k, struct launch_guess *g)
{
	char *s = squeeze(code + k->body_start, k->body_end - k->body_start);
	char xv[64], yv[64], xd[64], yd[64], rd[64];
	long bs = k->launch_bounds > 0 && k->launch_bounds <= 1024 ? k->launch_bounds : 256;

	memset(g, 0, sizeof(*g));
	if (!s) {
		g->grid_todo = true;
		return;
	}
	if (find_index_var(s, 'x', xv, sizeof(xv)) && find_index_var(s, 'y', yv, sizeof(yv)) &&
	    find_bound(s, xv, k, xd, sizeof(xd)) && find_bound(s, yv, k, yd, sizeof(yd))) {
		snprintf(g->grid, sizeof(g->grid), "cdiv(%s, 16), cdiv(%s, 16)", xd, yd);
		snprintf(g->block, sizeof(g->block), "16, 16");
		snprintf(g->how, sizeof(g->how), "a 2-D index (%s < %s, %s < %s): 16x16 threads per block",
			 xv, xd, yv, yd);
	} else if (find_index_var(s, 'x', xv, sizeof(xv)) && find_bound(s, xv, k, xd, sizeof(xd))) {
		snprintf(g->grid, sizeof(g->grid), "cdiv(%s, %ld)", xd, bs);
		snprintf(g->block, sizeof(g->block), "%ld", bs);
		snprintf(g->how, sizeof(g->how),
			 "a 1-D index with a bounds check (%s < %s): one thread per element", xv, xd);
	} else if (strstr(s, "blockIdx.x") && find_block_loop(s, k, rd, sizeof(rd))) {
		/* a block per row: the rows are the dim blockIdx.x is checked against, or the only other dim
		 */
		char other[64] = "";
		size_t n_dims = 0;
		for (size_t i = 0; i < k->n_params; i++)
			if (k->params[i].kind == SC_DIM) {
				n_dims++;
				if (strcmp(k->params[i].name, rd))
					snprintf(other, sizeof(other), "%s", k->params[i].name);
			}
		if (!find_bound(s, "blockIdx.x", k, xd, sizeof(xd)))
			snprintf(xd, sizeof(xd), "%s", n_dims == 2 ? other : "");
		if (xd[0]) {
			snprintf(g->grid, sizeof(g->grid), "%s", xd);
			snprintf(g->block, sizeof(g->block), "%ld", bs);
			snprintf(g->how, sizeof(g->how),
				 "a block per row (blockIdx.x over %s) with a block-stride loop over %s", xd,
				 rd);
		} else {
			g->grid_todo = true;
			snprintf(g->block, sizeof(g->block), "%ld", bs);
		}
	} else {
		g->grid_todo = true;
		snprintf(g->block, sizeof(g->block), "%ld", bs);
	}
	if (g->grid_todo) {
		const char *d0 = "N";
		for (size_t i = 0; i < k->n_params; i++)
			if (k->params[i].kind == SC_DIM) {
				d0 = k->params[i].name;
				break;
			}
		snprintf(g->grid, sizeof(g->grid),
			 "TODO(kforge): the grid, an expression over the dims such as cdiv(%s, %ld)", d0, bs);
	}
	/* dynamic shared memory (an extern __shared__ array the kernel uses): its size is the author's */
	char *all = squeeze(code, len);
	for (const char *p = all; p && (p = strstr(p, "extern __shared__")) && !g->smem_todo; p += 17) {
		const char *br = strchr(p, '['), *semi = strchr(p, ';'), *a;
		char arr[64];
		if (!br || (semi && semi < br))
			continue;
		for (a = br; a > p && is_id(a[-1]); a--)
			;
		snprintf(arr, sizeof(arr), "%.*s", (int)(br - a), a);
		for (const char *q = s; arr[0] && (q = strstr(q, arr)); q++)
			if ((q == s || !is_id(q[-1])) && !is_id(q[strlen(arr)])) {
				g->smem_todo = true;
				break;
			}
	}
	if (g->smem_todo) {
		char threads[64];
		snprintf(threads, sizeof(threads), "%s", g->block[0] ? g->block : "256");
		for (char *c = threads; *c; c++)
			if (*c == ',')
				*c = '*';
		for (char *c = threads, *d = threads;; c++)
			if (*c != ' ' && !(*d++ = *c))
				break;
		snprintf(g->smem, sizeof(g->smem), "TODO(kforge): bytes of dynamic shared memory, e.g. %s*4",
			 threads);
	}
	free(all);
	free(s);
}

/* ---- the task ---- */

/* JSON as the suite writes it: two-space indentation, a value on one line when it fits in 100 columns. */
static enum kf_status json_compact(struct kf_buf *b, const cJSON *j)
{
	enum kf_status st = KF_OK;
	if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
		bool obj = cJSON_IsObject(j);
		st = kf_buf_addch(b, obj ? '{' : '[');
		for (const cJSON *e = j->child; e && !st; e = e->next) {
			if (obj) {
				cJSON *k = cJSON_CreateString(e->string);
				char *ks = k ? cJSON_PrintUnformatted(k) : NULL;
				st = ks ? kf_buf_addf(b, "%s: ", ks) : KF_ERR_NOMEM;
				free(ks);
				cJSON_Delete(k);
			}
			if (!st)
				st = json_compact(b, e);
			if (!st && e->next)
				st = kf_buf_adds(b, ", ");
		}
		return st ? st : kf_buf_addch(b, obj ? '}' : ']');
	}
	char *v = cJSON_PrintUnformatted(j);
	st = v ? kf_buf_adds(b, v) : KF_ERR_NOMEM;
	free(v);
	return st;
}

static enum kf_status json_pretty(struct kf_buf *b, const cJSON *j, int indent, int col)
{
	struct kf_buf one = KF_BUF_INIT((size_t)1 << 20);
	enum kf_status st = json_compact(&one, j);
	bool obj = cJSON_IsObject(j);
	if (st || (!cJSON_IsArray(j) && !obj) || col + one.len <= 100 || !j->child) {
		if (!st)
			st = kf_buf_add(b, one.data, one.len);
		kf_buf_release(&one);
		return st;
	}
	kf_buf_release(&one);
	st = kf_buf_adds(b, obj ? "{\n" : "[\n");
	for (const cJSON *e = j->child; e && !st; e = e->next) {
		int c = indent + 2;
		st = kf_buf_addf(b, "%*s", indent + 2, "");
		if (obj && !st) {
			cJSON *k = cJSON_CreateString(e->string);
			char *ks = k ? cJSON_PrintUnformatted(k) : NULL;
			st = ks ? kf_buf_addf(b, "%s: ", ks) : KF_ERR_NOMEM;
			c += ks ? (int)strlen(ks) + 2 : 0;
			free(ks);
			cJSON_Delete(k);
		}
		if (!st)
			st = json_pretty(b, e, indent + 2, c);
		if (!st)
			st = kf_buf_adds(b, e->next ? ",\n" : "\n");
	}
	if (!st)
		st = kf_buf_addf(b, "%*s%c", indent, "", obj ? '}' : ']');
	return st;
}

/* Proposed shapes: sizes whose product over n dims stays near 2^total_log2. */
static cJSON *shape_obj(const struct sc_kernel *k, long v)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < k->n_params; i++)
		if (k->params[i].kind == SC_DIM)
			cJSON_AddNumberToObject(o, k->params[i].name, (double)v);
	return o;
}

static long size_for(size_t n_dims, double log2_total)
{
	long v = (long)pow(2.0, floor(log2_total / (double)(n_dims ? n_dims : 1)));
	return v < 2 ? 2 : v;
}

#define NOTE(...)                                                                                            \
	do {                                                                                                 \
		if (!st)                                                                                     \
			st = kf_buf_addf(&out->notes, __VA_ARGS__);                                          \
	} while (0)

static cJSON *todo(struct kf_scaffold *out, const char *text)
{
	out->n_todo++;
	return cJSON_CreateString(text);
}

static enum kf_status build(const char *name, const char *path, const char *src, size_t len, const char *code,
			    const struct sc_kernel *k, struct kf_scaffold *out, struct kf_err *err)
{
	enum kf_status st = KF_OK;
	cJSON *t = cJSON_CreateObject(), *dims, *shapes, *tensors, *params = NULL, *a;
	struct launch_guess g;
	size_t n_dims = 0, n_tensors = 0;
	char buf[512];
	const char *base = strrchr(path, '/');
	bool has_directive = memmem(src, len, "kforge:launch", 13) != NULL;
	bool all_1d;

	base = base ? base + 1 : path;
	for (size_t i = 0; i < k->n_params; i++) {
		n_dims += k->params[i].kind == SC_DIM;
		n_tensors += k->params[i].kind == SC_TENSOR;
	}
	all_1d = n_dims == 1;
	if (!t)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	cJSON_AddStringToObject(t, "format", "kforge-task/1");
	cJSON_AddStringToObject(t, "name", name);
	cJSON_AddItemToObject(t, "title", todo(out, "TODO: a one-line title, e.g. 'Row-wise softmax, fp32'"));
	if (all_1d && n_tensors) {
		cJSON_AddStringToObject(t, "category", "elementwise");
		for (size_t i = 0; i < k->n_params; i++)
			if (k->params[i].kind == SC_DIM)
				NOTE("category: elementwise (one dim: every tensor has %s elements); change "
				     "it if the "
				     "kernel is a reduction or a scan\n",
				     k->params[i].name);
	} else {
		cJSON_AddItemToObject(
		    t, "category",
		    todo(out, "TODO: one word: elementwise, reduction, softmax, norm, gemm, conv, "
			      "scan, attention, ..."));
	}
	cJSON_AddNumberToObject(t, "level", 1);
	snprintf(buf, sizeof(buf),
		 "TODO: what %s computes, as a formula over the tensors (shown to people and to the LLM)",
		 k->name);
	cJSON_AddItemToObject(t, "description", todo(out, buf));
	dims = cJSON_AddArrayToObject(t, "dims");
	for (size_t i = 0; dims && i < k->n_params; i++)
		if (k->params[i].kind == SC_DIM)
			cJSON_AddItemToArray(dims, cJSON_CreateString(k->params[i].name));
	shapes = cJSON_AddObjectToObject(t, "shapes");
	if (n_dims && shapes) {
		long p1 = size_for(n_dims, 14), p2 = size_for(n_dims, 20), tm = size_for(n_dims, 24);
		a = cJSON_AddArrayToObject(shapes, "public");
		cJSON_AddItemToArray(a, shape_obj(k, p1));
		cJSON_AddItemToArray(a, shape_obj(k, p2));
		a = cJSON_AddArrayToObject(shapes, "hidden");
		cJSON_AddItemToArray(a, shape_obj(k, 1));
		cJSON_AddItemToArray(a, shape_obj(k, p1 + 1));
		a = cJSON_AddArrayToObject(shapes, "timing");
		cJSON_AddItemToArray(a, shape_obj(k, tm));
		NOTE("shapes: proposed sizes (every dim %ld and %ld public, 1 and %ld hidden, %ld timing); "
		     "use the "
		     "sizes your op runs at, and list dims that must stay fixed in fixed_dims\n",
		     p1, p2, p1 + 1, tm);
	} else if (shapes) {
		cJSON_AddItemToObject(
		    shapes, "public",
		    todo(out, "TODO: the kernel takes no integer size: list shapes as [{\"DIM\": "
			      "value}] after adding dims"));
	}
	tensors = cJSON_AddArrayToObject(t, "tensors");
	for (size_t i = 0; tensors && i < k->n_params; i++) {
		const struct sc_param *p = &k->params[i];
		cJSON *x;
		if (p->kind != SC_TENSOR)
			continue;
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", p->name);
		cJSON_AddStringToObject(x, "role", p->is_const ? "input" : "output");
		if (!p->is_const)
			NOTE("tensors %s: output (not const); make it \"inout\" if the kernel reads its old "
			     "values\n",
			     p->name);
		if (p->dtype_ok) {
			cJSON_AddStringToObject(x, "dtype", kf_dtype_name(p->dtype));
			if (p->is_vector)
				NOTE("tensors %s: %s elements as %s (the shape counts %s elements, not "
				     "vectors)\n",
				     p->name, p->type, kf_dtype_name(p->dtype), kf_dtype_name(p->dtype));
		} else {
			snprintf(buf, sizeof(buf),
				 "TODO: the element type of %s (%s): f32, f16, bf16, f64, i32, ...", p->name,
				 p->type[0] ? p->type : "unknown");
			cJSON_AddItemToObject(x, "dtype", todo(out, buf));
		}
		if (all_1d) {
			cJSON *sh = cJSON_AddArrayToObject(x, "shape");
			for (size_t d = 0; sh && d < k->n_params; d++)
				if (k->params[d].kind == SC_DIM)
					cJSON_AddItemToArray(sh, cJSON_CreateString(k->params[d].name));
		} else {
			size_t used = 0;
			used += (size_t)snprintf(buf, sizeof(buf),
						 "TODO: the shape of %s as a list of dims and "
						 "expressions, e.g. [",
						 p->name);
			for (size_t d = 0, m = 0; d < k->n_params && used < sizeof(buf) - 16; d++)
				if (k->params[d].kind == SC_DIM && m < 2)
					used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s\"%s\"",
								 m++ ? ", " : "", k->params[d].name);
			snprintf(buf + used, sizeof(buf) - used, "]");
			cJSON_AddItemToObject(x, "shape", todo(out, buf));
		}
		cJSON_AddItemToArray(tensors, x);
	}
	for (size_t i = 0; i < k->n_params; i++) {
		const struct sc_param *p = &k->params[i];
		cJSON *x;
		if (p->kind != SC_PARAM)
			continue;
		if (!params)
			params = cJSON_AddArrayToObject(t, "params");
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", p->name);
		cJSON_AddStringToObject(x, "dtype", kf_dtype_name(p->dtype));
		snprintf(buf, sizeof(buf), "TODO: the value of %s (a number) the task is verified at",
			 p->name);
		cJSON_AddItemToObject(x, "value", todo(out, buf));
		cJSON_AddItemToArray(params, x);
	}
	cJSON_AddStringToObject(t, "reference", "reference.cu");
	if (all_1d && n_tensors) {
		size_t bytes = 0;
		bool known = true;
		for (size_t i = 0; i < k->n_params; i++)
			if (k->params[i].kind == SC_TENSOR) {
				known &= k->params[i].dtype_ok;
				bytes += k->params[i].dtype_ok ? kf_dtype_size(k->params[i].dtype) : 0;
			}
		for (size_t d = 0; known && d < k->n_params; d++)
			if (k->params[d].kind == SC_DIM) {
				snprintf(buf, sizeof(buf), "%zu*%s", bytes, k->params[d].name);
				cJSON_AddStringToObject(t, "bytes", buf);
			}
	}
	if (!st)
		st = json_pretty(&out->task_json, t, 0, 0);
	cJSON_Delete(t);
	if (!st)
		st = kf_buf_addch(&out->task_json, '\n');
	if (st)
		return kf_err_set(err, st, "cannot write the task: %s", kf_status_name(st));

	/* the reference: the source, the directive above the kernel, extern "C" where it is missing */
	for (size_t i = 0; i < k->n_params; i++)
		if (k->params[i].kind == SC_UNKNOWN)
			out->n_todo++;
	guess_launch(code, len, k, &g);
	if (has_directive) {
		NOTE("reference.cu: the file's own kforge directives are kept as they are\n");
		if (!st)
			st = kf_buf_add(&out->reference, src, len);
		return st;
	}
	if (g.grid_todo)
		out->n_todo++;
	if (g.smem_todo)
		out->n_todo++;
	if (!st)
		st = kf_buf_add(&out->reference, src, k->decl_start);
	if (!st)
		st = kf_buf_addf(&out->reference, "// Reference for %s, from %s (kforge tasks new).\n", name,
				 base);
	if (!g.grid_todo && !st)
		st = kf_buf_addf(&out->reference, "// The launch below was proposed from %s: check it.\n",
				 g.how);
	if (!st)
		st = kf_buf_addf(&out->reference, "// kforge:launch %s%s grid=(%s) block=(%s)", k->name,
				 k->is_template ? "<TODO(kforge): the template arguments, e.g. 256>" : "",
				 g.grid, g.block);
	if (k->is_template)
		out->n_todo++;
	if (g.smem_todo && !st)
		st = kf_buf_addf(&out->reference, " smem=(%s)", g.smem);
	if (!st)
		st = kf_buf_adds(&out->reference, " args=(");
	for (size_t i = 0; i < k->n_params && !st; i++) {
		const struct sc_param *p = &k->params[i];
		const char *sep = i ? ", " : "";
		if (p->kind == SC_DIM && p->is_long)
			st = kf_buf_addf(&out->reference, "%slong(%s)", sep, p->name);
		else if (p->kind != SC_UNKNOWN)
			st = kf_buf_addf(&out->reference, "%s%s", sep, p->name);
		else
			st = kf_buf_addf(&out->reference,
					 "%sTODO(kforge): parameter %zu (%s) is not a tensor, dim or "
					 "param",
					 sep, i + 1, p->name[0] ? p->name : "unnamed");
	}
	if (!st)
		st = kf_buf_adds(&out->reference, ")\n");
	if (!k->extern_c && !k->is_template && !st)
		st = kf_buf_adds(&out->reference, "extern \"C\" ");
	if (!st)
		st = kf_buf_add(&out->reference, src + k->decl_start, len - k->decl_start);
	if (g.grid_todo)
		NOTE("reference.cu: no common launch pattern recognised: fill in the grid\n");
	else
		NOTE("reference.cu: launch proposed from %s\n", g.how);
	if (g.smem_todo)
		NOTE("reference.cu: the kernel uses extern __shared__: fill in smem (bytes per block)\n");
	if (!k->extern_c && !k->is_template)
		NOTE("reference.cu: extern \"C\" added to %s (kforge launches kernels by their C name)\n",
		     k->name);
	if (k->is_template)
		NOTE(
		    "reference.cu: %s is a template: name the instantiation in the directive, e.g. %s<256>\n",
		    k->name, k->name);
	if (memmem(code, len, "<<<", 3) || memmem(code, len, "main(", 5) ||
	    memmem(code, len, "cudaMalloc", 10))
		NOTE("reference.cu: the file has host code (main, <<<...>>>, cudaMalloc): a kernel file is "
		     "device "
		     "code only (NVRTC), remove it\n");
	return st;
}

enum kf_status kf_scaffold_from_kernel(const char *name, const char *path, const char *src, size_t len,
				       const char *kernel, struct kf_scaffold *out, struct kf_err *err)
{
	struct sc_kernel *ks;
	char *code;
	size_t n, pick = 0;
	enum kf_status st;

	if (!kf_scaffold_name_ok(name))
		return kf_err_set(err, KF_ERR_INVALID, "'%.80s' is not a task name ([a-z0-9_]+)",
				  name ? name : "");
	if (memchr(src, '\0', len))
		return kf_err_set(err, KF_ERR_INVALID, "%s: not a text file", path);
	code = code_view(src, len);
	ks = calloc(SC_MAX_KERNELS, sizeof(*ks));
	if (!code || !ks) {
		free(code);
		free(ks);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	n = find_kernels(src, code, len, ks, SC_MAX_KERNELS);
	if (!n) {
		st = kf_err_set(err, KF_ERR_INVALID, "%s: no __global__ function with a body", path);
		goto done;
	}
	if (kernel) {
		for (pick = 0; pick < n && strcmp(ks[pick].name, kernel); pick++)
			;
	} else if (n > 1) {
		pick = n;
	}
	if (pick == n) {
		char list[400];
		size_t used = 0;
		list[0] = '\0';
		for (size_t i = 0; i < n && used + 2 < sizeof(list); i++)
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
						 ks[i].name);
		st = kernel
			 ? kf_err_set(err, KF_ERR_INVALID, "%s: no __global__ function '%s' (there are: %s)",
				      path, kernel, list)
			 : kf_err_set(err, KF_ERR_INVALID,
				      "%s: %zu __global__ functions (%s): choose one with --kernel NAME",
				      path, n, list);
		goto done;
	}
	if (!ks[pick].params_ok) {
		st = kf_err_set(err, KF_ERR_INVALID, "%s: %s has more than %d parameters", path,
				ks[pick].name, SC_MAX_PARAMS);
		goto done;
	}
	st = build(name, path, src, len, code, &ks[pick], out, err);
	if (st && err && !err->code)
		kf_err_set(err, st, "cannot build the task: %s", kf_status_name(st));
done:
	free(code);
	free(ks);
	return st;
}
