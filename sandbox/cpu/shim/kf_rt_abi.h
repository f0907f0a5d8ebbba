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

/* ---- the cost model's counters (instrumented modules; docs/cost-model.md) -----------------------
 * With counting on (kf_cost_configure), the sanitizer's hooks also group every global and shared access
 * per warp and instruction (warp = thread / 32 of the block; lanes' accesses match by instruction and by
 * the thread's count of accesses so far, kf_rt_mem_event.seq) and count what a GPU would see: 32-byte
 * sectors per global request (coalescing), the sectors an L2 of the configured size would miss (a
 * set-associative LRU cache of sectors, write-back, fed in the order the blocks run), shared-memory
 * wavefronts per request (32 banks of 4 bytes: the most distinct words one bank serves; the same word is a
 * broadcast), atomics and the most lanes of one warp instruction on one address, barriers, warp
 * collectives, and basic blocks executed (clang's trace-pc-guard edges: per warp, per barrier interval, the
 * most any lane ran: a divergent warp issues the longest path). Counting skips the racecheck and
 * initcheck shadow (memcheck stays: an out-of-bounds access still stops the launch).
 * Blocks are sampled: a launch whose blocks would pass access_budget accesses runs KF_RT_COST_CHUNKS
 * chunks of consecutive blocks, each starting at a position drawn from sample_seed and running until it
 * has used its share of the budget (at least one block); the outputs are then incomplete and meaningless,
 * and the counts are those of the blocks run (blocks_run of blocks_total): the caller extrapolates. */
#define KF_RT_COST_ABI_VERSION 1
#define KF_RT_COST_MAX_SITES 8
#define KF_RT_COST_CHUNKS 4

struct kf_rt_cost_config {
	uint32_t enable;        /* 1: count from the next launch on; 0: off (the sanitizer's own mode) */
	uint32_t l2_ways;       /* associativity of the L2 model (0: 16) */
	uint64_t l2_bytes;      /* capacity of the L2 model (0: no cache: every sector goes to DRAM) */
	uint64_t access_budget; /* accesses per launch before blocks are sampled (0: run every block) */
	uint64_t sample_seed;   /* where the sampled chunks start (secret to the kernel: the caller's) */
};

/* One call site (instruction) of the kernel, summed over the blocks run. */
struct kf_rt_cost_site {
	uint64_t pc;     /* module offset of the instruction (symbolize as a finding's pc) */
	uint32_t op;     /* kf_rt_san_op: LOAD, STORE or ATOMIC */
	uint32_t region; /* kf_rt_san_region: GLOBAL, SHARED or DSHARED */
	int32_t index;   /* GLOBAL: the plan buffer; else -1 */
	uint32_t pad;
	uint64_t requests; /* warp-level instructions */
	uint64_t units;    /* GLOBAL: 32-byte sectors; SHARED: wavefronts */
	uint64_t bytes;    /* bytes the lanes asked for */
};

/* One launch's counts, over the blocks that ran. */
struct kf_rt_cost {
	uint32_t grid[3], block[3];
	uint32_t smem_bytes;   /* dynamic shared memory of the launch */
	uint32_t n_sites;      /* sites[] used: the sites with the most sectors or wavefronts first */
	uint64_t blocks_total; /* blocks of the grid */
	uint64_t blocks_run;   /* blocks that ran (== blocks_total: not sampled) */
	uint64_t warps_run;    /* warps of the blocks that ran (a partial warp counts as one) */
	uint64_t gld_requests, gld_sectors, gld_bytes; /* global loads: warp instructions, sectors, bytes */
	uint64_t gst_requests, gst_sectors, gst_bytes; /* global stores */
	uint64_t l2_read_misses;                       /* sectors the L2 model had to read from DRAM */
	uint64_t l2_writebacks; /* dirty sectors written to DRAM (evicted, or dirty at the launch's end) */
	uint64_t touched_bytes; /* total size of the plan buffers the launch accessed at all */
	uint64_t sh_requests;   /* shared-memory warp instructions (static and dynamic) */
	uint64_t sh_wavefronts; /* their wavefronts: sh_wavefronts - sh_requests is the bank-conflict cost */
	uint64_t atom_requests; /* atomic warp instructions (global or shared) */
	uint64_t atom_lanes;    /* atomic operations (lanes) */
	uint64_t atom_serial;   /* sum over atomic warp instructions of the most lanes on one address */
	uint64_t atom_hot;      /* the most atomics any one address took in the launch (blocks run) */
	uint64_t barriers;      /* __syncthreads, counted once per warp of the block that reached it */
	uint64_t collectives;   /* warp shuffles, votes and __syncwarp, per warp */
	uint64_t warp_edges;    /* basic blocks a warp issues: per barrier interval, its longest lane's */
	uint64_t thread_edges;  /* basic blocks executed, summed over threads */
	uint64_t accesses;      /* loads and stores counted (the budget's unit) */
	struct kf_rt_cost_site sites[KF_RT_COST_MAX_SITES];
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

/* The cost model's counters (instrumented modules; NULL from dlsym in a module of an older runtime). */
int kf_cost_abi_version(void);
/* Counting on or off for the coming launches (KF_RT_INVALID for a bad configuration). */
int kf_cost_configure(const struct kf_rt_cost_config *c);
/* The last launch's counts (zero when counting was off). */
void kf_cost_take(struct kf_rt_cost *out);
typedef int (*kf_cost_abi_version_fn)(void);
typedef int (*kf_cost_configure_fn)(const struct kf_rt_cost_config *c);
typedef void (*kf_cost_take_fn)(struct kf_rt_cost *out);

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
