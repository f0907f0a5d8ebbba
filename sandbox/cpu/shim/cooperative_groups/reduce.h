/* kforge cpu backend: <cooperative_groups/reduce.h>; cg::reduce and the operators live in
 * cooperative_groups.h. */
#ifndef KF_SHIM_CG_REDUCE_H
#define KF_SHIM_CG_REDUCE_H
#include "../cooperative_groups.h"
#endif
