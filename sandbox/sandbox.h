/* sandbox: everything that runs untrusted or fragile code, seen from the trusted parent.
 *  - child processes with limits (wall clock, CPU, file size, no network, seccomp, process-group kill);
 *  - compiles: NVRTC (cuda backend) or the host C++ compiler with the CUDA shim (cpu backend), each in
 *    a child, cached by content hash;
 *  - worker sessions: one kforge-worker process per candidate evaluation, driven step by step. */
#ifndef KF_SANDBOX_H
#define KF_SANDBOX_H

#include <sys/resource.h>

#include "cpu/shim/kf_rt_abi.h"
#include "kf.h"
#include "kfile.h"

/* ---- sandbox layers (sandbox/README.md) --------------------------------------------------- */

/* The layers around every child (compile children, workers). Each can be switched off on its own with
 * $KFORGE_SANDBOX_LAYERS (tests: "all" by default, "none", a comma list of names, "all,-name"); what
 * a layer needs and this machine lacks is simply not active (kforge doctor says why). */
enum kf_layer {
	KF_LAYER_ENV = 1 << 0,      /* children start from an empty environment plus an allow-list */
	KF_LAYER_UID = 1 << 1,      /* as root: a separate unprivileged uid/gid for every child */
	KF_LAYER_USERNS = 1 << 2,   /* a user namespace (what lets a non-root user make the others) */
	KF_LAYER_PIDNS = 1 << 3,    /* a pid namespace: nothing outside can be named, let alone signalled */
	KF_LAYER_NETNS = 1 << 4,    /* a network namespace: no interfaces but a down loopback */
	KF_LAYER_IPCNS = 1 << 5,    /* an IPC namespace (System V, POSIX message queues) */
	KF_LAYER_MNTNS = 1 << 6,    /* a mount namespace; compile children get a bounded private /tmp */
	KF_LAYER_LANDLOCK = 1 << 7, /* the filesystem allow-list */
	KF_LAYER_SECCOMP = 1 << 8,  /* syscall filter: an allow-list for the cpu worker after its setup */
	KF_LAYER_CGROUP = 1 << 9,   /* a memory and process bound on each child and what it starts */
};
#define KF_LAYER_COUNT 10
#define KF_LAYERS_ALL ((1u << KF_LAYER_COUNT) - 1)
/* The opt-out that lets the cpu backend run candidate code without its minimum sandbox. */
#define KF_SANDBOX_OPT_OUT_ENV "KFORGE_UNSANDBOXED_CPU_BACKEND_I_ACCEPT_THE_RISK"
/* Children running under a separate uid get one from [BASE, BASE + 2^30): BASE + (pid of kforge mod
 * 2^22) * 256 + a per-process counter mod 256, so no two concurrent children share one. gid = uid. */
#define KF_SANDBOX_UID_BASE 1879048192u

/* "env", "uid", ... (index = bit number); NULL past the end. */
const char *kf_layer_name(unsigned bit);
/* One line on what the layer does. */
const char *kf_layer_summary(unsigned bit);

struct kf_sandbox_report {
	unsigned requested;            /* $KFORGE_SANDBOX_LAYERS */
	unsigned available;            /* what this machine and user allow */
	unsigned active;               /* requested & available */
	char why[KF_LAYER_COUNT][160]; /* for each unavailable layer */
	char bad_spec[160];            /* an unknown name in $KFORGE_SANDBOX_LAYERS, if any */
	int landlock_abi;              /* 0: none */
	bool root;
	bool parent_nodump; /* PR_SET_DUMPABLE is off in this process */
	bool env_scrubbed;  /* the initial environment block was cleared */
	bool cpu_allowed;   /* the cpu backend has its minimum sandbox, or the opt-out is set */
	bool cpu_opt_out;   /* KF_SANDBOX_OPT_OUT_ENV is set */
	char cgroup[8];     /* "v2", "v1" or "" */
};

/* Probed once per process (a few ms: small child processes try what the kernel allows). */
const struct kf_sandbox_report *kf_sandbox_report(void);

/* The trusted parent out of reach of its children: PR_SET_DUMPABLE off (no /proc/PID/mem, environ or
 * ptrace without CAP_SYS_PTRACE), and the initial environment block (/proc/PID/environ) moved to the
 * heap and zeroed. Idempotent; main() calls it first, and every child spawn calls it again. */
