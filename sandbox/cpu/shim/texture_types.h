/* kforge cpu backend: <texture_types.h> for kernel files (NVRTC accepts it); what it declares comes from
 * kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_TEXTURE_TYPES_H
#define KF_SHIM_TEXTURE_TYPES_H
#include "kf_shim.h"
#endif
