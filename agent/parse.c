/* Turns an LLM reply into a candidate kernel file (PCRE2): the best fenced code block, or SEARCH/REPLACE
 * edits applied to the parent (exact match first, then a whitespace-tolerant line match; unmatched blocks
 * are counted, and none matching asks for a full rewrite). Any unusable reply becomes a reason string. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "agent.h"

#include <ctype.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "regex.h"

/* Bounds on backtracking: a reply is untrusted text and must not make a match run for minutes. The
 * scanners below match one line at a time (linear in the reply); only the two content checks run on a
 * whole candidate, and those patterns are anchored or bounded. */
#define MATCH_LIMIT 1000000u
#define DEPTH_LIMIT 10000u
#define MAX_EDITS 256 /* SEARCH/REPLACE blocks tried per reply; the rest count as unmatched */

enum { RX_FENCE, RX_SEARCH, RX_DIVIDER, RX_REPLACE, RX_LAUNCH, RX_KERNEL, RX_COUNT };

static const char *const rx_src[RX_COUNT] = {
    /* per line: a code fence, group 1 the backticks, group 2 the info string (language) */
    [RX_FENCE] = "^[ \\t]*(`{3,})[ \\t]*([^`]*?)[ \\t\\r]*$",
    /* per line: <<<<<<< SEARCH / ======= / >>>>>>> REPLACE (aider/OpenEvolve style) */
    [RX_SEARCH] = "^[ \\t]*<{5,9}[ \\t]*SEARCH[ \\t\\r]*$",
    [RX_DIVIDER] = "^[ \\t]*={5,9}[ \\t\\r]*$",
    [RX_REPLACE] = "^[ \\t]*>{5,9}[ \\t]*REPLACE[ \\t\\r]*$",
    /* whole candidate (multiline) */
    [RX_LAUNCH] = "^[ \\t]*//[ \\t]*kforge:launch[ \\t]",
    [RX_KERNEL] = "extern[ \\t\\r\\n]*\"C\"[^;{}]{0,200}?__global__",
};

/* the whole-candidate patterns are multiline */
static const uint32_t rx_options[RX_COUNT] = {[RX_LAUNCH] = PCRE2_MULTILINE, [RX_KERNEL] = PCRE2_MULTILINE};
static pcre2_code *rx[RX_COUNT];
static struct kf_regex_table rx_table = KF_REGEX_TABLE("reply pattern", RX_COUNT, rx_src, sizeof(rx_src[0]),
						       rx_options, 0, false, MATCH_LIMIT, DEPTH_LIMIT, rx);

static enum kf_status rx_ready(struct kf_err *err)
{
	return kf_regex_table_ready(&rx_table, err);
}

/* One match of rx[which] in s[0..len); 1 matched, 0 none (a limit hit counts as none). */
static int rx_find(int which, const char *s, size_t len, pcre2_match_data *md)
{
	return kf_regex_table_match(&rx_table, (size_t)which, s, len, 0, md) >= 0;
}

/* Line kinds for the two scanners. */
enum line_kind { LINE_TEXT, LINE_FENCE, LINE_SEARCH, LINE_DIVIDER, LINE_REPLACE };

/* Classifies s[0..len) (one line, no newline). For a fence, *ticks is its backtick count and *bare
 * whether it has no info string (only a bare fence closes a block). */
static enum line_kind classify(const char *s, size_t len, pcre2_match_data *md, size_t *ticks, bool *bare)
{
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == len)
		return LINE_TEXT;
	switch (s[i]) { /* cheap filter: most lines start with none of these */
	case '`':
		if (rx_find(RX_FENCE, s, len, md)) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			*ticks = ov[3] - ov[2];
			*bare = ov[5] == ov[4];
			return LINE_FENCE;
		}
		break;
	case '<':
		if (rx_find(RX_SEARCH, s, len, md))
			return LINE_SEARCH;
		break;
	case '=':
		if (rx_find(RX_DIVIDER, s, len, md))
			return LINE_DIVIDER;
		break;
	case '>':
		if (rx_find(RX_REPLACE, s, len, md))
			return LINE_REPLACE;
		break;
	}
	return LINE_TEXT;
}