void kf_sandbox_protect_parent(void);

/* KF_OK when the cpu backend may run candidate code here: the syscall allow-list plus Landlock or a
 * separate uid are active, or the opt-out is set. Else KF_ERR_UNAVAILABLE saying what is missing. */
enum kf_status kf_sandbox_cpu_check(struct kf_err *err);

/* ---- child processes ---------------------------------------------------------------------- */

struct kf_jail; /* sandbox-private: namespaces, uid, Landlock rules, cgroup of one child */

struct kf_child_limits {
	int timeout_ms;       /* wall clock; the whole process group is killed past it (0: none) */
	int cpu_s;            /* RLIMIT_CPU (0: none) */
	uint64_t fsize_bytes; /* RLIMIT_FSIZE (0: none) */
	uint64_t as_bytes;    /* RLIMIT_AS (0: none; never set for GPU workers) */
	int nofile;           /* RLIMIT_NOFILE (0: default 256) */
	bool no_network;      /* unshare(CLONE_NEWNET) where permitted */
	bool seccomp;         /* install the deny-list (no ptrace, mount, network sockets, ...) */
	int nproc;            /* RLIMIT_NPROC once the child has its own uid or user namespace (0: none) */
	const struct kf_jail *jail; /* sandbox-private confinement (NULL: none) */
};

struct kf_child_result {
	int exit_code;   /* valid when term_signal == 0 */
	int term_signal; /* signal that ended it, or 0 */
	bool timed_out;  /* killed by us at timeout_ms */
	double wall_ms;
	struct rusage ru;
};

/* Runs argv[0] (PATH-searched) with stdin from /dev/null and stdout+stderr captured into out (bounded by
 * out->max, the tail cut with a marker). Returns KF_OK when the child ran (inspect res), KF_ERR_TIMEOUT
 * when it was killed at its limit, an error when it could not be started. */
enum kf_status kf_child_run_argv(const char *const *argv, const char *cwd, const struct kf_child_limits *lim,
				 struct kf_buf *out, struct kf_child_result *res, struct kf_err *err);

/* Forks and runs fn(arg, fd) in the child under lim; what fn writes to fd is collected into payload
 * (bounded). fn's return value is the child's exit code. Same returns as kf_child_run_argv, plus
 * KF_ERR_LIMIT when the payload passed payload->max. Here lim->as_bytes bounds the address space the
 * child may map on top of what it inherits from this process (a forked copy, under ASan terabytes of
 * reserved shadow), not the absolute size. */
enum kf_status kf_child_run_fn(int (*fn)(void *arg, int fd), void *arg, const struct kf_child_limits *lim,
			       struct kf_buf *payload, struct kf_child_result *res, struct kf_err *err);

/* Once the process's cancellation token is set (core/cancel.h: SIGINT, SIGTERM), the waits above (and
 * kf_child_wait) kill the child's process group, reap it and return KF_ERR_INTERRUPTED at once instead of
 * waiting for the child's own limit. */

/* ---- compiles ----------------------------------------------------------------------------- */

enum kf_backend_kind { KF_BACKEND_CPU = 0, KF_BACKEND_CUDA = 1 };
const char *kf_backend_name(enum kf_backend_kind b); /* "cpu", "cuda" */
/* The toolchain a backend compiles with, as compiles are keyed by it: "nvrtc 13.0" (cuda), or the host
 * compiler with a hash of the shim headers and flags, "g++ 12.2.0 shim 1a2b3c4d" (cpu). What the
 * knowledge base, the reports and regress name as the toolchain. Lives for the process. */
const char *kf_compiler_id(enum kf_backend_kind b);

struct kf_compile_opts {
	enum kf_backend_kind backend;
	const char *arch; /* cuda: "sm_90" (default), "sm_90a" chosen automatically when needed */
	int timeout_ms;   /* default 60000 */
	bool no_cache;
	bool sanitize;         /* cpu: build with AddressSanitizer, report out-of-bounds with source line */
	bool instrument;       /* cpu: the sanitizer build (clang, every load and store instrumented) */
	const char *cache_dir; /* default $KFORGE_CACHE, then ~/.cache/kforge */
};

/* Resources of one kernel from `ptxas -v` (cuda) */
struct kf_kernel_res {
	char name[128];
	int registers;
	int smem_static_bytes;
	int cmem_bytes;
	int stack_bytes;
	int spill_store_bytes, spill_load_bytes;
};

