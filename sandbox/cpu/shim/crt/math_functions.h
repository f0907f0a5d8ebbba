/* kforge cpu backend: <crt/math_functions.h> for kernel files; everything it would declare comes from
 * kf_shim.h. */
#ifndef KF_SHIM_CRT_MATH_FUNCTIONS_H
#define KF_SHIM_CRT_MATH_FUNCTIONS_H
#include "../kf_shim.h"
#endif
