/* kf_cpu_compile: the cpu backend's compile. A PCRE2 pre-pass turns the kernel file into a C++
 * translation unit (shim first, the user's source under #line so diagnostics name the user's file and
 * lines, then one `kf_entry_<name>` trampoline per extern "C" __global__ kernel); the host compiler
 * builds it in a sandboxed child and links it with the fiber runtime (kf_runtime.h, compiled once per
 * shim version and mode into the shim folder of the cache) into a shared object. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/embed.h"
#include "../compile_int.h"
#include "../jail.h"
#include "cpu.h"
#include "fs.h"
#include "hash.h"

#define SHIM_PREFIX "sandbox/cpu/shim/"
#define PREPASS_MAX ((size_t)16 << 20)
#define KF_CPU_SHIM_REV 4 /* bump when the pre-pass or the flags change meaning */

/* Flags of every cpu compile; part of the compiler id. -fno-strict-aliasing: kernels reinterpret
 * float arrays as float4 as a matter of course. gnu2 TLS descriptors make __shared__ (thread-local)
 * accesses cheap in a dlopen'ed object. */
static const char *const base_flags[] = {
    "-std=c++17",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-mtls-dialect=gnu2",
    "-pthread",
    "-w",
    "-fmax-errors=20",
};
static const char *const opt_flags[] = {"-O2", "-g0"};
static const char *const san_flags[] = {"-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"};

/* The sanitizer build (kf_compile_opts.instrument): clang, because its -fsanitize-coverage=trace-loads,
 * trace-stores calls the runtime (kf_san.h) before every load and store. -fsanitize=address with every
 * AddressSanitizer check off stays for what it tells the optimiser: no speculative or widened loads, so
 * the accesses checked are the source's; no vectorizers for the same reason; frame pointers for the
 * callers of a finding; -O1 keeps the shim's small functions inlined into the kernel. trace-pc-guard
 * (every basic block, bb) calls the runtime once per block executed: the cost model's edges, an early
 * return when not counting. */
static const char *const inst_base_flags[] = {
    "-std=c++17",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-strict-aliasing",
    "-fno-math-errno",
    "-pthread",
    "-w",
    "-ferror-limit=20",
    "-DKF_SANITIZE=1",
};
static const char *const inst_flags[] = {
    "-O1",
    "-g",
    "-gdwarf-4",
    "-fno-omit-frame-pointer",
    "-fno-vectorize",
    "-fno-slp-vectorize",
    "-fsanitize=address",
    "-fsanitize-address-use-after-return=never",
    "-mllvm",
    "-asan-instrument-reads=0",
    "-mllvm",
    "-asan-instrument-writes=0",
    "-mllvm",
    "-asan-instrument-atomics=0",
    "-mllvm",
    "-asan-instrument-byval=0",
    "-mllvm",
    "-asan-stack=0",
    "-mllvm",
    "-asan-globals=0",
    "-fsanitize-coverage=bb,trace-pc-guard,trace-loads,trace-stores",
    "-mllvm",
    "-sanitizer-coverage-prune-blocks=0", /* coverage would skip a loop body (it dominates itself) */
};
/* the runtime itself is not instrumented */
static const char *const inst_rt_flags[] = {"-O2", "-g", "-fno-omit-frame-pointer"};

enum build_mode { MODE_PLAIN, MODE_ASAN, MODE_INSTRUMENT };

static const char *cxx_path(void)
{
	const char *c = getenv("KFORGE_CXX");
	return c && *c ? c : "g++";
}

