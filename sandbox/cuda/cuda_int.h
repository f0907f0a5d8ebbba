/* Private to sandbox/cuda: the CUDA driver entry points (loaded with dlopen + cuGetProcAddress, never
 * linked), error naming, and CUPTI activity-record timing. Only the worker's cuda backend includes it. */
#ifndef KF_CUDA_INT_H
#define KF_CUDA_INT_H

#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../core/kf.h"

#ifdef __cplusplus
extern "C" { /* metrics.cpp uses kf_cupti_dlopen */
#endif

/* The ABI version asked of cuGetProcAddress: CUDA 13.0. The PFN_* types below are the versions that
 * request returns (cuda.h maps cuMemAlloc to cuMemAlloc_v2 = PFN_cuMemAlloc_v3020, cuEventElapsedTime to
 * _v2 = PFN_cuEventElapsedTime_v12080, ...). */
#define KF_CU_ABI 13000

struct kf_cu_api {
	void *lib; /* dlopen handle of libcuda.so.1 */
	PFN_cuInit_v2000 init;
	PFN_cuGetProcAddress_v12000 get_proc_address;
	PFN_cuDriverGetVersion_v2020 driver_get_version;
	PFN_cuDeviceGetCount_v2000 device_get_count;
	PFN_cuDeviceGet_v2000 device_get;
	PFN_cuDeviceGetName_v2000 device_get_name;
	PFN_cuDeviceTotalMem_v3020 device_total_mem;
	PFN_cuDeviceGetAttribute_v2000 device_get_attribute;
	PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain;
	PFN_cuDevicePrimaryCtxRelease_v11000 primary_ctx_release;
	PFN_cuCtxSetCurrent_v4000 ctx_set_current;
	PFN_cuModuleLoadData_v2000 module_load_data;
	PFN_cuModuleUnload_v2000 module_unload;
	PFN_cuModuleGetFunction_v2000 module_get_function;
	PFN_cuFuncGetAttribute_v2020 func_get_attribute;
	PFN_cuFuncSetAttribute_v9000 func_set_attribute;
	PFN_cuLaunchKernel_v4000 launch_kernel;
	PFN_cuStreamCreate_v2000 stream_create;
	PFN_cuStreamDestroy_v4000 stream_destroy;
	PFN_cuStreamSynchronize_v2000 stream_synchronize;
	PFN_cuMemAlloc_v3020 mem_alloc;
	PFN_cuMemFree_v3020 mem_free;
	PFN_cuMemcpyHtoD_v3020 memcpy_htod;
	PFN_cuMemcpyDtoH_v3020 memcpy_dtoh;
	PFN_cuMemsetD32_v3020 memset_d32;
	PFN_cuMemsetD32Async_v3020 memset_d32_async;
	PFN_cuEventCreate_v2000 event_create;
	PFN_cuEventRecord_v2000 event_record;
	PFN_cuEventSynchronize_v2000 event_synchronize;
	PFN_cuEventElapsedTime_v12080 event_elapsed_time;
	PFN_cuEventDestroy_v4000 event_destroy;
	PFN_cuGetErrorName_v6000 get_error_name;
	PFN_cuGetErrorString_v6000 get_error_string;
};

extern struct kf_cu_api kf_cu;

/* dlopen("libcuda.so.1") (else "libcuda.so": the stub's name), dlsym cuInit and cuGetProcAddress_v2 only,
 * cuInit(0), then every other entry point through cuGetProcAddress at KF_CU_ABI. "No GPU" (no library, the
 * stub driver (34), no device (100), a driver mismatch (803)) is KF_ERR_UNAVAILABLE with a reason in msg; a
 * driver that lacks an entry point is KF_ERR_UNAVAILABLE too. Idempotent. */
enum kf_status kf_cu_load(char *msg, size_t msg_len);

/* "CUDA_ERROR_ILLEGAL_ADDRESS" (from cuGetErrorName when loaded, else a built-in table, else
 * "CUDA_ERROR_<n>"); never NULL, static storage. */
const char *kf_cu_error_name(CUresult r);
/* The driver's one-line description, or "" when unknown; static storage. */
const char *kf_cu_error_string(CUresult r);
/* True for the faults after which every call in the context fails (illegal address, misaligned
 * address, illegal instruction, launch failure, timeout, device assert, hardware stack error...). */
bool kf_cu_error_sticky(CUresult r);

/* The cuda backend's context and device ordinal after a successful init (NULL before; backend.c). */
CUcontext kf_cuda_context(int *device_ordinal);

/* A kernel's own launch limits, from its attributes. */
struct kf_cuda_func_limits {
	int regs;        /* registers per thread */
	int static_smem; /* bytes */
	int max_threads; /* the most threads per block it can launch with (0: not known) */
};
struct kf_be_launch;
struct kf_device_info;
/* Checks launch L against device d (regs_per_block: its register file per block, 0 unknown) and the
 * kernel's limits before any driver call: KF_ERR_INVALID with "line N: ..." in msg (an invalid_launch
 * verdict), else KF_OK. */
enum kf_status kf_cuda_launch_check(const struct kf_be_launch *L, const struct kf_device_info *d,
				    int regs_per_block, const struct kf_cuda_func_limits *f, char *msg,
				    size_t msg_len);

/* ---- CUPTI activity records (sandbox/cuda/cupti.c) ---------------------------------------- */

/* dlopen of libcupti.so.13: the loader's path (the worker's RUNPATH), then $CUDA_HOME/extras/CUPTI/lib64,
 * $CUDA_HOME/lib64, /usr/local/cuda/extras/CUPTI/lib64, /usr/local/cuda/lib64. NULL with the first
 * loader error in why. */
void *kf_cupti_dlopen(char *why, size_t why_len);

/* Loads libcupti (libcupti.so.13 from the loader path, $CUDA_HOME/extras/CUPTI/lib64,
 * $CUDA_HOME/lib64, /usr/local/cuda/...), registers the buffer callbacks and enables
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL. Call with the context current. false with the reason in why
 * when any step fails (then timing falls back to CUDA events). */
bool kf_cupti_start(char *why, size_t why_len);
/* Names of the module's kernels; a record counts in kernels_seen only when its name is one of them. */
void kf_cupti_set_kernels(const char *const *names, size_t n);
/* Forgets records collected so far (call before a timed run). */
void kf_cupti_reset(void);
/* Flushes (cuptiActivityFlushAll(1)) after the run has been synchronized and reports the run's kernel
 * time: the length of the union of the kernels' [start, end) intervals (see cupti.c for why), the
 * number of the module's kernels recorded, and whether records were dropped. false when CUPTI recorded
 * nothing usable (the caller then uses its event time). */
bool kf_cupti_collect(double *time_ns, uint32_t *kernels_seen, char *why, size_t why_len);
void kf_cupti_stop(void);

/* Length of the union of n half-open intervals [start[i], end[i]) in the same unit; reorders them.
 * Exposed for the unit test. */
uint64_t kf_cupti_union_ns(uint64_t *start, uint64_t *end, size_t n);

/* ---- library calls: cuBLAS, cuBLASLt, cuDNN (sandbox/cuda/library.c) ---------------------- */

struct kf_be_launch;

/* The launch is a library call ("@cublas.gemm", core/baseline.h). */
bool kf_culib_is_call(const char *kernel);
/* Prepares launch i of the plan, a library call, to run on stream: loads the library (dlopen), creates
 * its handle, builds its descriptors or execution plan, picks the algorithm, allocates the workspace.
 * KF_ERR_UNAVAILABLE when the library is missing or refuses the problem, KF_ERR_INVALID for a malformed
 * call, KF_ERR_NOMEM. Call with the context current. */
enum kf_status kf_culib_prepare(size_t i, const struct kf_be_launch *launch, CUstream stream, char *msg,
				size_t msg_len);
/* Enqueues prepared call i with the buffer addresses now in args (asynchronous; the caller
 * synchronizes and times). KF_ERR_RUNTIME with the library's status. */
enum kf_status kf_culib_run(size_t i, void *const *args, char *msg, size_t msg_len);
/* Destroys every handle, descriptor and workspace (context_ok false: only forgets them). */
void kf_culib_release(bool context_ok);

#ifdef __cplusplus
}
#endif

#endif