/* A template launch's name expression ("sgemm<128,8,float>") and the symbol the module knows it by:
 * NVRTC's lowered (mangled) name on cuda, the entry trampoline's name on cpu. */
struct kf_kernel_name {
	char expr[128];
	char lowered[128];
};

struct kf_compiled {
	enum kf_backend_kind backend;
	char arch[16];  /* cuda: the arch compiled for; cpu: "host" */
	char key[65];   /* cache key: sha256(source, options, arch, compiler version) */
	uint8_t *image; /* CUBIN, or the cpu backend's shared object */
	size_t image_len;
	char *ptx; /* cuda only, may be NULL */
	char *log; /* compiler log, bounded; never NULL */
	bool cached;
	double wall_ms;
	size_t n_kernels;
	struct kf_kernel_res *kernels; /* a template instantiation's is named by its name expression */
	size_t n_names;
	struct kf_kernel_name *names; /* one per template name expression the file's launches use */
	char compiler[64];            /* "nvrtc 13.0", "g++ 12.2.0" */
	/* Set by kf_compile_checked on a cpu build: the arch NVRTC compiled the same file for first
	 * ("sm_90"), its wall time (cached or not) and whether it came from the cache; kernels then holds
	 * NVRTC's ptxas resources. Empty otherwise. */
	char gpu_arch[16];
	double gpu_ms;
	bool gpu_cached;
};

/* Static scan (PCRE2) for constructs a backend cannot run (cpu: inline PTX, wmma/mma, TMA, CUTLASS/CuTe,
 * CUB, ...): KF_ERR_UNSUPPORTED with "PATH:LINE: uses <construct>", else KF_OK. */
enum kf_status kf_scan_unsupported(const struct kf_kfile *k, enum kf_backend_kind b, struct kf_err *err);

/* Compiles k for opts->backend in a sandboxed child. *out is set whenever the compiler ran: KF_OK, or
 * KF_ERR_COMPILE with (*out)->log holding the diagnostics. Other returns (KF_ERR_TIMEOUT,
 * KF_ERR_UNSUPPORTED, KF_ERR_IO ...) leave *out NULL and explain in err. */
enum kf_status kf_compile(const struct kf_kfile *k, const struct kf_compile_opts *opts,
			  struct kf_compiled **out, struct kf_err *err);
void kf_compiled_free(struct kf_compiled *c);

/* The symbol module c knows a launch's kernel by: kernel itself for an extern "C" kernel, the lowered
 * name of a template name expression ("sgemm<128,8,float>"). KF_ERR_INVALID when c holds none for it. */
enum kf_status kf_compiled_symbol(const struct kf_compiled *c, const char *kernel, char out[128],
				  struct kf_err *err);

/* ---- library baselines (core/baseline.h) ------------------------------------------------- */

struct kf_baseline;
/* The module of library baseline b for backend: no compile, an image that names the call (the cuda
 * worker prepares the call itself). KF_ERR_UNAVAILABLE with the reason on any backend but cuda. Pair it
 * with kf_libcall_plan (core/baseline.h) in kf_session_start. */
enum kf_status kf_libcall_module(const struct kf_baseline *b, enum kf_backend_kind backend,
				 struct kf_compiled **out, struct kf_err *err);

/* ---- the caches ----------------------------------------------------------------------------- */

/* Compile results and sealed blobs (reference outputs, the cpu runtime object) under the cache folder
 * (opts->cache_dir, $KFORGE_CACHE, ~/.cache/kforge). Only kforge writes them; every entry carries an
 * HMAC-SHA256 under the folder's key (CACHE/.mac-key, mode 0600, which no child can read), checked on
 * every load: a forged or altered entry is a miss, a warning, and removed. Each kind is bounded (compile
 * results $KFORGE_CACHE_MAX_MB, default 2048; reference outputs $KFORGE_REFCACHE_MAX_MB, default 1024),
 * least recently used evicted first. */
enum { KF_CACHE_COMPILE = 0, KF_CACHE_REF = 1, KF_CACHE_OTHER = 2 };

struct kf_cache_stats {
	char dir[4096];
	size_t n[3]; /* entries per kind (KF_CACHE_*) */
	uint64_t bytes[3];
	uint64_t max_compile_bytes, max_ref_bytes;
};