static const char *san_cxx_path(void)
{
	const char *c = getenv("KFORGE_SAN_CXX");
	return c && *c ? c : "clang++-14";
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Hash of the embedded shim files, the flags and the pre-pass revision. */
static uint64_t shim_hash(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *name;
	size_t len;
	for (size_t i = 0; kf_embed_at(i, &name, &len); i++) {
		if (strncmp(name, SHIM_PREFIX, strlen(SHIM_PREFIX)) != 0)
			continue;
		h = fnv1a(h, name, strlen(name) + 1);
		h = fnv1a(h, kf_embed_at(i, &name, &len), len);
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(base_flags); i++)
		h = fnv1a(h, base_flags[i], strlen(base_flags[i]) + 1);
	for (size_t i = 0; i < KF_ARRAY_SIZE(inst_flags); i++)
		h = fnv1a(h, inst_flags[i], strlen(inst_flags[i]) + 1);
	int rev = KF_CPU_SHIM_REV;
	return fnv1a(h, &rev, sizeof(rev));
}

static pthread_once_t id_once = PTHREAD_ONCE_INIT, san_id_once = PTHREAD_ONCE_INIT;
static char id_buf[64], san_id_buf[64];

static void id_fill(const char *cxx, const char *ver_flag, char *buf, size_t cap)
{
	const char *argv[] = {cxx, ver_flag, NULL};
	struct kf_child_limits lim = {.timeout_ms = 10000, .cpu_s = 10, .no_network = true};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	char ver[32] = "unknown";
	if (kf_child_run_argv(argv, NULL, &lim, &out, &res, NULL) == KF_OK && res.term_signal == 0 &&
	    res.exit_code == 0) {
		size_t n = strcspn(out.data, "\r\n");
		if (n > 0 && n < sizeof(ver)) {
			memcpy(ver, out.data, n);
			ver[n] = '\0';
		}
	}
	kf_buf_release(&out);
	const char *base = strrchr(argv[0], '/');
	snprintf(buf, cap, "%.12s %.20s shim %08x", base ? base + 1 : argv[0], ver,
		 (unsigned)(shim_hash() & 0xffffffffu));
}

static void id_make(void)
{
	id_fill(cxx_path(), "-dumpfullversion", id_buf, sizeof(id_buf));
}

static void san_id_make(void)
{
	id_fill(san_cxx_path(), "-dumpversion", san_id_buf,
		sizeof(san_id_buf)); /* clang has no -dumpfullversion */
}

const char *kf_cpu_compiler_id(void)
{
	pthread_once(&id_once, id_make);
	return id_buf;
}

const char *kf_cpu_san_compiler_id(void)
{
	pthread_once(&san_id_once, san_id_make);
	return san_id_buf;
}

const char *kf_cpu_sanitizer_unavailable(void)
{
	/* id_fill writes "unknown" when the compiler did not answer for its version */
	return strstr(kf_cpu_san_compiler_id(), " unknown ")
		   ? "clang++-14 ($KFORGE_SAN_CXX) does not run here"
		   : NULL;
}

/* ---- the pre-pass ------------------------------------------------------------------------------ */

static enum kf_status re_compile(const char *pat, pcre2_code **re, struct kf_err *err)
{
	int ec;
	PCRE2_SIZE eo;
	*re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_MULTILINE, &ec, &eo, NULL);
	if (!*re) {
		PCRE2_UCHAR msg[128];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		return kf_err_set(err, KF_ERR_INTERNAL, "pre-pass pattern at %zu: %s", (size_t)eo,
				  (char *)msg);
	}
	return KF_OK;
}

/* Global substitution with pcre2_substitute; *io is replaced by the result. */
static enum kf_status re_subst(const char *pat, const char *repl, char **io, size_t *io_len,
			       struct kf_err *err)
{
	pcre2_code *re;
	enum kf_status st = re_compile(pat, &re, err);
	if (st != KF_OK)
		return st;
	PCRE2_SIZE cap = *io_len * 2 + 4096;
	for (int tries = 0; tries < 4; tries++) {
		char *out = malloc(cap);
		if (!out) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory in the pre-pass");
			break;
		}
		PCRE2_SIZE olen = cap;
		int rc =
		    pcre2_substitute(re, (PCRE2_SPTR)*io, *io_len, 0,
				     PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, NULL, NULL,
				     (PCRE2_SPTR)repl, PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)out, &olen);
		if (rc == PCRE2_ERROR_NOMEMORY && olen > cap && olen < PREPASS_MAX) {
			free(out);
			cap = olen + 1;
			continue;
		}
		if (rc < 0) {
			free(out);
			PCRE2_UCHAR msg[128];
			pcre2_get_error_message(rc, msg, sizeof(msg));
			st = kf_err_set(err, KF_ERR_LIMIT, "pre-pass substitution failed: %s", (char *)msg);
			break;
		}
		free(*io);
		*io = out;
		*io_len = olen;
		pcre2_code_free(re);
		return KF_OK;
	}
	pcre2_code_free(re);
	return st != KF_OK ? st : kf_err_set(err, KF_ERR_LIMIT, "pre-pass output too large");
}

struct names {
	size_t n;
	char *v[256];
};

static void names_add(struct names *ns, const char *s, size_t len)
{
	if (len == 0 || len > 120 || ns->n >= KF_ARRAY_SIZE(ns->v))
		return;
	for (size_t i = 0; i < ns->n; i++)
		if (strlen(ns->v[i]) == len && !memcmp(ns->v[i], s, len))
			return;
	char *c = kf_strndup(s, len);
	if (c)
		ns->v[ns->n++] = c;
}

/* Names of the extern "C" __global__ functions: the kernel-file parser's list plus what this regex
 * finds (qualifiers and __launch_bounds__ in any order before the name). */
