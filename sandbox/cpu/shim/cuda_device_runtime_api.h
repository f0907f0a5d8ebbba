/* kforge cpu backend: <cuda_device_runtime_api.h> for kernel files; everything it would declare comes from
 * kf_shim.h. */
#ifndef KF_SHIM_CUDA_DEVICE_RUNTIME_API_H
#define KF_SHIM_CUDA_DEVICE_RUNTIME_API_H
#include "kf_shim.h"
#endif
