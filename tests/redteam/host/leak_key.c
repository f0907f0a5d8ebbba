/* Say a key: a key-shaped string, and (as if it had been stolen, RT_SECRET is the test's) the real key
 * raw, in base64, in hex and reversed. The parent must redact all of it and reject the candidate. */
#include "redteam.h"

#ifndef RT_SECRET
#define RT_SECRET "no-secret-given-to-this-build"
#endif

static void rt_attack(void)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *s = RT_SECRET;
	size_t n = strlen(s);
	char rev[256], b64[512];
	size_t k = 0;
	fprintf(stderr, "LEAK: sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH1234\n");
	fprintf(stderr, "LEAK: %s\n", s);
	for (size_t i = 0; i < n && i < sizeof(rev) - 1; i++)
		rev[i] = s[n - 1 - i];
	rev[n < sizeof(rev) ? n : sizeof(rev) - 1] = '\0';
	fprintf(stderr, "LEAK: %s\n", rev);
	for (size_t i = 0; i < n && k + 4 < sizeof(b64); i += 3) {
		unsigned v = (unsigned char)s[i] << 16 | (i + 1 < n ? (unsigned char)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)s[i + 2] : 0);
		b64[k++] = a[v >> 18 & 63];
		b64[k++] = a[v >> 12 & 63];
		b64[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		b64[k++] = i + 2 < n ? a[v & 63] : '=';
	}
	b64[k] = '\0';
	fprintf(stderr, "LEAK: %s\nLEAK: ", b64);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", (unsigned char)s[i]);
	fputc('\n', stderr);
}
