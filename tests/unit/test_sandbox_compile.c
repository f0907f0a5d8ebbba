/* Tests for kf_compile (sandbox/compile.c, nvrtc.c, cache.c) on the fixtures in
 * tests/data/kernels/compile/: resources from ptxas, compile errors with NVRTC's message, cache hits (and
 * corrupt entries as misses), the template bomb killed at a short limit, toolkit/CCCL includes, and the
 * automatic sm_90a for Hopper-only PTX. NVRTC runs without a GPU, so none of these skip. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hash.h"
#include "sandbox/compile_int.h"
#include "sandbox/cpu/cpu.h"
#include "sandbox/sandbox.h"
#include "testing.h"

#define FIXTURES "tests/data/kernels/compile/"

static char cache_root[] = "/tmp/kforge-compile-test-XXXXXX";

/* Arrays through a function, so CHECK_STR's NULL checks do not warn about array addresses. */
static const char *str(const char *s)
{
	return s;
}

static struct kf_kfile *load(const char *name)
{
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	char path[256];
	snprintf(path, sizeof(path), FIXTURES "%s", name);
	if (kf_kfile_load(path, &k, &err) != KF_OK) {
		fprintf(stderr, "  cannot load '%s': %s\n", path, err.msg);
		return NULL;
	}
	return k;
}

/* A fresh cache directory per test, so hits and misses are the test's own. */
static void fresh_cache(char *dir, size_t n, const char *tag)
{
	snprintf(dir, n, "%s/%s", cache_root, tag);
}

static struct kf_compile_opts cuda_opts(const char *cache_dir)
{
	struct kf_compile_opts o = {.backend = KF_BACKEND_CUDA, .timeout_ms = 60000, .cache_dir = cache_dir};
	return o;
}

static void test_backend_name(void)
{
	CHECK_STR(kf_backend_name(KF_BACKEND_CPU), "cpu");
	CHECK_STR(kf_backend_name(KF_BACKEND_CUDA), "cuda");
}