static enum kf_status find_kernels(const struct kf_kfile *k, const char *src, size_t len, struct names *ns,
				   struct kf_err *err)
{
	for (size_t i = 0; i < k->n_kernels; i++)
		if (k->kernels && k->kernels[i])
			names_add(ns, k->kernels[i], strlen(k->kernels[i]));
	static const char pat[] =
	    "\\bextern\\s*\"C\"\\s*(?:(?:__global__|__host__|__device__|static|inline|__forceinline__|"
	    "__launch_bounds__\\s*\\((?:[^()]|\\([^()]*\\))*\\))\\s*)*void\\s+"
	    "(?:__launch_bounds__\\s*\\((?:[^()]|\\([^()]*\\))*\\)\\s*)?([A-Za-z_]\\w*)\\s*\\(";
	pcre2_code *re;
	enum kf_status st = re_compile(pat, &re, err);
	if (st != KF_OK)
		return st;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!md) {
		pcre2_code_free(re);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory in the pre-pass");
	}
	PCRE2_SIZE off = 0;
	while (off < len && pcre2_match(re, (PCRE2_SPTR)src, len, off, 0, md, NULL) > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		/* only functions marked __global__ are kernels */
		if (memmem(src + ov[0], ov[2] - ov[0], "__global__", 10))
			names_add(ns, src + ov[2], ov[3] - ov[2]);
		off = ov[1] > off ? ov[1] : off + 1;
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return KF_OK;
}

static void add_quoted(struct kf_buf *b, const char *s)
{
	kf_buf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			kf_buf_addch(b, '\\');
		if (*s == '\n')
			continue;
		kf_buf_addch(b, *s);
	}
	kf_buf_addch(b, '"');
}

void kf_cpu_entry_name(const char *expr, char out[48])
{
	char hex[65];
	kf_sha256_hex(expr, strlen(expr), hex);
	snprintf(out, 48, "kf_t_%.24s", hex);
}

enum kf_status kf_cpu_names(struct kf_compiled *c, const char *const *exprs, size_t n, struct kf_err *err)
{
	free(c->names);
	c->names = NULL;
	c->n_names = 0;
	if (!n)
		return KF_OK;
	c->names = calloc(n, sizeof(*c->names));
	if (!c->names)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (strlen(exprs[i]) >= sizeof(c->names[i].expr))
			return kf_err_set(err, KF_ERR_INVALID, "kernel name '%.40s...' is too long",
					  exprs[i]);
		snprintf(c->names[i].expr, sizeof(c->names[i].expr), "%s", exprs[i]);
		kf_cpu_entry_name(exprs[i], c->names[i].lowered);
	}
	c->n_names = n;
	return KF_OK;
}

/* Brace scanner for dyn_smem_rewrite: walks src[*pos, end) skipping comments and literals and keeps a
 * stack of open braces, each marked as a namespace's (namespace X {, extern "C" {) or not. */
struct brace_state {
	size_t pos;
	int depth;
	unsigned char ns[256]; /* 1: the brace at that depth opens a namespace or linkage block */
};

static bool brace_is_namespace(const char *s, size_t i)
{
	size_t j = i;
	while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t' || s[j - 1] == '\n' || s[j - 1] == '\r'))
		j--;
	if (j > 0 && s[j - 1] == '"') /* extern "C" { */
		return true;
	size_t e = j;
	while (j > 0 && (s[j - 1] == '_' || s[j - 1] == ':' || (s[j - 1] >= '0' && s[j - 1] <= '9') ||
			 ((s[j - 1] | 32) >= 'a' && (s[j - 1] | 32) <= 'z')))
		j--;
	if (e - j == 9 && !memcmp(s + j, "namespace", 9)) /* namespace { */
		return true;
	while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t' || s[j - 1] == '\n' || s[j - 1] == '\r'))
		j--;
	return j >= 9 && !memcmp(s + j - 9, "namespace", 9) &&
	       (j == 9 || !(s[j - 10] == '_' || ((s[j - 10] | 32) >= 'a' && (s[j - 10] | 32) <= 'z')));
}

/* Advances b to `to`; returns whether `to` is at namespace scope (every open brace a namespace's). */
static bool brace_advance(struct brace_state *b, const char *s, size_t to)
{
	size_t i = b->pos;
	while (i < to) {
		char c = s[i];
		if (c == '/' && i + 1 < to && s[i + 1] == '/') {
			while (i < to && s[i] != '\n')
				i++;
		} else if (c == '/' && i + 1 < to && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < to && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i += 2;
		} else if (c == '"' || c == '\'') {
			i++;
			while (i < to && s[i] != c && s[i] != '\n')
				i += s[i] == '\\' ? 2 : 1;
			i++;
		} else {
			if (c == '{') {
				if (b->depth < (int)sizeof(b->ns))
					b->ns[b->depth] = brace_is_namespace(s, i);
				b->depth++;
			} else if (c == '}' && b->depth > 0) {
				b->depth--;
			}
			i++;
		}
	}
	b->pos = i > to ? i : to;
	for (int d = 0; d < b->depth && d < (int)sizeof(b->ns); d++)
		if (!b->ns[d])
			return false;
	return true;
}

/* extern __shared__ T name[];  ->  the runtime's per-OS-thread dynamic shared memory (blocks run one at a
 * time per OS thread), with no variable of its own in thread-local storage (which holds exactly the
 * block's static shared memory, poisoned at every block start):
 *  - at namespace scope, another name for the runtime's array: extern thread_local T name[]
 *    __asm__("kf_dsmem") (g++ drops asm labels inside templates, which only block scope has);
 *  - at block scope, a local pointer: T *const name = (decltype(name))kf_dyn_smem(). */
