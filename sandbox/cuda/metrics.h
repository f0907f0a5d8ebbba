/* The worker's `--validate-metrics` mode (sandbox/cuda/metrics.cpp): the host side of CUPTI's range
 * profiler, which works without a GPU. Included by sandbox/worker/main.c for its argument dispatch. */
#ifndef KF_CUDA_METRICS_H
#define KF_CUDA_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `kforge-worker --validate-metrics CHIP metric,metric,...`: checks every name against an allow-list
 * (sandbox/cuda/metrics.cpp), then against CUPTI's host API for CHIP (e.g. "GH100"), builds the
 * config image and prints key=value lines: valid=1, chip=, metrics=, passes=N, config_image_bytes=N;
 * or valid=0 and reason=... Exit 0 valid, 1 rejected, 2 usage, 4 CUPTI unavailable here.
 * argv[0] is "--validate-metrics". */
int kf_cuda_validate_metrics_main(int argc, char **argv);

/* Collects allow-listed metrics for every kernel launched by run(arg) in context ctx (a CUcontext) of
 * device device_index, with CUPTI's range profiler (auto ranges, kernel replay: one range per launch).
 * values[range * n + i] gets metric i of each range, at most max_ranges; *n_ranges how many. Returns 0,
 * 4 when this machine withholds the counters (privileges, virtualization; the reason in msg: a skip), 1
 * on any other failure. run returns 0 or fills its msg. (sandbox/cuda/metrics.cpp) */
int kf_cuda_metrics_collect(void *ctx, int device_index, const char *const *names, int n,
			    int (*run)(void *arg, char *msg, size_t msg_len), void *arg, double *values,
			    size_t max_ranges, size_t *n_ranges, char *msg, size_t msg_len);

/* `kforge-worker --metrics-selftest [metric,...]`: on a GPU, launches a built-in vector add under the
 * range profiler and prints metric=value lines (default: the five metrics of the validate test).
 * Exit 0 with plausible values, 4 no GPU or counters unavailable (reason printed), 1 failure.
 * argv[0] is "--metrics-selftest". (sandbox/cuda/selftest.c) */
int kf_cuda_metrics_selftest_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
