/* `kforge-worker --validate-metrics CHIP m1,m2,...`: the host side of CUPTI's range profiler, which needs
 * no GPU. Names are checked against kforge's allow-list first (an unknown name can crash inside NVIDIA's
 * library, and this runs in the sandboxed worker so such a crash is contained), then against the host
 * API for the chip; the config image is built and its pass count reported. C++ only because
 * cupti_profiler_host.h includes <string>: no STL, no exceptions, no new/delete, so the worker still
 * links with cc and needs no libstdc++. */
#include <cupti_profiler_host.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_int.h"
#include "metrics.h"

namespace
{

/* Metrics kforge asks for, each one checked against GH100 by tests/unit/test_cuda_metrics.c. Names
 * follow Nsight Compute's: unit__counter.rollup[.submetric]. */
const char *const allow_list[] = {
    "gpu__time_duration.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_elapsed.avg",
    "sm__cycles_elapsed.avg.per_second",
    "sm__cycles_active.avg",
    "sm__inst_executed.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__bytes.sum.per_second",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
};

const int max_metrics = 32;

typedef CUptiResult (*host_fn)(void *);

struct host_api {
	host_fn initialize, deinitialize, get_properties, add_metrics, image_size, get_image, num_passes;
	CUptiResult (*result_string)(CUptiResult, const char **);
};

bool allowed(const char *name)
{
	for (size_t i = 0; i < sizeof(allow_list) / sizeof(allow_list[0]); i++)
		if (strcmp(allow_list[i], name) == 0)
			return true;
	return false;
}

/* Chip names are short upper-case identifiers ("GH100", "GA100", "GB100"). */
bool chip_ok(const char *chip)
{
	size_t n = strlen(chip);
	if (n < 2 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((chip[i] >= 'A' && chip[i] <= 'Z') || (chip[i] >= '0' && chip[i] <= '9')))
			return false;
	return true;
}

const char *cupti_err(const host_api &api, CUptiResult r)
{
	const char *s = NULL;
	if (api.result_string && api.result_string(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

int reject(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int reject(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("valid=0\nreason=");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	return 1;
}

bool load_sym(void *lib, const char *name, host_fn *out)
{
	void *p = dlsym(lib, name);
	if (!p)
		return false;
	memcpy(out, &p, sizeof(p));
	return true;
}

} // namespace

extern "C" int kf_cuda_validate_metrics_main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: kforge-worker --validate-metrics CHIP metric[,metric...]\n");
		return 2;
	}
	const char *chip = argv[1];
	if (!chip_ok(chip))
		return reject("chip '%s' is not a chip name such as 'GH100'", chip);

	/* Split the list into a bounded array of names (pointers into a copy of the argument). */
	static char list[4096];
	const char *names[max_metrics];
	int n = 0;
	if (strlen(argv[2]) >= sizeof(list))
		return reject("metric list too long");
	snprintf(list, sizeof(list), "%s", argv[2]);
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max_metrics)
			return reject("more than %d metrics", max_metrics);
		if (!allowed(tok))
			return reject("metric '%s' is not in kforge's allow-list of metrics", tok);
		names[n++] = tok;
	}
	if (n == 0)
		return reject("no metric given");

#if defined(__SANITIZE_ADDRESS__)
	/* libcupti loads libnvperf_host.so with RTLD_DEEPBIND, which AddressSanitizer's runtime refuses
	 * (it aborts the process); a sanitized worker reports this mode unavailable instead. */
	printf("valid=0\nreason=the range profiler's host library cannot load under AddressSanitizer "
	       "(RTLD_DEEPBIND); "
	       "use a build without sanitizers\n");
	return 4;
#endif
	char why[512] = "";
	void *lib = kf_cupti_dlopen(why, sizeof(why));
	if (!lib) {
		printf("valid=0\nreason=%s\n", why);
		return 4;
	}
	host_api api;
	memset(&api, 0, sizeof(api));
	void *rs = dlsym(lib, "cuptiGetResultString");
	memcpy(&api.result_string, &rs, sizeof(rs));
	if (!load_sym(lib, "cuptiProfilerHostInitialize", &api.initialize) ||
	    !load_sym(lib, "cuptiProfilerHostDeinitialize", &api.deinitialize) ||
	    !load_sym(lib, "cuptiProfilerHostGetMetricProperties", &api.get_properties) ||
	    !load_sym(lib, "cuptiProfilerHostConfigAddMetrics", &api.add_metrics) ||
	    !load_sym(lib, "cuptiProfilerHostGetConfigImageSize", &api.image_size) ||
	    !load_sym(lib, "cuptiProfilerHostGetConfigImage", &api.get_image) ||
	    !load_sym(lib, "cuptiProfilerHostGetNumOfPasses", &api.num_passes)) {
		printf(
		    "valid=0\nreason=libcupti has no range-profiler host API (CUPTI 12.6 or later needed)\n");
		return 4;
	}

