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

/* KF_RT_SANITIZER: an instrumented module's sanitizer stopped the launch at its first finding
 * (kf_san_take has it). */
enum kf_rt_status {
	KF_RT_OK = 0,
	KF_RT_RUNTIME = 1,
	KF_RT_INVALID = 2,
	KF_RT_NOMEM = 3,
	KF_RT_SANITIZER = 4
};

/* ---- the sanitizer of an instrumented module (kf_compile_opts.instrument) ------------------------
 * clang's -fsanitize-coverage=trace-loads,trace-stores calls the runtime before every load and store of
 * the kernel's code; the shim reports atomics, fences and warp collectives. Each access becomes one
 * kf_rt_mem_event (what the checks below read, and what a cost model grouping accesses per warp and
 * instruction would read); the checks stop the launch at the first finding. */
#define KF_RT_SAN_ABI_VERSION 1

enum kf_rt_san_kind {
	KF_RT_SAN_NONE = 0,
	KF_RT_SAN_OOB = 1,    /* memcheck: outside every live allocation (exact bounds) */
	KF_RT_SAN_UNINIT = 2, /* initcheck: shared memory, scratch or an output read before written */
	KF_RT_SAN_RACE = 3,   /* racecheck: two threads, same bytes, no barrier/__syncwarp between, a write */
	KF_RT_SAN_WARP_UB = 4, /* a shuffle reading an exited or non-participating lane, a bad mask */
	KF_RT_SAN_KIND_COUNT = 5
};
enum kf_rt_san_op {
	KF_RT_SAN_LOAD = 1,
	KF_RT_SAN_STORE = 2,
	KF_RT_SAN_ATOMIC = 3,    /* read-modify-write through the shim's atomics */
	KF_RT_SAN_COLLECTIVE = 4 /* a warp collective (shuffle, vote, __syncwarp) */
};
/* Where an address lies. */
enum kf_rt_san_region {
	KF_RT_SAN_GLOBAL = 0,  /* a plan buffer (index: the buffer); guards and padding count as outside */
	KF_RT_SAN_SHARED = 1,  /* the block's static __shared__ variables */
	KF_RT_SAN_DSHARED = 2, /* the launch's dynamic shared memory (smem bytes) */
	KF_RT_SAN_LOCAL = 3,   /* a thread's own stack (local variables) */
	KF_RT_SAN_MODULE = 4,  /* the module's own globals and constants (__device__, __constant__) */
	KF_RT_SAN_NOWHERE = 5, /* none of these */
	KF_RT_SAN_REGION_COUNT = 6
};

/* One memory access of one thread, classified. */
struct kf_rt_mem_event {
	uint64_t addr;
	uint32_t size;   /* bytes */
	uint32_t op;     /* kf_rt_san_op */
	uint32_t region; /* kf_rt_san_region */
	int32_t index;   /* GLOBAL: buffer index; else -1 */
	int64_t offset;  /* addr minus the region's start */
	uint64_t pc;     /* the access's instruction, an offset into the module */
	uint64_t block;  /* linear block index in the launch */
	uint32_t thread; /* linear thread index in the block (warp = thread / 32, lane = thread % 32) */
	uint32_t seq;    /* this thread's count of accesses so far in the launch (groups lanes' k-th) */
};

struct kf_rt_san_access {
	uint32_t op, size;
	uint32_t block[3], thread[3];
	uint64_t pc[4]; /* offsets into the module: the instruction, then up to three callers (0: none) */
};

