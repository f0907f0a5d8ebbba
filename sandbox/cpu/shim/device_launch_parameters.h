/* kforge cpu backend: <device_launch_parameters.h> for kernel files; everything it would declare comes from
 * kf_shim.h. */
#ifndef KF_SHIM_DEVICE_LAUNCH_PARAMETERS_H
#define KF_SHIM_DEVICE_LAUNCH_PARAMETERS_H
#include "kf_shim.h"
#endif
