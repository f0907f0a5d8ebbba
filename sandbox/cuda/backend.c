/* The cuda execution backend of kforge-worker (sandbox/worker/backend.h): one device, its primary
 * context, one CUBIN module, one stream. Launches are checked against the device and the function's
 * own limits before cuLaunchKernel; a sticky fault marks the backend broken (the worker then exits);
 * timing comes from CUPTI activity records, or CUDA events when CUPTI is unavailable. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../worker/backend.h"
#include "cuda_int.h"

#define MAX_FUNCS 64

struct func {
	char name[128];
	CUfunction fn;
	int regs;         /* registers per thread */
	int static_smem;  /* bytes */
	int max_threads;  /* the most threads per block this function can launch with (its registers) */
	int dyn_smem_set; /* the MAX_DYNAMIC_SHARED_SIZE_BYTES we last set (0: default) */
};

static struct {
	bool ready;
	bool broken; /* a sticky fault happened: every later call fails */
	char broken_msg[256];
	CUdevice dev;
	CUcontext ctx;
	CUstream stream;
	CUmodule mod;
	CUevent ev_start, ev_end;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
	uint32_t flush_round;
	struct kf_device_info info;
	int regs_per_block; /* device MAX_REGISTERS_PER_BLOCK */
	bool cupti;
	size_t n_funcs;
	struct func funcs[MAX_FUNCS];
} g;

