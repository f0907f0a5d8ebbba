/* The cpu backend inside kforge-worker: loads a kernel shared object built by kf_cpu_compile (the fiber
 * runtime is inside it, see sandbox/cpu/shim/kf_rt_abi.h), and runs launch plans with cuLaunchKernel's
 * `void **args` convention. Device memory is 256-byte aligned host memory; times are CPU wall times. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../worker/backend.h"
#include "../shim/kf_rt_abi.h"

#define CPU_MAX_KERNELS 64
#define CPU_ALIGN 256

static struct {
	void *so;
	kf_rt_launch_fn launch;
	kf_rt_configure_fn configure;
	kf_rt_shutdown_fn shutdown;
	kf_rt_set_poison_fn set_poison;
	/* an instrumented module's sanitizer (NULL for a plain one) */
	kf_san_configure_fn san_configure;
	kf_san_take_fn san_take;
	kf_san_host_write_fn san_host_write;
	/* its cost counters (NULL: none, or of another ABI version) */
	kf_cost_configure_fn cost_configure;
	kf_cost_take_fn cost_take;
	bool cost_on;
	size_t n_kernels;
	char names[CPU_MAX_KERNELS][128];
	kf_rt_entry_fn entries[CPU_MAX_KERNELS];
	uint64_t shuffle_seed;
	bool sanitize;
	const char *test_entry; /* kforge sandbox test-module: entries are plain `int f(void)` */
	struct kf_device_info info;
} cpu;

/* ---- block threads made before the syscall filter, lent to the module's runtime ---------------- */

#define POOL_MAX 255

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n;
	struct {
		void *(*fn)(void *);
		void *arg;
	} job[POOL_MAX];
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {{0, 0}}};

static void *pool_main(void *slot)
{
	int i = (int)(intptr_t)slot;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		while (!pool.job[i].fn)
			pthread_cond_wait(&pool.cv, &pool.mu);
		void *(*fn)(void *) = pool.job[i].fn;
		void *arg = pool.job[i].arg;
		pthread_mutex_unlock(&pool.mu);
		fn(arg);
		pthread_mutex_lock(&pool.mu);
		pool.job[i].fn = NULL;
	}
	return NULL;
}

static int pool_spawn(void *(*fn)(void *), void *arg, void *ctx)
{
	int got = -1;
	(void)ctx;
	pthread_mutex_lock(&pool.mu);
	for (int i = 0; i < pool.n && got < 0; i++)
		if (!pool.job[i].fn) {
			pool.job[i].fn = fn;
			pool.job[i].arg = arg;
			got = i;
		}
	if (got >= 0)
		pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.mu);
	return got >= 0 ? 0 : -1;
}

/* One helper per CPU besides the launching thread, as the runtime would make for itself. */
static enum kf_status cpu_before_filter(char *msg, size_t msg_len)
{
	int want = cpu.info.sm_count - 1;
	pthread_attr_t at;
	if (want > POOL_MAX)
		want = POOL_MAX;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, (size_t)2 << 20);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < want; i++) {
		pthread_t t;
		int e = pthread_create(&t, &at, pool_main, (void *)(intptr_t)i);
		if (e != 0) {
			pthread_attr_destroy(&at);
			snprintf(msg, msg_len, "cannot create the block threads: %s", strerror(e));
			return KF_ERR_UNAVAILABLE;
		}
		pool.n = i + 1;
	}
	pthread_attr_destroy(&at);
	return KF_OK;
}

static void cpu_model(char *out, size_t n)
{
	snprintf(out, n, "host CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *c = strchr(line, ':');
		if (!c)
			break;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		size_t l = strcspn(c, "\n");
		snprintf(out, n, "%.*s", (int)l, c);
		break;
	}
	fclose(f);
}