enum kf_status kf_cache_stats(const char *dir, struct kf_cache_stats *st, struct kf_err *err);
/* Evicts least recently used entries until compile results take at most max_compile bytes and reference
 * outputs max_ref; max_compile 0 also drops the other blobs. */
enum kf_status kf_cache_prune(const char *dir, uint64_t max_compile, uint64_t max_ref, struct kf_err *err);
/* A sealed blob NAME ("ref/<hex>.bin", "<name>.blob") of at most out->max bytes: true with the bytes in
 * out when present and its MAC holds. dir: the cache folder (kf_cache_dir). */
bool kf_cache_blob_load(const char *dir, const char *name, struct kf_buf *out);
enum kf_status kf_cache_blob_store(const char *dir, const char *name, const void *data, size_t n);
/* The cache folder (cache_dir, else $KFORGE_CACHE, else ~/.cache/kforge), created 0700. */
enum kf_status kf_cache_dir(const char *cache_dir, char *out, size_t n, struct kf_err *err);
/* NVRTC first, always (docs/spec/verification.md, check 0): compiles k with NVRTC for opts->arch (NULL:
 * sm_90; sm_90a when the source needs it) and, on the cpu backend, then for the cpu, so that a file the GPU
 * compiler rejects never runs anywhere and a cpu pass implies a GPU compile. Both compiles are cached.
 * Returns as kf_compile, with these refinements:
 *  - a kernel file including a host library's header (cuBLAS, cuDNN, the driver API ...) is
 *    KF_ERR_COMPILE at once, *out holding a log that says kernel files cannot call host libraries;
 *  - NVRTC's rejection is KF_ERR_COMPILE with *out the NVRTC result (its log) on every backend;
 *  - on the cpu backend, a host-compiler rejection of what NVRTC accepted is the backend's limitation:
 *    KF_ERR_UNSUPPORTED "PATH:LINE: ..." naming the first error (never shim internals), *out NULL.
 * On a cpu KF_OK, (*out)->gpu_arch and ->kernels describe the NVRTC compile. */
enum kf_status kf_compile_checked(const struct kf_kfile *k, const struct kf_compile_opts *opts,
				  struct kf_compiled **out, struct kf_err *err);

/* Scans k for #include of a host library's header (cublas_v2.h, cudnn.h, cufft.h, curand.h, nccl.h,
 * cuda.h ...): KF_ERR_COMPILE with "PATH:LINE: <h> is the host API of X: a kernel file is device code
 * and cannot call host libraries", else KF_OK. */
enum kf_status kf_scan_host_headers(const struct kf_kfile *k, struct kf_err *err);

/* NULL when this machine can make the cpu sanitizer's build (kf_compile_opts.instrument), else why not
 * ("clang++-14 ($KFORGE_SAN_CXX) does not run here"). Lives for the process. */
const char *kf_cpu_sanitizer_unavailable(void);

/* Where a sanitizer finding is in the user's kernel file: the line of the access (0: none found), the
 * line of the earlier access of a race, and for static shared memory the __shared__ variable and the
 * offset into it. */
struct kf_san_where {
	int line, prev_line;
	bool have_var;
	char var[128];
	uint64_t var_offset;
};

/* Reads c's (an instrumented module's) debug lines and symbols for f with addr2line and readelf in a
 * sandboxed child; user_path is the kernel file's path as the pre-pass wrote it in #line. */
enum kf_status kf_cpu_san_locate(const struct kf_compiled *c, const char *user_path,
				 const struct kf_rt_san_finding *f, struct kf_san_where *w,
				 struct kf_err *err);

/* ---- worker sessions ---------------------------------------------------------------------- */

#define KF_MAX_BUFFERS 48
#define KF_MAX_LAUNCHES 16
#define KF_MAX_ZEROS 64 /* harness memsets (`// kforge:zero`) in one plan */
#define KF_MAX_SLOTS 8
#define KF_MAX_REPS 1000
#define KF_GUARD_BYTES 4096 /* canary bytes before and after every device buffer (spec: >= 1 KiB) */

