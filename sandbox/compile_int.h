/* Private to sandbox/: the pieces kf_compile (compile.c) is made of — the NVRTC child (nvrtc.c), the
 * `ptxas -v` parser, arch selection, and the on-disk compile cache (cache.c). */
#ifndef KF_SANDBOX_COMPILE_INT_H
#define KF_SANDBOX_COMPILE_INT_H

#include "sandbox.h"

/* Bounds on what a compile may hand back (the compiler works on untrusted source). */
#define KF_COMPILE_LOG_MAX ((size_t)256 << 10)   /* log kept in kf_compiled and the cache */
#define KF_COMPILE_RAWLOG_MAX ((size_t)4 << 20)  /* log the child may send (parsed, then cut) */
#define KF_COMPILE_IMAGE_MAX ((size_t)128 << 20) /* CUBIN or shared object */
#define KF_COMPILE_AS_BYTES ((uint64_t)4 << 30)  /* address space the compile child may add */
#define KF_COMPILE_DEFAULT_TIMEOUT_MS 60000
#define KF_NVRTC_MAX_OPTS 16

/* NVRTC options for one compile, in the order they are passed (and hashed). */
struct kf_nvrtc_opts {
	size_t n;
	const char *argv[KF_NVRTC_MAX_OPTS];
	char storage[KF_NVRTC_MAX_OPTS][512];
};

/* Chooses the arch: requested (NULL/"" = "sm_90") must look like "sm_NN" with an optional "a"/"f"
 * suffix (else KF_ERR_INVALID); a plain sm_90 or newer becomes "sm_NNa" when the source uses
 * arch-specific PTX (wgmma, setmaxnreg, tcgen05, .multicast::cluster), found with PCRE2. */
enum kf_status kf_nvrtc_pick_arch(const char *source, size_t len, const char *requested, char arch[16],
				  struct kf_err *err);
/* Fills o with -arch, --std=c++17, the toolkit include paths ($CUDA_HOME, default /usr/local/cuda, and
 * its include/cccl), --ptxas-options=-v and -lineinfo. */
void kf_nvrtc_opts_make(const char *arch, struct kf_nvrtc_opts *o);
/* "nvrtc 13.0" from nvrtcVersion (no compile happens in the parent). Lives for the process. */
const char *kf_nvrtc_compiler_id(void);
/* Compiles source in a sandboxed child (wall limit timeout_ms, CPU limit, KF_COMPILE_AS_BYTES of
 * address space, no network, seccomp). exprs[0..n_exprs) are template name expressions to instantiate
 * (nvrtcAddNameExpression); their lowered names come back in (*out)->names, and the resources of those
 * entries are named by the expression. Returns as kf_compile does: *out on KF_OK/KF_ERR_COMPILE. */
enum kf_status kf_nvrtc_compile(const char *source, size_t len, const char *name, const char *arch,
				const struct kf_nvrtc_opts *o, const char *const *exprs, size_t n_exprs,
				int timeout_ms, struct kf_compiled **out, struct kf_err *err);
/* Parses `ptxas info` lines (per entry function: registers, smem, cmem summed over banks, stack frame,
 * spill stores/loads) into a new array (*out, *n; free() it). Lines it does not know are ignored. */
enum kf_status kf_ptxas_parse(const char *log, struct kf_kernel_res **out, size_t *n, struct kf_err *err);

/* The include rules (sandbox/includes.c), on the user's source before any compiler runs: KF_ERR_COMPILE
 * with "FILE:LINE: error: ..." appended to log for the first #include, __has_include, #pragma GCC
 * dependency or assembler .incbin that names an absolute path, '..', proc/ or dev/, or a computed
 * (macro) name; KF_OK when there is none. */
enum kf_status kf_include_check(const char *src, size_t len, const char *file, struct kf_buf *log);

/* kf_cache_dir (sandbox.h): KF_ERR_IO when no folder can be made (kf_compile then compiles without a
 * cache). */
/* Loads the entry for key. Returns true on a hit, with *out (cached = true) and *status the compile's
 * outcome (KF_OK or KF_ERR_COMPILE). A missing, partial, corrupt or foreign entry is a miss. */
bool kf_cache_load(const char *dir, const char *key, struct kf_compiled **out, enum kf_status *status);
/* Stores c (with its outcome) under c->key, atomically. Failures are ignored: a cache is optional. */
void kf_cache_store(const char *dir, const struct kf_compiled *c, enum kf_status status);

/* A new zeroed kf_compiled with log "" (never NULL), or NULL on NOMEM. */
struct kf_compiled *kf_compiled_new(enum kf_backend_kind b);

#endif
