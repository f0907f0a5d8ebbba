/* The execution-backend interface inside kforge-worker. Both backends take the same compiled module,
 * launch plan and `void **args` (the cuLaunchKernel convention). Device addresses are uint64_t; on the
 * cpu backend they are host pointers. Every function returns an enum kf_status and writes a reason into
 * msg (msg_len bytes) on failure. Only the worker includes this header. */
#ifndef KF_WORKER_BACKEND_H
#define KF_WORKER_BACKEND_H

#include "../../core/kf.h"
#include "../sandbox.h"

struct kf_be_launch {
	const char *kernel;
	uint32_t grid[3], block[3];
	uint32_t smem_bytes;
	void **args; /* one pointer per kernel parameter, to the value (a uint64_t for pointers) */
	int line;    /* directive line, for messages */
	uint32_t n_args;
	uint64_t buffer_mask; /* bit a: argument a is a buffer (its cell gets a device address per step) */
};

/* One plan buffer as a step lays it out: [lo, data) front guard, [data, data + n_bytes) data,
 * [data + n_bytes, hi) padding and rear guard. */
struct kf_be_buffer {
	uint64_t data, n_bytes;
	uint64_t lo, hi;
	enum kf_role role;
	bool is_scratch;
};

struct kf_be_run_stats {
	struct kf_rt_san_finding *san; /* in: where an instrumented module's finding goes (may be NULL) */
	uint32_t launch_base;          /* in: the plan index of launches[0] (the finding names its launch) */
	uint64_t san_accesses, san_untracked_bytes; /* out: that module's counts for the run */
	double time_ns;                             /* kernel time of the whole plan for this run */
	uint32_t kernels_seen; /* kernels the device recorded for this run (0 when not known) */
	char timing_source[16];
	struct kf_rt_cost *cost; /* in: with counting on (cost_begin), launch i's counts go to cost[i] */
	uint32_t n_cost;         /* out: launches whose counts were taken (the failed one included) */
};

struct kf_backend_ops {
	const char *name; /* "cpu" | "cuda" */

	/* Makes the device usable and fills info. KF_ERR_UNAVAILABLE with the reason when there is none
	 * (cuda: no libcuda.so.1, stub driver (34), no device (100), driver mismatch (803), 0 devices). */
	enum kf_status (*init)(const struct kf_worker_opts *opts, struct kf_device_info *info, char *msg,
			       size_t msg_len);

	/* Loads a module image (CUBIN or a shared object; image is readable memory, fd a memfd holding
	 * the same bytes) and resolves every kernel name in kernels[0..n). A missing kernel is
	 * KF_ERR_INVALID. */
	enum kf_status (*load)(const uint8_t *image, size_t image_len, int fd, const char *const *kernels,
			       size_t n_kernels, char *msg, size_t msg_len);

	enum kf_status (*alloc)(size_t n_bytes, uint64_t *dptr, char *msg, size_t msg_len);
	void (*free)(uint64_t dptr);
	enum kf_status (*htod)(uint64_t dst, const void *src, size_t n, char *msg, size_t msg_len);
	enum kf_status (*dtoh)(void *dst, uint64_t src, size_t n, char *msg, size_t msg_len);
	enum kf_status (*fill32)(uint64_t dst, uint32_t pattern, size_t n_bytes, char *msg, size_t msg_len);

	/* Checks every launch against the device's limits (KF_ERR_INVALID with the line), then runs the
	 * launches in order and waits for them. Faults are KF_ERR_RUNTIME with the error's name; *fatal is
	 * set when the context is broken for good (the worker then exits after replying). */
	enum kf_status (*run)(const struct kf_be_launch *launches, size_t n, bool want_time,
			      struct kf_be_run_stats *stats, bool *fatal, char *msg, size_t msg_len);

	/* Library calls (core/baseline.h: a launch named "@cublas.gemm"): prepares every one of the plan
	 * once at setup, before any step (libraries loaded, handles, descriptors, algorithm choice,
	 * workspaces), so nothing of that lands in a timed run; args hold the scalars already, buffer
	 * cells are filled per step. KF_ERR_UNAVAILABLE with the reason when a library is missing or
	 * refuses the problem. NULL: the backend runs no library calls (the engine says so). */
	enum kf_status (*prepare)(const struct kf_be_launch *launches, size_t n, char *msg, size_t msg_len);

	/* Called once per step, after the buffers are poisoned and filled and before the runs: the step's
	 * buffers and its poison pattern (cpu: every block's shared memory starts with that pattern; an
	 * instrumented module checks accesses against the buffers' exact bounds). May be NULL. */
	enum kf_status (*begin_step)(const struct kf_be_buffer *bufs, size_t n, uint32_t poison, char *msg,
				     size_t msg_len);

	/* The engine wrote [dst, dst + n_bytes) of a buffer during the run, between launches (a
	 * `// kforge:zero`): data from now on (cpu: an instrumented module's initcheck). May be NULL. */
	void (*host_wrote)(uint64_t dst, size_t n_bytes);

	/* Evicts caches before a timed run (cuda: write >= 2x L2). May be NULL. */
	enum kf_status (*flush_l2)(char *msg, size_t msg_len);

	/* The cost model's counters (KF_STEP_COST): on with c for the coming runs (KF_ERR_UNSUPPORTED with
	 * the reason when the module has none), then off again. NULL: the backend has none. */
	enum kf_status (*cost_begin)(const struct kf_rt_cost_config *c, char *msg, size_t msg_len);
	void (*cost_end)(void);

	void (*shutdown)(void);

	/* Called once, after init and before the worker's syscall filter: creates what the filter would
	 * refuse later (the cpu backend's block threads). May be NULL. */
	enum kf_status (*before_filter)(char *msg, size_t msg_len);
};

extern const struct kf_backend_ops kf_backend_cpu;
extern const struct kf_backend_ops kf_backend_cuda;

#endif
