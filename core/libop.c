/* Names of the library ops of core/baseline.h, libc-only so the worker links it too: the worker knows
 * a library call by its launch name ("@cublas.gemm"), the parent by the task's "library" field. */
#include <string.h>

#include "baseline.h"

static const struct {
	const char *name, *library;
} names[KF_LIBOP_COUNT] = {
    [KF_LIBOP_CUBLAS_GEMM] = {"cublas.gemm", "cuBLAS"},
    [KF_LIBOP_CUBLASLT_MATMUL] = {"cublasLt.matmul", "cuBLASLt"},
    [KF_LIBOP_CUDNN_CONV_FWD] = {"cudnn.conv_fwd", "cuDNN"},
    [KF_LIBOP_CUDNN_SDPA] = {"cudnn.sdpa", "cuDNN"},
    [KF_LIBOP_CUDNN_NORM] = {"cudnn.norm", "cuDNN"},
};

const char *kf_libop_name(enum kf_libop op)
{
	return (unsigned)op < KF_LIBOP_COUNT ? names[op].name : "?";
}

const char *kf_libop_library(enum kf_libop op)
{
	return (unsigned)op < KF_LIBOP_COUNT ? names[op].library : "?";
}

bool kf_libop_parse(const char *s, enum kf_libop *out)
{
	for (int i = 0; s && i < KF_LIBOP_COUNT; i++)
		if (!strcmp(s, names[i].name)) {
			*out = (enum kf_libop)i;
			return true;
		}
	return false;
}

bool kf_libop_from_launch(const char *kernel, enum kf_libop *out)
{
	return kernel && kernel[0] == KF_LIBCALL_PREFIX && kf_libop_parse(kernel + 1, out);
}