	CUpti_Profiler_Host_Initialize_Params ip;
	memset(&ip, 0, sizeof(ip));
	ip.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
	ip.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	ip.pChipName = chip;
	CUptiResult r = api.initialize(&ip);
	if (r != CUPTI_SUCCESS || !ip.pHostObject)
		return reject("CUPTI does not know chip '%s': %s", chip, cupti_err(api, r));

	int rc = 0;
	uint8_t *image = NULL;
	size_t image_bytes = 0, passes = 0;
	/* The host API's own check, one name at a time, so the reason names the metric. */
	for (int i = 0; i < n && rc == 0; i++) {
		CUpti_Profiler_Host_GetMetricProperties_Params pp;
		memset(&pp, 0, sizeof(pp));
		pp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
		pp.pHostObject = ip.pHostObject;
		pp.pMetricName = names[i];
		r = api.get_properties(&pp);
		if (r != CUPTI_SUCCESS)
			rc = reject("metric '%s' is not available for this chip: %s", names[i],
				    cupti_err(api, r));
	}
	if (rc == 0) {
		CUpti_Profiler_Host_ConfigAddMetrics_Params ap;
		memset(&ap, 0, sizeof(ap));
		ap.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
		ap.pHostObject = ip.pHostObject;
		ap.ppMetricNames = names;
		ap.numMetrics = (size_t)n;
		r = api.add_metrics(&ap);
		if (r != CUPTI_SUCCESS)
			rc = reject("cuptiProfilerHostConfigAddMetrics failed: %s", cupti_err(api, r));
	}
	if (rc == 0) {
		CUpti_Profiler_Host_GetConfigImageSize_Params sp;
		memset(&sp, 0, sizeof(sp));
		sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
		sp.pHostObject = ip.pHostObject;
		r = api.image_size(&sp);
		image_bytes = sp.configImageSize;
		if (r != CUPTI_SUCCESS || image_bytes == 0 || image_bytes > (64u << 20))
			rc = reject("cannot size the config image: %s", cupti_err(api, r));
	}
	if (rc == 0) {
		image = (uint8_t *)malloc(image_bytes);
		CUpti_Profiler_Host_GetConfigImage_Params gp;
		memset(&gp, 0, sizeof(gp));
		gp.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
		gp.pHostObject = ip.pHostObject;
		gp.configImageSize = image_bytes;
		gp.pConfigImage = image;
		r = image ? api.get_image(&gp) : CUPTI_ERROR_OUT_OF_MEMORY;
		if (r != CUPTI_SUCCESS)
			rc = reject("cannot build the config image: %s", cupti_err(api, r));
	}
	if (rc == 0) {
		CUpti_Profiler_Host_GetNumOfPasses_Params np;
		memset(&np, 0, sizeof(np));
		np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
		np.configImageSize = image_bytes;
		np.pConfigImage = image;
		r = api.num_passes(&np);
		passes = np.numOfPasses;
		if (r != CUPTI_SUCCESS || passes == 0)
			rc = reject("cannot count the passes: %s", cupti_err(api, r));
	}
	if (rc == 0)
		printf("valid=1\nchip=%s\nmetrics=%d\npasses=%zu\nconfig_image_bytes=%zu\n", chip, n, passes,
		       image_bytes);
	free(image);
	CUpti_Profiler_Host_Deinitialize_Params dp;
	memset(&dp, 0, sizeof(dp));
	dp.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
	dp.pHostObject = ip.pHostObject;
	api.deinitialize(&dp);
	fflush(stdout);
	return rc;
}

