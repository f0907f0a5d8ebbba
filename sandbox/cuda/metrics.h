/* The worker's `--validate-metrics` mode (sandbox/cuda/metrics.cpp): the host side of CUPTI's range
 * profiler, which works without a GPU. Included by sandbox/worker/main.c for its argument dispatch. */
#ifndef KF_CUDA_METRICS_H
#define KF_CUDA_METRICS_H

#ifdef __cplusplus
extern "C" {
#endif

/* `kforge-worker --validate-metrics CHIP metric,metric,...`: checks every name against an allow-list
 * (sandbox/cuda/metrics.cpp), then against CUPTI's host API for CHIP (e.g. "GH100"), builds the
 * config image and prints key=value lines: valid=1, chip=, metrics=, passes=N, config_image_bytes=N;
 * or valid=0 and reason=... Exit 0 valid, 1 rejected, 2 usage, 4 CUPTI unavailable here.
 * argv[0] is "--validate-metrics". */
int kf_cuda_validate_metrics_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
