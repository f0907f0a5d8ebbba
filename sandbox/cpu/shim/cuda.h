/* kforge cpu backend: <cuda.h> for kernel files; everything it would declare comes from kf_shim.h. */
#ifndef KF_SHIM_CUDA_H
#define KF_SHIM_CUDA_H
#include "kf_shim.h"
#endif
