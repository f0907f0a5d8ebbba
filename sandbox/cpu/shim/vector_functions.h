/* kforge cpu backend: <vector_functions.h> for kernel files; everything it would declare comes from
 * kf_shim.h. */
#ifndef KF_SHIM_VECTOR_FUNCTIONS_H
#define KF_SHIM_VECTOR_FUNCTIONS_H
#include "kf_shim.h"
#endif
