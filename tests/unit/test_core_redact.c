/* Tests for core/redact.c: a secret from the environment found raw, reversed, in hex, base64 at every
 * alignment, ROT13, spread out by separators, as decimal codes or \u00XX escapes, and in pieces; key-
 * shaped text found unregistered; ordinary compiler and verifier text left alone; bounds kept. Each
 * encoding is a case an attacker tried (see issue 15): removing its expansion fails its check. */
#include <stdlib.h>

#include "redact.h"
#include "testing.h"

/* Set before the module reads the environment (its first use), as a parent's key would be. */
#define SECRET "Zq7vR2mXk9PwL4tN8bY3cJ6hF1dS5gA0"

__attribute__((constructor)) static void set_env(void)
{
	setenv("KFORGE_TEST_API_KEY", SECRET, 1);
	setenv("UNRELATED_SETTING", "standard-value-xx", 1);
}

static const char *b64(const char *in, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), k = 0;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)in[i + 2] : 0);
		out[k++] = a[v >> 18 & 63];
		out[k++] = a[v >> 12 & 63];
		out[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[k++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[k] = '\0';
	return out;
}

/* Redacts a copy of text; the secret's distinctive middle must be gone and the marker present. */
static void expect_redacted(const char *what, const char *text)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "log: %s :end", text);
	CHECKF(kf_redact_has_secret(buf), "%s not seen: %s", what, buf);
	CHECKF(kf_redact(buf, sizeof(buf)) > 0, "%s not redacted: %s", what, buf);
	CHECKF(strstr(buf, KF_REDACTED) != NULL, "%s: %s", what, buf);
	CHECKF(strstr(buf, "log: ") == buf && strstr(buf, " :end"), "%s: the text around it went too: %s",
	       what, buf);
}

static void raw_and_reversed(void)
{
	char rev[64];
	size_t n = strlen(SECRET);
	expect_redacted("raw", SECRET);
	for (size_t i = 0; i < n; i++)
		rev[i] = SECRET[n - 1 - i];
	rev[n] = '\0';
	expect_redacted("reversed", rev);
	/* case changes: the check ignores case */
	{
		char up[64];
		for (size_t i = 0; i <= n; i++)
			up[i] = (char)((SECRET[i] >= 'a' && SECRET[i] <= 'z') ? SECRET[i] - 32 : SECRET[i]);
		expect_redacted("upper case", up);
	}
}

static void hex_and_decimal(void)
{
	char hex[200], HEX[200], dec[400], uesc[400];
	size_t k = 0, d = 0, u = 0;
	for (const char *p = SECRET; *p; p++) {
		k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%02x", (unsigned char)*p);
		d += (size_t)snprintf(dec + d, sizeof(dec) - d, "%u,", (unsigned char)*p);
		u += (size_t)snprintf(uesc + u, sizeof(uesc) - u, "\\u%04x", (unsigned char)*p);
	}
	for (size_t i = 0; i <= k; i++)
		HEX[i] = (char)((hex[i] >= 'a' && hex[i] <= 'f') ? hex[i] - 32 : hex[i]);
	expect_redacted("hex", hex);
	expect_redacted("HEX", HEX);
	expect_redacted("decimal codes", dec);
	expect_redacted("\\u escapes", uesc);
}

static void base64_any_alignment(void)
{
	char in[80], out[160];
	expect_redacted("base64", b64(SECRET, out));
	/* the key after one or two other bytes shifts every base64 character */
	snprintf(in, sizeof(in), "x%s", SECRET);
	expect_redacted("base64 after 1 byte", b64(in, out));
	snprintf(in, sizeof(in), "xy%s", SECRET);
	expect_redacted("base64 after 2 bytes", b64(in, out));
	snprintf(in, sizeof(in), "key=%s;", SECRET);
	expect_redacted("base64 of key=...", b64(in, out));
}

