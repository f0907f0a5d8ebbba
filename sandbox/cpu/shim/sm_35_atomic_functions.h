/* kforge cpu backend: <sm_35_atomic_functions.h> for kernel files (NVRTC accepts it); what it declares comes
 * from kf_shim.h, included first by the pre-pass. */
#ifndef KF_SHIM_SM_35_ATOMIC_FUNCTIONS_H
#define KF_SHIM_SM_35_ATOMIC_FUNCTIONS_H
#include "kf_shim.h"
#endif
