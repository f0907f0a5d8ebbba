/* Text for people in reports: shapes written as B=16, N=1024 instead of JSON, and a unified line diff
 * (longest common subsequence of lines) to show what a candidate changed against its parent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report.h"

void kf_report_shape_label(const char *json, char *out, size_t n)
{
	cJSON *j;
	size_t used = 0;
	if (!n)
		return;
	out[0] = '\0';
	if (!json)
		return;
	j = cJSON_Parse(json);
	if (!cJSON_IsObject(j)) {
		snprintf(out, n, "%s", json);
		cJSON_Delete(j);
		return;
	}
	for (const cJSON *e = j->child; e; e = e->next) {
		int w;
		if (!cJSON_IsNumber(e) || !e->string) {
			snprintf(out, n, "%s", json);
			cJSON_Delete(j);
			return;
		}
		w = snprintf(out + used, n - used, "%s%s=%.15g", used ? ", " : "", e->string, e->valuedouble);
		if (w < 0 || (size_t)w >= n - used)
			break;
		used += (size_t)w;
	}
	cJSON_Delete(j);
}

/* ---- diff ---- */

#define DIFF_MAX_LINES 4000
#define DIFF_MAX_CELLS ((size_t)4 << 20)

struct lines {
	size_t n;
	const char **p; /* line starts */
	size_t *len;    /* without the newline */
};

static bool split(const char *s, struct lines *l)
{
	size_t n = 0, cap = 0;
	l->n = 0;
	l->p = NULL;
	l->len = NULL;
	for (const char *q = s; q && *q;) {
		const char *nl = strchr(q, '\n');
		size_t len = nl ? (size_t)(nl - q) : strlen(q);
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			const char **np = realloc(l->p, nc * sizeof(*np));
			size_t *nlen;
			if (!np)
				return false;
			l->p = np;
			nlen = realloc(l->len, nc * sizeof(*nlen));
			if (!nlen)
				return false;
			l->len = nlen;
			cap = nc;
		}
		l->p[n] = q;
		l->len[n] = len;
		n++;
		q = nl ? nl + 1 : q + len;
		if (n > DIFF_MAX_LINES)
			break;
	}
	l->n = n;
	return true;
}

static bool same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], a->len[i]);
}

enum op { OP_SAME, OP_DEL, OP_ADD };

static enum kf_status emit(struct kf_buf *out, enum op op, const char *p, size_t len, bool html)
{
	enum kf_status st;
	static const char mark[3] = {' ', '-', '+'};
	static const char *const cls[3] = {"ctx", "del", "add"};
	char *line;
	if (!html) {
		st = kf_buf_addch(out, mark[op]);
		if (!st)
			st = kf_buf_add(out, p, len);
		return st ? st : kf_buf_addch(out, '\n');
	}
	line = kf_strndup(p, len);
	if (!line)
		return KF_ERR_NOMEM;
	st = kf_buf_addf(out, "<span class=\"%s\">%c", cls[op], mark[op]);
	if (!st)
		st = kf_html_escape(out, line);
	free(line);
	return st ? st : kf_buf_adds(out, "</span>\n");
}

enum kf_status kf_text_diff(struct kf_buf *out, const char *a, const char *b, int ctx, bool html)
{
	struct lines A = {0}, B = {0};
	uint32_t *L = NULL;
	enum op *ops = NULL;
	size_t *ia = NULL, *ib = NULL, n_ops = 0, i, j, w;
	enum kf_status st = KF_OK;

	if (!strcmp(a ? a : "", b ? b : ""))
		return KF_OK;
	if (!split(a, &A) || !split(b, &B)) {
		st = KF_ERR_NOMEM;
		goto done;
	}
	if (A.n > DIFF_MAX_LINES || B.n > DIFF_MAX_LINES || (A.n + 1) * (B.n + 1) > DIFF_MAX_CELLS) {
		st = kf_buf_addf(out, "%s(%zu and %zu lines: too long to diff here)%s\n",
				 html ? "<span class=\"hunk\">" : "", A.n, B.n, html ? "</span>" : "");
		goto done;
	}
	/* L[i][j]: the longest common subsequence of A[i..] and B[j..] */
	w = B.n + 1;
	L = calloc((A.n + 1) * w, sizeof(*L));
	ops = malloc((A.n + B.n + 1) * sizeof(*ops));
	ia = malloc((A.n + B.n + 1) * sizeof(*ia));
	ib = malloc((A.n + B.n + 1) * sizeof(*ib));
	if (!L || !ops || !ia || !ib) {
		st = KF_ERR_NOMEM;
		goto done;
	}
	for (i = A.n; i-- > 0;)
		for (j = B.n; j-- > 0;)
			L[i * w + j] = same(&A, i, &B, j)
					   ? L[(i + 1) * w + j + 1] + 1
					   : (L[(i + 1) * w + j] > L[i * w + j + 1] ? L[(i + 1) * w + j]
										    : L[i * w + j + 1]);
	for (i = 0, j = 0; i < A.n || j < B.n;) {
		if (i < A.n && j < B.n && same(&A, i, &B, j)) {
			ops[n_ops] = OP_SAME, ia[n_ops] = i++, ib[n_ops++] = j++;
		} else if (i < A.n && (j == B.n || L[(i + 1) * w + j] >= L[i * w + j + 1])) {
			ops[n_ops] = OP_DEL, ia[n_ops] = i++,
			ib[n_ops++] = j; /* deletions before additions */
		} else {
			ops[n_ops] = OP_ADD, ia[n_ops] = i, ib[n_ops++] = j++;
		}
	}
	/* hunks: changes with ctx lines of context around them; changes closer than 2*ctx share one */
	for (size_t k = 0; k < n_ops && !st;) {
		size_t s, e, lc, na = 0, nb = 0;
		if (ops[k] == OP_SAME) {
			k++;
			continue;
		}
		s = k > (size_t)ctx ? k - (size_t)ctx : 0;
		lc = k;
		for (size_t q = k + 1; q < n_ops && q - lc <= (size_t)(2 * ctx) + 1; q++)
			if (ops[q] != OP_SAME)
				lc = q;
		e = lc + 1 + (size_t)ctx < n_ops ? lc + 1 + (size_t)ctx : n_ops;
		for (size_t q = s; q < e; q++) {
			na += ops[q] != OP_ADD;
			nb += ops[q] != OP_DEL;
		}
		st = kf_buf_addf(out, "%s@@ -%zu,%zu +%zu,%zu @@%s\n", html ? "<span class=\"hunk\">" : "",
				 ia[s] + (na ? 1 : 0), na, ib[s] + (nb ? 1 : 0), nb, html ? "</span>" : "");
		for (size_t q = s; q < e && !st; q++)
			st = ops[q] == OP_ADD ? emit(out, OP_ADD, B.p[ib[q]], B.len[ib[q]], html)
					      : emit(out, ops[q], A.p[ia[q]], A.len[ia[q]], html);
		k = e;
	}
done:
	free(A.p);
	free(A.len);
	free(B.p);
	free(B.len);
	free(L);
	free(ops);
	free(ia);
	free(ib);
	return st;
}
