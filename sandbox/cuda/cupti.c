/* Kernel timing from CUPTI activity records (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: the GPU's own start
 * and end timestamps of each kernel, without serializing kernels). libcupti is dlopen'ed; when it is
 * missing or refuses (no driver, no permission), the backend times with CUDA events instead.
 *
 * A plan's time is the length of the UNION of its kernels' [start, end) intervals:
 *  - not the sum of durations, which would count twice any kernels that overlap (device-launched child
 *    kernels run inside their parent), and
 *  - not last end - first start, which would add the idle gaps between the launches of a multi-kernel
 *    plan: those are the harness's launch latency, not the candidate's work, and would make a two-pass
 *    kernel look slower than its GPU time by a few microseconds per launch.
 * The union is the time the GPU spent executing the candidate's kernels. */
#include "cuda_int.h"

#include <cupti_activity.h>
#include <cupti_result.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUptiResult (*fn_register_t)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*fn_kind_t)(CUpti_ActivityKind);
typedef CUptiResult (*fn_flush_t)(uint32_t);
typedef CUptiResult (*fn_next_t)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*fn_dropped_t)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*fn_result_string_t)(CUptiResult, const char **);

static struct {
	void *lib;
	fn_register_t register_callbacks;
	fn_kind_t enable, disable;
	fn_flush_t flush_all;
	fn_next_t get_next_record;
	fn_dropped_t get_num_dropped;
	fn_result_string_t result_string;
	bool on;
} cp;

/* Records of the current run, filled by the buffer-completed callback (which CUPTI may call from its
 * own thread, hence the lock). */
#define MAX_RECORDS 4096
#define BUF_BYTES (1u << 20) /* one activity buffer: ~3,000 kernel records */
#define MAX_NAMES 64

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rec_start[MAX_RECORDS], rec_end[MAX_RECORDS];
static size_t n_rec;
static uint32_t n_ours;  /* records whose kernel name is one of the module's */
static size_t n_lost;    /* records past MAX_RECORDS */
static size_t n_dropped; /* records CUPTI itself dropped */
static char names[MAX_NAMES][128];
static size_t n_names;