static void test_good_kernel(void)
{
	char dir[256];
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	enum kf_status st;
	fresh_cache(dir, sizeof(dir), "good");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load (core/kfile.c)");
	st = kf_compile(k, &o, &c, &err);
	CHECKF(st == KF_OK, "%s", err.msg);
	if (c) {
		CHECK_STR(c->arch, "sm_90");
		CHECK(!c->cached);
		CHECK(c->image && c->image_len > 1000);
		/* A CUBIN is an ELF file. */
		CHECK(c->image && !memcmp(c->image, "\177ELF", 4));
		CHECK_CONTAINS(c->ptx, ".entry scale");
		CHECK_CONTAINS(c->log, "ptxas info");
		CHECK(!strncmp(c->compiler, "nvrtc ", 6));
		CHECK_EQ_INT(strlen(c->key), 64);
		CHECK_EQ_INT(c->n_kernels, 1);
		if (c->n_kernels == 1) {
			CHECK_STR(c->kernels[0].name, "scale");
			CHECK(c->kernels[0].registers > 0);
			CHECK_EQ_INT(c->kernels[0].smem_static_bytes, 1024);
			CHECK_EQ_INT(c->kernels[0].spill_store_bytes, 0);
		}
	}
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_syntax_error(void)
{
	char dir[256];
	struct kf_kfile *k = load("syntax_error.cu");
	struct kf_compiled *c = NULL, *c2 = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	fresh_cache(dir, sizeof(dir), "syntax");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECK_EQ_INT(kf_compile(k, &o, &c, &err), KF_ERR_COMPILE);
	CHECK(c != NULL);
	if (c) {
		CHECK_CONTAINS(c->log, "identifier \"undefined_name\" is undefined");
		CHECK_CONTAINS(c->log, "syntax_error.cu(5)");
		CHECK(c->image == NULL);
		CHECK(!c->cached);
	}
	/* Compile errors are deterministic, so they are cached too, log and all. */
	CHECK_EQ_INT(kf_compile(k, &o, &c2, &err), KF_ERR_COMPILE);
	CHECK(c2 && c2->cached);
	if (c && c2)
		CHECK_STR(c2->log, c->log);
	kf_compiled_free(c);
	kf_compiled_free(c2);
	kf_kfile_free(k);
}

static void corrupt_entries(const char *dir, const char *key, int how)
{
	char path[512];
	struct stat sb;
	int fd;
	snprintf(path, sizeof(path), "%s/%.2s/%s.kfc", dir, key, key);
	CHECKF(stat(path, &sb) == 0, "no cache entry '%s'", path);
	if (how == 0) {
		/* A partial write: the checksum record is gone. */
		CHECK(truncate(path, sb.st_size / 2) == 0);
	} else {
		/* One flipped byte in the middle of the image. */
		unsigned char b;
		fd = open(path, O_RDWR);
		CHECK(fd >= 0);
		if (fd >= 0) {
			CHECK(pread(fd, &b, 1, sb.st_size / 2) == 1);
			b ^= 0x5a;
			CHECK(pwrite(fd, &b, 1, sb.st_size / 2) == 1);
			close(fd);
		}
	}
}

/* What a process that can write the cache but not read its key does (issue 15: a wrong kernel passed
 * after its entry was rewritten "with its hash recomputed"): change the image, then recompute what it
 * can, the SHA-256 of everything before the last record. */
static void forge_entry(const char *dir, const char *key)
{
	char path[512];
	struct kf_buf b = KF_BUF_INIT((size_t)512 << 20);
	struct kf_sha256 h;
	snprintf(path, sizeof(path), "%s/%.2s/%s.kfc", dir, key, key);
	CHECK(kf_buf_read_file(&b, path, NULL) == KF_OK);
	if (b.len > 200) {
		b.data[b.len / 2] ^= 0x5a;
		kf_sha256_init(&h);
		kf_sha256_update(&h, b.data, b.len - 32 - 16);
		kf_sha256_final(&h, (uint8_t *)b.data + b.len - 32);
		CHECK(kf_write_file_atomic(path, b.data, b.len, NULL) == KF_OK);
	}
	kf_buf_release(&b);
}

static void test_forged_entry_is_a_miss(void)
{
	char dir[256], path[512];
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *a = NULL, *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	fresh_cache(dir, sizeof(dir), "forged");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &a, &err) == KF_OK, "%s", err.msg);
	if (a) {
		forge_entry(dir, a->key);
		CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s", err.msg);
		CHECK(c && !c->cached);
		if (c)
			CHECK(c->image_len == a->image_len && !memcmp(c->image, a->image, a->image_len));
		kf_compiled_free(c);
	}
	/* The key is the parent's alone: a key file others may read is replaced, and what it sealed
	 * is not trusted any more. */
	snprintf(path, sizeof(path), "%s/.mac-key", dir);
	CHECK(chmod(path, 0644) == 0);
	c = NULL;
	CHECK(kf_compile(k, &o, &c, &err) == KF_OK);
	CHECK(c && !c->cached);
	{
		struct stat sb;
		CHECK(stat(path, &sb) == 0 && (sb.st_mode & 077) == 0);
	}
	kf_compiled_free(a);
	kf_compiled_free(c);
	kf_kfile_free(k);
}

/* Sealed blobs (the reference-output cache, the cpu runtime object): a rewrite is a miss; the bounds
 * evict least recently used first. */