/* ---- collection on a GPU: CUPTI's range profiler ----------------------------------------------- */

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

namespace
{

struct target_api {
	host_fn prof_init, prof_deinit, chip_name, availability;
	host_fn rp_enable, rp_disable, rp_data_size, rp_data_init, rp_set_config, rp_start, rp_stop,
	    rp_decode, rp_data_info, evaluate;
};

/* Errors that mean "this machine does not let us read counters" (a skip, not a failure). */
bool counters_unavailable(CUptiResult r)
{
	return r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
	       r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED ||
	       r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES ||
	       r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED;
}

} // namespace

/* Returns 0 with values[range * n + metric] filled, 4 when counters are unavailable here (reason in
 * msg), 1 on any other failure. */
extern "C" int kf_cuda_metrics_collect(void *ctx, int device_index, const char *const *names, int n,
				       int (*run)(void *arg, char *msg, size_t msg_len), void *arg,
				       double *values, size_t max_ranges, size_t *n_ranges, char *msg,
				       size_t msg_len)
{
	*n_ranges = 0;
	if (n <= 0 || n > max_metrics || max_ranges == 0) {
		snprintf(msg, msg_len, "bad metric or range count");
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (!allowed(names[i])) {
			snprintf(msg, msg_len, "metric '%s' is not in kforge's allow-list of metrics",
				 names[i]);
			return 1;
		}
#if defined(__SANITIZE_ADDRESS__)
	/* as in --validate-metrics: libnvperf_host.so is loaded with RTLD_DEEPBIND, which ASan aborts on */
	snprintf(msg, msg_len, "the range profiler cannot load under AddressSanitizer (RTLD_DEEPBIND)");
	return 4;
#endif
	char why[512] = "";
	void *lib = kf_cupti_dlopen(why, sizeof(why));
	if (!lib) {
		snprintf(msg, msg_len, "%s", why);
		return 4;
	}
	host_api h;
	target_api t;
	memset(&h, 0, sizeof(h));
	memset(&t, 0, sizeof(t));
	void *rs = dlsym(lib, "cuptiGetResultString");
	memcpy(&h.result_string, &rs, sizeof(rs));
	if (!load_sym(lib, "cuptiProfilerHostInitialize", &h.initialize) ||
	    !load_sym(lib, "cuptiProfilerHostDeinitialize", &h.deinitialize) ||
	    !load_sym(lib, "cuptiProfilerHostConfigAddMetrics", &h.add_metrics) ||
	    !load_sym(lib, "cuptiProfilerHostGetConfigImageSize", &h.image_size) ||
	    !load_sym(lib, "cuptiProfilerHostGetConfigImage", &h.get_image) ||
	    !load_sym(lib, "cuptiProfilerHostEvaluateToGpuValues", &t.evaluate) ||
	    !load_sym(lib, "cuptiProfilerInitialize", &t.prof_init) ||
	    !load_sym(lib, "cuptiProfilerDeInitialize", &t.prof_deinit) ||
	    !load_sym(lib, "cuptiDeviceGetChipName", &t.chip_name) ||
	    !load_sym(lib, "cuptiProfilerGetCounterAvailability", &t.availability) ||
	    !load_sym(lib, "cuptiRangeProfilerEnable", &t.rp_enable) ||
	    !load_sym(lib, "cuptiRangeProfilerDisable", &t.rp_disable) ||
	    !load_sym(lib, "cuptiRangeProfilerGetCounterDataSize", &t.rp_data_size) ||
	    !load_sym(lib, "cuptiRangeProfilerCounterDataImageInitialize", &t.rp_data_init) ||
	    !load_sym(lib, "cuptiRangeProfilerSetConfig", &t.rp_set_config) ||
	    !load_sym(lib, "cuptiRangeProfilerStart", &t.rp_start) ||
	    !load_sym(lib, "cuptiRangeProfilerStop", &t.rp_stop) ||
	    !load_sym(lib, "cuptiRangeProfilerDecodeData", &t.rp_decode) ||
	    !load_sym(lib, "cuptiRangeProfilerGetCounterDataInfo", &t.rp_data_info)) {
		snprintf(msg, msg_len, "libcupti has no range-profiler API (CUPTI 12.6 or later needed)");
		return 4;
	}

	int rc = 0;
	CUptiResult r;
	uint8_t *avail = NULL, *config = NULL, *data = NULL;
	size_t config_bytes = 0, data_bytes = 0;
	CUpti_Profiler_Host_Object *host = NULL;
	CUpti_RangeProfiler_Object *rp = NULL;
	bool prof_on = false;

/* Records the failing step; counters the machine withholds are a skip (4), the rest an error (1). */
#define STEP(call, what)                                                                                     \
	do {                                                                                                 \
		r = (call);                                                                                  \
		if (r != CUPTI_SUCCESS) {                                                                    \
			snprintf(msg, msg_len, "%s failed: %s%s", what, cupti_err(h, r),                     \
				 counters_unavailable(r) ? " (hardware counters are not available here)"     \
							 : "");                                              \
			rc = counters_unavailable(r) ? 4 : 1;                                                \
			goto out;                                                                            \
		}                                                                                            \
	} while (0)

	{
		CUpti_Profiler_Initialize_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
		STEP(t.prof_init(&p), "cuptiProfilerInitialize");
		prof_on = true;
	}
	const char *chip;
	{
		CUpti_Device_GetChipName_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
		p.deviceIndex = (size_t)device_index;
		STEP(t.chip_name(&p), "cuptiDeviceGetChipName");
		chip = p.pChipName;
	}
	{
		/* which counters this context may read: the host side filters the config with it */
		CUpti_Profiler_GetCounterAvailability_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
		p.ctx = (CUcontext)ctx;
		STEP(t.availability(&p), "cuptiProfilerGetCounterAvailability (size)");
		avail =
		    (uint8_t *)malloc(p.counterAvailabilityImageSize ? p.counterAvailabilityImageSize : 1);
		if (!avail) {
			snprintf(msg, msg_len, "out of memory");
			rc = 1;
			goto out;
		}
		p.pCounterAvailabilityImage = avail;
		STEP(t.availability(&p), "cuptiProfilerGetCounterAvailability");
	}
	{
		CUpti_Profiler_Host_Initialize_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
		p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
		p.pChipName = chip;
		p.pCounterAvailabilityImage = avail;
		STEP(h.initialize(&p), "cuptiProfilerHostInitialize");
		host = p.pHostObject;
	}
	{
		CUpti_Profiler_Host_ConfigAddMetrics_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
		p.pHostObject = host;
		p.ppMetricNames = (const char **)names;
		p.numMetrics = (size_t)n;
		STEP(h.add_metrics(&p), "cuptiProfilerHostConfigAddMetrics");
		CUpti_Profiler_Host_GetConfigImageSize_Params sp;
		memset(&sp, 0, sizeof(sp));
		sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
		sp.pHostObject = host;
		STEP(h.image_size(&sp), "cuptiProfilerHostGetConfigImageSize");
		config_bytes = sp.configImageSize;
		config = (uint8_t *)malloc(config_bytes ? config_bytes : 1);
		if (!config) {
			snprintf(msg, msg_len, "out of memory");
			rc = 1;
			goto out;
		}
		CUpti_Profiler_Host_GetConfigImage_Params gp;
		memset(&gp, 0, sizeof(gp));
		gp.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
		gp.pHostObject = host;
		gp.configImageSize = config_bytes;
		gp.pConfigImage = config;
		STEP(h.get_image(&gp), "cuptiProfilerHostGetConfigImage");
	}
	{
		CUpti_RangeProfiler_Enable_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
		p.ctx = (CUcontext)ctx;
		STEP(t.rp_enable(&p), "cuptiRangeProfilerEnable");
		rp = p.pRangeProfilerObject;
	}
	{
		CUpti_RangeProfiler_GetCounterDataSize_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
		p.pRangeProfilerObject = rp;
		p.pMetricNames = (const char **)names;
		p.numMetrics = (size_t)n;
		p.maxNumOfRanges = max_ranges;
		p.maxNumRangeTreeNodes = (uint32_t)max_ranges;
		STEP(t.rp_data_size(&p), "cuptiRangeProfilerGetCounterDataSize");
		data_bytes = p.counterDataSize;
		data = (uint8_t *)malloc(data_bytes ? data_bytes : 1);
		if (!data) {
			snprintf(msg, msg_len, "out of memory");
			rc = 1;
			goto out;
		}
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip;
		memset(&ip, 0, sizeof(ip));
		ip.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
		ip.pRangeProfilerObject = rp;
		ip.counterDataSize = data_bytes;
		ip.pCounterData = data;
		STEP(t.rp_data_init(&ip), "cuptiRangeProfilerCounterDataImageInitialize");
	}
	{
		/* Auto range + kernel replay: every kernel launch is one range, and CUPTI replays each kernel
		 * for all passes itself, saving and restoring device memory in between. */
		CUpti_RangeProfiler_SetConfig_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
		p.pRangeProfilerObject = rp;
		p.configSize = config_bytes;
		p.pConfig = config;
		p.counterDataImageSize = data_bytes;
		p.pCounterDataImage = data;
		p.range = CUPTI_AutoRange;
		p.replayMode = CUPTI_KernelReplay;
		p.maxRangesPerPass = max_ranges;
		p.numNestingLevels = 1;
		p.minNestingLevel = 1;
		p.passIndex = 0;
		p.targetNestingLevel = 1;
		STEP(t.rp_set_config(&p), "cuptiRangeProfilerSetConfig");
	}
	{
		CUpti_RangeProfiler_Start_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
		p.pRangeProfilerObject = rp;
		STEP(t.rp_start(&p), "cuptiRangeProfilerStart");
	}
	{
		char run_msg[256] = "";
		int run_rc = run(arg, run_msg, sizeof(run_msg));
		CUpti_RangeProfiler_Stop_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
		p.pRangeProfilerObject = rp;
		r = t.rp_stop(&p);
		if (run_rc != 0) {
			snprintf(msg, msg_len, "the profiled run failed: %s", run_msg);
			rc = 1;
			goto out;
		}
		STEP(r, "cuptiRangeProfilerStop");
		CUpti_RangeProfiler_DecodeData_Params dp;
		memset(&dp, 0, sizeof(dp));
		dp.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
		dp.pRangeProfilerObject = rp;
		STEP(t.rp_decode(&dp), "cuptiRangeProfilerDecodeData");
	}
	{
		CUpti_RangeProfiler_GetCounterDataInfo_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
		p.pCounterDataImage = data;
		p.counterDataImageSize = data_bytes;
		STEP(t.rp_data_info(&p), "cuptiRangeProfilerGetCounterDataInfo");
		size_t ranges = p.numTotalRanges < max_ranges ? p.numTotalRanges : max_ranges;
		for (size_t i = 0; i < ranges; i++) {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params ep;
			memset(&ep, 0, sizeof(ep));
			ep.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
			ep.pHostObject = host;
			ep.pCounterDataImage = data;
			ep.counterDataImageSize = data_bytes;
			ep.rangeIndex = i;
			ep.ppMetricNames = (const char **)names;
			ep.numMetrics = (size_t)n;
			ep.pMetricValues = values + i * (size_t)n;
			STEP(t.evaluate(&ep), "cuptiProfilerHostEvaluateToGpuValues");
		}
		*n_ranges = ranges;
	}
#undef STEP
out:
	if (rp) {
		CUpti_RangeProfiler_Disable_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
		p.pRangeProfilerObject = rp;
		t.rp_disable(&p);
	}
	if (host) {
		CUpti_Profiler_Host_Deinitialize_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
		p.pHostObject = host;
		h.deinitialize(&p);
	}
	if (prof_on) {
		CUpti_Profiler_DeInitialize_Params p;
		memset(&p, 0, sizeof(p));
		p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
		t.prof_deinit(&p);
	}
	free(avail);
	free(config);
	free(data);
	return rc;
}