static const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;
	if (cp.result_string && cp.result_string(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_num_records)
{
	/* CUPTI wants 8-byte alignment; aligned_alloc gives more. */
	*buffer = aligned_alloc(8, BUF_BYTES);
	*size = *buffer ? BUF_BYTES : 0;
	*max_num_records = 0; /* as many as fit */
}

static bool is_our_kernel(const char *name)
{
	if (!name)
		return false;
	for (size_t i = 0; i < n_names; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
				      size_t valid_size)
{
	CUpti_Activity *rec = NULL;
	pthread_mutex_lock(&rec_lock);
	while (valid_size > 0 && cp.get_next_record(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		if (n_rec < MAX_RECORDS) {
			rec_start[n_rec] = k->start;
			rec_end[n_rec] = k->end;
			n_rec++;
		} else {
			n_lost++;
		}
		if (is_our_kernel(k->name))
			n_ours++;
	}
	size_t dropped = 0;
	if (cp.get_num_dropped && cp.get_num_dropped(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
		n_dropped += dropped;
	pthread_mutex_unlock(&rec_lock);
	free(buffer);
}

void *kf_cupti_dlopen(char *why, size_t why_len)
{
	const char *home = getenv("CUDA_HOME");
	char paths[6][512];
	size_t n = 0;
	snprintf(paths[n++], sizeof(paths[0]), "libcupti.so.13");
	if (home && *home) {
		snprintf(paths[n++], sizeof(paths[0]), "%s/extras/CUPTI/lib64/libcupti.so.13", home);
		snprintf(paths[n++], sizeof(paths[0]), "%s/lib64/libcupti.so.13", home);
	}
	snprintf(paths[n++], sizeof(paths[0]), "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
	snprintf(paths[n++], sizeof(paths[0]), "/usr/local/cuda/lib64/libcupti.so.13");
	const char *first_err = NULL;
	char first[256] = "";
	for (size_t i = 0; i < n; i++) {
		void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
		if (!first_err) {
			first_err = dlerror();
			snprintf(first, sizeof(first), "%s", first_err ? first_err : paths[i]);
		}
	}
	snprintf(why, why_len, "no CUPTI: %s", first);
	return NULL;
}

#define SYM(field, name)                                                                                     \
	do {                                                                                                 \
		void *p_ = dlsym(cp.lib, name);                                                              \
		if (!p_) {                                                                                   \
			snprintf(why, why_len, "libcupti has no '%s'", name);                                \
			goto fail;                                                                           \
		}                                                                                            \
		memcpy(&cp.field, &p_, sizeof(p_));                                                          \
	} while (0)

bool kf_cupti_start(char *why, size_t why_len)
{
	const char *env = getenv("KFORGE_CUPTI");
	if (env && strcmp(env, "0") == 0) {
		snprintf(why, why_len, "CUPTI disabled by KFORGE_CUPTI=0");
		return false;
	}
	if (cp.on)
		return true;
	cp.lib = kf_cupti_dlopen(why, why_len);
	if (!cp.lib)
		return false;
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(enable, "cuptiActivityEnable");
	SYM(disable, "cuptiActivityDisable");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(get_next_record, "cuptiActivityGetNextRecord");
	SYM(get_num_dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(result_string, "cuptiGetResultString");
	CUptiResult r = cp.register_callbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_len, "cuptiActivityRegisterCallbacks failed: %s", cupti_err(r));
		goto fail;
	}
	r = cp.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_len, "cuptiActivityEnable(CONCURRENT_KERNEL) failed: %s", cupti_err(r));
		goto fail;
	}
	cp.on = true;
	return true;
fail:
	/* CUPTI stays loaded (unloading it after registering callbacks is not safe); it is just unused. */
	cp.on = false;
	return false;
}

void kf_cupti_set_kernels(const char *const *kernel_names, size_t n)
{
	pthread_mutex_lock(&rec_lock);
	n_names = 0;
	for (size_t i = 0; i < n && n_names < MAX_NAMES; i++)
		snprintf(names[n_names++], sizeof(names[0]), "%s", kernel_names[i]);
	pthread_mutex_unlock(&rec_lock);
}

void kf_cupti_reset(void)
{
	if (cp.on)
		cp.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* anything earlier is not this run's */
	pthread_mutex_lock(&rec_lock);
	n_rec = 0;
	n_ours = 0;
	n_lost = 0;
	n_dropped = 0;
	pthread_mutex_unlock(&rec_lock);
}

static int cmp_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

uint64_t kf_cupti_union_ns(uint64_t *start, uint64_t *end, size_t n)
{
	if (n == 0)
		return 0;
	uint64_t(*iv)[2] = malloc(n * sizeof(*iv));
	if (!iv)
		return 0;
	for (size_t i = 0; i < n; i++) {
		iv[i][0] = start[i];
		iv[i][1] = end[i] > start[i] ? end[i] : start[i];
	}
	qsort(iv, n, sizeof(*iv), cmp_start);
	uint64_t total = 0, cur_s = iv[0][0], cur_e = iv[0][1];
	for (size_t i = 1; i < n; i++) {
		if (iv[i][0] <= cur_e) {
			if (iv[i][1] > cur_e)
				cur_e = iv[i][1];
		} else {
			total += cur_e - cur_s;
			cur_s = iv[i][0];
			cur_e = iv[i][1];
		}
	}
	total += cur_e - cur_s;
	for (size_t i = 0; i < n; i++) {
		start[i] = iv[i][0];
		end[i] = iv[i][1];
	}
	free(iv);
	return total;
}

bool kf_cupti_collect(double *time_ns, uint32_t *kernels_seen, char *why, size_t why_len)
{
	*time_ns = 0;
	*kernels_seen = 0;
	if (!cp.on) {
		snprintf(why, why_len, "CUPTI is not active");
		return false;
	}
	CUptiResult r = cp.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS) {
		snprintf(why, why_len, "cuptiActivityFlushAll failed: %s", cupti_err(r));
		return false;
	}
	pthread_mutex_lock(&rec_lock);
	bool ok = true;
	if (n_dropped || n_lost) {
		snprintf(why, why_len, "CUPTI lost %zu kernel records", n_dropped + n_lost);
		ok = false;
	} else if (n_rec == 0) {
		snprintf(why, why_len, "CUPTI recorded no kernel for this run");
		ok = false;
	} else {
		*time_ns = (double)kf_cupti_union_ns(rec_start, rec_end, n_rec);
		*kernels_seen = n_ours;
	}
	pthread_mutex_unlock(&rec_lock);
	return ok;
}

void kf_cupti_stop(void)
{
	if (!cp.on)
		return;
	cp.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cp.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cp.on = false;
}