static enum kf_status dyn_smem_rewrite(char **io, size_t *io_len, struct kf_err *err)
{
	static const char pat[] = "\\bextern\\s+((?:[\\w:<>,()]+\\s+)*?)__shared__\\s+([^;{}\\[\\]]*?)\\s*"
				  "\\b([A-Za-z_]\\w*)\\s*\\[\\s*\\]\\s*;";
	pcre2_code *re;
	enum kf_status st = re_compile(pat, &re, err);
	if (st != KF_OK)
		return st;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	struct kf_buf out = KF_BUF_INIT(PREPASS_MAX);
	struct brace_state *bs = calloc(1, sizeof(*bs));
	const char *src = *io;
	size_t len = *io_len, off = 0, copied = 0;
	if (!md || !bs) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory in the pre-pass");
		goto done;
	}
	while (off < len && pcre2_match(re, (PCRE2_SPTR)src, len, off, 0, md, NULL) > 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		bool ns_scope = brace_advance(bs, src, ov[0]);
		int q = (int)(ov[3] - ov[2]), t = (int)(ov[5] - ov[4]), n = (int)(ov[7] - ov[6]);
		const char *qs = src + ov[2], *ts = src + ov[4], *nm = src + ov[6];
		enum kf_status a = kf_buf_add(&out, src + copied, ov[0] - copied);
		if (ns_scope)
			a |= kf_buf_addf(&out, "extern thread_local %.*s%.*s %.*s[] __asm__(\"kf_dsmem\");",
					 q, qs, t, ts, n, nm);
		else
			a |= kf_buf_addf(&out, "%.*s%.*s *const %.*s = (decltype(%.*s))kf_dyn_smem();", q, qs,
					 t, ts, n, nm, n, nm);
		if (a != KF_OK) {
			st = kf_err_set(err, KF_ERR_LIMIT, "pre-pass output too large");
			goto done;
		}
		copied = ov[1];
		off = ov[1] > off ? ov[1] : off + 1;
	}
	if (kf_buf_add(&out, src + copied, len - copied) != KF_OK) {
		st = kf_err_set(err, KF_ERR_LIMIT, "pre-pass output too large");
		goto done;
	}
	free(*io);
	*io_len = out.len;
	*io = kf_buf_detach(&out, NULL);
	if (!*io)
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory in the pre-pass");
done:
	kf_buf_release(&out);
	free(bs);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return st;
}

enum kf_status kf_cpu_prepass(const struct kf_kfile *k, struct kf_buf *out, struct kf_err *err)
{
	if (!k || !k->source)
		return kf_err_set(err, KF_ERR_INVALID, "no kernel source");
	size_t len = k->source_len;
	char *src = kf_strndup(k->source, len);
	if (!src)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory in the pre-pass");
	enum kf_status st = dyn_smem_rewrite(&src, &len, err);
	/* __noinline__ as a macro would break __attribute__((__noinline__)) in system headers */
	if (st == KF_OK)
		st = re_subst("(?<!\\(\\()\\b__noinline__\\b", "__attribute__((noinline))", &src, &len, err);
	struct names ns = {0};
	if (st == KF_OK)
		st = find_kernels(k, src, len, &ns, err);
	const char *exprs[64];
	size_t n_exprs = kf_kfile_name_exprs(k, exprs, KF_ARRAY_SIZE(exprs));
	if (st == KF_OK && n_exprs > KF_ARRAY_SIZE(exprs))
		st = kf_err_set(err, KF_ERR_LIMIT, "%s: more than %zu template instantiations",
				k->path ? k->path : "kernel", KF_ARRAY_SIZE(exprs));
	if (st == KF_OK && ns.n == 0 && n_exprs == 0)
		st = kf_err_set(err, KF_ERR_INVALID, "%s: no extern \"C\" __global__ kernel found",
				k->path ? k->path : "kernel");
	if (st == KF_OK) {
		enum kf_status a = KF_OK;
		a |= kf_buf_adds(out, "#include \"kf_shim.h\"\n#include \"kf_device_env.h\"\n#line 1 ");
		add_quoted(out, k->path ? k->path : "kernel.cu");
		a |= kf_buf_addch(out, '\n');
		a |= kf_buf_add(out, src, len);
		a |= kf_buf_adds(out, "\n#line 1 \"<kforge entry trampolines>\"\n");
		for (size_t i = 0; i < ns.n; i++)
			a |= kf_buf_addf(out, "KF_EXPORT void kf_entry_%s(void **a) { kf_invoke(%s, a); }\n",
					 ns.v[i], ns.v[i]);
		/* A template launch: taking the address of the specialisation instantiates it (as NVRTC's
		 * name expression does); the trampoline has a name of its own (kf_cpu_entry_name). */
		for (size_t i = 0; i < n_exprs; i++) {
			char sym[48];
			kf_cpu_entry_name(exprs[i], sym);
			a |= kf_buf_addf(out, "KF_EXPORT void kf_entry_%s(void **a) { kf_invoke(&%s, a); }\n",
					 sym, exprs[i]);
		}
		if (a != KF_OK)
			st = kf_err_set(err, KF_ERR_LIMIT, "pre-passed source of '%s' is too large",
					k->path ? k->path : "kernel");
	}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(src);
	return st;
}

