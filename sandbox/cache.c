/* The compile cache: one file per key (DIR/ab/abcd....kfc) holding the outcome, image, PTX, log and
 * per-kernel resources of a compile, as tagged records closed by a SHA-256 of everything before it.
 * Writes are atomic (kf_write_file_atomic); a missing, partial, corrupt or foreign entry is a miss. */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile_int.h"
#include "fs.h"
#include "hash.h"

#define CACHE_MAGIC "KFCACHE1"
#define CACHE_MAGIC_BYTES 8
#define REC_HEADER_BYTES 16
/* An entry never holds more than this (image + PTX + log + records). */
#define CACHE_ENTRY_MAX (2 * KF_COMPILE_IMAGE_MAX + 2 * KF_COMPILE_LOG_MAX + ((size_t)1 << 20))
/* One kernel's resources on disk: name[128] then six little int32 fields. */
#define KERNEL_REC_BYTES (128 + 6 * 4)

enum {
	T_STATUS = 1, /* i32: KF_OK or KF_ERR_COMPILE */
	T_BACKEND = 2,
	T_KEY = 3,
	T_ARCH = 4,
	T_COMPILER = 5,
	T_LOG = 6,
	T_PTX = 7,
	T_IMAGE = 8,
	T_KERNEL = 9,
	T_SUM = 10,  /* SHA-256 of every byte before this record; always last */
	T_NAME = 11, /* a template name expression and its lowered name: expr[128] then lowered[128] */
};
#define NAME_REC_BYTES 256

enum kf_status kf_cache_dir(const char *cache_dir, char *out, size_t n, struct kf_err *err)
{
	const char *env = getenv("KFORGE_CACHE"), *home;
	int len;
	struct stat sb;

