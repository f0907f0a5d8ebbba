/* Secret redaction (redact.h). Every registered secret is expanded into light encodings, each reduced to
 * its letters and digits in lower case; the sorted hashes of their 16-character pieces make a set. Text
 * is reduced the same way (with a map back to its bytes), every 16-character window is looked up, and
 * each run of matching windows is replaced in the original text, separators and all. Key-shaped text is
 * found with PCRE2. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "redact.h"

#include <ctype.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAM 16         /* key characters a piece needs to count as the secret */
#define SHORT_MIN 8     /* shorter secrets are matched whole */
#define SECRET_MAX 1024 /* bytes of one secret considered */
#define MAX_SECRETS 64
#define MAX_SHORT 512
#define OVERLAP 1024 /* kf_redact_buf looks this far back */

static const char key_pattern[] = "\\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
				  "|\\bAIza[0-9A-Za-z_-]{30,}"
				  "|\\bgh[pousr]_[A-Za-z0-9]{30,}"
				  "|\\bgithub_pat_[A-Za-z0-9_]{30,}"
				  "|\\bxox[abprs]-[A-Za-z0-9-]{10,}"
				  "|\\bAKIA[0-9A-Z]{16}\\b"
				  "|(?i:\\bbearer\\s+[A-Za-z0-9._~+/-]{20,})"
				  "|-----BEGIN [A-Z ]*PRIVATE KEY-----";

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static uint64_t *grams; /* sorted */
static size_t n_grams, cap_grams;
static char *shorts[MAX_SHORT];
static size_t n_shorts, n_secrets;
static pcre2_code *key_re;

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Letters and digits of s, lower case; map[i] = byte offset of out[i] in s (map may be NULL). */
static size_t normalize(const char *s, size_t n, char *out, size_t *map)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c))
			continue;
		if (map)
			map[k] = i;
		out[k++] = (char)tolower(c);
	}
	return k;
}

/* Adds the pieces of one encoding (raw bytes, normalized here). Called with the write lock held. */
static void add_form(const char *s, size_t n)
{
	char *norm = malloc(n + 1);
	size_t k;

	if (!norm)
		return;
	k = normalize(s, n, norm, NULL);
	if (k >= GRAM) {
		if (n_grams + k > cap_grams) {
			size_t nc = (n_grams + k) * 2;
			uint64_t *g = realloc(grams, nc * sizeof(*g));
			if (!g) {
				free(norm);
				return;
			}
			grams = g;
			cap_grams = nc;
		}
		for (size_t i = 0; i + GRAM <= k; i++)
			grams[n_grams++] = fnv(norm + i, GRAM);
	} else if (k >= SHORT_MIN && n_shorts < MAX_SHORT) {
		norm[k] = '\0';
		shorts[n_shorts++] = norm;
		return;
	}
	free(norm);
}

static void reverse(char *s, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		char t = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = t;
	}
}

static void add_with_reverse(char *s, size_t n)
{
	add_form(s, n);
	reverse(s, n);
	add_form(s, n);
	reverse(s, n);
}

static size_t b64(const unsigned char *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t k = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[k++] = a[v >> 18 & 63];
		out[k++] = a[v >> 12 & 63];
		out[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[k++] = i + 2 < n ? a[v & 63] : '=';
	}
	return k;
}

/* Every encoding of one secret. Called with the write lock held. */
static void add_secret(const char *secret)
{
	size_t n = strnlen(secret, SECRET_MAX);
	size_t big = 8 * n + 64; /* the longest form: 3n of percent codes, then 5n of \u00XX */
	char *buf = malloc(big), *raw = malloc(n + 3);
	static const char hexd[] = "0123456789abcdef";

	if (!buf || !raw || n < SHORT_MIN || n_secrets >= MAX_SECRETS) {
		free(buf);
		free(raw);
		return;
	}
	n_secrets++;
	memcpy(raw, secret, n);
	add_with_reverse(raw, n);
	/* hex (case does not matter after normalization) */
	for (size_t i = 0; i < n; i++) {
		buf[2 * i] = hexd[(unsigned char)raw[i] >> 4];
		buf[2 * i + 1] = hexd[(unsigned char)raw[i] & 15];
	}
	add_with_reverse(buf, 2 * n);
	/* base64 at the three alignments; the characters that mix in bytes before or after go */
	for (int pre = 0; pre < 3; pre++) {
		unsigned char *in = (unsigned char *)raw;
		size_t k, skip = pre == 0 ? 0 : (size_t)pre + 1;
		memmove(raw + pre, secret, n);
		memset(raw, 0, (size_t)pre);
		k = b64(in, n + (size_t)pre, buf);
		if (k > skip + 3)
			add_with_reverse(buf + skip, k - skip - 3);
	}
	memcpy(raw, secret, n);
	/* ROT13 */
	for (size_t i = 0; i < n; i++) {
		char c = raw[i];
		buf[i] = (c >= 'a' && c <= 'z')   ? (char)('a' + (c - 'a' + 13) % 26)
			 : (c >= 'A' && c <= 'Z') ? (char)('A' + (c - 'A' + 13) % 26)
						  : c;
	}
	add_with_reverse(buf, n);
	/* percent-encoding of what is not a letter or digit, \u00XX escapes, decimal byte codes */
	{
		size_t k = 0, u = 0, d = 0;
		char *ue = buf + 3 * n + 8;
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)raw[i];
			if (isalnum(c)) {
				buf[k++] = (char)c;
			} else {
				buf[k++] = hexd[c >> 4];
				buf[k++] = hexd[c & 15];
			}
		}
		add_form(buf, k);
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)raw[i];
			ue[u++] = 'u';
			ue[u++] = '0';
			ue[u++] = '0';
			ue[u++] = hexd[c >> 4];
			ue[u++] = hexd[c & 15];
		}
		add_form(ue, u);
		for (size_t i = 0; i < n; i++)
			d += (size_t)snprintf(buf + d, big - d, "%u", (unsigned char)raw[i]);
		add_form(buf, d);
	}
	qsort(grams, n_grams, sizeof(*grams), cmp_u64);
	free(buf);
	free(raw);
}