/* Iterates lines: *a..*b the line without its newline, *next the next line's start. */
static bool next_line(const char *s, size_t len, size_t *pos, size_t *a, size_t *b)
{
	const char *nl;
	if (*pos >= len)
		return false;
	*a = *pos;
	nl = memchr(s + *pos, '\n', len - *pos);
	*b = nl ? (size_t)(nl - s) : len;
	*pos = nl ? *b + 1 : len;
	return true;
}

void kf_parse_result_release(struct kf_parse_result *r)
{
	if (!r)
		return;
	free(r->source);
	memset(r, 0, sizeof(*r));
}

static void set_reason(struct kf_parse_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct kf_parse_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* ---- SEARCH/REPLACE ------------------------------------------------------------------------- */

struct line {
	const char *p; /* trimmed start */
	size_t n;      /* trimmed length */
	size_t start;  /* offset of the line's first byte */
	size_t end;    /* offset just past its newline (or the end) */
};

static size_t split_lines(const char *s, size_t len, struct line *v, size_t cap)
{
	size_t n = 0, i = 0;
	while (i < len && n < cap) {
		size_t j = i, a, b;
		while (j < len && s[j] != '\n')
			j++;
		a = i;
		b = j;
		while (a < b && isspace((unsigned char)s[a]))
			a++;
		while (b > a && isspace((unsigned char)s[b - 1]))
			b--;
		v[n].p = s + a;
		v[n].n = b - a;
		v[n].start = i;
		v[n].end = j < len ? j + 1 : j;
		n++;
		i = j < len ? j + 1 : j;
	}
	return n;
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 1;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/* Replaces cur[a, b) by rep; cur is malloc'd and replaced. */
static enum kf_status splice(char **cur, size_t *cur_len, size_t a, size_t b, const char *rep, size_t rlen)
{
	size_t nlen = *cur_len - (b - a) + rlen;
	char *n = malloc(nlen + 1);
	if (!n)
		return KF_ERR_NOMEM;
	memcpy(n, *cur, a);
	memcpy(n + a, rep, rlen);
	memcpy(n + a + rlen, *cur + b, *cur_len - b);
	n[nlen] = '\0';
	free(*cur);
	*cur = n;
	*cur_len = nlen;
	return KF_OK;
}

/* Whitespace-tolerant match: the search's non-blank lines equal (trimmed) consecutive lines of cur,
 * ignoring blank lines on both sides. Sets [a, b) to the byte range of the matched lines. */
static enum kf_status fuzzy_find(const char *cur, size_t cur_len, const char *s, size_t slen, bool *found,
				 size_t *a, size_t *b)
{
	size_t ns = count_lines(s, slen), nc = count_lines(cur, cur_len), k = 0, m;
	struct line *sl = malloc(ns * sizeof(*sl)), *cl = malloc(nc * sizeof(*cl));
	size_t *want = malloc(ns * sizeof(*want));

	*found = false;
	if (!sl || !cl || !want) {
		free(sl);
		free(cl);
		free(want);
		return KF_ERR_NOMEM;
	}
	ns = split_lines(s, slen, sl, ns);
	nc = split_lines(cur, cur_len, cl, nc);
	for (size_t i = 0; i < ns; i++)
		if (sl[i].n)
			want[k++] = i;
	for (size_t start = 0; k && start < nc && !*found; start++) {
		size_t ci = start;
		if (!cl[start].n)
			continue;
		for (m = 0; m < k; m++) {
			while (ci < nc && !cl[ci].n)
				ci++;
			if (ci >= nc || cl[ci].n != sl[want[m]].n ||
			    memcmp(cl[ci].p, sl[want[m]].p, cl[ci].n))
				break;
			ci++;
		}
		if (m == k) {
			*found = true;
			*a = cl[start].start;
			*b = cl[ci - 1].end;
		}
	}
	free(sl);
	free(cl);
	free(want);
	return KF_OK;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* Applies one SEARCH/REPLACE block to *cur. */
static enum kf_status apply_one(char **cur, size_t *cur_len, const char *s, size_t slen, const char *r,
				size_t rlen, struct kf_parse_result *out)
{
	char *needle, *hit;
	bool found = false;
	size_t a = 0, b = 0;
	enum kf_status st;

	if (blank(s, slen)) {
		out->edits_unmatched++;
		return KF_OK;
	}
	/* Exact first; the first occurrence, as aider and OpenEvolve do. */
	needle = kf_strndup(s, slen);
	if (!needle)
		return KF_ERR_NOMEM;
	hit = strstr(*cur, needle);
	free(needle);
	if (hit) {
		size_t at = (size_t)(hit - *cur);
		st = splice(cur, cur_len, at, at + slen, r, rlen);
		if (!st)
			out->edits_applied++;
		return st;
	}
	st = fuzzy_find(*cur, *cur_len, s, slen, &found, &a, &b);
	if (st)
		return st;
	if (!found) {
		out->edits_unmatched++;
		return KF_OK;
	}
	{
		/* The matched lines end in a newline; keep one after the replacement too. */
		bool need_nl = b > a && (*cur)[b - 1] == '\n' && !(rlen && r[rlen - 1] == '\n');
		char *rep = malloc(rlen + 2);
		if (!rep)
			return KF_ERR_NOMEM;
		memcpy(rep, r, rlen);
		if (need_nl)
			rep[rlen++] = '\n';
		st = splice(cur, cur_len, a, b, rep, rlen);
		free(rep);
	}
	if (!st) {
		out->edits_applied++;
		out->edits_fuzzy++;
	}
	return st;
}

enum kf_status kf_parse_apply_edits(const char *text, size_t len, const char *parent,
				    struct kf_parse_result *out, struct kf_err *err)
{
	enum { OUTSIDE, IN_SEARCH, IN_REPLACE } state = OUTSIDE;
	pcre2_match_data *md;
	size_t pos = 0, a, b, s0 = 0, s1 = 0, r0 = 0, cur_len, ticks;
	bool bare;
	char *cur;
	enum kf_status st = KF_OK;

	memset(out, 0, sizeof(*out));
	st = rx_ready(err);
	if (st)
		return st;
	cur = kf_strdup(parent ? parent : "");
	md = pcre2_match_data_create(4, NULL);
	if (!cur || !md) {
		free(cur);
		pcre2_match_data_free(md);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	cur_len = strlen(cur);
	if (!text)
		len = 0;
	while (!st && next_line(text, len, &pos, &a, &b)) {
		enum line_kind k = classify(text + a, b - a, md, &ticks, &bare);
		if (k == LINE_SEARCH) {
			if (state != OUTSIDE) /* the previous block never closed */
				out->edits_total++, out->edits_unmatched++;
			state = IN_SEARCH;
			s0 = pos;
		} else if (k == LINE_DIVIDER && state == IN_SEARCH) {
			s1 = a;
			r0 = pos;
			state = IN_REPLACE;
		} else if (k == LINE_REPLACE && state == IN_REPLACE) {
			out->edits_total++;
			/* Past a sane number of edits, stop trying: each try scans the whole parent. */
			if (parent && out->edits_total <= MAX_EDITS)
				st = apply_one(&cur, &cur_len, text + s0, s1 - s0, text + r0, a - r0, out);
			else
				out->edits_unmatched++;
			state = OUTSIDE;
		}
	}
	/* A block cut short (a reply that hit the token limit) is an unmatched edit. */
	if (!st && state != OUTSIDE)
		out->edits_total++, out->edits_unmatched++;
	pcre2_match_data_free(md);
	if (st) {
		free(cur);
		memset(out, 0, sizeof(*out));
		return kf_err_set(err, st, "out of memory applying edits");
	}
	out->source = cur;
	out->source_len = cur_len;
	out->used_edits = out->edits_applied > 0;
	out->need_rewrite = out->edits_total > 0 && out->edits_applied == 0;
	return KF_OK;
}

/* ---- code blocks ------------------------------------------------------------------------------ */

static bool has(int which, const char *s, size_t len, pcre2_match_data *md)
{
	return rx_find(which, s, len, md) == 1;
}

/* Not text: NUL bytes or many control bytes (a binary blob, a wrong encoding). */
static bool looks_binary(const char *s, size_t len)
{
	size_t ctl = 0;
	if (memchr(s, '\0', len))
		return true;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f)
			ctl++;
	}
	return ctl * 100 > len; /* over 1% */
}

static bool cut_off(const char *finish_reason)
{
	return finish_reason && !strcmp(finish_reason, "length");
}

/* Checks a candidate file's shape and sets out->source (takes src). */
static enum kf_status accept_source(char *src, size_t n, struct kf_parse_result *out, pcre2_match_data *md)
{
	if (!has(RX_LAUNCH, src, n, md)) {
		free(src);
		set_reason(out, "the kernel has no '// kforge:launch' directive");
		return KF_ERR_PARSE;
	}
	if (!has(RX_KERNEL, src, n, md)) {
		free(src);
		set_reason(out, "the kernel has no extern \"C\" __global__ function");
		return KF_ERR_PARSE;
	}
	out->source = src;
	out->source_len = n;
	return KF_OK;
}

static enum kf_status parse_edits(const char *reply, size_t len, const char *parent,
				  const char *finish_reason, struct kf_parse_result *out,
				  pcre2_match_data *md, struct kf_err *err)
{
	enum kf_status st = kf_parse_apply_edits(reply, len, parent, out, err);
	char *src;
	size_t n;

	if (st)
		return st;
	if (!parent) {
		free(out->source);
		out->source = NULL;
		out->need_rewrite = true;
		set_reason(out,
			   "the reply has %d SEARCH/REPLACE edits but there is no parent to apply them to",
			   out->edits_total);
		return KF_ERR_PARSE;
	}
	if (out->edits_applied == 0) {
		free(out->source);
		out->source = NULL;
		set_reason(out, "none of the %d SEARCH/REPLACE edits matched the parent%s", out->edits_total,
			   cut_off(finish_reason) ? " (the reply was cut off at the token limit)" : "");
		return KF_ERR_PARSE;
	}
	src = out->source;
	n = out->source_len;
	out->source = NULL;
	st = accept_source(src, n, out, md);
	if (st)
		return st;
	if (out->edits_unmatched)
		set_reason(out, "%d of %d SEARCH/REPLACE edits did not match the parent and were skipped",
			   out->edits_unmatched, out->edits_total);
	return KF_OK;
}

enum kf_status kf_parse_reply(const char *reply, size_t len, const char *finish_reason, const char *parent,
			      struct kf_parse_result *out, struct kf_err *err)
{
	pcre2_match_data *md;
	size_t pos = 0, a, b, ticks, open_ticks = 0, body = 0, best_a = 0, best_b = 0;
	bool bare, inside = false, edits = false;
	int best_score = -1;
	enum kf_status st;
	char *src;

	memset(out, 0, sizeof(*out));
	st = rx_ready(err);
	if (st)
		return st;
	if (!reply || blank(reply, len)) {
		set_reason(out, "empty reply%s",
			   cut_off(finish_reason) ? " (cut off at the token limit)" : "");
		return KF_ERR_PARSE;
	}
	if (len > KF_PARSE_MAX_REPLY) {
		set_reason(out, "reply is %zu bytes, over the %u-byte limit", len, KF_PARSE_MAX_REPLY);
		return KF_ERR_PARSE;
	}
	if (looks_binary(reply, len)) {
		set_reason(out, "reply is not text (NUL or control bytes)");
		return KF_ERR_PARSE;
	}
	md = pcre2_match_data_create(4, NULL);
	if (!md)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");

	/* One pass over the lines: fenced blocks (a fence opens; a bare fence of at least as many backticks
	 * closes, as in CommonMark) and whether any SEARCH marker is present. The best block is the last
	 * one that looks like a kernel file (models often quote the parent or a sketch first). Score 2:
	 * directive and kernel; 1: a kernel; 0: any block. */
	while (next_line(reply, len, &pos, &a, &b)) {
		enum line_kind k = classify(reply + a, b - a, md, &ticks, &bare);
		if (k == LINE_SEARCH)
			edits = true;
		if (k != LINE_FENCE)
			continue;
		if (!inside) {
			inside = true;
			open_ticks = ticks;
			body = pos;
		} else if (bare && ticks >= open_ticks) {
			size_t bb = a > body ? a : body;
			int score = has(RX_KERNEL, reply + body, bb - body, md) ? 1 : 0;
			if (score && has(RX_LAUNCH, reply + body, bb - body, md))
				score = 2;
			if (score >= best_score) {
				best_score = score;
				best_a = body;
				best_b = bb;
			}
			inside = false;
		}
	}
	if (edits) {
		st = parse_edits(reply, len, parent, finish_reason, out, md, err);
		pcre2_match_data_free(md);
		return st;
	}
	if (inside) {
		/* The reply ended inside a code block. */
		pcre2_match_data_free(md);
		if (cut_off(finish_reason))
			set_reason(out, "the reply was cut off at the token limit inside a code block");
		else
			set_reason(out, "the reply ends inside an unterminated code block");
		return KF_ERR_PARSE;
	}
	if (best_score < 0) {
		/* No fences: accept a bare kernel file (some models skip the markdown). */
		if (has(RX_LAUNCH, reply, len, md) && has(RX_KERNEL, reply, len, md)) {
			src = kf_strndup(reply, len);
			if (!src) {
				pcre2_match_data_free(md);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			st = accept_source(src, len, out, md);
			pcre2_match_data_free(md);
			return st;
		}
		pcre2_match_data_free(md);
		set_reason(out, "no code block in the reply%s",
			   cut_off(finish_reason) ? " (cut off at the token limit)" : "");
		return KF_ERR_PARSE;
	}
	src = kf_strndup(reply + best_a, best_b - best_a);
	if (!src) {
		pcre2_match_data_free(md);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	st = accept_source(src, best_b - best_a, out, md);
	pcre2_match_data_free(md);
	return st;
}

/* ---- the model's rationale and proposed strategies --------------------------------------------------- */

/* Copies s[0..n) into out (size cap) as one clean line: control bytes and markdown emphasis dropped,
 * spaces collapsed, trimmed. */
static void one_line(char *out, size_t cap, const char *s, size_t n)
{
	size_t j = 0;
	bool space = false;
	if (!cap)
		return;
	for (size_t i = 0; i < n && j + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '*' || c == '`' || (c == '_' && (i == 0 || i + 1 == n)))
			continue;
		if (c < 0x20 || c == 0x7f || c == ' ') {
			space = j > 0;
			continue;
		}
		if (space && j + 2 < cap)
			out[j++] = ' ';
		space = false;
		out[j++] = (char)c;
	}
	out[j] = '\0';
}

/* Does the line start (after blanks, list marks and emphasis) with one of the labels and a colon? Then the
 * text after it. */
static const char *labelled(const char *a, const char *b, const char *const *labels, size_t n_labels)
{
	while (a < b && (*a == ' ' || *a == '\t' || *a == '*' || *a == '-' || *a == '#' || *a == '>'))
		a++;
	for (size_t i = 0; i < n_labels; i++) {
		size_t l = strlen(labels[i]);
		if ((size_t)(b - a) > l && !strncasecmp(a, labels[i], l)) {
			const char *p = a + l;
			while (p < b && (*p == '*' || *p == ' '))
				p++;
			if (p < b && (*p == ':' || *p == '-')) {
				p++;
				while (p < b && (*p == ' ' || *p == '*'))
					p++;
				return p < b ? p : NULL;
			}
		}
	}
	return NULL;
}

void kf_parse_rationale(const char *reply, size_t len, char *out, size_t n)
{
	static const char *const labels[] = {"change", "changes", "rationale", "idea", "what changed"};
	size_t pos = 0, a, b, first_a = 0, first_b = 0;
	bool inside = false, in_edit = false, have_first = false;

	if (!n)
		return;
	out[0] = '\0';
	if (!reply || len > KF_PARSE_MAX_REPLY)
		return;
	while (next_line(reply, len, &pos, &a, &b)) {
		const char *s = reply + a, *e = reply + b, *t;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (e - s >= 3 && !strncmp(s, "```", 3)) {
			inside = !inside;
			continue;
		}
		if (e - s >= 5 && !strncmp(s, "<<<<<", 5)) {
			in_edit = true;
			continue;
		}
		if (e - s >= 5 && !strncmp(s, ">>>>>", 5)) {
			in_edit = false;
			continue;
		}
		if (inside || in_edit || s == e)
			continue;
		if ((t = labelled(s, e, labels, KF_ARRAY_SIZE(labels)))) {
			one_line(out, n, t, (size_t)(e - t));
			return;
		}
		if (!have_first && isalpha((unsigned char)*s)) {
			have_first = true;
			first_a = (size_t)(s - reply);
			first_b = b;
		}
	}
	if (have_first) {
		/* the first sentence of the first line of prose; a colon that leads into the code is dropped,
		 * one inside the sentence ("Memory-bound: fewer threads ...") is kept with what follows it */
		const char *s = reply + first_a, *e = reply + first_b;
		for (const char *p = s; p + 1 < e; p++)
			if (*p == '.' && p[1] == ' ') {
				e = p + 1;
				break;
			}
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		if (e > s && e[-1] == ':')
			e--;
		one_line(out, n, s, (size_t)(e - s));
	}
}

int kf_parse_strategies(const char *reply, size_t len, struct kf_parse_strategy *out, int max)
{
	size_t pos = 0, a, b;
	int n = 0;
	bool inside = false;
	if (!reply || len > KF_PARSE_MAX_REPLY || max <= 0)
		return 0;
	while (n < max && next_line(reply, len, &pos, &a, &b)) {
		const char *s = reply + a, *e = reply + b, *colon;
		while (s < e && (*s == ' ' || *s == '\t' || *s == '*' || *s == '#'))
			s++;
		if (e - s >= 3 && !strncmp(s, "```", 3)) {
			inside = !inside;
			continue;
		}
		if (inside || s == e || !isdigit((unsigned char)*s))
			continue;
		while (s < e && isdigit((unsigned char)*s))
			s++;
		if (s >= e || (*s != '.' && *s != ')'))
			continue;
		s++;
		while (s < e && (*s == ' ' || *s == '*'))
			s++;
		colon = memchr(s, ':', (size_t)(e - s));
		if (!colon || colon == s || colon - s > 80)
			continue;
		struct kf_parse_strategy *st = &out[n];
		one_line(st->name, sizeof(st->name), s, (size_t)(colon - s));
		one_line(st->text, sizeof(st->text), colon + 1, (size_t)(e - colon - 1));
		if (!st->name[0] || strlen(st->text) < 8)
			continue;
		bool dup = false;
		for (int i = 0; i < n && !dup; i++)
			dup = !strcasecmp(out[i].name, st->name);
		if (!dup)
			n++;
	}
	return n;
}