static enum kf_status cpu_init(const struct kf_worker_opts *opts, struct kf_device_info *info, char *msg,
			       size_t msg_len)
{
	memset(&cpu, 0, sizeof(cpu));
	cpu.shuffle_seed = opts ? opts->shuffle_seed : 0;
	cpu.test_entry = opts ? opts->test_entry : NULL;
	cpu.sanitize = opts && opts->sanitize;
	if (cpu.sanitize && !dlsym(RTLD_DEFAULT, "__asan_init")) {
		snprintf(msg, msg_len,
			 "a sanitized cpu module needs AddressSanitizer's runtime preloaded "
			 "(LD_PRELOAD of libasan into the worker)");
		return KF_ERR_UNAVAILABLE;
	}
	struct kf_device_info *d = &cpu.info;
	snprintf(d->backend, sizeof(d->backend), "cpu");
	cpu_model(d->name, sizeof(d->name));
	snprintf(d->arch, sizeof(d->arch), "host");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	d->sm_count = ncpu > 0 ? (int)ncpu : 1;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	d->global_mem_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
	if (opts && opts->host_mem_bytes && opts->host_mem_bytes < d->global_mem_bytes)
		d->global_mem_bytes = opts->host_mem_bytes;
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	d->l2_bytes = l2 > 0 ? (uint64_t)l2 : 0;
	d->max_threads_per_block = 1024;
	d->max_block[0] = 1024;
	d->max_block[1] = 1024;
	d->max_block[2] = 64;
	d->max_grid[0] = 2147483647;
	d->max_grid[1] = 65535;
	d->max_grid[2] = 65535;
	d->max_smem_per_block = 48 * 1024;
	d->max_smem_per_block_optin = KF_RT_DSMEM_MAX;
	*info = *d;
	return KF_OK;
}

static enum kf_status cpu_load(const uint8_t *image, size_t image_len, int fd, const char *const *kernels,
			       size_t n_kernels, char *msg, size_t msg_len)
{
	(void)image;
	(void)image_len;
	if (cpu.so) {
		snprintf(msg, msg_len, "a module is already loaded");
		return KF_ERR_INVALID;
	}
	if (n_kernels > CPU_MAX_KERNELS) {
		snprintf(msg, msg_len, "too many kernels (%zu, at most %d)", n_kernels, CPU_MAX_KERNELS);
		return KF_ERR_INVALID;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* The module's constructors run here, inside the sandbox. */
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		const char *e = dlerror();
		snprintf(msg, msg_len, "cannot load the cpu module: %s", e ? e : "unknown error");
		return KF_ERR_INVALID;
	}
	if (cpu.test_entry) {
		/* Any shared object: each kernel name is a plain symbol. */
		for (size_t i = 0; i < n_kernels; i++) {
			kf_rt_entry_fn fn = (kf_rt_entry_fn)dlsym(so, kernels[i]);
			if (!fn || strlen(kernels[i]) >= sizeof(cpu.names[0])) {
				snprintf(msg, msg_len, "the module has no symbol '%s'", kernels[i]);
				dlclose(so);
				return KF_ERR_INVALID;
			}
			snprintf(cpu.names[i], sizeof(cpu.names[i]), "%s", kernels[i]);
			cpu.entries[i] = fn;
		}
		cpu.n_kernels = n_kernels;
		cpu.so = so;
		return KF_OK;
	}
	kf_rt_abi_version_fn ver = (kf_rt_abi_version_fn)dlsym(so, "kf_rt_abi_version");
	cpu.launch = (kf_rt_launch_fn)dlsym(so, "kf_rt_launch");
	cpu.configure = (kf_rt_configure_fn)dlsym(so, "kf_rt_configure");
	cpu.shutdown = (kf_rt_shutdown_fn)dlsym(so, "kf_rt_shutdown");
	cpu.set_poison = (kf_rt_set_poison_fn)dlsym(so, "kf_rt_set_poison");
	if (!ver || !cpu.launch || !cpu.configure || !cpu.shutdown || !cpu.set_poison ||
	    ver() != KF_RT_ABI_VERSION) {
		snprintf(msg, msg_len, "the module is not a kforge cpu module of ABI version %d",
			 KF_RT_ABI_VERSION);
		dlclose(so);
		return KF_ERR_INVALID;
	}
	kf_san_abi_version_fn san_ver = (kf_san_abi_version_fn)dlsym(so, "kf_san_abi_version");
	if (san_ver) {
		cpu.san_configure = (kf_san_configure_fn)dlsym(so, "kf_san_configure");
		cpu.san_take = (kf_san_take_fn)dlsym(so, "kf_san_take");
		cpu.san_host_write = (kf_san_host_write_fn)dlsym(so, "kf_san_host_write");
		if (san_ver() != KF_RT_SAN_ABI_VERSION || !cpu.san_configure || !cpu.san_take ||
		    !cpu.san_host_write) {
			snprintf(msg, msg_len, "the module's sanitizer is not of ABI version %d",
				 KF_RT_SAN_ABI_VERSION);
			dlclose(so);
			return KF_ERR_INVALID;
		}
		/* optional: a module of an older runtime has none (a cost step is then UNSUPPORTED) */
		kf_cost_abi_version_fn cost_ver = (kf_cost_abi_version_fn)dlsym(so, "kf_cost_abi_version");
		if (cost_ver && cost_ver() == KF_RT_COST_ABI_VERSION) {
			cpu.cost_configure = (kf_cost_configure_fn)dlsym(so, "kf_cost_configure");
			cpu.cost_take = (kf_cost_take_fn)dlsym(so, "kf_cost_take");
			if (!cpu.cost_configure || !cpu.cost_take)
				cpu.cost_configure = NULL, cpu.cost_take = NULL;
		}
	}
	/* 128 KiB per fiber: a kernel's local arrays live on its fiber's stack (only touched pages are
	 * backed); AddressSanitizer's redzones need more. */
	struct kf_rt_config cfg = {.n_threads = pool.n ? pool.n + 1 : 0,
				   .shuffle_seed = cpu.shuffle_seed,
				   .stack_bytes = cpu.sanitize ? (size_t)256 << 10 : (size_t)128 << 10,
				   .spawn = pool.n ? pool_spawn : NULL,
				   .spawn_ctx = NULL};
	if (cpu.configure(&cfg) != KF_RT_OK) {
		snprintf(msg, msg_len, "the cpu module refused its configuration");
		dlclose(so);
		return KF_ERR_INVALID;
	}
	for (size_t i = 0; i < n_kernels; i++) {
		char sym[160];
		snprintf(sym, sizeof(sym), KF_RT_ENTRY_PREFIX "%s", kernels[i]);
		kf_rt_entry_fn fn = (kf_rt_entry_fn)dlsym(so, sym);
		if (!fn || strlen(kernels[i]) >= sizeof(cpu.names[0])) {
			snprintf(msg, msg_len,
				 "kernel '%s' is not an extern \"C\" __global__ function of the module",
				 kernels[i]);
			cpu.shutdown();
			dlclose(so);
			return KF_ERR_INVALID;
		}
		snprintf(cpu.names[i], sizeof(cpu.names[i]), "%s", kernels[i]);
		cpu.entries[i] = fn;
	}
	cpu.n_kernels = n_kernels;
	cpu.so = so;
	return KF_OK;
}

