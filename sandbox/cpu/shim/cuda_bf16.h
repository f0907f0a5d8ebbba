/* kforge cpu backend: <cuda_bf16.h>. __nv_bfloat16 and __nv_bfloat162 as CUDA defines them (the top 16
 * bits of a float, round-to-nearest-even conversions, arithmetic in float rounded back). */
#ifndef KF_SHIM_CUDA_BF16_H
#define KF_SHIM_CUDA_BF16_H
#include "kf_half_common.h"

struct __nv_bfloat16_raw {
	unsigned short x;
};
struct __nv_bfloat162_raw {
	unsigned short x, y;
};

struct __attribute__((aligned(2))) __nv_bfloat16 {
	unsigned short __x;
	__nv_bfloat16() = default;
	constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x)
	{
	}
	__nv_bfloat16(float f) : __x(kf_f2bf_bits(f))
	{
	}
	__nv_bfloat16(double d) : __x(kf_f2bf_bits((float)d))
	{
	}
	__nv_bfloat16(int i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(unsigned int i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(short i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(unsigned short i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(long long i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(unsigned long long i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(long i) : __x(kf_f2bf_bits((float)i))
	{
	}
	__nv_bfloat16(unsigned long i) : __x(kf_f2bf_bits((float)i))
	{
	}
	operator float() const
	{
		return kf_bf2f_bits(__x);
	}
	operator __nv_bfloat16_raw() const
	{
		__nv_bfloat16_raw r;
		r.x = __x;
		return r;
	}
	__nv_bfloat16 &operator=(const __nv_bfloat16_raw &r)
	{
		__x = r.x;
		return *this;
	}
};

struct __attribute__((aligned(4))) __nv_bfloat162 {
	__nv_bfloat16 x, y;
	__nv_bfloat162() = default;
	constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b)
	{
	}
	__nv_bfloat162(const __nv_bfloat162_raw &r)
	{
		x.__x = r.x;
		y.__x = r.y;
	}
	operator __nv_bfloat162_raw() const
	{
		__nv_bfloat162_raw r;
		r.x = x.__x;
		r.y = y.__x;
		return r;
	}
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static __inline__ bool __hisnan(__nv_bfloat16 a)
{
	return (a.__x & 0x7fffu) > 0x7f80u;
}
KF_HALF_OPS(__nv_bfloat16, __nv_bfloat162)
KF_HALF_FUNCS(__nv_bfloat16, __nv_bfloat162)

static __inline__ __nv_bfloat16 __float2bfloat16(float f)
{
	return __nv_bfloat16(f);
}
static __inline__ __nv_bfloat16 __float2bfloat16_rn(float f)
{
	return __nv_bfloat16(f);
}
static __inline__ __nv_bfloat16 __float2bfloat16_rz(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	__nv_bfloat16 r;
	r.__x = (unsigned short)(u >> 16);
	return r;
}
static __inline__ __nv_bfloat16 __double2bfloat16(double d)
{
	return __nv_bfloat16(d);
}
static __inline__ float __bfloat162float(__nv_bfloat16 h)
{
	return (float)h;
}
static __inline__ __nv_bfloat162 __float2bfloat162_rn(float f)
{
	return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f));
}
static __inline__ __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
	return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b));
}
static __inline__ __nv_bfloat162 __float22bfloat162_rn(float2 v)
{
	return __nv_bfloat162(__nv_bfloat16(v.x), __nv_bfloat16(v.y));
}
static __inline__ float2 __bfloat1622float2(__nv_bfloat162 h)
{
	return make_float2((float)h.x, (float)h.y);
}
static __inline__ __nv_bfloat16 __low2bfloat16(__nv_bfloat162 a)
{
	return a.x;
}
static __inline__ __nv_bfloat16 __high2bfloat16(__nv_bfloat162 a)
{
	return a.y;
}
static __inline__ __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b)
{
	return __nv_bfloat162(a, b);
}
static __inline__ __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a)
{
	return __nv_bfloat162(a, a);
}
static __inline__ __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b)
{
	return __nv_bfloat162(a, b);
}
static __inline__ __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b)
{
	return __nv_bfloat162(a.x, b.x);
}
static __inline__ __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b)
{
	return __nv_bfloat162(a.y, b.y);
}
static __inline__ int __bfloat162int_rn(__nv_bfloat16 h)
{
	return (int)nearbyintf((float)h);
}
static __inline__ int __bfloat162int_rz(__nv_bfloat16 h)
{
	return (int)(float)h;
}
static __inline__ __nv_bfloat16 __int2bfloat16_rn(int i)
{
	return __nv_bfloat16((float)i);
}
static __inline__ short __bfloat16_as_short(__nv_bfloat16 h)
{
	return (short)h.__x;
}
static __inline__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h)
{
	return h.__x;
}
static __inline__ __nv_bfloat16 __short_as_bfloat16(short s)
{
	__nv_bfloat16 h;
	h.__x = (unsigned short)s;
	return h;
}
static __inline__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short s)
{
	__nv_bfloat16 h;
	h.__x = s;
	return h;
}
static __inline__ __nv_bfloat16 __ldg(const __nv_bfloat16 *p)
{
	return *p;
}
static __inline__ __nv_bfloat162 __ldg(const __nv_bfloat162 *p)
{
	return *p;
}
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7f80u)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000u)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3f80u)

#endif
