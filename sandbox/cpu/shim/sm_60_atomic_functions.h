/* kforge cpu backend: <sm_60_atomic_functions.h> for kernel files; everything it would declare comes from
 * kf_shim.h. */
#ifndef KF_SHIM_SM_60_ATOMIC_FUNCTIONS_H
#define KF_SHIM_SM_60_ATOMIC_FUNCTIONS_H
#include "kf_shim.h"
#endif
