/* The caches: compile results (one file per key, DIR/ab/abcd....kfc: the outcome, image, PTX, log and
 * per-kernel resources as tagged records) and sealed blobs (reference outputs under DIR/ref, the cpu
 * runtime object). Only this process writes them, and every one is sealed with an HMAC-SHA256 under the
 * cache's own key (DIR/.mac-key, 0600: no child can read it, being another uid or under Landlock), checked
 * on every load: a missing, partial, corrupt, foreign or forged entry is a miss (forged: with a
 * warning, and deleted). Both kinds are bounded in size, least recently used first out. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compile_int.h"
#include "fs.h"
#include "hash.h"

#define CACHE_MAGIC "KFCACHE2" /* 2: sealed with the HMAC (1 had a plain SHA-256) */
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
	T_SUM = 10,  /* HMAC-SHA256 (the cache key) of every byte before this record; always last */
	T_NAME = 11, /* a template name expression and its lowered name: expr[128] then lowered[128] */
};
#define NAME_REC_BYTES 256

#define BLOB_MAGIC "KFBLOB01"
#define KEY_FILE ".mac-key"
#define KEY_BYTES 32
/* Compiles whose entry would pass this are not kept (a 126 MB entry was seen once). */
#define STORE_MAX_BYTES ((size_t)32 << 20)
#define DEFAULT_COMPILE_MAX_MB 2048
#define DEFAULT_REF_MAX_MB 1024
#define EVICT_EVERY 32 /* stores between two size checks of the cache */

/* ---- the key and the MAC ------------------------------------------------------------------ */

static pthread_mutex_t key_mu = PTHREAD_MUTEX_INITIALIZER;
static char key_dir[4096];
static uint8_t key_bytes[KEY_BYTES];
static struct stat key_sb; /* the key file as it was when read: checked again on every use */

/* Reads DIR/.mac-key, making it first when there is none. A key file another user owns or can read is
 * not a secret: it is replaced (every entry sealed with it becomes a miss). */
static bool load_key(const char *dir, uint8_t out[KEY_BYTES])
{
	char path[4200], tmp[4300];
	uint8_t k[KEY_BYTES];
	struct stat sb;
	bool ok = false;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, KEY_FILE);
	pthread_mutex_lock(&key_mu);
	/* The key read before, if its file is still the same private file (a key others could read
	 * since is no secret any more). */
	if (key_dir[0] && !strcmp(key_dir, dir) && lstat(path, &sb) == 0 && sb.st_ino == key_sb.st_ino &&
	    sb.st_dev == key_sb.st_dev && sb.st_uid == geteuid() && !(sb.st_mode & 077)) {
		memcpy(out, key_bytes, KEY_BYTES);
		pthread_mutex_unlock(&key_mu);
		return true;
	}
	key_dir[0] = '\0';
	for (int attempt = 0; attempt < 3 && !ok; attempt++) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = -1;
			if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
			    !(sb.st_mode & 077))
				n = read(fd, k, sizeof(k));
			close(fd);
			if (n == (ssize_t)sizeof(k)) {
				ok = true;
				break;
			}
			/* Not ours, readable by others, or short: replace it. */
			fprintf(stderr,
				"kforge: warning: the cache key '%s' is not private; making a new one "
				"(cached entries will be recompiled)\n",
				path);
			unlink(path);
		}
		if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
			break;
		snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			break;
		if (write(fd, k, sizeof(k)) != (ssize_t)sizeof(k) || fsync(fd) != 0) {
			close(fd);
			unlink(tmp);
			break;
		}
		close(fd);
		/* link(), not rename(): when another process made one meanwhile, use that one. */
		if (link(tmp, path) == 0)
			ok = true;
		unlink(tmp);
	}
	if (ok && lstat(path, &key_sb) == 0) {
		snprintf(key_dir, sizeof(key_dir), "%s", dir);
		memcpy(key_bytes, k, KEY_BYTES);
		memcpy(out, k, KEY_BYTES);
	}
	pthread_mutex_unlock(&key_mu);
	return ok;
}

struct hmac {
	struct kf_sha256 inner;
	uint8_t okey[64];
};

