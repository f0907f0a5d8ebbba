/* Loading the CUDA driver without linking it: dlopen("libcuda.so.1") (else "libcuda.so", which names
 * the toolkit's stub when that is all there is), dlsym of cuInit and
 * cuGetProcAddress_v2 only, and every other entry point from cuGetProcAddress at the CUDA 13.0 ABI
 * (a plain dlsym would return the oldest ABI of a versioned function). Also error names, and which
 * errors leave the context broken for good. */
#include "cuda_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct kf_cu_api kf_cu;
static bool loaded;

/* Names for the codes we report most, so a message is readable even before cuGetErrorName exists
 * (the stub's cuInit failing, say). The numbers are cuda.h's CUresult values. */
static const struct {
	int code;
	const char *name;
} known_errors[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
    {46, "CUDA_ERROR_DEVICES_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {710, "CUDA_ERROR_ASSERT"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {718, "CUDA_ERROR_INVALID_PC"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

const char *kf_cu_error_name(CUresult r)
{
	static char buf[32];
	const char *s = NULL;
	if (kf_cu.get_error_name && kf_cu.get_error_name(r, &s) == CUDA_SUCCESS && s)
		return s;
	for (size_t i = 0; i < KF_ARRAY_SIZE(known_errors); i++)
		if (known_errors[i].code == (int)r)
			return known_errors[i].name;
	snprintf(buf, sizeof(buf), "CUDA_ERROR_%d", (int)r);
	return buf;
}

const char *kf_cu_error_string(CUresult r)
{
	const char *s = NULL;
	if (kf_cu.get_error_string && kf_cu.get_error_string(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "";
}

bool kf_cu_error_sticky(CUresult r)
{
	switch ((int)r) {
	case 4:   /* deinitialized */
	case 700: /* illegal address */
	case 702: /* launch timeout (watchdog) */
	case 709: /* context destroyed */
	case 710: /* device-side assert */
	case 714: /* hardware stack error */
	case 715: /* illegal instruction */
	case 716: /* misaligned address */
	case 717: /* invalid address space */
	case 718: /* invalid program counter */
	case 719: /* launch failed (exception while executing) */
	case 999: /* unknown: assume the worst, a new process costs little */
		return true;
	default:
		return false;
	}
}

/* Why cuInit failed, in words a user can act on. */
static void explain_init(CUresult r, char *msg, size_t msg_len)
{
	const char *name = kf_cu_error_name(r);
	switch ((int)r) {
	case 34:
		snprintf(msg, msg_len,
			 "CUDA driver is a stub (cuInit returned 34 %s): the libcuda on the loader path "
			 "is the toolkit's stubs/libcuda.so, not a real driver",
			 name);
		break;
	case 100:
		snprintf(msg, msg_len, "no CUDA device (cuInit returned 100 %s)", name);
		break;
	case 803:
		snprintf(msg, msg_len,
			 "CUDA driver mismatch (cuInit returned 803 %s): the user-space driver and the "
			 "kernel module differ in version",
			 name);
		break;
	case 35:
		snprintf(msg, msg_len, "CUDA driver too old (cuInit returned 35 %s)", name);
		break;
	default:
		snprintf(msg, msg_len, "CUDA driver unusable (cuInit returned %d %s)", (int)r, name);
		break;
	}
}

#define ENTRY(field, sym)                                                                                    \
	{                                                                                                    \
		sym, offsetof(struct kf_cu_api, field)                                                       \
	}

static const struct {
	const char *sym;
	size_t off;
} entries[] = {
    ENTRY(driver_get_version, "cuDriverGetVersion"),
    ENTRY(device_get_count, "cuDeviceGetCount"),
    ENTRY(device_get, "cuDeviceGet"),
    ENTRY(device_get_name, "cuDeviceGetName"),
    ENTRY(device_total_mem, "cuDeviceTotalMem"),
    ENTRY(device_get_attribute, "cuDeviceGetAttribute"),
    ENTRY(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
    ENTRY(primary_ctx_release, "cuDevicePrimaryCtxRelease"),
    ENTRY(ctx_set_current, "cuCtxSetCurrent"),
    ENTRY(module_load_data, "cuModuleLoadData"),
    ENTRY(module_unload, "cuModuleUnload"),
    ENTRY(module_get_function, "cuModuleGetFunction"),
    ENTRY(func_get_attribute, "cuFuncGetAttribute"),
    ENTRY(func_set_attribute, "cuFuncSetAttribute"),
    ENTRY(launch_kernel, "cuLaunchKernel"),
    ENTRY(stream_create, "cuStreamCreate"),
    ENTRY(stream_destroy, "cuStreamDestroy"),
    ENTRY(stream_synchronize, "cuStreamSynchronize"),
    ENTRY(mem_alloc, "cuMemAlloc"),
    ENTRY(mem_free, "cuMemFree"),
    ENTRY(memcpy_htod, "cuMemcpyHtoD"),
    ENTRY(memcpy_dtoh, "cuMemcpyDtoH"),
    ENTRY(memset_d32, "cuMemsetD32"),
    ENTRY(memset_d32_async, "cuMemsetD32Async"),
    ENTRY(event_create, "cuEventCreate"),
    ENTRY(event_record, "cuEventRecord"),
    ENTRY(event_synchronize, "cuEventSynchronize"),
    ENTRY(event_elapsed_time, "cuEventElapsedTime"),
    ENTRY(event_destroy, "cuEventDestroy"),
    ENTRY(get_error_name, "cuGetErrorName"),
    ENTRY(get_error_string, "cuGetErrorString"),
};

enum kf_status kf_cu_load(char *msg, size_t msg_len)
{
	if (loaded)
		return KF_OK;
	memset(&kf_cu, 0, sizeof(kf_cu));
	dlerror();
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		char first[400];
		snprintf(first, sizeof(first), "%s", e ? e : "libcuda.so.1: cannot be loaded");
		/* A driver always installs libcuda.so.1; a bare libcuda.so on the path is almost always the
		 * toolkit's stub (LD_LIBRARY_PATH=.../lib64/stubs), and loading it lets cuInit say so (34).
		 */
		lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			snprintf(msg, msg_len, "no CUDA driver: %s", first);
			return KF_ERR_UNAVAILABLE;
		}
	}
	/* The two symbols docs/architecture.md allows dlsym for; cuGetProcAddress_v2 is the CUDA 12+ form
	 * that reports whether the symbol was found. A function pointer from dlsym needs this cast. */
	void *p_init = dlsym(lib, "cuInit");
	void *p_gpa = dlsym(lib, "cuGetProcAddress_v2");
	if (!p_init || !p_gpa) {
		snprintf(msg, msg_len,
			 "CUDA driver too old: libcuda.so.1 has no '%s' (CUDA 12 or later needed)",
			 p_init ? "cuGetProcAddress_v2" : "cuInit");
		dlclose(lib);
		return KF_ERR_UNAVAILABLE;
	}
	memcpy(&kf_cu.init, &p_init, sizeof(p_init));
	memcpy(&kf_cu.get_proc_address, &p_gpa, sizeof(p_gpa));

	CUresult r = kf_cu.init(0);
	if (r != CUDA_SUCCESS) {
		explain_init(r, msg, msg_len);
		memset(&kf_cu, 0, sizeof(kf_cu));
		dlclose(lib);
		return KF_ERR_UNAVAILABLE;
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(entries); i++) {
		void *fn = NULL;
		CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		r = kf_cu.get_proc_address(entries[i].sym, &fn, KF_CU_ABI, CU_GET_PROC_ADDRESS_DEFAULT,
					   &found);
		if (r != CUDA_SUCCESS || !fn || found != CU_GET_PROC_ADDRESS_SUCCESS) {
			snprintf(msg, msg_len,
				 "CUDA driver lacks '%s' at ABI %d (cuGetProcAddress returned %d, status %d)",
				 entries[i].sym, KF_CU_ABI, (int)r, (int)found);
			memset(&kf_cu, 0, sizeof(kf_cu));
			dlclose(lib);
			return KF_ERR_UNAVAILABLE;
		}
		memcpy((char *)&kf_cu + entries[i].off, &fn, sizeof(fn));
	}
	kf_cu.lib = lib;
	loaded = true;
	return KF_OK;
}
