/* kforge cpu backend: <vector_types.h> for kernel files; everything it would declare comes from kf_shim.h. */
#ifndef KF_SHIM_VECTOR_TYPES_H
#define KF_SHIM_VECTOR_TYPES_H
#include "kf_shim.h"
#endif