static void rot13_spread_and_pieces(void)
{
	char r[64], spread[200], piece[32];
	size_t k = 0;
	for (size_t i = 0; SECRET[i]; i++) {
		char c = SECRET[i];
		r[i] = (c >= 'a' && c <= 'z')   ? (char)('a' + (c - 'a' + 13) % 26)
		       : (c >= 'A' && c <= 'Z') ? (char)('A' + (c - 'A' + 13) % 26)
						: c;
		r[i + 1] = '\0';
		spread[k++] = c;
		spread[k++] = i % 2 ? '-' : ' ';
	}
	spread[k] = '\0';
	expect_redacted("rot13", r);
	expect_redacted("spread out", spread);
	/* half of the key alone (16 of its 32 characters) */
	snprintf(piece, sizeof(piece), "%.16s", SECRET + 8);
	expect_redacted("a 16-character piece", piece);
}

static void key_shapes(void)
{
	expect_redacted("anthropic", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345");
	expect_redacted("openai", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx");
	expect_redacted("github", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789");
	expect_redacted("aws", "AKIAIOSFODNN7EXAMPLE");
	expect_redacted("bearer", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123");
	expect_redacted("private key", "-----BEGIN RSA PRIVATE KEY-----");
}

/* What compilers, workers and the verifier say must come through untouched. */
static void ordinary_text_unchanged(void)
{
	static const char *const texts[] = {
	    "kernel.cu(12): error: identifier \"blockIdx\" is undefined",
	    "ptxas info    : Used 32 registers, 4096 bytes smem, 380 bytes cmem[0]",
	    "wrong_output at M=128 N=128 K=128: C[17] = 1.2345 want 1.2344 (max_abs 1e-4)",
	    "standard-value-xx is not a secret: its variable's name does not say so",
	    "0123456789abcdef0123456789abcdef00112233445566778899aabbccddeeff",
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(texts); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%s", texts[i]);
		CHECKF(!kf_redact_has_secret(buf), "false positive: %s", texts[i]);
		CHECK_EQ_INT(kf_redact(buf, sizeof(buf)), 0);
		CHECK_STR(buf, texts[i]);
	}
}

static void registered_and_bounded(void)
{
	char small[24], text[128];
	kf_redact_add("correct-horse-battery-staple-42");
	snprintf(text, sizeof(text), "the password was correct horse battery staple 42, see?");
	CHECKF(kf_redact(text, sizeof(text)) == 1, "%s", text);
	CHECK_CONTAINS(text, KF_REDACTED);
	CHECK(!strstr(text, "battery"));
	/* the result never leaves its buffer */
	snprintf(small, sizeof(small), "%.22s", SECRET);
	kf_redact(small, sizeof(small));
	CHECK(strlen(small) < sizeof(small));
	CHECK(!strstr(small, "k9PwL4tN"));
}

static void buffer_tail_and_straddle(void)
{
	struct kf_buf b = KF_BUF_INIT(4096);
	size_t half = strlen(SECRET) / 2;
	kf_buf_adds(&b, "first chunk ... ");
	kf_buf_add(&b, SECRET, half);
	/* the second chunk arrives later: the secret straddles the two */
	{
		size_t from = b.len;
		kf_buf_adds(&b, SECRET + half);
		kf_buf_adds(&b, " tail");
		CHECK(kf_redact_buf(&b, from) >= 1);
	}
	CHECK(!strstr(b.data, "k9PwL4tN"));
	CHECK_CONTAINS(b.data, "first chunk");
	CHECK_CONTAINS(b.data, " tail");
	kf_buf_release(&b);
}

KF_TEST_MAIN(TEST(raw_and_reversed), TEST(hex_and_decimal), TEST(base64_any_alignment),
	     TEST(rot13_spread_and_pieces), TEST(key_shapes), TEST(ordinary_text_unchanged),
	     TEST(registered_and_bounded), TEST(buffer_tail_and_straddle))
