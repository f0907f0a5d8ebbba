/* SHA-256 (FIPS 180-4): task and kernel-file content hashes and compile-cache keys. Incremental
 * init/update/final plus a one-shot hex helper. Depends on libc only. */
#ifndef KF_HASH_H
#define KF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define KF_SHA256_BYTES 32
#define KF_SHA256_HEX 65 /* 64 hex digits and a NUL */

struct kf_sha256 {
	uint32_t h[8];
	uint64_t n_bytes; /* message bytes seen so far */
	uint8_t block[64];
	size_t n_block; /* bytes waiting in block */
};

void kf_sha256_init(struct kf_sha256 *c);
void kf_sha256_update(struct kf_sha256 *c, const void *data, size_t n);
/* Writes the 32-byte digest; c must be re-initialized before reuse. */
void kf_sha256_final(struct kf_sha256 *c, uint8_t out[KF_SHA256_BYTES]);
/* Lower-case hex of the digest of data[0..len) into out (65 bytes, NUL-terminated). */
void kf_sha256_hex(const void *data, size_t len, char out[KF_SHA256_HEX]);
/* Lower-case hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void kf_hex_encode(const uint8_t *in, size_t n, char *out);

#endif