	if (cache_dir && *cache_dir) {
		len = snprintf(out, n, "%s", cache_dir);
	} else if (env && *env) {
		len = snprintf(out, n, "%s", env);
	} else {
		home = getenv("HOME");
		if (!home || !*home) {
			struct passwd *pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home || !*home)
			return kf_err_set(err, KF_ERR_IO, "no cache directory: set KFORGE_CACHE or HOME");
		len = snprintf(out, n, "%s/.cache/kforge", home);
	}
	if (len < 0 || (size_t)len >= n)
		return kf_err_set(err, KF_ERR_INVALID, "cache directory path too long");
	if (kf_mkdir_p(out, 0700, NULL) != KF_OK || stat(out, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return kf_err_set(err, KF_ERR_IO, "cannot create cache directory '%s': %s", out,
				  strerror(errno));
	/* Absolute, always: compilers run in their own working folders and are handed paths inside the
	 * cache (the cpu shim's include folder), so a relative KFORGE_CACHE would point nowhere there. */
	if (out[0] != '/') {
		char abs[PATH_MAX];
		if (!realpath(out, abs))
			return kf_err_set(err, KF_ERR_IO, "cannot resolve cache directory '%s': %s", out,
					  strerror(errno));
		if ((size_t)snprintf(out, n, "%s", abs) >= n)
			return kf_err_set(err, KF_ERR_INVALID, "cache directory path too long");
	}
	return KF_OK;
}

static bool entry_path(const char *dir, const char *key, char *out, size_t n, bool make_dir)
{
	char sub[4096];
	if (strlen(key) != 64 || strspn(key, "0123456789abcdef") != 64)
		return false;
	if (snprintf(sub, sizeof(sub), "%s/%.2s", dir, key) >= (int)sizeof(sub))
		return false;
	if (make_dir && mkdir(sub, 0700) != 0 && errno != EEXIST)
		return false;
	return snprintf(out, n, "%s/%s.kfc", sub, key) < (int)n;
}

/* ---- store -------------------------------------------------------------------------------- */

static enum kf_status put(struct kf_buf *b, uint32_t tag, const void *data, size_t len)
{
	unsigned char h[REC_HEADER_BYTES] = {0};
	uint64_t len64 = len;
	enum kf_status st;
	memcpy(h, &tag, 4);
	memcpy(h + 8, &len64, 8);
	st = kf_buf_add(b, h, sizeof(h));
	return st ? st : kf_buf_add(b, data, len);
}

static enum kf_status put_i32(struct kf_buf *b, uint32_t tag, int32_t v)
{
	return put(b, tag, &v, 4);
}

static enum kf_status put_str(struct kf_buf *b, uint32_t tag, const char *s)
{
	return put(b, tag, s, strlen(s));
}

void kf_cache_store(const char *dir, const struct kf_compiled *c, enum kf_status status)
{
	struct kf_buf b = KF_BUF_INIT(CACHE_ENTRY_MAX);
	char path[4096];
	uint8_t sum[KF_SHA256_BYTES];
	struct kf_sha256 h;
	enum kf_status st;

	if ((status != KF_OK && status != KF_ERR_COMPILE) ||
	    !entry_path(dir, c->key, path, sizeof(path), true))
		return;
	st = kf_buf_add(&b, CACHE_MAGIC, CACHE_MAGIC_BYTES);
	if (!st)
		st = put_i32(&b, T_STATUS, (int32_t)status);
	if (!st)
		st = put_i32(&b, T_BACKEND, (int32_t)c->backend);
	if (!st)
		st = put_str(&b, T_KEY, c->key);
	if (!st)
		st = put_str(&b, T_ARCH, c->arch);
	if (!st)
		st = put_str(&b, T_COMPILER, c->compiler);
	if (!st)
		st = put_str(&b, T_LOG, c->log ? c->log : "");
	if (!st && c->ptx)
		st = put_str(&b, T_PTX, c->ptx);
	if (!st && c->image_len)
		st = put(&b, T_IMAGE, c->image, c->image_len);
	for (size_t i = 0; !st && i < c->n_kernels; i++) {
		const struct kf_kernel_res *k = &c->kernels[i];
		unsigned char rec[KERNEL_REC_BYTES] = {0};
		int32_t v[6] = {k->registers,   k->smem_static_bytes, k->cmem_bytes,
				k->stack_bytes, k->spill_store_bytes, k->spill_load_bytes};
		memcpy(rec, k->name, strnlen(k->name, sizeof(k->name) - 1));
		memcpy(rec + 128, v, sizeof(v));
		st = put(&b, T_KERNEL, rec, sizeof(rec));
	}
	for (size_t i = 0; !st && i < c->n_names; i++) {
		unsigned char rec[NAME_REC_BYTES] = {0};
		memcpy(rec, c->names[i].expr, strnlen(c->names[i].expr, 127));
		memcpy(rec + 128, c->names[i].lowered, strnlen(c->names[i].lowered, 127));
		st = put(&b, T_NAME, rec, sizeof(rec));
	}
	if (!st) {
		kf_sha256_init(&h);
		kf_sha256_update(&h, b.data, b.len);
		kf_sha256_final(&h, sum);
		st = put(&b, T_SUM, sum, sizeof(sum));
	}
	if (!st)
		kf_write_file_atomic(path, b.data, b.len, NULL);
	kf_buf_release(&b);
}

/* ---- load --------------------------------------------------------------------------------- */

static char *dup_field(const char *data, size_t len)
{
	/* A string field with a NUL inside is not one we wrote. */
	if (memchr(data, '\0', len))
		return NULL;
	return kf_strndup(data, len);
}

static bool copy_fixed(char *dst, size_t cap, const char *data, size_t len)
{
	if (len >= cap || memchr(data, '\0', len))
		return false;
	memcpy(dst, data, len);
	dst[len] = '\0';
	return true;
}

static bool parse_entry(const struct kf_buf *b, const char *key, struct kf_compiled *c,
			enum kf_status *status)
{
	size_t off = CACHE_MAGIC_BYTES, end, n_kernels = 0, cap_kernels = 0, cap_names = 0;
	uint8_t sum[KF_SHA256_BYTES];
	struct kf_sha256 h;
	bool have_status = false, have_backend = false, have_key = false, have_log = false;

	/* The checksum record closes the entry: a partial write or a flipped bit fails here. */
	if (b->len < CACHE_MAGIC_BYTES + REC_HEADER_BYTES + KF_SHA256_BYTES ||
	    memcmp(b->data, CACHE_MAGIC, CACHE_MAGIC_BYTES))
		return false;
	end = b->len - REC_HEADER_BYTES - KF_SHA256_BYTES;
	{
		uint32_t tag;
		uint64_t len;
		memcpy(&tag, b->data + end, 4);
		memcpy(&len, b->data + end + 8, 8);
		if (tag != T_SUM || len != KF_SHA256_BYTES)
			return false;
	}
	kf_sha256_init(&h);
	kf_sha256_update(&h, b->data, end);
	kf_sha256_final(&h, sum);
	if (memcmp(sum, b->data + end + REC_HEADER_BYTES, KF_SHA256_BYTES))
		return false;

	while (off < end) {
		uint32_t tag;
		uint64_t len;
		const char *data;
		int32_t v;
		if (end - off < REC_HEADER_BYTES)
			return false;
		memcpy(&tag, b->data + off, 4);
		memcpy(&len, b->data + off + 8, 8);
		off += REC_HEADER_BYTES;
		if (len > end - off)
			return false;
		data = b->data + off;
		off += (size_t)len;
		switch (tag) {
		case T_STATUS:
		case T_BACKEND:
			if (len != 4)
				return false;
			memcpy(&v, data, 4);
			if (tag == T_STATUS) {
				if (v != KF_OK && v != KF_ERR_COMPILE)
					return false;
				*status = (enum kf_status)v;
				have_status = true;
			} else {
				if (v != KF_BACKEND_CPU && v != KF_BACKEND_CUDA)
					return false;
				c->backend = (enum kf_backend_kind)v;
				have_backend = true;
			}
			break;
		case T_KEY:
			if (len != 64 || memcmp(data, key, 64))
				return false;
			have_key = true;
			break;
		case T_ARCH:
			if (!copy_fixed(c->arch, sizeof(c->arch), data, (size_t)len))
				return false;
			break;
		case T_COMPILER:
			if (!copy_fixed(c->compiler, sizeof(c->compiler), data, (size_t)len))
				return false;
			break;
		case T_LOG:
			free(c->log);
			c->log = dup_field(data, (size_t)len);
			if (!c->log)
				return false;
			have_log = true;
			break;
		case T_PTX:
			free(c->ptx);
			c->ptx = dup_field(data, (size_t)len);
			if (!c->ptx)
				return false;
			break;
		case T_IMAGE:
			free(c->image);
			c->image = malloc(len ? (size_t)len : 1);
			if (!c->image)
				return false;
			memcpy(c->image, data, (size_t)len);
			c->image_len = (size_t)len;
			break;
		case T_KERNEL: {
			struct kf_kernel_res *k;
			int32_t f[6];
			if (len != KERNEL_REC_BYTES || !memchr(data, '\0', 128))
				return false;
			if (n_kernels == cap_kernels) {
				size_t nc = cap_kernels ? 2 * cap_kernels : 8;
				struct kf_kernel_res *p = realloc(c->kernels, nc * sizeof(*p));
				if (!p)
					return false;
				c->kernels = p;
				cap_kernels = nc;
			}
			k = &c->kernels[n_kernels++];
			c->n_kernels = n_kernels;
			memset(k, 0, sizeof(*k));
			memcpy(k->name, data, 128);
			memcpy(f, data + 128, sizeof(f));
			k->registers = f[0], k->smem_static_bytes = f[1], k->cmem_bytes = f[2];
			k->stack_bytes = f[3], k->spill_store_bytes = f[4], k->spill_load_bytes = f[5];
			break;
		}
		case T_NAME: {
			struct kf_kernel_name *nm;
			if (len != NAME_REC_BYTES || !memchr(data, '\0', 128) ||
			    !memchr(data + 128, '\0', 128))
				return false;
			if (c->n_names == cap_names) {
				size_t nc = cap_names ? 2 * cap_names : 4;
				struct kf_kernel_name *p = realloc(c->names, nc * sizeof(*p));
				if (!p)
					return false;
				c->names = p;
				cap_names = nc;
			}
			nm = &c->names[c->n_names++];
			memcpy(nm->expr, data, 128);
			memcpy(nm->lowered, data + 128, 128);
			break;
		}
		default:
			return false;
		}
	}
	if (!have_status || !have_backend || !have_key || !have_log)
		return false;
	/* A successful compile without an image is not something we stored. */
	return *status != KF_OK || c->image_len > 0;
}

bool kf_cache_load(const char *dir, const char *key, struct kf_compiled **out, enum kf_status *status)
{
	struct kf_buf b = KF_BUF_INIT(CACHE_ENTRY_MAX);
	struct kf_compiled *c = NULL;
	char path[4096];
	bool hit = false;

	*out = NULL;
	if (!entry_path(dir, key, path, sizeof(path), false) || kf_buf_read_file(&b, path, NULL) != KF_OK)
		goto done;
	c = kf_compiled_new(KF_BACKEND_CUDA); /* the entry's backend record sets it */
	if (!c)
		goto done;
	hit = parse_entry(&b, key, c, status);
	if (hit) {
		snprintf(c->key, sizeof(c->key), "%s", key);
		c->cached = true;
		*out = c;
		c = NULL;
	}
done:
	kf_compiled_free(c);
	kf_buf_release(&b);
	return hit;
}
