/* kforge cpu backend: <crt/host_defines.h>; the qualifiers it defines come from kf_shim.h. */
#ifndef KF_SHIM_CRT_HOST_DEFINES_H
#define KF_SHIM_CRT_HOST_DEFINES_H
#include "../kf_shim.h"
#endif