static void hmac_init(struct hmac *h, const uint8_t key[KEY_BYTES])
{
	uint8_t ikey[64];
	memset(ikey, 0x36, sizeof(ikey));
	memset(h->okey, 0x5c, sizeof(h->okey));
	for (int i = 0; i < KEY_BYTES; i++) {
		ikey[i] ^= key[i];
		h->okey[i] ^= key[i];
	}
	kf_sha256_init(&h->inner);
	kf_sha256_update(&h->inner, ikey, sizeof(ikey));
}

static void hmac_final(struct hmac *h, uint8_t out[KF_SHA256_BYTES])
{
	struct kf_sha256 outer;
	uint8_t in[KF_SHA256_BYTES];
	kf_sha256_final(&h->inner, in);
	kf_sha256_init(&outer);
	kf_sha256_update(&outer, h->okey, sizeof(h->okey));
	kf_sha256_update(&outer, in, sizeof(in));
	kf_sha256_final(&outer, out);
}

/* Constant time: the comparison says nothing about where a forgery went wrong. */
static bool same_mac(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	for (int i = 0; i < KF_SHA256_BYTES; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static void warn_forged(const char *path)
{
	fprintf(stderr,
		"kforge: warning: cache entry '%s' failed its integrity check (not written by "
		"kforge, or altered since): ignored and removed\n",
		path);
	unlink(path);
}

/* ---- size bounds ---------------------------------------------------------------------------- */

static uint64_t limit_bytes(const char *env, uint64_t dflt_mb)
{
	const char *v = getenv(env);
	char *end;
	unsigned long long mb;
	if (!v || !*v)
		return dflt_mb << 20;
	mb = strtoull(v, &end, 10);
	return *end ? dflt_mb << 20 : (uint64_t)mb << 20;
}

/* An entry was used: it is now the most recently used. */
static void touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

struct entry {
	char *path;
	uint64_t bytes;
	time_t mtime;
};

struct listing {
	struct entry *v;
	size_t n, cap;
	uint64_t bytes;
};

static void list_add(struct listing *l, const char *path, const struct stat *sb)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 256;
		struct entry *p = realloc(l->v, nc * sizeof(*p));
		if (!p)
			return;
		l->v = p;
		l->cap = nc;
	}
	l->v[l->n].path = strdup(path);
	if (!l->v[l->n].path)
		return;
	l->v[l->n].bytes = (uint64_t)sb->st_size;
	l->v[l->n].mtime = sb->st_mtime;
	l->bytes += (uint64_t)sb->st_size;
	l->n++;
}

static void list_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* The files of one kind: 0 compile entries (DIR/xx/KEY.kfc), 1 reference outputs (every file in
 * DIR/ref), 2 other sealed blobs (DIR/NAME.blob). */
static void list_kind(const char *dir, int kind, struct listing *l)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4400];
	struct stat sb;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) != 0)
			continue;
		if (kind == 0 && S_ISDIR(sb.st_mode) && strlen(e->d_name) == 2 &&
		    strspn(e->d_name, "0123456789abcdef") == 2) {
			DIR *d2 = opendir(path);
			struct dirent *f;
			char p2[4700];
			while (d2 && (f = readdir(d2))) {
				snprintf(p2, sizeof(p2), "%s/%s", path, f->d_name);
				if (has_suffix(f->d_name, ".kfc") && lstat(p2, &sb) == 0 &&
				    S_ISREG(sb.st_mode))
					list_add(l, p2, &sb);
			}
			if (d2)
				closedir(d2);
		} else if (S_ISREG(sb.st_mode) &&
			   (kind == 1 || (kind == 2 && has_suffix(e->d_name, ".blob")))) {
			list_add(l, path, &sb);
		}
	}
	closedir(d);
}

static int by_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Deletes the least recently used entries until at most max bytes remain; returns what remains. */
static uint64_t evict(struct listing *l, uint64_t max)
{
	if (l->bytes <= max)
		return l->bytes;
	qsort(l->v, l->n, sizeof(*l->v), by_age);
	for (size_t i = 0; i < l->n && l->bytes > max; i++)
		if (unlink(l->v[i].path) == 0 || errno == ENOENT)
			l->bytes -= l->v[i].bytes;
	return l->bytes;
}