static void set_msg(char *msg, size_t msg_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_msg(char *msg, size_t msg_len, const char *fmt, ...)
{
	if (!msg || !msg_len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msg_len, fmt, ap);
	va_end(ap);
}

/* Formats "NAME (description)" of a CUDA error into buf. */
static void describe(CUresult r, char *buf, size_t n)
{
	const char *s = kf_cu_error_string(r);
	if (*s)
		snprintf(buf, n, "%s (%s)", kf_cu_error_name(r), s);
	else
		snprintf(buf, n, "%s", kf_cu_error_name(r));
}

/* Maps a failed driver call to a status and message; a sticky error marks the backend broken. */
static enum kf_status fail_cu(CUresult r, const char *what, char *msg, size_t msg_len)
{
	char d[192];
	describe(r, d, sizeof(d));
	set_msg(msg, msg_len, "%s: %s", what, d);
	if (kf_cu_error_sticky(r)) {
		g.broken = true;
		snprintf(g.broken_msg, sizeof(g.broken_msg), "%s: %s", what, d);
		return KF_ERR_RUNTIME;
	}
	if (r == CUDA_ERROR_OUT_OF_MEMORY)
		return KF_ERR_NOMEM;
	return KF_ERR_RUNTIME;
}

static bool check_usable(char *msg, size_t msg_len, enum kf_status *st)
{
	if (!g.ready) {
		set_msg(msg, msg_len, "cuda backend is not initialized");
		*st = KF_ERR_INTERNAL;
		return false;
	}
	if (g.broken) {
		set_msg(msg, msg_len, "the CUDA context is broken by an earlier fault (%s)", g.broken_msg);
		*st = KF_ERR_RUNTIME;
		return false;
	}
	return true;
}

static int attr(CUdevice_attribute a)
{
	int v = 0;
	if (kf_cu.device_get_attribute(&v, a, g.dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

static enum kf_status cuda_init(const struct kf_worker_opts *opts, struct kf_device_info *info, char *msg,
				size_t msg_len)
{
	(void)opts;
	memset(info, 0, sizeof(*info));
	if (g.ready) {
		*info = g.info;
		return KF_OK;
	}
	enum kf_status st = kf_cu_load(msg, msg_len);
	if (st != KF_OK)
		return st;

	int count = 0, drv = 0;
	CUresult r = kf_cu.device_get_count(&count);
	if (r != CUDA_SUCCESS || count <= 0) {
		set_msg(msg, msg_len, "no CUDA device (cuDeviceGetCount: %d devices, %s)", count,
			kf_cu_error_name(r));
		return KF_ERR_UNAVAILABLE;
	}
	int index = 0;
	const char *env = getenv("KFORGE_CUDA_DEVICE");
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*end || v < 0 || v >= count) {
			set_msg(msg, msg_len,
				"KFORGE_CUDA_DEVICE='%s' is not a device index (this machine has %d)", env,
				count);
			return KF_ERR_UNAVAILABLE;
		}
		index = (int)v;
	}
	r = kf_cu.device_get(&g.dev, index);
	if (r != CUDA_SUCCESS) {
		set_msg(msg, msg_len, "cannot open CUDA device %d: %s", index, kf_cu_error_name(r));
		return KF_ERR_UNAVAILABLE;
	}
	r = kf_cu.primary_ctx_retain(&g.ctx, g.dev);
	if (r == CUDA_SUCCESS)
		r = kf_cu.ctx_set_current(g.ctx);
	if (r != CUDA_SUCCESS) {
		/* 46 (devices unavailable) is a GPU in exclusive-process mode held by someone else */
		set_msg(msg, msg_len, "cannot create a context on CUDA device %d: %s", index,
			kf_cu_error_name(r));
		return KF_ERR_UNAVAILABLE;
	}

	struct kf_device_info *d = &g.info;
	memset(d, 0, sizeof(*d));
	snprintf(d->backend, sizeof(d->backend), "cuda");
	char name[256] = "";
	kf_cu.device_get_name(name, (int)sizeof(name) - 1, g.dev);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	d->cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	snprintf(d->arch, sizeof(d->arch), "sm_%d%d", d->cc_major, d->cc_minor);
	d->sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	size_t total = 0;
	if (kf_cu.device_total_mem(&total, g.dev) == CUDA_SUCCESS)
		d->global_mem_bytes = total;
	d->l2_bytes = (uint64_t)attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	d->max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	d->max_block[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
	d->max_block[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
	d->max_block[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
	d->max_grid[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
	d->max_grid[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
	d->max_grid[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
	d->max_smem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	d->max_smem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	if (d->max_smem_per_block_optin < d->max_smem_per_block)
		d->max_smem_per_block_optin = d->max_smem_per_block;
	d->sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	d->mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	d->mem_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	if (kf_cu.driver_get_version(&drv) == CUDA_SUCCESS)
		d->driver_version = drv;
	g.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);

	r = kf_cu.stream_create(&g.stream, CU_STREAM_DEFAULT);
	if (r == CUDA_SUCCESS)
		r = kf_cu.event_create(&g.ev_start, CU_EVENT_DEFAULT);
	if (r == CUDA_SUCCESS)
		r = kf_cu.event_create(&g.ev_end, CU_EVENT_DEFAULT);
	if (r != CUDA_SUCCESS) {
		set_msg(msg, msg_len, "cannot create a stream or events on '%s': %s", d->name,
			kf_cu_error_name(r));
		return KF_ERR_UNAVAILABLE;
	}

	char why[256] = "";
	g.cupti = kf_cupti_start(why, sizeof(why));
	if (!g.cupti)
		fprintf(stderr, "kforge-worker: timing with CUDA events: %s\n", why);
	d->cupti = g.cupti;
	g.ready = true;
	*info = *d;
	return KF_OK;
}

static struct func *find_func(const char *name)
{
	for (size_t i = 0; i < g.n_funcs; i++)
		if (strcmp(g.funcs[i].name, name) == 0)
			return &g.funcs[i];
	return NULL;
}

static enum kf_status cuda_load(const uint8_t *image, size_t image_len, int fd, const char *const *kernels,
				size_t n_kernels, char *msg, size_t msg_len)
{
	(void)fd;
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	if (!image || image_len == 0) {
		set_msg(msg, msg_len, "empty module image");
		return KF_ERR_INVALID;
	}
	/* library calls ("@cublas.gemm") are no kernels of the module; a plan of nothing else has no
	 * module at all (its image only names the calls) */
	const char *names[MAX_FUNCS];
	size_t n_names = 0;
	for (size_t i = 0; i < n_kernels && n_names < MAX_FUNCS; i++)
		if (!kf_culib_is_call(kernels[i]))
			names[n_names++] = kernels[i];
	if (n_kernels > MAX_FUNCS) {
		set_msg(msg, msg_len, "%zu kernels in one module; at most %d", n_kernels, MAX_FUNCS);
		return KF_ERR_INVALID;
	}
	kernels = names;
	n_kernels = n_names;
	if (g.mod) {
		kf_cu.module_unload(g.mod);
		g.mod = NULL;
		g.n_funcs = 0;
	}
	if (!n_kernels) {
		kf_cupti_set_kernels(kernels, 0);
		return KF_OK;
	}
	CUresult r = kf_cu.module_load_data(&g.mod, image);
	if (r != CUDA_SUCCESS) {
		g.mod = NULL;
		char d[192];
		describe(r, d, sizeof(d));
		set_msg(msg, msg_len, "cannot load the module (%zu bytes) on '%s' (%s): %s", image_len,
			g.info.name, g.info.arch, d);
		if (kf_cu_error_sticky(r)) {
			g.broken = true;
			snprintf(g.broken_msg, sizeof(g.broken_msg), "module load: %s", d);
			return KF_ERR_RUNTIME;
		}
		return KF_ERR_INVALID;
	}
	for (size_t i = 0; i < n_kernels; i++) {
		struct func *f = &g.funcs[i];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", kernels[i]);
		r = kf_cu.module_get_function(&f->fn, g.mod, kernels[i]);
		if (r != CUDA_SUCCESS) {
			set_msg(msg, msg_len, "kernel '%s' is not in the module (%s)", kernels[i],
				kf_cu_error_name(r));
			g.n_funcs = 0;
			return KF_ERR_INVALID;
		}
		kf_cu.func_get_attribute(&f->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f->fn);
		kf_cu.func_get_attribute(&f->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f->fn);
		kf_cu.func_get_attribute(&f->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->fn);
	}
	g.n_funcs = n_kernels;
	kf_cupti_set_kernels(kernels, n_kernels);
	return KF_OK;
}

static enum kf_status cuda_alloc(size_t n_bytes, uint64_t *dptr, char *msg, size_t msg_len)
{
	enum kf_status st;
	*dptr = 0;
	if (!check_usable(msg, msg_len, &st))
		return st;
	CUdeviceptr p = 0;
	/* cuMemAlloc rejects 0 bytes; a 0-element buffer still needs a distinct address */
	CUresult r = kf_cu.mem_alloc(&p, n_bytes ? n_bytes : 256);
	if (r != CUDA_SUCCESS) {
		char what[96];
		snprintf(what, sizeof(what), "cuMemAlloc of %zu bytes", n_bytes);
		return fail_cu(r, what, msg, msg_len);
	}
	*dptr = (uint64_t)p;
	return KF_OK;
}

static void cuda_free(uint64_t dptr)
{
	if (g.ready && !g.broken && dptr)
		kf_cu.mem_free((CUdeviceptr)dptr);
}

static enum kf_status cuda_htod(uint64_t dst, const void *src, size_t n, char *msg, size_t msg_len)
{
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	if (n == 0)
		return KF_OK;
	CUresult r = kf_cu.memcpy_htod((CUdeviceptr)dst, src, n);
	return r == CUDA_SUCCESS ? KF_OK : fail_cu(r, "cuMemcpyHtoD", msg, msg_len);
}

static enum kf_status cuda_dtoh(void *dst, uint64_t src, size_t n, char *msg, size_t msg_len)
{
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	if (n == 0)
		return KF_OK;
	CUresult r = kf_cu.memcpy_dtoh(dst, (CUdeviceptr)src, n);
	return r == CUDA_SUCCESS ? KF_OK : fail_cu(r, "cuMemcpyDtoH", msg, msg_len);
}

static enum kf_status cuda_fill32(uint64_t dst, uint32_t pattern, size_t n_bytes, char *msg, size_t msg_len)
{
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	if ((dst % 4) || (n_bytes % 4)) {
		/* the engine hands over whole aligned words only (backend.h contract of its caller) */
		set_msg(msg, msg_len, "fill32 needs 4-byte alignment (address 0x%llx, %zu bytes)",
			(unsigned long long)dst, n_bytes);
		return KF_ERR_INVALID;
	}
	if (n_bytes == 0)
		return KF_OK;
	CUresult r = kf_cu.memset_d32((CUdeviceptr)dst, pattern, n_bytes / 4);
	return r == CUDA_SUCCESS ? KF_OK : fail_cu(r, "cuMemsetD32", msg, msg_len);
}

static enum kf_status cuda_flush_l2(char *msg, size_t msg_len)
{
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	if (!g.flush_buf) {
		/* at least twice the L2 (docs/spec/verification.md), never under 8 MiB (an L2 read as 0) */
		size_t n = 2 * (size_t)g.info.l2_bytes;
		if (n < (8u << 20))
			n = 8u << 20;
		CUresult r = kf_cu.mem_alloc(&g.flush_buf, n);
		if (r != CUDA_SUCCESS) {
			g.flush_buf = 0;
			return fail_cu(r, "cuMemAlloc of the L2 flush buffer", msg, msg_len);
		}
		g.flush_bytes = n;
	}
	/* a different value each time so no layer can skip a write of what is already there */
	CUresult r =
	    kf_cu.memset_d32_async(g.flush_buf, 0x9e3779b9u * ++g.flush_round, g.flush_bytes / 4, g.stream);
	return r == CUDA_SUCCESS ? KF_OK : fail_cu(r, "cuMemsetD32Async (L2 flush)", msg, msg_len);
}

enum kf_status kf_cuda_launch_check(const struct kf_be_launch *L, const struct kf_device_info *d,
				    int regs_per_block, const struct kf_cuda_func_limits *f, char *msg,
				    size_t msg_len)
{
	for (int k = 0; k < 3; k++) {
		if (L->grid[k] == 0 || (int64_t)L->grid[k] > (int64_t)d->max_grid[k]) {
			set_msg(msg, msg_len, "line %d: grid %c = %u is outside 1..%d on '%s'", L->line,
				"xyz"[k], L -> grid[k], d -> max_grid[k], d -> name);
			return KF_ERR_INVALID;
		}
		if (L->block[k] == 0 || (int64_t)L->block[k] > (int64_t)d->max_block[k]) {
			set_msg(msg, msg_len, "line %d: block %c = %u is outside 1..%d on '%s'", L->line,
				"xyz"[k], L -> block[k], d -> max_block[k], d -> name);
			return KF_ERR_INVALID;
		}
	}
	uint64_t threads = (uint64_t)L->block[0] * L->block[1] * L->block[2];
	if (threads > (uint64_t)d->max_threads_per_block) {
		set_msg(msg, msg_len, "line %d: a block of %llu threads; '%s' allows %d", L->line,
			(unsigned long long)threads, d->name, d->max_threads_per_block);
		return KF_ERR_INVALID;
	}
	/* registers: each warp takes regs x 32 rounded up to 256 registers; the block must fit the file */
	uint64_t warps = (threads + 31) / 32;
	uint64_t regs_per_warp = ((uint64_t)f->regs * 32 + 255) / 256 * 256;
	if (regs_per_block > 0 && warps * regs_per_warp > (uint64_t)regs_per_block) {
		set_msg(msg, msg_len,
			"line %d: kernel '%s' uses %d registers per thread; a block of %llu threads needs "
			"%llu of the "
			"%d registers per block",
			L->line, L->kernel, f->regs, (unsigned long long)threads,
			(unsigned long long)warps * regs_per_warp, regs_per_block);
		return KF_ERR_INVALID;
	}
	if (f->max_threads > 0 && threads > (uint64_t)f->max_threads) {
		set_msg(msg, msg_len,
			"line %d: kernel '%s' can launch at most %d threads per block (%d registers per "
			"thread), not %llu",
			L->line, L->kernel, f->max_threads, f->regs, (unsigned long long)threads);
		return KF_ERR_INVALID;
	}
	uint64_t smem = (uint64_t)f->static_smem + L->smem_bytes;
	if (smem > (uint64_t)d->max_smem_per_block_optin) {
		set_msg(msg, msg_len,
			"line %d: kernel '%s' needs %llu bytes of shared memory (%d static + %u dynamic); "
			"'%s' allows "
			"%d per block",
			L->line, L->kernel, (unsigned long long)smem, f->static_smem, L->smem_bytes, d->name,
			d->max_smem_per_block_optin);
		return KF_ERR_INVALID;
	}
	return KF_OK;
}

/* Checks one launch against the device's and the function's limits, then opts the function in to the
 * dynamic shared memory it asks for past the default budget. */
static enum kf_status check_launch(const struct kf_be_launch *L, size_t i, struct func *f, char *msg,
				   size_t msg_len)
{
	const struct kf_device_info *d = &g.info;
	struct kf_cuda_func_limits lim = {f->regs, f->static_smem, f->max_threads};
	enum kf_status st = kf_cuda_launch_check(L, d, g.regs_per_block, &lim, msg, msg_len);
	uint64_t smem = (uint64_t)f->static_smem + L->smem_bytes;
	if (st)
		return st;
	/* Dynamic shared memory past the default 48 KiB budget needs the function's opt-in attribute. */
	if (smem > (uint64_t)d->max_smem_per_block && f->dyn_smem_set < (int)L->smem_bytes) {
		CUresult r = kf_cu.func_set_attribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						      (int)L->smem_bytes);
		if (r != CUDA_SUCCESS) {
			set_msg(msg, msg_len,
				"line %d: cannot allow %u bytes of dynamic shared memory for '%s': %s",
				L->line, L->smem_bytes, L->kernel, kf_cu_error_name(r));
			return KF_ERR_INVALID;
		}
		f->dyn_smem_set = (int)L->smem_bytes;
	}
	(void)i;
	return KF_OK;
}

static enum kf_status cuda_run(const struct kf_be_launch *launches, size_t n, bool want_time,
			       struct kf_be_run_stats *stats, bool *fatal, char *msg, size_t msg_len)
{
	enum kf_status st;
	memset(stats, 0, sizeof(*stats));
	*fatal = false;
	if (!check_usable(msg, msg_len, &st)) {
		*fatal = g.broken;
		return st;
	}
	struct func *fs[64];
	if (n == 0 || n > KF_ARRAY_SIZE(fs)) {
		set_msg(msg, msg_len, "a plan of %zu launches", n);
		return KF_ERR_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		if (kf_culib_is_call(launches[i].kernel)) {
			fs[i] = NULL; /* prepared at setup: kf_culib_run */
			continue;
		}
		fs[i] = find_func(launches[i].kernel);
		if (!fs[i]) {
			set_msg(msg, msg_len, "line %d: kernel '%s' was not loaded", launches[i].line,
				launches[i].kernel);
			return KF_ERR_INVALID;
		}
		st = check_launch(&launches[i], i, fs[i], msg, msg_len);
		if (st != KF_OK)
			return st;
	}

	bool use_cupti = want_time && g.cupti;
	if (use_cupti)
		kf_cupti_reset();
	CUresult r = CUDA_SUCCESS;
	if (want_time)
		r = kf_cu.event_record(g.ev_start, g.stream);
	if (r != CUDA_SUCCESS)
		goto launch_fail_nolaunch;
	for (size_t i = 0; i < n; i++) {
		const struct kf_be_launch *L = &launches[i];
		if (!fs[i]) {
			/* a library call: enqueued on g.stream like a kernel, timed with the plan */
			st = kf_culib_run(i, L->args, msg, msg_len);
			if (st != KF_OK)
				return st;
			continue;
		}
		r = kf_cu.launch_kernel(fs[i]->fn, L->grid[0], L->grid[1], L->grid[2], L->block[0],
					L->block[1], L->block[2], L->smem_bytes, g.stream, L->args, NULL);
		if (r != CUDA_SUCCESS) {
			char d[192];
			describe(r, d, sizeof(d));
			set_msg(msg, msg_len, "%s in launch %zu (kernel '%s', line %d)", d, i + 1, L->kernel,
				L->line);
			if (kf_cu_error_sticky(r)) {
				g.broken = true;
				snprintf(g.broken_msg, sizeof(g.broken_msg), "%s", d);
				*fatal = true;
				return KF_ERR_RUNTIME;
			}
			/* too many resources, a bad value: the configuration, not the kernel's execution */
			if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || r == CUDA_ERROR_INVALID_VALUE ||
			    r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
				return KF_ERR_INVALID;
			return KF_ERR_RUNTIME;
		}
	}
	if (want_time)
		r = kf_cu.event_record(g.ev_end, g.stream);
	if (r == CUDA_SUCCESS)
		r = kf_cu.stream_synchronize(g.stream);
	if (r != CUDA_SUCCESS) {
		/* An error seen at synchronization is an asynchronous fault of some kernel of the plan: the
		 * context is not to be trusted afterwards, whatever the code. */
		char d[192];
		describe(r, d, sizeof(d));
		if (n == 1)
			set_msg(msg, msg_len, "%s in launch 1 (kernel '%s', line %d)", d, launches[0].kernel,
				launches[0].line);
		else
			set_msg(msg, msg_len,
				"%s while running launches 1..%zu (kernels '%s'..'%s', lines %d..%d)", d, n,
				launches[0].kernel, launches[n - 1].kernel, launches[0].line,
				launches[n - 1].line);
		g.broken = true;
		snprintf(g.broken_msg, sizeof(g.broken_msg), "%s", d);
		*fatal = true;
		return r == CUDA_ERROR_LAUNCH_TIMEOUT ? KF_ERR_TIMEOUT : KF_ERR_RUNTIME;
	}
	if (!want_time)
		return KF_OK;

	char why[160] = "";
	if (use_cupti) {
		double t = 0;
		uint32_t seen = 0;
		if (kf_cupti_collect(&t, &seen, why, sizeof(why)) && t > 0) {
			stats->time_ns = t;
			stats->kernels_seen = seen;
			snprintf(stats->timing_source, sizeof(stats->timing_source), "cupti");
			return KF_OK;
		}
		/* the events were recorded anyway; say once why CUPTI's answer was not used */
		fprintf(stderr, "kforge-worker: this run timed with CUDA events: %s\n", why);
	}
	float ms = 0;
	r = kf_cu.event_elapsed_time(&ms, g.ev_start, g.ev_end);
	if (r != CUDA_SUCCESS)
		return fail_cu(r, "cuEventElapsedTime", msg, msg_len);
	stats->time_ns = (double)ms * 1e6;
	stats->kernels_seen = 0;
	snprintf(stats->timing_source, sizeof(stats->timing_source), "events");
	return KF_OK;

launch_fail_nolaunch:
	return fail_cu(r, "cuEventRecord", msg, msg_len);
}

/* Prepares the plan's library calls (sandbox/cuda/library.c) on the backend's stream. */
static enum kf_status cuda_prepare(const struct kf_be_launch *launches, size_t n, char *msg, size_t msg_len)
{
	enum kf_status st;
	if (!check_usable(msg, msg_len, &st))
		return st;
	for (size_t i = 0; i < n; i++)
		if (kf_culib_is_call(launches[i].kernel) &&
		    (st = kf_culib_prepare(i, &launches[i], g.stream, msg, msg_len)))
			return st;
	return KF_OK;
}

static void cuda_shutdown(void)
{
	if (!g.ready)
		return;
	kf_culib_release(!g.broken);
	if (!g.broken) {
		kf_cupti_stop();
		if (g.flush_buf)
			kf_cu.mem_free(g.flush_buf);
		if (g.mod)
			kf_cu.module_unload(g.mod);
		kf_cu.event_destroy(g.ev_start);
		kf_cu.event_destroy(g.ev_end);
		kf_cu.stream_destroy(g.stream);
		kf_cu.primary_ctx_release(g.dev);
	}
	/* A broken context is left to the process exit: every call on it would fail anyway. */
	memset(&g, 0, sizeof(g));
}

CUcontext kf_cuda_context(int *device_ordinal)
{
	if (device_ordinal)
		*device_ordinal = g.ready ? (int)g.dev : -1;
	return g.ready ? g.ctx : NULL;
}

const struct kf_backend_ops kf_backend_cuda = {
    .name = "cuda",
    .init = cuda_init,
    .load = cuda_load,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .htod = cuda_htod,
    .dtoh = cuda_dtoh,
    .fill32 = cuda_fill32,
    .run = cuda_run,
    .prepare = cuda_prepare,
    .flush_l2 = cuda_flush_l2,
    .shutdown = cuda_shutdown,
};
