/* kforge cpu backend: <cuda_runtime.h> for kernel files. The built-ins come from kf_shim.h, which the
 * pre-pass includes first; this header only makes the include harmless. */
#ifndef KF_SHIM_CUDA_RUNTIME_H
#define KF_SHIM_CUDA_RUNTIME_H
#include "kf_shim.h"
#endif
