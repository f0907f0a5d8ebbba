/* kf_compile: one entry point for both backends. Picks the arch and options, derives the cache key
 * (sha256 over backend, program name, source, options, arch and compiler id), answers from the cache
 * when it can, else compiles in a sandboxed child (NVRTC for cuda, kf_cpu_compile for cpu) and stores
 * the outcome (successes and compile errors alike: both are deterministic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"
#include "cpu/cpu.h"
#include "hash.h"
#include "redact.h"

/* Bump when anything that goes into a key or an entry changes meaning. */
#define CACHE_KEY_VERSION "kforge-compile-v1"

const char *kf_backend_name(enum kf_backend_kind b)
{
	switch (b) {
	case KF_BACKEND_CPU:
		return "cpu";
	case KF_BACKEND_CUDA:
		return "cuda";
	}
	return "unknown";
}

const char *kf_compiler_id(enum kf_backend_kind b)
{
	return b == KF_BACKEND_CUDA ? kf_nvrtc_compiler_id() : kf_cpu_compiler_id();
}

struct kf_compiled *kf_compiled_new(enum kf_backend_kind b)
{
	struct kf_compiled *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->backend = b;
	c->log = calloc(1, 1);
	if (!c->log) {
		free(c);
		return NULL;
	}
	return c;
}

void kf_compiled_free(struct kf_compiled *c)
{
	if (!c)
		return;
	free(c->image);
	free(c->ptx);
	free(c->log);
	free(c->kernels);
	free(c->names);
	free(c);
}

enum kf_status kf_compiled_symbol(const struct kf_compiled *c, const char *kernel, char out[128],
				  struct kf_err *err)
{
	if (!strchr(kernel, '<')) {
		if (strlen(kernel) >= 128)
			return kf_err_set(err, KF_ERR_INVALID, "kernel name '%.40s...' is too long", kernel);
		snprintf(out, 128, "%s", kernel);
		return KF_OK;
	}
	for (size_t i = 0; c && i < c->n_names; i++)
		if (!strcmp(c->names[i].expr, kernel)) {
			snprintf(out, 128, "%s", c->names[i].lowered);
			return KF_OK;
		}
	return kf_err_set(err, KF_ERR_INVALID,
			  "the module has no instantiation of '%s' (compiled without it)", kernel);
}

static void key_add(struct kf_sha256 *h, const char *s, size_t n)
{
	/* Length-prefixed, so no two different field lists hash the same bytes. */
	uint64_t n64 = n;
	kf_sha256_update(h, &n64, sizeof(n64));
	kf_sha256_update(h, s, n);
}

static void key_adds(struct kf_sha256 *h, const char *s)
{
	key_add(h, s, strlen(s));
}

/* The name the compiler gives the program in its diagnostics ("softmax.cu(12): error ..."). */
static const char *program_name(const struct kf_kfile *k)
{
	const char *slash;
	if (!k->path || !*k->path)
		return "kernel.cu";
	slash = strrchr(k->path, '/');
	return slash && slash[1] ? slash + 1 : k->path;
}

/* The compiler's words are child output: redacted before anything else sees them. True when a secret (or
 * key-shaped text) had to go: the source made the compiler say it, and is rejected. */
static bool redact_log(struct kf_compiled *c)
{
	size_t n = c->log ? strlen(c->log) : 0;
	char *b;
	if (!n || !kf_redact_has_secret(c->log))
		return false;
	b = malloc(n + 64);
	if (!b) {
		c->log[0] = '\0';
		return true;
	}
	memcpy(b, c->log, n + 1);
	kf_redact(b, n + 64);
	free(c->log);
	c->log = b;
	return true;
}

static enum kf_status compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			      struct kf_compiled **out, struct kf_err *err);

enum kf_status kf_compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			  struct kf_compiled **out, struct kf_err *err)
{
	enum kf_status st = compile(k, opts, out, err);
	if (err)
		kf_redact(err->msg, sizeof(err->msg));
	if (*out && redact_log(*out)) {
		const char *name = k && k->path ? k->path : "kernel";
		return kf_err_set(
		    err, KF_ERR_COMPILE,
		    "the compiler's output for '%s' held text that looks like a secret (redacted): the "
		    "source is rejected",
		    name);
	}
	return st;
}