extern char **environ;

/* A name that says its value is secret (and not a path to one). */
static bool secret_name(const char *kv, size_t n)
{
	static const char *const words[] = {"KEY",        "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					    "CREDENTIAL", "AUTH",  "COOKIE", "PRIVATE",  "SESSION"};
	static const char *const not_suffix[] = {"_SOCK", "_FILE", "_PATH", "_DIR", "_URL", "_HOST"};
	char up[128];
	bool hit = false;
	if (n >= sizeof(up))
		n = sizeof(up) - 1;
	for (size_t i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)kv[i]);
	up[n] = '\0';
	for (size_t i = 0; i < KF_ARRAY_SIZE(words) && !hit; i++)
		hit = strstr(up, words[i]) != NULL;
	for (size_t i = 0; i < KF_ARRAY_SIZE(not_suffix) && hit; i++) {
		size_t l = strlen(not_suffix[i]);
		if (n >= l && !strcmp(up + n - l, not_suffix[i]))
			hit = false;
	}
	return hit;
}

static bool key_shaped(const char *s)
{
	pcre2_match_data *md;
	int rc;
	if (!key_re || !(md = pcre2_match_data_create(1, NULL)))
		return false;
	rc = pcre2_match(key_re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc > 0;
}

static void init(void)
{
	int ec;
	PCRE2_SIZE off;
	key_re = pcre2_compile((PCRE2_SPTR)key_pattern, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
	pthread_rwlock_wrlock(&lock);
	for (size_t i = 0; environ && environ[i]; i++) {
		const char *kv = environ[i], *eq = strchr(kv, '=');
		if (!eq || !eq[1])
			continue;
		if (secret_name(kv, (size_t)(eq - kv)) || key_shaped(eq + 1))
			add_secret(eq + 1);
	}
	pthread_rwlock_unlock(&lock);
}

void kf_redact_add(const char *secret)
{
	pthread_once(&once, init);
	if (!secret)
		return;
	pthread_rwlock_wrlock(&lock);
	add_secret(secret);
	pthread_rwlock_unlock(&lock);
}

/* ---- finding ---------------------------------------------------------------------------------- */

struct span {
	size_t a, b; /* [a, b) in the text */
};

struct spans {
	struct span *v;
	size_t n, cap;
	bool nomem;
};

static void span_add(struct spans *s, size_t a, size_t b)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		struct span *p = realloc(s->v, nc * sizeof(*p));
		if (!p) {
			s->nomem = true;
			return;
		}
		s->v = p;
		s->cap = nc;
	}
	s->v[s->n++] = (struct span){a, b};
}

static int cmp_span(const void *x, const void *y)
{
	const struct span *a = x, *b = y;
	return (a->a > b->a) - (a->a < b->a);
}