struct kf_rt_san_finding {
	uint32_t kind;   /* kf_rt_san_kind */
	uint32_t region; /* kf_rt_san_region of addr */
	int32_t index;   /* GLOBAL: buffer index (the nearest one for NOWHERE, -1 if none); WARP_UB: the lane
			    read */
	uint32_t launch; /* 0-based launch of the plan (set by the loader) */
	uint64_t addr;
	int64_t offset;                    /* addr minus the start of region (or of buffer `index`) */
	uint64_t region_bytes;             /* size of that region or buffer */
	uint64_t tls_offset;               /* SHARED: addr's offset in the module's thread-local block */
	uint32_t mask;                     /* WARP_UB: the collective's mask */
	uint32_t flags;                    /* KF_RT_SAN_F_* */
	uint64_t accesses;                 /* accesses checked in this launch up to the finding */
	struct kf_rt_san_access cur, prev; /* prev (RACE): the earlier access; prev.op == 0 when none */
	char detail[160];                  /* the runtime's words, NUL-terminated */
};
#define KF_RT_SAN_F_EXITED 1u     /* WARP_UB: the lane read had exited (else: not in the collective) */
#define KF_RT_SAN_F_PREV_WRITE 2u /* RACE: the earlier access was a write */
#define KF_RT_SAN_F_SAME_WARP 4u  /* RACE: both threads are in one warp (no __syncwarp between) */

/* A plan buffer as the loader tells the sanitizer: data [data, data + n_bytes), allocation [lo, hi). */
struct kf_rt_san_buffer {
	uint64_t data, n_bytes, lo, hi;
	uint32_t initialized; /* 1: inputs, inout: defined before the run; 0: outputs, scratch (poison) */
	uint32_t pad;
};

/* Statistics of the last launch (for reports and benchmarks). */
struct kf_rt_san_stats {
	uint64_t accesses;        /* loads and stores checked */
	uint64_t untracked_bytes; /* buffer bytes too large for race and init tracking (memcheck only) */
};

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
/* From the next launch on, every block starts with its static and dynamic shared memory filled with
 * this 32-bit pattern (byte k = byte k % 4, little-endian), as the harness poisons outputs and scratch;
 * 0 (the default) leaves shared memory as the previous block left it. */
void kf_rt_set_poison(uint32_t pattern);
/* Nanoseconds per fiber switch, measured on the calling thread (for benchmarks). */
double kf_rt_switch_ns(void);
/* Stops the block threads and frees the stacks; call before dlclose. */
void kf_rt_shutdown(void);

/* Instrumented modules only (NULL from dlsym otherwise). */
int kf_san_abi_version(void);
/* The buffers of the coming runs (call before each run of the plan: it also starts the run's
 * initialization tracking). KF_RT_NOMEM when the shadow memory cannot be had. */
int kf_san_configure(const struct kf_rt_san_buffer *bufs, size_t n);
/* The loader wrote [addr, addr + n_bytes) itself between launches (a `// kforge:zero` memset): those
 * bytes hold data from now on, ordered before the next launch. */
void kf_san_host_write(uint64_t addr, uint64_t n_bytes);
/* The finding that stopped the last launch (kind NONE if none), and the launch's statistics. */
void kf_san_take(struct kf_rt_san_finding *out, struct kf_rt_san_stats *stats);

typedef int (*kf_san_abi_version_fn)(void);
typedef int (*kf_san_configure_fn)(const struct kf_rt_san_buffer *bufs, size_t n);
typedef void (*kf_san_take_fn)(struct kf_rt_san_finding *out, struct kf_rt_san_stats *stats);
typedef void (*kf_san_host_write_fn)(uint64_t addr, uint64_t n_bytes);

typedef int (*kf_rt_abi_version_fn)(void);
typedef int (*kf_rt_configure_fn)(const struct kf_rt_config *c);
typedef int (*kf_rt_launch_fn)(kf_rt_entry_fn entry, const uint32_t grid[3], const uint32_t block[3],
			       uint32_t smem_bytes, void **args, char *msg, size_t msg_len);
typedef double (*kf_rt_switch_ns_fn)(void);
typedef void (*kf_rt_set_poison_fn)(uint32_t pattern);
typedef void (*kf_rt_shutdown_fn)(void);
#ifdef __cplusplus
}
#endif

#endif