/* ---- the private compile folder ----------------------------------------------------------- */

#define CXX_NPROC 64                          /* g++, cc1plus, as, collect2, ld and then some */
#define CXX_TMP_BYTES ((uint64_t)512 << 20)   /* the private /tmp (a tmpfs) of one compile */
#define CXX_FSIZE_BYTES ((uint64_t)256 << 20) /* any one file it writes */
#define RT_OBJECT_MAX ((size_t)16 << 20)

/* A file the parent writes into the compile folder (never through a link the child left there). */
static enum kf_status write_plain(const char *path, const void *data, size_t n, struct kf_err *err)
{
	const char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", path, strerror(errno));
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;
			close(fd);
			return kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
		}
		p += w;
		n -= (size_t)w;
	}
	return close(fd) == 0 ? KF_OK
			      : kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
}

/* Reads back what the child made: a regular file with one link (not a link to something else, not a
 * FIFO that would block), at most b->max bytes. */
static enum kf_status read_child_file(const char *path, struct kf_buf *b, struct kf_err *err)
{
	char chunk[65536];
	struct stat sb;
	enum kf_status st = KF_OK;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return kf_err_set(err, KF_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink != 1) {
		close(fd);
		return kf_err_set(err, KF_ERR_IO, "'%s' is not a plain file of the compile", path);
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			st = kf_err_set(err, KF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if ((st = kf_buf_add(b, chunk, (size_t)n)) != KF_OK) {
			kf_err_set(err, st, "'%s' is larger than %zu bytes", path, b->max);
			break;
		}
	}
	close(fd);
	return st;
}

/* Removes dir and whatever a child left in it, never following a link out of it. */
static void rm_tree_at(int parent, const char *name, int depth)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			if (unlinkat(fd, e->d_name, 0) != 0 && depth < 32)
				rm_tree_at(fd, e->d_name, depth + 1);
		}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void rm_workdir(const char *dir)
{
	rm_tree_at(AT_FDCWD, dir, 0);
}

/* The embedded shim headers, written into WORK/shim for this compile alone: a child (or an earlier
 * compile) cannot have altered what this one includes. */
static enum kf_status shim_write(const char *work, char *dir, size_t dir_len, struct kf_err *err)
{
	const char *name;
	size_t len, n = 0;
	enum kf_status st;

	if (snprintf(dir, dir_len, "%s/shim", work) >= (int)dir_len)
		return kf_err_set(err, KF_ERR_INVALID, "path too long: '%s'", work);
	if ((st = kf_mkdir_p(dir, 0755, err)) != KF_OK)
		return st;
	for (size_t i = 0; kf_embed_at(i, &name, &len); i++) {
		const char *data = kf_embed_at(i, &name, &len);
		char path[4400], *slash;
		if (strncmp(name, SHIM_PREFIX, strlen(SHIM_PREFIX)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name + strlen(SHIM_PREFIX));
		slash = strrchr(path, '/');
		if (slash > path + strlen(dir)) {
			*slash = '\0';
			if ((st = kf_mkdir_p(path, 0755, err)) != KF_OK)
				return st;
			*slash = '/';
		}
		if ((st = write_plain(path, data, len, err)) != KF_OK)
			return st;
		n++;
	}
	if (n == 0)
		return kf_err_set(err, KF_ERR_INTERNAL, "no cpu shim headers are embedded in this binary");
	return KF_OK;
}

/* ---- the toolchain a compile child may run ---------------------------------------------------- */

#define MAX_TOOLS 16

static struct {
	size_t n;
	char path[MAX_TOOLS][PATH_MAX];
	/* the compilers' installation prefixes (/usr for the system g++): the plain build's, the
	 * sanitizer build's (clang) */
	char prefix[2][PATH_MAX];
} tools;
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

/* An absolute path for a program name: itself, or the first match on $PATH, resolved. */
static bool resolve_program(const char *name, char *out)
{
	const char *path = getenv("PATH");
	char cand[PATH_MAX];
	if (strchr(name, '/'))
		return realpath(name, out) != NULL;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (n && snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, name) < (int)sizeof(cand) &&
		    access(cand, X_OK) == 0)
			return realpath(cand, out) != NULL;
		p += n;
		if (*p == ':')
			p++;
	}
	return false;
}

static void tool_add(const char *path)
{
	char real[PATH_MAX];
	if (tools.n < MAX_TOOLS && resolve_program(path, real)) {
		for (size_t i = 0; i < tools.n; i++)
			if (!strcmp(tools.path[i], real))
				return;
		snprintf(tools.path[tools.n++], PATH_MAX, "%s", real);
	}
}