/* Facts about the execution device, from the worker's HELLO. */
struct kf_device_info {
	char backend[8]; /* "cpu" | "cuda" */
	char name[128];  /* "NVIDIA H200" or the CPU model */
	char arch[16];   /* "sm_90"; "host" for cpu */
	int cc_major, cc_minor;
	int sm_count; /* cpu: worker threads */
	uint64_t global_mem_bytes;
	uint64_t l2_bytes;
	int max_threads_per_block;
	int max_block[3];
	int max_grid[3];
	int max_smem_per_block;       /* default limit (48 KiB) */
	int max_smem_per_block_optin; /* with the function attribute */
	int sm_clock_khz, mem_clock_khz, mem_bus_width_bits;
	int driver_version; /* e.g. 13000 */
	bool cupti;         /* activity-record timing available */
};

struct kf_worker_opts {
	enum kf_backend_kind backend;
	const char *worker_path; /* default: kforge-worker beside the running kforge binary */
	int start_timeout_ms;    /* for HELLO and SETUP; default 30000 */
	uint64_t host_mem_bytes; /* cpu backend: RLIMIT_AS for the worker (0: 8 GiB) */
	uint64_t shuffle_seed;   /* cpu: seeded order of fibers between barriers (0: program order) */
	bool sanitize;           /* the module was built with ASan */
	double deadline_ms;      /* absolute (kf_now_ms) end of the whole evaluation: every wait of this
				    session stops there (0: none) */
	const char *test_entry;  /* cpu: `kforge sandbox test-module`: the module is any shared object;
				    the one launch calls this `int f(void)` instead of a kernel */
	struct kf_buf *log_copy; /* when set, the worker's whole log (redacted) is appended here when the
				    session ends, also when kf_session_start fails */
};

/* Per-step flags. */
enum {
	KF_STEP_REALLOC = 1 << 0,  /* free the slot's buffers and allocate new ones (new addresses) */
	KF_STEP_COPY_IN = 1 << 1,  /* copy every buffer with in_off >= 0 from the arena */
	KF_STEP_POISON = 1 << 2,   /* fill output/scratch data with poison and every guard with the canary */
	KF_STEP_COPY_OUT = 1 << 3, /* copy [guard|data|guard] of every buffer with out_off >= 0 to the arena:
				      KF_GUARD_BYTES + n_bytes + KF_GUARD_BYTES bytes; guard byte k holds byte
				      k % 4 of the little-endian canary, counted from each guard's first byte
				      (sandbox/common/proto.h) */
	KF_STEP_FLUSH_L2 = 1 << 4, /* flush the L2 before each rep (cuda) */
	KF_STEP_TIME = 1 << 5,     /* record a time per rep */
	KF_STEP_COST = 1 << 6,     /* cpu, instrumented module: one run of the plan with the cost model's
				      counters on (kf_step.cost), each launch's counts in kf_step_result.cost; the
				      outputs of a sampled launch are incomplete (docs/cost-model.md) */
};

struct kf_step {
	uint32_t flags;
	uint32_t slot;                  /* allocation slot 0..KF_MAX_SLOTS-1 */
	uint32_t reps;                  /* runs of the whole plan (>= 1 when TIME; 0: prepare or read back) */
	uint32_t poison;                /* 32-bit fill pattern for outputs/scratch */
	uint32_t canary;                /* 32-bit fill pattern for guards */
	int timeout_ms;                 /* for the whole step; the worker is killed past it */
	int64_t in_off[KF_MAX_BUFFERS]; /* arena offset of the buffer's input bytes, or -1 */
	int64_t out_off[KF_MAX_BUFFERS]; /* arena offset for [guard|data|guard], or -1 */
	struct kf_rt_cost_config cost;   /* KF_STEP_COST: the counters' configuration (enable is set) */
};

struct kf_step_result {
	enum kf_status status; /* OK, RUNTIME (fault/deadlock), TIMEOUT, CRASH, INVALID (launch config vs
				  device limits), UNSUPPORTED */
	char msg[512];         /* e.g. "CUDA_ERROR_ILLEGAL_ADDRESS in launch 1 (kernel 'k', line 3)" */
	bool worker_dead;      /* the session cannot take more steps */
	uint32_t n_times;
	double time_ns[KF_MAX_REPS];   /* per rep: kernel time of the whole plan (cuda) or wall (cpu) */
	uint64_t addr[KF_MAX_BUFFERS]; /* device address of each buffer's data in this step */
	uint32_t kernels_seen;         /* kernel launches the device recorded (CUPTI), 0 if unknown */
	char timing_source[16];        /* "cupti", "events", "cpu-wall" */
	/* An instrumented cpu module (kf_compile_opts.instrument): the sanitizer's finding that stopped the
	 * run (status RUNTIME; kind KF_RT_SAN_NONE when none), its PCs module offsets to symbolize with
	 * kf_cpu_symbolize; and the run's counts. Outside text: bounded, never trusted. */
	struct kf_rt_san_finding san;
	uint64_t san_accesses, san_untracked_bytes;
	/* KF_STEP_COST: each launch's counts, in plan order (n_cost launches; outside numbers: checked for
	 * consistency by the protocol, never trusted further than a cost estimate) */
	uint32_t n_cost;
	struct kf_rt_cost cost[KF_MAX_LAUNCHES];
};