static enum kf_status compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			      struct kf_compiled **out, struct kf_err *err)
{
	static const struct kf_compile_opts defaults = {.backend = KF_BACKEND_CUDA};
	struct kf_nvrtc_opts nv;
	struct kf_sha256 h;
	uint8_t digest[KF_SHA256_BYTES];
	char arch[16], key[65], dir[4096];
	const char *compiler, *name;
	bool use_cache;
	double t0 = kf_now_ms();
	struct kf_compiled *c = NULL;
	enum kf_status st, cached_st;
	const char *exprs[64];
	size_t n_exprs;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!k || !k->source)
		return kf_err_set(err, KF_ERR_INVALID, "no kernel source to compile");
	name = program_name(k);
	n_exprs = kf_kfile_name_exprs(k, exprs, KF_ARRAY_SIZE(exprs));
	if (n_exprs > KF_ARRAY_SIZE(exprs))
		return kf_err_set(err, KF_ERR_LIMIT, "'%s' instantiates %zu templates; at most %zu", name,
				  n_exprs, KF_ARRAY_SIZE(exprs));

	kf_sha256_init(&h);
	key_adds(&h, CACHE_KEY_VERSION);
	key_adds(&h, kf_backend_name(opts->backend));
	key_adds(&h, name);
	key_add(&h, k->source, k->source_len);
	/* The instantiations are part of what is compiled (a file without template launches hashes as
	 * before, so existing entries stay valid). */
	for (size_t i = 0; i < n_exprs; i++) {
		key_adds(&h, "name-expression");
		key_adds(&h, exprs[i]);
	}
	switch (opts->backend) {
	case KF_BACKEND_CUDA:
		st = kf_nvrtc_pick_arch(k->source, k->source_len, opts->arch, arch, err);
		if (st)
			return st;
		kf_nvrtc_opts_make(arch, &nv);
		for (size_t i = 0; i < nv.n; i++)
			key_adds(&h, nv.argv[i]);
		compiler = kf_nvrtc_compiler_id();
		break;
	case KF_BACKEND_CPU:
		snprintf(arch, sizeof(arch), "host");
		key_adds(&h, opts->sanitize ? "sanitize=1" : "sanitize=0");
		key_adds(&h, opts->instrument ? "instrument=1" : "instrument=0");
		/* __CUDA_ARCH__ of the host build follows the GPU arch the file is checked for */
		key_adds(&h, opts->arch && *opts->arch ? opts->arch : "sm_90");
		compiler = opts->instrument ? kf_cpu_san_compiler_id() : kf_cpu_compiler_id();
		break;
	default:
		return kf_err_set(err, KF_ERR_INVALID, "unknown backend %d", (int)opts->backend);
	}
	key_adds(&h, arch);
	key_adds(&h, compiler);
	kf_sha256_final(&h, digest);
	kf_hex_encode(digest, sizeof(digest), key);

	/* No compiler reads a file the include rules refuse (a compile_error that says why). */
	{
		struct kf_buf log = KF_BUF_INIT(KF_COMPILE_LOG_MAX);
		st = kf_include_check(k->source, k->source_len, k->path ? k->path : name, &log);
		if (st == KF_ERR_COMPILE && (c = kf_compiled_new(opts->backend)) != NULL) {
			free(c->log);
			c->log = kf_buf_detach(&log, NULL);
			if (!c->log) {
				kf_compiled_free(c);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			snprintf(c->compiler, sizeof(c->compiler), "%s", compiler);
			snprintf(c->arch, sizeof(c->arch), "%s", arch);
			memcpy(c->key, key, sizeof(c->key));
			c->wall_ms = kf_now_ms() - t0;
			*out = c;
			return kf_err_set(err, KF_ERR_COMPILE, "'%s' breaks kforge's include rules", name);
		}
		kf_buf_release(&log);
		if (st)
			return kf_err_set(err, st == KF_ERR_COMPILE ? KF_ERR_NOMEM : st, "out of memory");
	}

	/* No usable cache directory is not an error: the compile just is not remembered. */
	use_cache = !opts->no_cache && kf_cache_dir(opts->cache_dir, dir, sizeof(dir), NULL) == KF_OK;
	if (use_cache && kf_cache_load(dir, key, &c, &cached_st)) {
		c->wall_ms = kf_now_ms() - t0;
		*out = c;
		if (cached_st == KF_ERR_COMPILE)
			return kf_err_set(err, KF_ERR_COMPILE, "'%s' does not compile (cached result)", name);
		return KF_OK;
	}

	if (opts->backend == KF_BACKEND_CUDA)
		st = kf_nvrtc_compile(k->source, k->source_len, name, arch, &nv, exprs, n_exprs,
				      opts->timeout_ms, &c, err);
	else if ((st = kf_cpu_compile(k, opts, &c, err)) == KF_OK && c)
		st = kf_cpu_names(c, exprs, n_exprs, err);
	if ((st == KF_ERR_CRASH || st == KF_ERR_LIMIT) && !c && (c = kf_compiled_new(opts->backend))) {
		/* A compiler that died (out of its memory limit, a signal) on this source: the source is
		 * rejected, not the run (never cached: it may not happen again). */
		free(c->log);
		c->log = kf_strdup(err && err->msg[0] ? err->msg : kf_status_name(st));
		if (!c->log) {
			kf_compiled_free(c);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		snprintf(c->compiler, sizeof(c->compiler), "%s", compiler);
		snprintf(c->arch, sizeof(c->arch), "%s", arch);
		memcpy(c->key, key, sizeof(c->key));
		c->wall_ms = kf_now_ms() - t0;
		*out = c;
		return kf_err_set(err, KF_ERR_COMPILE, "the compiler could not finish '%s': %s", name,
				  c->log);
	}
	if (st != KF_OK && st != KF_ERR_COMPILE) {
		kf_compiled_free(c);
		return st;
	}
	if (!c)
		return kf_err_set(err, KF_ERR_INTERNAL, "compiler returned %s without a result",
				  kf_status_name(st));
	memcpy(c->key, key, sizeof(c->key));
	if (!c->compiler[0])
		snprintf(c->compiler, sizeof(c->compiler), "%s", compiler);
	if (!c->arch[0])
		snprintf(c->arch, sizeof(c->arch), "%s", arch);
	c->cached = false;
	/* NVRTC's rejections are deterministic (source, options, toolkit), so they are remembered too; the
	 * host compiler's also depend on the machine (the shim folder in the cache, the compiler's own
	 * state), and a cached failure from a broken moment would reject a good kernel forever. */
	if (use_cache && (st == KF_OK || opts->backend == KF_BACKEND_CUDA) && !kf_redact_has_secret(c->log))
		kf_cache_store(dir, c, st);
	c->wall_ms = kf_now_ms() - t0;
	*out = c;
	return st;
}

/* ---- NVRTC first ------------------------------------------------------------------------------- */

/* Copies the first host-compiler diagnostic of log into msg (the words after "error: ", a shim
 * header's folder cut to its file name) and returns the user's line it belongs to: the error's own line
 * when it is in the user's file, else the first "PATH:LINE:" of the user's file in the log (the
 * instantiation or include that led there), else 0. */
static int host_first_error(const char *log, const char *path, char *msg, size_t cap)
{
	size_t plen = strlen(path);
	int line = 0;
	msg[0] = '\0';
	for (const char *l = log; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		const char *e = memmem(l, len, "error: ", 7);
		if (line == 0 && len > plen + 1 && !strncmp(l, path, plen) && l[plen] == ':' &&
		    l[plen + 1] >= '0' && l[plen + 1] <= '9')
			line = (int)strtol(l + plen + 1, NULL, 10);
		if (e && !msg[0]) {
			size_t n = len - (size_t)(e + 7 - l), o = 0;
			const char *t = e + 7;
			for (size_t i = 0; i < n && o + 1 < cap; i++) {
				/* ".../cpu-shim-HASH/cooperative_groups.h" -> "cooperative_groups.h" */
				if (!strncmp(t + i, "cpu-shim-", 9)) {
					while (o > 0 && msg[o - 1] != ' ' && msg[o - 1] != '\'' &&
					       msg[o - 1] != '"')
						o--;
					while (i < n && t[i] != '/')
						i++;
					continue;
				}
				/* g++'s typographic quotes (U+2018/U+2019) as plain ones */
				if (i + 2 < n && (unsigned char)t[i] == 0xe2 &&
				    (unsigned char)t[i + 1] == 0x80 &&
				    ((unsigned char)t[i + 2] == 0x98 || (unsigned char)t[i + 2] == 0x99)) {
					msg[o++] = '\'';
					i += 2;
					continue;
				}
				msg[o++] =
				    (unsigned char)t[i] >= 0x20 && (unsigned char)t[i] < 0x7f ? t[i] : '?';
			}
			msg[o] = '\0';
			if (!strncmp(l, path, plen) && l[plen] == ':')
				return (int)strtol(l + plen + 1, NULL, 10);
		}
		if (msg[0] && line)
			return line;
		l = nl ? nl + 1 : NULL;
	}
	return line;
}

enum kf_status kf_compile_checked(const struct kf_kfile *k, const struct kf_compile_opts *opts,
				  struct kf_compiled **out, struct kf_err *err)
{
	static const struct kf_compile_opts defaults = {.backend = KF_BACKEND_CUDA};
	struct kf_compile_opts nv;
	struct kf_compiled *g = NULL, *c = NULL;
	enum kf_status st;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!k || !k->source)
		return kf_err_set(err, KF_ERR_INVALID, "no kernel source to compile");
	st = kf_scan_host_headers(k, err);
	if (st == KF_ERR_COMPILE) {
		c = kf_compiled_new(opts->backend);
		if (!c)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		free(c->log);
		c->log = kf_strdup(err ? err->msg : "a kernel file cannot call host libraries");
		if (!c->log) {
			kf_compiled_free(c);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		*out = c;
		return st;
	}
	if (st)
		return st;
	nv = *opts;
	nv.backend = KF_BACKEND_CUDA;
	nv.sanitize = false;
	nv.instrument = false;
	st = kf_compile(k, &nv, &g, err);
	if (opts->backend == KF_BACKEND_CUDA || st != KF_OK) {
		/* the cuda backend runs what NVRTC made; an NVRTC rejection is the verdict on every backend
		 */
		*out = g;
		return st;
	}
	st = kf_compile(k, opts, &c, err);
	if (st == KF_ERR_COMPILE) {
		/* NVRTC compiles it, the host compiler with the shim does not: a construct the cpu backend
		 * lacks, not an error in the kernel */
		char what[300];
		const char *path = k->path ? k->path : "kernel";
		int line = host_first_error(c && c->log ? c->log : "", path, what, sizeof(what));
		if (line > 0)
			st =
			    kf_err_set(err, KF_ERR_UNSUPPORTED,
				       "%s:%d: uses a construct the cpu backend cannot build (NVRTC compiles "
				       "the file for %s): %s",
				       path, line, g->arch, what[0] ? what : "the host compiler rejects it");
		else
			st = kf_err_set(
			    err, KF_ERR_UNSUPPORTED,
			    "%s: uses a construct the cpu backend cannot build (NVRTC compiles the "
			    "file for %s): %s",
			    path, g->arch, what[0] ? what : "the host compiler rejects it");
		kf_compiled_free(c);
		kf_compiled_free(g);
		return st;
	}
	if (st != KF_OK) {
		kf_compiled_free(c);
		kf_compiled_free(g);
		return st;
	}
	snprintf(c->gpu_arch, sizeof(c->gpu_arch), "%s", g->arch);
	c->gpu_cached = g->cached;
	c->gpu_ms = g->wall_ms;
	if (!c->n_kernels && g->n_kernels) {
		free(c->kernels);
		c->kernels = g->kernels;
		c->n_kernels = g->n_kernels;
		g->kernels = NULL;
		g->n_kernels = 0;
	}
	kf_compiled_free(g);
	*out = c;
	return KF_OK;
}