static void kind_dir(const char *dir, int kind, char *out, size_t n)
{
	snprintf(out, n, kind == 1 ? "%s/ref" : "%s", dir);
}

enum kf_status kf_cache_stats(const char *dir, struct kf_cache_stats *st, struct kf_err *err)
{
	char d[4096], sub[4200];
	enum kf_status s = kf_cache_dir(dir, d, sizeof(d), err);
	if (s)
		return s;
	memset(st, 0, sizeof(*st));
	snprintf(st->dir, sizeof(st->dir), "%s", d);
	st->max_compile_bytes = limit_bytes("KFORGE_CACHE_MAX_MB", DEFAULT_COMPILE_MAX_MB);
	st->max_ref_bytes = limit_bytes("KFORGE_REFCACHE_MAX_MB", DEFAULT_REF_MAX_MB);
	for (int k = 0; k < 3; k++) {
		struct listing l = {0};
		kind_dir(d, k, sub, sizeof(sub));
		list_kind(sub, k, &l);
		st->n[k] = l.n;
		st->bytes[k] = l.bytes;
		list_free(&l);
	}
	return KF_OK;
}

enum kf_status kf_cache_prune(const char *dir, uint64_t max_compile, uint64_t max_ref, struct kf_err *err)
{
	char d[4096], sub[4200];
	enum kf_status s = kf_cache_dir(dir, d, sizeof(d), err);
	if (s)
		return s;
	for (int k = 0; k < 3; k++) {
		struct listing l = {0};
		uint64_t max = k == 0 ? max_compile : k == 1 ? max_ref : (max_compile ? UINT64_MAX : 0);
		kind_dir(d, k, sub, sizeof(sub));
		list_kind(sub, k, &l);
		evict(&l, max);
		list_free(&l);
	}
	return KF_OK;
}

/* After a store: now and then, bring the kind back under its bound. */
static void maybe_evict(const char *dir, int kind)
{
	static unsigned stores[2];
	char sub[4200];
	struct listing l = {0};
	if (__atomic_fetch_add(&stores[kind], 1, __ATOMIC_RELAXED) % EVICT_EVERY != 0)
		return;
	kind_dir(dir, kind, sub, sizeof(sub));
	list_kind(sub, kind, &l);
	evict(&l, kind == 0 ? limit_bytes("KFORGE_CACHE_MAX_MB", DEFAULT_COMPILE_MAX_MB)
			    : limit_bytes("KFORGE_REFCACHE_MAX_MB", DEFAULT_REF_MAX_MB));
	list_free(&l);
}

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
	uint8_t sum[KF_SHA256_BYTES], key[KEY_BYTES];
	struct hmac h;
	enum kf_status st;

	if ((status != KF_OK && status != KF_ERR_COMPILE) ||
	    c->image_len + (c->ptx ? strlen(c->ptx) : 0) > STORE_MAX_BYTES || !load_key(dir, key) ||
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
		hmac_init(&h, key);
		kf_sha256_update(&h.inner, b.data, b.len);
		hmac_final(&h, sum);
		st = put(&b, T_SUM, sum, sizeof(sum));
	}
	if (!st && kf_write_file_atomic(path, b.data, b.len, NULL) == KF_OK)
		maybe_evict(dir, 0);
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

/* 1: parsed, 0: not an entry of ours (a miss), -1: a well-formed entry whose MAC is wrong (forged). */
static int parse_entry(const struct kf_buf *b, const char *key, const uint8_t mac_key[KEY_BYTES],
		       struct kf_compiled *c, enum kf_status *status)
{
	size_t off = CACHE_MAGIC_BYTES, end, n_kernels = 0, cap_kernels = 0, cap_names = 0;
	uint8_t sum[KF_SHA256_BYTES];
	struct hmac h;
	bool have_status = false, have_backend = false, have_key = false, have_log = false;

