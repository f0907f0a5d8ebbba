/* kforge cpu backend: <host_defines.h> for kernel files (NVRTC accepts it); what it declares comes from
 * kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_HOST_DEFINES_H
#define KF_SHIM_HOST_DEFINES_H
#include "kf_shim.h"
#endif