/* One compiler driver, the programs it runs (asked of the driver itself) and its installation prefix. */
static void tools_of(const char *cxx, char *prefix)
{
	static const char *const progs[] = {"cc1plus", "cc1", "as", "ld", "collect2", "lto-wrapper"};
	char drv[PATH_MAX];
	if (!resolve_program(cxx, drv))
		return;
	tool_add(cxx);
	for (size_t i = 0; i < KF_ARRAY_SIZE(progs); i++) {
		char opt[64];
		const char *argv[] = {cxx, opt, NULL};
		struct kf_child_limits lim = {.timeout_ms = 10000, .cpu_s = 10};
		struct kf_buf out = KF_BUF_INIT(PATH_MAX);
		struct kf_child_result res;
		snprintf(opt, sizeof(opt), "-print-prog-name=%s", progs[i]);
		if (kf_child_run_argv(argv, NULL, &lim, &out, &res, NULL) == KF_OK && !res.exit_code &&
		    !res.term_signal) {
			out.data[strcspn(out.data, "\r\n")] = '\0';
			/* clang answers "cc1plus" back unchanged: it has none (it compiles in-process) */
			if (strcmp(out.data, progs[i]) || !strcmp(progs[i], "as") || !strcmp(progs[i], "ld"))
				tool_add(out.data);
		}
		kf_buf_release(&out);
	}
	char *s = strrchr(drv, '/');
	if (s) {
		*s = '\0';
		s = strrchr(drv, '/');
		if (s && s != drv) {
			*s = '\0';
			snprintf(prefix, PATH_MAX, "%s", drv);
		}
	}
}

/* The compilers (the plain build's and the sanitizer build's), the programs they run and the dynamic
 * loader: the only files a compile child may execute. */
static void find_tools(void)
{
	tools_of(cxx_path(), tools.prefix[0]);
	tools_of(san_cxx_path(), tools.prefix[1]);
	tool_add("/lib64/ld-linux-x86-64.so.2");
	tool_add("/lib/ld-linux-aarch64.so.1");
}

/* The jail of one host-compiler run: read the compiler's trees and the system headers, execute the
 * toolchain's programs only, write the compile folder and a private /tmp only. */
static void toolchain_jail(struct kf_jail *j, const char *work)
{
	static const char *const trees[] = {"/usr/include", "/usr/local/include", "/usr/libexec"};
	static const char *const sub[] = {"include", "lib", "lib64", "libexec"};
	const char *path = getenv("PATH");
	char buf[PATH_MAX + 16];

	pthread_once(&tools_once, find_tools);
	kf_jail_init(j, KF_JAIL_TOOLCHAIN);
	for (size_t i = 0; i < KF_ARRAY_SIZE(trees); i++)
		kf_jail_rule(j, trees[i], KF_FS_READ);
	for (size_t p = 0; p < KF_ARRAY_SIZE(tools.prefix); p++)
		if (tools.prefix[p][0] && strcmp(tools.prefix[p], "/usr"))
			for (size_t i = 0; i < KF_ARRAY_SIZE(sub); i++) {
				snprintf(buf, sizeof(buf), "%s/%s", tools.prefix[p], sub[i]);
				kf_jail_rule(j, buf, KF_FS_READ);
			}
	for (size_t i = 0; i < tools.n; i++)
		kf_jail_rule(j, tools.path[i], KF_FS_READ | KF_FS_EXEC);
	kf_jail_rule(j, work, KF_FS_READ | KF_FS_WRITE);
	kf_jail_setenv(j, "PATH", path && *path ? path : "/usr/bin:/bin");
	kf_jail_setenv(j, "LANG", "C");
	kf_jail_setenv(j, "LC_ALL", "C");
	/* Temporary files go to WORK/tmp: with a mount namespace a tmpfs of its own there (bounded),
	 * else the folder itself (each file bounded by RLIMIT_FSIZE). */
	snprintf(buf, sizeof(buf), "%s/tmp", work);
	kf_jail_setenv(j, "TMPDIR", buf);
	if (j->layers & KF_LAYER_MNTNS) {
		snprintf(j->tmp_dir, sizeof(j->tmp_dir), "%s", buf);
		j->tmp_bytes = CXX_TMP_BYTES;
	}
	kf_jail_cgroup(j, KF_COMPILE_AS_BYTES, CXX_NPROC);
}

/* argv for one compiler run: the mode's compiler, common flags and own flags (the runtime's, when rt:
 * it is never instrumented), the shim include path, then tail. */