static enum kf_status cpu_alloc(size_t n_bytes, uint64_t *dptr, char *msg, size_t msg_len)
{
	size_t n = (n_bytes + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
	void *p = NULL;
	int e = posix_memalign(&p, CPU_ALIGN, n ? n : CPU_ALIGN);
	if (e != 0) {
		snprintf(msg, msg_len, "cannot allocate %zu bytes: %s", n_bytes, strerror(e));
		return KF_ERR_NOMEM;
	}
	*dptr = (uint64_t)(uintptr_t)p;
	return KF_OK;
}

static void cpu_free(uint64_t dptr)
{
	free((void *)(uintptr_t)dptr);
}

static enum kf_status cpu_htod(uint64_t dst, const void *src, size_t n, char *msg, size_t msg_len)
{
	(void)msg;
	(void)msg_len;
	memcpy((void *)(uintptr_t)dst, src, n);
	return KF_OK;
}

static enum kf_status cpu_dtoh(void *dst, uint64_t src, size_t n, char *msg, size_t msg_len)
{
	(void)msg;
	(void)msg_len;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return KF_OK;
}

static enum kf_status cpu_fill32(uint64_t dst, uint32_t pattern, size_t n_bytes, char *msg, size_t msg_len)
{
	(void)msg;
	(void)msg_len;
	unsigned char *p = (unsigned char *)(uintptr_t)dst;
	size_t i = 0;
	for (; i + 4 <= n_bytes; i += 4)
		memcpy(p + i, &pattern, 4);
	for (size_t k = 0; i < n_bytes; i++, k++)
		p[i] = (unsigned char)(pattern >> (8 * k));
	return KF_OK;
}

static enum kf_status check_launch(const struct kf_be_launch *l, size_t idx, char *msg, size_t msg_len)
{
	const struct kf_device_info *d = &cpu.info;
	uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	const char *why = NULL;
	for (int i = 0; i < 3 && !why; i++) {
		if (l->block[i] == 0 || l->block[i] > (uint32_t)d->max_block[i])
			why = "block dimension out of range";
		else if (l->grid[i] == 0 || l->grid[i] > (uint32_t)d->max_grid[i])
			why = "grid dimension out of range";
	}
	if (!why && threads > (uint64_t)d->max_threads_per_block)
		why = "more than 1024 threads per block";
	if (!why && l->smem_bytes > (uint32_t)d->max_smem_per_block_optin)
		why = "more dynamic shared memory than the device has";
	if (!why)
		return KF_OK;
	snprintf(msg, msg_len,
		 "launch %zu (kernel '%s', line %d): %s: grid=(%u,%u,%u) block=(%u,%u,%u) smem=%u", idx + 1,
		 l->kernel, l->line, why, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
		 l->block[2], l->smem_bytes);
	return KF_ERR_INVALID;
}

static enum kf_status cpu_run(const struct kf_be_launch *launches, size_t n, bool want_time,
			      struct kf_be_run_stats *stats, bool *fatal, char *msg, size_t msg_len)
{
	*fatal = false;
	if (!cpu.so) {
		snprintf(msg, msg_len, "no module loaded");
		return KF_ERR_INVALID;
	}
	kf_rt_entry_fn fns[KF_MAX_LAUNCHES];
	if (n > KF_MAX_LAUNCHES) {
		snprintf(msg, msg_len, "too many launches (%zu)", n);
		return KF_ERR_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		enum kf_status st = check_launch(&launches[i], i, msg, msg_len);
		if (st != KF_OK)
			return st;
		fns[i] = NULL;
		for (size_t k = 0; k < cpu.n_kernels; k++)
			if (!strcmp(cpu.names[k], launches[i].kernel))
				fns[i] = cpu.entries[k];
		if (!fns[i]) {
			snprintf(msg, msg_len, "launch %zu (line %d): kernel '%s' was not loaded", i + 1,
				 launches[i].line, launches[i].kernel);
			return KF_ERR_INVALID;
		}
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n && cpu.test_entry; i++) {
		int rc = ((int (*)(void))(void (*)(void))fns[i])();
		if (rc != 0) {
			snprintf(msg, msg_len, "'%s' returned %d", launches[i].kernel, rc);
			return KF_ERR_RUNTIME;
		}
	}
	for (size_t i = 0; i < n && !cpu.test_entry; i++) {
		const struct kf_be_launch *l = &launches[i];
		char why[512];
		int rc = cpu.launch(fns[i], l->grid, l->block, l->smem_bytes, l->args, why, sizeof(why));
		if (cpu.san_take && stats) {
			struct kf_rt_san_stats ss;
			struct kf_rt_san_finding fd;
			cpu.san_take(&fd, &ss);
			stats->san_accesses += ss.accesses;
			stats->san_untracked_bytes = ss.untracked_bytes;
			/* a finding stops the run; a note (a shuffle from an inactive lane) does not: the
			 * first one is kept */
			if (stats->san && fd.kind != KF_RT_SAN_NONE &&
			    (rc == KF_RT_SANITIZER || stats->san->kind == KF_RT_SAN_NONE)) {
				*stats->san = fd;
				stats->san->launch = stats->launch_base + (uint32_t)i;
			}
		}
		if (cpu.cost_on && stats && stats->cost) {
			cpu.cost_take(&stats->cost[i]);
			stats->n_cost = (uint32_t)i + 1;
		}
		if (rc != KF_RT_OK) {
			snprintf(msg, msg_len, "%s in launch %zu (kernel '%s', line %d)", why, i + 1,
				 l->kernel, l->line);
			return rc == KF_RT_INVALID ? KF_ERR_INVALID
			       : rc == KF_RT_NOMEM
				   ? KF_ERR_NOMEM
				   : KF_ERR_RUNTIME; /* a fault, a deadlock, a sanitizer finding */
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (stats) {
		stats->time_ns =
		    want_time ? (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec) : 0;
		stats->kernels_seen = (uint32_t)n;
		snprintf(stats->timing_source, sizeof(stats->timing_source), "cpu-wall");
	}
	return KF_OK;
}

/* Shared memory gets the step's poison at every block start, as outputs and scratch get it; an
 * instrumented module learns the buffers' exact bounds (inputs and inouts hold data from the start,
 * outputs and scratch only what the run writes). */
static enum kf_status cpu_begin_step(const struct kf_be_buffer *bufs, size_t n, uint32_t poison, char *msg,
				     size_t msg_len)
{
	if (!cpu.so) {
		snprintf(msg, msg_len, "no module loaded");
		return KF_ERR_INVALID;
	}
	if (cpu.test_entry) /* kforge sandbox test-module: any shared object, no runtime to configure */
		return KF_OK;
	cpu.set_poison(poison);
	if (!cpu.san_configure)
		return KF_OK;
	struct kf_rt_san_buffer sb[KF_MAX_BUFFERS];
	if (n > KF_MAX_BUFFERS) {
		snprintf(msg, msg_len, "too many buffers (%zu)", n);
		return KF_ERR_INVALID;
	}
	for (size_t i = 0; i < n; i++) {
		sb[i].data = bufs[i].data;
		sb[i].n_bytes = bufs[i].n_bytes;
		sb[i].lo = bufs[i].lo;
		sb[i].hi = bufs[i].hi;
		sb[i].initialized = bufs[i].role == KF_ROLE_INPUT || bufs[i].role == KF_ROLE_INOUT;
		sb[i].pad = 0;
	}
	int rc = cpu.san_configure(sb, n);
	if (rc != KF_RT_OK) {
		snprintf(msg, msg_len, "the sanitizer cannot shadow the buffers (%s)",
			 rc == KF_RT_NOMEM ? "out of memory" : "too many");
		return rc == KF_RT_NOMEM ? KF_ERR_NOMEM : KF_ERR_INVALID;
	}
	return KF_OK;
}

/* A kforge:zero between the run's launches: an instrumented module takes those bytes as written. */
static void cpu_host_wrote(uint64_t dst, size_t n_bytes)
{
	if (cpu.san_host_write)
		cpu.san_host_write(dst, n_bytes);
}

static enum kf_status cpu_cost_begin(const struct kf_rt_cost_config *c, char *msg, size_t msg_len)
{
	if (!cpu.so || cpu.test_entry || !cpu.cost_configure) {
		snprintf(msg, msg_len,
			 "the module has no cost counters (a cost step needs a module built instrumented by "
			 "this version of kforge)");
		return KF_ERR_UNSUPPORTED;
	}
	struct kf_rt_cost_config on = *c;
	on.enable = 1;
	int rc = cpu.cost_configure(&on);
	if (rc != KF_RT_OK) {
		snprintf(msg, msg_len, "the module refused the cost configuration (%s)",
			 rc == KF_RT_NOMEM ? "out of memory for the L2 model" : "invalid");
		return rc == KF_RT_NOMEM ? KF_ERR_NOMEM : KF_ERR_INVALID;
	}
	cpu.cost_on = true;
	return KF_OK;
}

static void cpu_cost_end(void)
{
	if (cpu.cost_on && cpu.cost_configure) {
		struct kf_rt_cost_config off = {.enable = 0};
		cpu.cost_configure(&off);
	}
	cpu.cost_on = false;
}

static void cpu_shutdown(void)
{
	if (cpu.so) {
		if (cpu.shutdown)
			cpu.shutdown();
		dlclose(cpu.so);
	}
	cpu.so = NULL;
}

/* flush_l2 is NULL: host caches are not flushed before timed runs (cpu times are labelled as such). */
const struct kf_backend_ops kf_backend_cpu = {
    .name = "cpu",
    .init = cpu_init,
    .load = cpu_load,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .htod = cpu_htod,
    .dtoh = cpu_dtoh,
    .fill32 = cpu_fill32,
    .run = cpu_run,
    .begin_step = cpu_begin_step,
    .host_wrote = cpu_host_wrote,
    .flush_l2 = NULL,
    .cost_begin = cpu_cost_begin,
    .cost_end = cpu_cost_end,
    .shutdown = cpu_shutdown,
    .before_filter = cpu_before_filter,
};
