/* kforge cpu backend: <sm_61_intrinsics.h> for kernel files (NVRTC accepts it); what it declares comes from
 * kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_SM_61_INTRINSICS_H
#define KF_SHIM_SM_61_INTRINSICS_H
#include "kf_shim.h"
#endif
