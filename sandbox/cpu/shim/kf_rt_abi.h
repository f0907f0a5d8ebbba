/* The C interface between a kernel shared object built by the cpu backend and whoever loads it (the
 * worker's cpu backend, unit tests). The fiber runtime is compiled into every kernel .so, so the .so is
 * self-contained; kernels are reached through "kf_entry_<name>" trampolines taking cuLaunchKernel's
 * `void **args`. Valid C and C++. */
#ifndef KF_RT_ABI_H
#define KF_RT_ABI_H

#include <stddef.h>
#include <stdint.h>

#define KF_RT_ABI_VERSION 2
#define KF_RT_ENTRY_PREFIX "kf_entry_"
#define KF_RT_DSMEM_MAX 232448 /* bytes of dynamic shared memory per block (sm_90 opt-in maximum) */

/* Runs fn(arg) on a thread the loader created beforehand; 0 when one took it, -1 when none is free. The
 * cpu worker makes its threads before its syscall filter, which allows no new ones. */
typedef int (*kf_rt_spawn_fn)(void *(*fn)(void *), void *arg, void *ctx);

struct kf_rt_config {
	int n_threads;         /* OS threads that run blocks (0: one per online CPU) */
	uint64_t shuffle_seed; /* 0: fibers run in program order; else a seeded order per barrier round */
	size_t stack_bytes;    /* per fiber, a power of two >= 16 KiB (0: 64 KiB) */
	kf_rt_spawn_fn spawn;  /* NULL: the runtime makes its own threads (pthread_create) */
	void *spawn_ctx;
};

enum kf_rt_status { KF_RT_OK = 0, KF_RT_RUNTIME = 1, KF_RT_INVALID = 2, KF_RT_NOMEM = 3 };

typedef void (*kf_rt_entry_fn)(void **args);

#ifdef __cplusplus
extern "C" {
#endif
/* Symbols exported by every kernel .so (resolve with dlsym). */
int kf_rt_abi_version(void);
/* Applies a configuration; call before the first launch or between launches. */
int kf_rt_configure(const struct kf_rt_config *c);
/* Runs one launch to completion: every block of grid, block threads each, smem_bytes of dynamic shared
 * memory. Returns a kf_rt_status; msg gets the reason (e.g. "deadlock: divergent __syncthreads ..."). */
int kf_rt_launch(kf_rt_entry_fn entry, const uint32_t grid[3], const uint32_t block[3], uint32_t smem_bytes,
		 void **args, char *msg, size_t msg_len);
/* Nanoseconds per fiber switch, measured on the calling thread (for benchmarks). */
double kf_rt_switch_ns(void);
/* Stops the block threads and frees the stacks; call before dlclose. */
void kf_rt_shutdown(void);

typedef int (*kf_rt_abi_version_fn)(void);
typedef int (*kf_rt_configure_fn)(const struct kf_rt_config *c);
typedef int (*kf_rt_launch_fn)(kf_rt_entry_fn entry, const uint32_t grid[3], const uint32_t block[3],
			       uint32_t smem_bytes, void **args, char *msg, size_t msg_len);
typedef double (*kf_rt_switch_ns_fn)(void);
typedef void (*kf_rt_shutdown_fn)(void);
#ifdef __cplusplus
}
#endif

#endif