/* Spans of text[0..n) to replace, sorted and merged. Read lock held. */
static void find(const char *text, size_t n, struct spans *out)
{
	char *norm = malloc(n + 1);
	size_t *map = malloc((n + 1) * sizeof(*map));
	unsigned char *mark = NULL;
	size_t k;

	memset(out, 0, sizeof(*out));
	if (!norm || !map) {
		out->nomem = true;
		goto done;
	}
	k = normalize(text, n, norm, map);
	norm[k] = '\0';
	mark = calloc(k + 1, 1);
	if (!mark) {
		out->nomem = true;
		goto done;
	}
	if (n_grams)
		for (size_t i = 0; i + GRAM <= k; i++) {
			uint64_t h = fnv(norm + i, GRAM);
			if (bsearch(&h, grams, n_grams, sizeof(h), cmp_u64))
				memset(mark + i, 1, GRAM);
		}
	for (size_t s = 0; s < n_shorts; s++) {
		size_t l = strlen(shorts[s]);
		for (const char *p = norm; (p = strstr(p, shorts[s])); p++)
			memset(mark + (p - norm), 1, l);
	}
	for (size_t i = 0; i < k;) {
		size_t j = i;
		if (!mark[i]) {
			i++;
			continue;
		}
		while (j < k && mark[j])
			j++;
		span_add(out, map[i], map[j - 1] + 1);
		i = j;
	}
	if (key_re) {
		pcre2_match_data *md = pcre2_match_data_create(1, NULL);
		PCRE2_SIZE off = 0;
		while (md && off < n && pcre2_match(key_re, (PCRE2_SPTR)text, n, off, 0, md, NULL) > 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
			span_add(out, ov[0], ov[1]);
			off = ov[1] > off ? ov[1] : off + 1;
		}
		if (!md)
			out->nomem = true;
		pcre2_match_data_free(md);
	}
	if (out->n > 1) {
		size_t w = 0;
		qsort(out->v, out->n, sizeof(*out->v), cmp_span);
		for (size_t i = 1; i < out->n; i++) {
			if (out->v[i].a <= out->v[w].b) {
				if (out->v[i].b > out->v[w].b)
					out->v[w].b = out->v[i].b;
			} else {
				out->v[++w] = out->v[i];
			}
		}
		out->n = w + 1;
	}
done:
	free(norm);
	free(map);
	free(mark);
}

/* Rewrites text[from..len) with the spans replaced; returns the new length (at most cap - 1). */
static size_t apply(char *text, size_t len, size_t cap, const struct spans *sp)
{
	char *out = malloc(len + sp->n * sizeof(KF_REDACTED) + 1);
	size_t k = 0, at = 0;

	if (!out) {
		/* Fail closed: nothing of the text survives. */
		snprintf(text, cap, "%s", KF_REDACTED);
		return strlen(text);
	}
	for (size_t i = 0; i < sp->n; i++) {
		memcpy(out + k, text + at, sp->v[i].a - at);
		k += sp->v[i].a - at;
		memcpy(out + k, KF_REDACTED, sizeof(KF_REDACTED) - 1);
		k += sizeof(KF_REDACTED) - 1;
		at = sp->v[i].b;
	}
	memcpy(out + k, text + at, len - at);
	k += len - at;
	if (k >= cap)
		k = cap - 1;
	memcpy(text, out, k);
	text[k] = '\0';
	free(out);
	return k;
}

size_t kf_redact(char *text, size_t cap)
{
	struct spans sp;
	size_t n, hits;

	pthread_once(&once, init);
	if (!text || !cap)
		return 0;
	n = strnlen(text, cap - 1);
	text[n] = '\0';
	pthread_rwlock_rdlock(&lock);
	find(text, n, &sp);
	pthread_rwlock_unlock(&lock);
	if (sp.nomem) {
		free(sp.v);
		snprintf(text, cap, "%s", KF_REDACTED);
		return 1;
	}
	hits = sp.n;
	if (hits)
		apply(text, n, cap, &sp);
	free(sp.v);
	return hits;
}

size_t kf_redact_buf(struct kf_buf *b, size_t from)
{
	size_t start = from > OVERLAP ? from - OVERLAP : 0, hits, n;
	struct spans sp;

	pthread_once(&once, init);
	if (!b || start >= b->len)
		return 0;
	pthread_rwlock_rdlock(&lock);
	find(b->data + start, b->len - start, &sp);
	pthread_rwlock_unlock(&lock);
	hits = sp.n;
	if (sp.nomem) {
		b->len = start;
		b->data[b->len] = '\0';
		free(sp.v);
		kf_buf_adds(b, KF_REDACTED);
		return 1;
	}
	if (hits) {
		/* The replacement is never longer than 10 bytes per span: room exists up to cap. */
		n = apply(b->data + start, b->len - start, b->cap - start, &sp);
		b->len = start + n;
	}
	free(sp.v);
	return hits;
}

bool kf_redact_has_secret(const char *s)
{
	struct spans sp;
	bool hit;

	pthread_once(&once, init);
	if (!s || !*s)
		return false;
	pthread_rwlock_rdlock(&lock);
	find(s, strlen(s), &sp);
	pthread_rwlock_unlock(&lock);
	hit = sp.nomem || sp.n > 0;
	free(sp.v);
	return hit;
}