static void test_blobs_sealed_and_bounded(void)
{
	char dir[256], path[600];
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	static char data[200000];
	struct kf_cache_stats st;
	struct kf_err err = KF_ERR_INIT;
	int fd;

	fresh_cache(dir, sizeof(dir), "blobs");
	CHECK(kf_cache_dir(dir, path, sizeof(path), &err) == KF_OK); /* makes the folder */
	memset(data, 7, sizeof(data));
	CHECK(kf_cache_blob_store(dir, "ref/aa.bin", data, sizeof(data)) == KF_OK);
	CHECK(kf_cache_blob_load(dir, "ref/aa.bin", &b) && b.len == sizeof(data));
	/* 42 everywhere, as a kernel that writes 42 would want the reference to be */
	snprintf(path, sizeof(path), "%s/ref/aa.bin", dir);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	if (fd >= 0) {
		static char evil[1000];
		memset(evil, 42, sizeof(evil));
		CHECK(pwrite(fd, evil, sizeof(evil), 16) == (ssize_t)sizeof(evil));
		close(fd);
	}
	CHECK(!kf_cache_blob_load(dir, "ref/aa.bin", &b));
	CHECK(access(path, F_OK) != 0); /* removed */
	CHECK(!kf_cache_blob_load(dir, "../escape", &b));
	/* LRU: three entries, the oldest touched last, a bound that holds two */
	CHECK(kf_cache_blob_store(dir, "ref/b1.bin", data, sizeof(data)) == KF_OK);
	CHECK(kf_cache_blob_store(dir, "ref/b2.bin", data, sizeof(data)) == KF_OK);
	CHECK(kf_cache_blob_store(dir, "ref/b3.bin", data, sizeof(data)) == KF_OK);
	{
		struct timespec old[2] = {{1000, 0}, {1000, 0}}, older[2] = {{500, 0}, {500, 0}};
		snprintf(path, sizeof(path), "%s/ref/b2.bin", dir);
		utimensat(AT_FDCWD, path, older, 0);
		snprintf(path, sizeof(path), "%s/ref/b1.bin", dir);
		utimensat(AT_FDCWD, path, old, 0);
	}
	CHECK(kf_cache_blob_load(dir, "ref/b1.bin", &b)); /* b1 is used: now the newest */
	CHECK(kf_cache_prune(dir, UINT64_MAX, 2 * (sizeof(data) + 100), &err) == KF_OK);
	CHECK(kf_cache_stats(dir, &st, &err) == KF_OK);
	CHECK_EQ_INT(st.n[KF_CACHE_REF], 2);
	CHECK(kf_cache_blob_load(dir, "ref/b1.bin", &b));
	CHECK(!kf_cache_blob_load(dir, "ref/b2.bin", &b));
	CHECK(kf_cache_prune(dir, 0, 0, &err) == KF_OK);
	CHECK(kf_cache_stats(dir, &st, &err) == KF_OK);
	CHECK(st.n[0] == 0 && st.n[1] == 0 && st.n[2] == 0);
	kf_buf_release(&b);
}