static size_t cxx_argv(const char **argv, enum build_mode mode, bool rt, const char *inc,
		       const char *const *tail)
{
	size_t n = 0;
	argv[n++] = mode == MODE_INSTRUMENT ? san_cxx_path() : cxx_path();
	if (mode == MODE_INSTRUMENT) {
		for (size_t i = 0; i < KF_ARRAY_SIZE(inst_base_flags); i++)
			argv[n++] = inst_base_flags[i];
		if (rt)
			for (size_t i = 0; i < KF_ARRAY_SIZE(inst_rt_flags); i++)
				argv[n++] = inst_rt_flags[i];
		else
			for (size_t i = 0; i < KF_ARRAY_SIZE(inst_flags); i++)
				argv[n++] = inst_flags[i];
	} else {
		for (size_t i = 0; i < KF_ARRAY_SIZE(base_flags); i++)
			argv[n++] = base_flags[i];
		if (mode == MODE_ASAN)
			for (size_t i = 0; i < KF_ARRAY_SIZE(san_flags); i++)
				argv[n++] = san_flags[i];
		else
			for (size_t i = 0; i < KF_ARRAY_SIZE(opt_flags); i++)
				argv[n++] = opt_flags[i];
	}
	argv[n++] = inc;
	for (; *tail; tail++)
		argv[n++] = *tail;
	argv[n] = NULL;
	return n;
}

/* Runs the host compiler in WORK under its limits and jail. */
static enum kf_status run_cxx(const char *const *argv, const char *work, int timeout_ms, struct kf_buf *log,
			      struct kf_child_result *res, struct kf_err *err)
{
	struct kf_jail *j = malloc(sizeof(*j));
	struct kf_child_limits lim;
	char tmp[4300];
	enum kf_status st;

	if (!j)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	toolchain_jail(j, work);
	snprintf(tmp, sizeof(tmp), "%s/tmp", work);
	if ((mkdir(tmp, 0700) != 0 && errno != EEXIST) || kf_jail_give_dir(j, work) != 0 ||
	    kf_jail_give_dir(j, tmp) != 0) {
		st = kf_err_set(err, KF_ERR_IO, "cannot prepare the compile folder '%s': %s", work,
				strerror(errno));
		kf_jail_release(j);
		free(j);
		return st;
	}
	memset(&lim, 0, sizeof(lim));
	lim.timeout_ms = timeout_ms;
	lim.cpu_s = timeout_ms / 1000 + 2;
	lim.fsize_bytes = CXX_FSIZE_BYTES;
	lim.as_bytes = KF_COMPILE_AS_BYTES;
	lim.nofile = 256;
	lim.nproc = CXX_NPROC;
	lim.no_network = true;
	lim.seccomp = true;
	lim.jail = j;
	st = kf_child_run_argv(argv, work, &lim, log, res, err);
	kf_jail_release(j);
	free(j);
	return st;
}

/* The fiber runtime as an object file, built once per shim version and mode (about half of a kernel's
 * compile time otherwise), kept in the cache as a sealed blob and copied into WORK/rt.o. */
static enum kf_status runtime_object(const char *cache, const char *work, const char *inc,
				     enum build_mode mode, int timeout_ms, struct kf_err *err)
{
	char name[96], src[4300], obj[4300];
	struct kf_buf o = KF_BUF_INIT(RT_OBJECT_MAX);
	enum kf_status st;

	snprintf(name, sizeof(name), "cpu-rt-%016llx-%s.blob", (unsigned long long)shim_hash(),
		 mode == MODE_ASAN         ? "asan"
		 : mode == MODE_INSTRUMENT ? "san"
					   : "opt");
	snprintf(obj, sizeof(obj), "%s/rt.o", work);
	if (cache[0] && kf_cache_blob_load(cache, name, &o)) {
		st = write_plain(obj, o.data, o.len, err);
		kf_buf_release(&o);
		return st;
	}
	snprintf(src, sizeof(src), "%s/rt.cpp", work);
	static const char text[] = "#include \"kf_shim.h\"\n#include \"kf_runtime.h\"\n";
	if ((st = write_plain(src, text, sizeof(text) - 1, err)) != KF_OK)
		return st;
	static const char *const tail[] = {"-c", "-o", "rt.o", "rt.cpp", NULL};
	const char *argv[64];
	cxx_argv(argv, mode, true, inc, tail);
	struct kf_buf log = KF_BUF_INIT(8192);
	struct kf_child_result res;
	st = run_cxx(argv, work, timeout_ms, &log, &res, err);
	if (st == KF_OK && (res.term_signal != 0 || res.exit_code != 0))
		st = kf_err_set(err, KF_ERR_INTERNAL, "the cpu fiber runtime does not compile: %.600s",
				log.data);
	if (st == KF_OK && (st = read_child_file(obj, &o, err)) == KF_OK && cache[0])
		kf_cache_blob_store(cache, name, o.data, o.len);
	kf_buf_release(&o);
	kf_buf_release(&log);
	return st;
}

