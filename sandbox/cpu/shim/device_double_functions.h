/* kforge cpu backend: <device_double_functions.h> for kernel files (NVRTC accepts it); what it declares comes
 * from kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_DEVICE_DOUBLE_FUNCTIONS_H
#define KF_SHIM_DEVICE_DOUBLE_FUNCTIONS_H
#include "kf_shim.h"
#endif