static void test_cache_hit(void)
{
	char dir[256];
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *a = NULL, *b = NULL, *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	fresh_cache(dir, sizeof(dir), "hit");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &a, &err) == KF_OK, "%s", err.msg);
	CHECKF(kf_compile(k, &o, &b, &err) == KF_OK, "%s", err.msg);
	if (a && b) {
		CHECK(!a->cached);
		CHECK(b->cached);
		CHECK_STR(a->key, b->key);
		CHECK_STR(a->arch, b->arch);
		CHECK_STR(a->compiler, b->compiler);
		CHECK_STR(a->log, b->log);
		CHECK(a->ptx && b->ptx && !strcmp(a->ptx, b->ptx));
		CHECK(a->image_len == b->image_len && !memcmp(a->image, b->image, a->image_len));
		CHECK(a->n_kernels == b->n_kernels &&
		      !memcmp(a->kernels, b->kernels, a->n_kernels * sizeof(*a->kernels)));
		/* A fork + NVRTC compile against a file read: at least 10x apart. */
		CHECKF(b->wall_ms * 10 < a->wall_ms, "cold %.1f ms, cached %.1f ms", a->wall_ms, b->wall_ms);
	}
	/* --no-cache compiles again. */
	o.no_cache = true;
	CHECK(kf_compile(k, &o, &c, &err) == KF_OK);
	CHECK(c && !c->cached);
	kf_compiled_free(c);
	c = NULL;
	o.no_cache = false;
	/* A partial entry, then a corrupt one: each is a miss, never an error, and is rewritten. */
	for (int how = 0; how < 2 && a; how++) {
		corrupt_entries(dir, a->key, how);
		CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s", err.msg);
		CHECK(c && !c->cached);
		if (c)
			CHECK(c->image_len == a->image_len && !memcmp(c->image, a->image, a->image_len));
		kf_compiled_free(c);
		c = NULL;
		CHECK(kf_compile(k, &o, &c, &err) == KF_OK);
		CHECK(c && c->cached);
		kf_compiled_free(c);
		c = NULL;
	}
	/* Another arch is another key. */
	o.arch = "sm_80";
	CHECK(kf_compile(k, &o, &c, &err) == KF_OK);
	if (c && a) {
		CHECK(!c->cached);
		CHECK_STR(c->arch, "sm_80");
		CHECK(strcmp(c->key, a->key) != 0);
	}
	kf_compiled_free(a);
	kf_compiled_free(b);
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_bomb_times_out(void)
{
	char dir[256];
	struct kf_kfile *k = load("bomb.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	double t0;
	enum kf_status st;
	fresh_cache(dir, sizeof(dir), "bomb");
	o = cuda_opts(dir);
	o.timeout_ms = 3000;
	if (!k)
		KF_SKIP("fixture did not load");
	t0 = kf_now_ms();
	st = kf_compile(k, &o, &c, &err);
	CHECKF(st == KF_ERR_TIMEOUT, "got %s: %s", kf_status_name(st), err.msg);
	CHECK(c == NULL);
	CHECKF(kf_now_ms() - t0 < 6000, "took %.0f ms", kf_now_ms() - t0);
	CHECK_CONTAINS(err.msg, "bomb.cu");
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void compile_ok(const char *fixture, const char *want_kernel)
{
	char dir[256];
	struct kf_kfile *k = load(fixture);
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	enum kf_status st;
	fresh_cache(dir, sizeof(dir), fixture);
	o = cuda_opts(dir);
	if (!k) {
		CHECKF(0, "fixture '%s' did not load", fixture);
		return;
	}
	st = kf_compile(k, &o, &c, &err);
	CHECKF(st == KF_OK, "%s: %s: %s", fixture, err.msg, c ? c->log : "");
	CHECK(c && c->n_kernels == 1 && !strcmp(c->kernels[0].name, want_kernel) &&
	      c->kernels[0].registers > 0);
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_fp16_bf16_headers(void)
{
	compile_ok("fp16_bf16.cu", "convert");
}

static void test_cccl_headers(void)
{
	compile_ok("cccl.cu", "block_sum");
}

static void test_wgmma_picks_sm90a(void)
{
	char dir[256];
	struct kf_kfile *k = load("wgmma.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	enum kf_status st;
	fresh_cache(dir, sizeof(dir), "wgmma");
	o = cuda_opts(dir);
	o.arch = "sm_90";
	if (!k)
		KF_SKIP("fixture did not load");
	st = kf_compile(k, &o, &c, &err);
	CHECKF(st == KF_OK, "%s: %s", err.msg, c ? c->log : "");
	if (c)
		CHECK_STR(c->arch, "sm_90a");
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_pick_arch(void)
{
	char arch[16];
	struct kf_err err = KF_ERR_INIT;
	const char *plain = "y[0] = 1;", *hopper = "asm(\"wgmma.fence.sync.aligned;\");";
	const char *multicast = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
				".multicast::cluster [%0]";
	CHECK(kf_nvrtc_pick_arch(plain, strlen(plain), NULL, arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_90");
	CHECK(kf_nvrtc_pick_arch(hopper, strlen(hopper), "sm_90", arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_90a");
	CHECK(kf_nvrtc_pick_arch(multicast, strlen(multicast), "sm_90", arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_90a");
	CHECK(kf_nvrtc_pick_arch("setmaxnreg.inc.sync.aligned.u32 240;", 36, "sm_100", arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_100a");
	/* Pre-Hopper archs have no arch-specific variant: left as asked (the compile will say why). */
	CHECK(kf_nvrtc_pick_arch(hopper, strlen(hopper), "sm_80", arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_80");
	/* An explicit suffix is kept. */
	CHECK(kf_nvrtc_pick_arch(plain, strlen(plain), "sm_90a", arch, &err) == KF_OK);
	CHECK_STR(str(arch), "sm_90a");
	CHECK_EQ_INT(kf_nvrtc_pick_arch(plain, strlen(plain), "sm_9", arch, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_nvrtc_pick_arch(plain, strlen(plain), "compute_90", arch, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_nvrtc_pick_arch(plain, strlen(plain), "sm_90x", arch, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "sm_90x");
}

static void test_two_kernels_stack(void)
{
	char dir[256];
	struct kf_kfile *k = load("stack.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	fresh_cache(dir, sizeof(dir), "stack");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s", err.msg);
	CHECK(c && c->n_kernels == 2);
	for (size_t i = 0; c && i < c->n_kernels; i++) {
		if (!strcmp(c->kernels[i].name, "gather"))
			CHECK_EQ_INT(c->kernels[i].stack_bytes, 1024);
		else
			CHECK(!strcmp(c->kernels[i].name, "small") && c->kernels[i].stack_bytes == 0);
	}
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_ptxas_parse(void)
{
	/* Older ptxas reports cmem per bank on the "Used" line; spills come from a register cap. */
	const char *log =
	    "ptxas info    : 0 bytes gmem\n"
	    "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'\n"
	    "ptxas info    : Function properties for _Z3fooPf\n"
	    "ptxas         .     48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
	    "ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem, 368 bytes cmem[0], 16 "
	    "bytes cmem[2]\n"
	    "ptxas info    : Function properties for helper\n"
	    "ptxas         .     999 bytes stack frame, 999 bytes spill stores, 999 bytes spill loads\n"
	    "ptxas info    : Compiling entry function 'bar' for 'sm_90'\n"
	    "ptxas info    : Function properties for bar\n"
	    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
	    "ptxas info    : Used 7 registers, used 0 barriers";
	struct kf_kernel_res *ks = NULL;
	size_t n = 0;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_ptxas_parse(log, &ks, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_STR(ks[0].name, "_Z3fooPf");
		CHECK_EQ_INT(ks[0].registers, 32);
		CHECK_EQ_INT(ks[0].smem_static_bytes, 8192);
		CHECK_EQ_INT(ks[0].cmem_bytes, 384);
		CHECK_EQ_INT(ks[0].stack_bytes, 48);
		CHECK_EQ_INT(ks[0].spill_store_bytes, 40);
		CHECK_EQ_INT(ks[0].spill_load_bytes, 36);
		CHECK_STR(ks[1].name, "bar");
		CHECK_EQ_INT(ks[1].registers, 7);
		CHECK_EQ_INT(ks[1].stack_bytes, 0);
	}
	free(ks);
	CHECK(kf_ptxas_parse("no ptxas here\n", &ks, &n, &err) == KF_OK);
	CHECK_EQ_INT(n, 0);
	CHECK(ks == NULL);
}

static void test_bad_arch_is_invalid(void)
{
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o = cuda_opts(cache_root);
	if (!k)
		KF_SKIP("fixture did not load");
	o.arch = "sm_12"; /* well-formed, but no such GPU: NVRTC refuses the option */
	CHECK_EQ_INT(kf_compile(k, &o, &c, &err), KF_ERR_INVALID);
	CHECK(c == NULL);
	o.arch = "hopper";
	CHECK_EQ_INT(kf_compile(k, &o, &c, &err), KF_ERR_INVALID);
	kf_kfile_free(k);
}

static void test_cache_dir_env(void)
{
	char dir[256], got[512];
	struct kf_err err = KF_ERR_INIT;
	snprintf(dir, sizeof(dir), "%s/env/nested/deeper", cache_root);
	setenv("KFORGE_CACHE", dir, 1);
	CHECK(kf_cache_dir(NULL, got, sizeof(got), &err) == KF_OK);
	CHECK_STR(str(got), str(dir));
	CHECK(access(dir, W_OK) == 0);
	/* An explicit directory wins over the environment. */
	CHECK(kf_cache_dir(cache_root, got, sizeof(got), &err) == KF_OK);
	CHECK_STR(str(got), str(cache_root));
	/* A path under a regular file cannot be a directory. */
	snprintf(dir, sizeof(dir), "%s/file", cache_root);
	fclose(fopen(dir, "w"));
	snprintf(dir, sizeof(dir), "%s/file/sub", cache_root);
	CHECK_EQ_INT(kf_cache_dir(dir, got, sizeof(got), &err), KF_ERR_IO);
}

static void test_unwritable_cache_still_compiles(void)
{
	char dir[256];
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	snprintf(dir, sizeof(dir), "%s/file/sub", cache_root);
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s", err.msg);
	CHECK(c && !c->cached);
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void test_cpu_backend_cached(void)
{
	char dir[256];
	struct kf_kfile *k = load("good.cu");
	struct kf_compiled *a = NULL, *b = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	fresh_cache(dir, sizeof(dir), "cpu");
	o = cuda_opts(dir);
	o.backend = KF_BACKEND_CPU;
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &a, &err) == KF_OK, "%s", err.msg);
	CHECKF(kf_compile(k, &o, &b, &err) == KF_OK, "%s", err.msg);
	if (a && b) {
		CHECK_EQ_INT(a->backend, KF_BACKEND_CPU);
		CHECK_EQ_INT(b->backend, KF_BACKEND_CPU);
		CHECK_STR(str(b->arch), "host");
		CHECK(!a->cached && b->cached);
		CHECK(a->image_len > 0 && a->image_len == b->image_len &&
		      !memcmp(a->image, b->image, a->image_len));
		CHECK_STR(str(a->compiler), str(b->compiler));
		/* The cpu and cuda compiles of one source never share a key. */
		{
			struct kf_compiled *c = NULL;
			struct kf_compile_opts oc = cuda_opts(dir);
			CHECK(kf_compile(k, &oc, &c, &err) == KF_OK);
			CHECK(c && !c->cached && strcmp(c->key, a->key) != 0);
			kf_compiled_free(c);
		}
	}
	kf_compiled_free(a);
	kf_compiled_free(b);
	kf_kfile_free(k);
}

/* Template launches: NVRTC instantiates each name expression and reports its lowered name, the
 * resources of those entries are named by the expression, the cache keeps the names, and the cpu
 * module's trampolines have names of their own. */
static void test_template_names(void)
{
	char dir[256];
	struct kf_kfile *k = load("templates.cu");
	struct kf_compiled *a = NULL, *b = NULL, *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o;
	char sym[128];
	fresh_cache(dir, sizeof(dir), "templates");
	o = cuda_opts(dir);
	if (!k)
		KF_SKIP("fixture did not load");
	CHECKF(kf_compile(k, &o, &a, &err) == KF_OK, "%s %s", err.msg, a ? a->log : "");
	CHECKF(kf_compile(k, &o, &b, &err) == KF_OK, "%s", err.msg);
	if (a && b) {
		CHECK(b->cached);
		CHECK_EQ_INT(a->n_names, 2);
		CHECK_EQ_INT(b->n_names, 2);
		if (a->n_names == 2 && b->n_names == 2) {
			CHECK_STR(str(a->names[0].expr), "scale<float,256>");
			CHECK_STR(str(a->names[1].expr), "scale<double,128>");
			CHECK(!strncmp(a->names[0].lowered, "_Z5scale", 8));
			CHECK(strcmp(a->names[0].lowered, a->names[1].lowered) != 0);
			CHECK_STR(str(b->names[1].lowered), str(a->names[1].lowered));
		}
		CHECKF(kf_compiled_symbol(b, "scale<double,128>", sym, &err) == KF_OK, "%s", err.msg);
		CHECK_STR(str(sym), str(a->names[1].lowered));
		CHECK(kf_compiled_symbol(b, "plain", sym, &err) == KF_OK && !strcmp(sym, "plain"));
		CHECK_EQ_INT(kf_compiled_symbol(b, "scale<int,1>", sym, &err), KF_ERR_INVALID);
		CHECK_CONTAINS(err.msg, "no instantiation of 'scale<int,1>'");
		/* ptxas resources under the names the plans use */
		bool f = false, d = false, p = false;
		for (size_t i = 0; i < b->n_kernels; i++) {
			f |= !strcmp(b->kernels[i].name, "scale<float,256>");
			d |= !strcmp(b->kernels[i].name, "scale<double,128>");
			p |= !strcmp(b->kernels[i].name, "plain");
		}
		CHECK(f && d && p);
	}
	o.backend = KF_BACKEND_CPU;
	CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s %s", err.msg, c ? c->log : "");
	if (c) {
		char want[48];
		CHECK_EQ_INT(c->n_names, 2);
		kf_cpu_entry_name("scale<float,256>", want);
		CHECK(kf_compiled_symbol(c, "scale<float,256>", sym, &err) == KF_OK && !strcmp(sym, want));
		CHECK(!strncmp(want, "kf_t_", 5) && strlen(want) == 29);
	}
	kf_compiled_free(a);
	kf_compiled_free(b);
	kf_compiled_free(c);
	kf_kfile_free(k);
}

static void setup(void)
{
	if (!mkdtemp(cache_root)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void teardown(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove '%s'\n", cache_root);
}

static const struct kf_test_case cases[] = {
    TEST(test_backend_name),
    TEST(test_pick_arch),
    TEST(test_template_names),
    TEST(test_ptxas_parse),
    TEST(test_good_kernel),
    TEST(test_syntax_error),
    TEST(test_cache_hit),
    TEST(test_forged_entry_is_a_miss),
    TEST(test_blobs_sealed_and_bounded),
    TEST(test_bomb_times_out),
    TEST(test_fp16_bf16_headers),
    TEST(test_cccl_headers),
    TEST(test_wgmma_picks_sm90a),
    TEST(test_two_kernels_stack),
    TEST(test_bad_arch_is_invalid),
    TEST(test_cache_dir_env),
    TEST(test_unwritable_cache_still_compiles),
    TEST(test_cpu_backend_cached),
};

int main(int argc, char **argv)
{
	int rc;
	setup();
	rc = kf_test_run(cases, KF_ARRAY_SIZE(cases), argc, argv);
	teardown();
	return rc;
}
