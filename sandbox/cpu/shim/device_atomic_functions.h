/* kforge cpu backend: <device_atomic_functions.h> for kernel files (NVRTC accepts it); what it declares comes
 * from kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_DEVICE_ATOMIC_FUNCTIONS_H
#define KF_SHIM_DEVICE_ATOMIC_FUNCTIONS_H
#include "kf_shim.h"
#endif
