/* The cpu execution backend, parent side: builds an unmodified CUDA kernel file into a shared object
 * with the host C++ compiler and the CUDA shim (sandbox/cpu/shim, embedded into the binaries).
 * The worker side (fiber runtime loader) is sandbox/cpu/worker/backend_cpu.c. */
#ifndef KF_CPU_H
#define KF_CPU_H

#include "../sandbox.h"

/* Scans k for constructs the cpu backend cannot run (kf_scan_unsupported), rewrites the source with the
 * PCRE2 pre-pass (dynamic shared memory, one entry trampoline per extern "C" __global__ kernel and per
 * template instantiation a launch names (which instantiates it), #line
 * directives so diagnostics name the user's file and lines), then runs the host compiler in a sandboxed
 * child. On KF_OK or KF_ERR_COMPILE *out is set (image = the .so bytes on success; log = diagnostics).
 * No caching here: kf_compile caches both backends, keyed with kf_cpu_compiler_id(). */
enum kf_status kf_cpu_compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			      struct kf_compiled **out, struct kf_err *err);

/* "g++ 12.2.0 shim <hash>": the compiler version and a hash of the shim headers and compile flags;
 * part of the compile cache key. Lives for the process. */
const char *kf_cpu_compiler_id(void);
/* The same for the sanitizer build ("clang++-14 14.0.6 shim <hash>"; $KFORGE_SAN_CXX overrides). */
const char *kf_cpu_san_compiler_id(void);

/* The entry symbol (after KF_RT_ENTRY_PREFIX) of a template name expression on the cpu backend:
 * "kf_t_" and 24 hex digits of its SHA-256 (the expression's characters are not all identifier ones). */
void kf_cpu_entry_name(const char *expr, char out[48]);
/* Fills c->names with the entry names of exprs[0..n) (kf_cpu_entry_name). */
enum kf_status kf_cpu_names(struct kf_compiled *c, const char *const *exprs, size_t n, struct kf_err *err);

/* The pre-pass alone (for tests and diagnostics): the C++ translation unit kf_cpu_compile hands to the
 * compiler, bounded by out->max. */
enum kf_status kf_cpu_prepass(const struct kf_kfile *k, struct kf_buf *out, struct kf_err *err);

#endif