enum kf_status kf_cpu_compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			      struct kf_compiled **out, struct kf_err *err)
{
	*out = NULL;
	enum kf_status st = kf_scan_unsupported(k, KF_BACKEND_CPU, err);
	if (st != KF_OK)
		return st;
	char cache[4096], shim[4300], work[4200];
	/* No usable cache folder (no HOME, read-only): the runtime object is then built every time. */
	if (kf_cache_dir(opts ? opts->cache_dir : NULL, cache, sizeof(cache), NULL) != KF_OK)
		cache[0] = '\0';
	struct kf_buf tu = KF_BUF_INIT(PREPASS_MAX);
	if ((st = kf_cpu_prepass(k, &tu, err)) != KF_OK) {
		kf_buf_release(&tu);
		return st;
	}
	/* A private folder outside the cache (a child may need to reach it under another uid). */
	const char *tmpdir = getenv("TMPDIR");
	snprintf(work, sizeof(work), "%s/kforge-cc-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(work)) {
		kf_buf_release(&tu);
		return kf_err_set(err, KF_ERR_IO, "cannot create a compile folder '%s': %s", work,
				  strerror(errno));
	}
	if ((st = shim_write(work, shim, sizeof(shim), err)) != KF_OK) {
		kf_buf_release(&tu);
		rm_workdir(work);
		return st;
	}
	char src_path[4300], so_path[4300], inc[4400];
	snprintf(src_path, sizeof(src_path), "%s/kernel.cpp", work);
	snprintf(so_path, sizeof(so_path), "%s/kernel.so", work);
	snprintf(inc, sizeof(inc), "-I%s", shim);
	st = write_plain(src_path, tu.data, tu.len, err);
	kf_buf_release(&tu);
	if (st != KF_OK) {
		rm_workdir(work);
		return st;
	}

	enum build_mode mode = opts && opts->instrument ? MODE_INSTRUMENT
			       : opts && opts->sanitize ? MODE_ASAN
							: MODE_PLAIN;
	int timeout_ms = opts && opts->timeout_ms > 0 ? opts->timeout_ms : KF_COMPILE_DEFAULT_TIMEOUT_MS;
	if ((st = runtime_object(cache, work, inc, mode, timeout_ms, err)) != KF_OK) {
		rm_workdir(work);
		return st;
	}
	/* __CUDA_ARCH__ as NVRTC defines it for the arch the file was checked against (sm_90a -> 900) */
	char arch_def[48], list_def[48];
	int arch_num = 90;
	long an = opts && opts->arch && !strncmp(opts->arch, "sm_", 3) ? strtol(opts->arch + 3, NULL, 10) : 0;
	if (an > 0 && an < 1000)
		arch_num = (int)an;
	snprintf(arch_def, sizeof(arch_def), "-D__CUDA_ARCH__=%d", arch_num * 10);
	snprintf(list_def, sizeof(list_def), "-D__CUDA_ARCH_LIST__=%d", arch_num * 10);
	const char *tail[] = {arch_def, list_def, "-o", "kernel.so", "kernel.cpp", "rt.o", NULL};
	const char *argv[64];
	cxx_argv(argv, mode, false, inc, tail);
	struct kf_buf log = KF_BUF_INIT(KF_COMPILE_LOG_MAX);
	struct kf_child_result res;
	double t0 = kf_now_ms();
	st = run_cxx(argv, work, timeout_ms, &log, &res, err);
	double wall = kf_now_ms() - t0;
	if (st == KF_ERR_TIMEOUT) {
		kf_buf_release(&log);
		rm_workdir(work);
		return kf_err_set(err, KF_ERR_TIMEOUT, "host compile of '%s' passed its limit of %d ms",
				  k->path ? k->path : "kernel", timeout_ms);
	}
	if (st != KF_OK) {
		kf_buf_release(&log);
		rm_workdir(work);
		return st;
	}
	struct kf_compiled *c = calloc(1, sizeof(*c));
	if (!c) {
		kf_buf_release(&log);
		rm_workdir(work);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	c->backend = KF_BACKEND_CPU;
	snprintf(c->arch, sizeof(c->arch), "host");
	snprintf(c->compiler, sizeof(c->compiler), "%s",
		 mode == MODE_INSTRUMENT ? kf_cpu_san_compiler_id() : kf_cpu_compiler_id());
	c->wall_ms = wall;
	c->log = kf_buf_detach(&log, NULL);
	if (!c->log) {
		free(c);
		rm_workdir(work);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	if (res.term_signal != 0 || res.exit_code != 0) {
		rm_workdir(work);
		*out = c;
		if (res.term_signal != 0)
			return kf_err_set(err, KF_ERR_COMPILE, "host compiler killed by signal %d",
					  res.term_signal);
		return kf_err_set(err, KF_ERR_COMPILE, "host compile of '%s' failed",
				  k->path ? k->path : "kernel");
	}
	struct kf_buf img = KF_BUF_INIT(KF_COMPILE_IMAGE_MAX);
	st = read_child_file(so_path, &img, err);
	rm_workdir(work);
	if (st != KF_OK) {
		kf_buf_release(&img);
		free(c->log);
		free(c);
		return st;
	}
	c->image_len = img.len;
	c->image = (uint8_t *)kf_buf_detach(&img, NULL);
	if (!c->image) {
		free(c->log);
		free(c);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	*out = c;
	return KF_OK;
}