struct kf_session;

/* Spawns a worker for one module and plan. The arena is shared memory of arena_bytes the caller
 * writes inputs into and reads outputs from (kf_session_arena). On a machine without a usable device
 * for opts->backend returns KF_ERR_UNAVAILABLE with the reason. A module that does not load, or a
 * kernel missing from it, is KF_ERR_INVALID. */
enum kf_status kf_session_start(const struct kf_worker_opts *opts, const struct kf_compiled *mod,
				const struct kf_plan *plan, size_t arena_bytes, struct kf_session **out,
				struct kf_err *err);
uint8_t *kf_session_arena(struct kf_session *s);
size_t kf_session_arena_size(const struct kf_session *s);
const struct kf_device_info *kf_session_device(const struct kf_session *s);
/* Runs one step. Returns KF_OK when a result came back (check res->status), or an error when the
 * protocol broke; a worker that dies or hangs becomes res->status CRASH/TIMEOUT, never a crash here. */
enum kf_status kf_session_step(struct kf_session *s, const struct kf_step *step, struct kf_step_result *res,
			       struct kf_err *err);
/* What the worker is using now, read by the parent from /proc (not from the worker): the CPU time of all
 * its threads so far (ns, from each thread's schedstat) and its thread count. Between two steps a
 * quiescent worker's CPU time barely moves (the timing protocol checks it). The worker's whole process tree
 * counts (its jail forks: the kernels run in a grandchild). KF_ERR_IO when /proc cannot
 * say (the worker gone, /proc hidden). */
enum kf_status kf_session_usage(const struct kf_session *s, uint64_t *cpu_ns, int *threads,
				struct kf_err *err);
/* Ends the worker (kills its process group if needed); ru (may be NULL) gets its rusage. NULL ok. */
void kf_session_end(struct kf_session *s, struct rusage *ru);
/* What the worker wrote to its stdout and stderr so far (at most 64 KiB; sanitizer reports land here).
 * Never NULL; valid until the next call on s. */
const char *kf_session_log(const struct kf_session *s);

/* Starts a worker only to read its HELLO: is the backend usable here, and what device is it. */
enum kf_status kf_device_probe(enum kf_backend_kind b, const char *worker_path, struct kf_device_info *info,
			       struct kf_err *err);

/* Path of kforge-worker beside /proc/self/exe, or $KFORGE_WORKER. */
const char *kf_worker_default_path(void);

/* ---- kforge sandbox test-module ------------------------------------------------------------ */

/* What happened to a shared object loaded into the cpu worker exactly as a candidate module is. */
struct kf_test_module_report {
	bool loaded;    /* dlopen (and the constructors) finished and the worker answered */
	bool entry_ran; /* the entry returned (its code below) */
	int entry_code;
	enum kf_status status; /* KF_OK, or how the load or the entry ended (RUNTIME, TIMEOUT, CRASH...) */
	char msg[600];         /* the worker's or the session's words for it */
	unsigned layers;       /* the sandbox layers the worker had */
	size_t n_refused;      /* lines the worker wrote for syscalls its filter refused */
	char refused[16][160];
	char *log; /* the worker's whole log (redacted), never NULL; free() it */
};

/* Loads the shared object at path (any host code built with -shared -fPIC) into a cpu worker through
 * the candidate path (memfd, dlopen inside the sandbox, so its constructors run there), then calls
 * `int entry(void)` in a step. Returns KF_OK with rep filled whatever the module did; an error only when
 * the test could not be made (no file, the cpu backend unavailable or refused). */
enum kf_status kf_sandbox_test_module(const char *path, const char *entry, int timeout_ms,
				      struct kf_test_module_report *rep, struct kf_err *err);

#endif