	/* The MAC record closes the entry: a partial write, a flipped bit or a forgery fails here. */
	if (b->len < CACHE_MAGIC_BYTES + REC_HEADER_BYTES + KF_SHA256_BYTES ||
	    memcmp(b->data, CACHE_MAGIC, CACHE_MAGIC_BYTES))
		return 0;
	end = b->len - REC_HEADER_BYTES - KF_SHA256_BYTES;
	{
		uint32_t tag;
		uint64_t len;
		memcpy(&tag, b->data + end, 4);
		memcpy(&len, b->data + end + 8, 8);
		if (tag != T_SUM || len != KF_SHA256_BYTES)
			return 0;
	}
	hmac_init(&h, mac_key);
	kf_sha256_update(&h.inner, b->data, end);
	hmac_final(&h, sum);
	if (!same_mac(sum, (const uint8_t *)b->data + end + REC_HEADER_BYTES))
		return -1;

	while (off < end) {
		uint32_t tag;
		uint64_t len;
		const char *data;
		int32_t v;
		if (end - off < REC_HEADER_BYTES)
			return 0;
		memcpy(&tag, b->data + off, 4);
		memcpy(&len, b->data + off + 8, 8);
		off += REC_HEADER_BYTES;
		if (len > end - off)
			return 0;
		data = b->data + off;
		off += (size_t)len;
		switch (tag) {
		case T_STATUS:
		case T_BACKEND:
			if (len != 4)
				return 0;
			memcpy(&v, data, 4);
			if (tag == T_STATUS) {
				if (v != KF_OK && v != KF_ERR_COMPILE)
					return 0;
				*status = (enum kf_status)v;
				have_status = true;
			} else {
				if (v != KF_BACKEND_CPU && v != KF_BACKEND_CUDA)
					return 0;
				c->backend = (enum kf_backend_kind)v;
				have_backend = true;
			}
			break;
		case T_KEY:
			if (len != 64 || memcmp(data, key, 64))
				return 0;
			have_key = true;
			break;
		case T_ARCH:
			if (!copy_fixed(c->arch, sizeof(c->arch), data, (size_t)len))
				return 0;
			break;
		case T_COMPILER:
			if (!copy_fixed(c->compiler, sizeof(c->compiler), data, (size_t)len))
				return 0;
			break;
		case T_LOG:
			free(c->log);
			c->log = dup_field(data, (size_t)len);
			if (!c->log)
				return 0;
			have_log = true;
			break;
		case T_PTX:
			free(c->ptx);
			c->ptx = dup_field(data, (size_t)len);
			if (!c->ptx)
				return 0;
			break;
		case T_IMAGE:
			free(c->image);
			c->image = malloc(len ? (size_t)len : 1);
			if (!c->image)
				return 0;
			memcpy(c->image, data, (size_t)len);
			c->image_len = (size_t)len;
			break;
		case T_KERNEL: {
			struct kf_kernel_res *k;
			int32_t f[6];
			if (len != KERNEL_REC_BYTES || !memchr(data, '\0', 128))
				return 0;
			if (n_kernels == cap_kernels) {
				size_t nc = cap_kernels ? 2 * cap_kernels : 8;
				struct kf_kernel_res *p = realloc(c->kernels, nc * sizeof(*p));
				if (!p)
					return 0;
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
			return 0;
		}
	}
	if (!have_status || !have_backend || !have_key || !have_log)
		return 0;
	/* A successful compile without an image is not something we stored. */
	return *status != KF_OK || c->image_len > 0 ? 1 : 0;
}

bool kf_cache_load(const char *dir, const char *key, struct kf_compiled **out, enum kf_status *status)
{
	struct kf_buf b = KF_BUF_INIT(CACHE_ENTRY_MAX);
	struct kf_compiled *c = NULL;
	char path[4096];
	uint8_t mac_key[KEY_BYTES];
	bool hit = false;
	int r;

	*out = NULL;
	if (!load_key(dir, mac_key) || !entry_path(dir, key, path, sizeof(path), false) ||
	    kf_buf_read_file(&b, path, NULL) != KF_OK)
		goto done;
	c = kf_compiled_new(KF_BACKEND_CUDA); /* the entry's backend record sets it */
	if (!c)
		goto done;
	r = parse_entry(&b, key, mac_key, c, status);
	if (r < 0)
		warn_forged(path);
	hit = r > 0;
	if (hit) {
		snprintf(c->key, sizeof(c->key), "%s", key);
		c->cached = true;
		touch(path);
		*out = c;
		c = NULL;
	}
done:
	kf_compiled_free(c);
	kf_buf_release(&b);
	return hit;
}

/* ---- sealed blobs --------------------------------------------------------------------------- */

static bool blob_path(const char *dir, const char *name, char *out, size_t n)
{
	/* Names are ours ("ref/<hex>", "cpu-rt-..."): no way out of the cache folder. */
	if (!name[0] || name[0] == '/' || strstr(name, "..") ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_./") != strlen(name))
		return false;
	return snprintf(out, n, "%s/%s", dir, name) < (int)n;
}

static void blob_mac(const uint8_t key[KEY_BYTES], const char *name, const void *data, uint64_t n,
		     uint8_t out[KF_SHA256_BYTES])
{
	struct hmac h;
	uint64_t nl = strlen(name);
	hmac_init(&h, key);
	kf_sha256_update(&h.inner, BLOB_MAGIC, 8);
	kf_sha256_update(&h.inner, &nl, sizeof(nl));
	kf_sha256_update(&h.inner, name, (size_t)nl);
	kf_sha256_update(&h.inner, &n, sizeof(n));
	kf_sha256_update(&h.inner, data, (size_t)n);
	hmac_final(&h, out);
}

bool kf_cache_blob_load(const char *dir, const char *name, struct kf_buf *out)
{
	char path[4400];
	uint8_t key[KEY_BYTES], mac[KF_SHA256_BYTES];
	struct kf_buf b = KF_BUF_INIT(out->max + 8 + 8 + KF_SHA256_BYTES);
	uint64_t n;
	bool ok = false;

	if (!blob_path(dir, name, path, sizeof(path)) || !load_key(dir, key) ||
	    kf_buf_read_file(&b, path, NULL) != KF_OK)
		goto done;
	if (b.len < 16 + KF_SHA256_BYTES || memcmp(b.data, BLOB_MAGIC, 8))
		goto done;
	memcpy(&n, b.data + 8, 8);
	if (n != b.len - 16 - KF_SHA256_BYTES)
		goto done;
	blob_mac(key, name, b.data + 16, n, mac);
	if (!same_mac(mac, (const uint8_t *)b.data + 16 + n)) {
		warn_forged(path);
		goto done;
	}
	out->len = 0;
	ok = kf_buf_add(out, b.data + 16, (size_t)n) == KF_OK;
	if (ok)
		touch(path);
done:
	kf_buf_release(&b);
	return ok;
}

enum kf_status kf_cache_blob_store(const char *dir, const char *name, const void *data, size_t n)
{
	char path[4400], sub[4400], *slash;
	uint8_t key[KEY_BYTES], mac[KF_SHA256_BYTES];
	uint64_t n64 = n;
	struct kf_buf b = KF_BUF_INIT(n + 16 + KF_SHA256_BYTES);
	enum kf_status st;

	if (!blob_path(dir, name, path, sizeof(path)) || !load_key(dir, key))
		return KF_ERR_IO;
	snprintf(sub, sizeof(sub), "%s", path);
	slash = strrchr(sub, '/');
	if (slash) {
		*slash = '\0';
		if (mkdir(sub, 0700) != 0 && errno != EEXIST)
			return KF_ERR_IO;
	}
	blob_mac(key, name, data, n64, mac);
	st = kf_buf_add(&b, BLOB_MAGIC, 8);
	if (!st)
		st = kf_buf_add(&b, &n64, 8);
	if (!st)
		st = kf_buf_add(&b, data, n);
	if (!st)
		st = kf_buf_add(&b, mac, sizeof(mac));
	if (!st)
		st = kf_write_file_atomic(path, b.data, b.len, NULL);
	kf_buf_release(&b);
	if (!st && !strncmp(name, "ref/", 4))
		maybe_evict(dir, 1);
	return st;
}
