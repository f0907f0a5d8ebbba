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

namespace {

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
	printf("valid=0\nreason=the range profiler's host library cannot load under AddressSanitizer (RTLD_DEEPBIND); "
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
		printf("valid=0\nreason=libcupti has no range-profiler host API (CUPTI 12.6 or later needed)\n");
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
			rc = reject("metric '%s' is not available for this chip: %s", names[i], cupti_err(api, r));
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
		printf("valid=1\nchip=%s\nmetrics=%d\npasses=%zu\nconfig_image_bytes=%zu\n", chip, n, passes, image_bytes);
	free(image);
	CUpti_Profiler_Host_Deinitialize_Params dp;
	memset(&dp, 0, sizeof(dp));
	dp.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
	dp.pHostObject = ip.pHostObject;
	api.deinitialize(&dp);
	fflush(stdout);
	return rc;
}
