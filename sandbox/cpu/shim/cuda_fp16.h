/* kforge cpu backend: <cuda_fp16.h>. __half and __half2 as CUDA defines them (16-bit storage, float
 * conversions with round-to-nearest-even, arithmetic computed in float and rounded back). */
#ifndef KF_SHIM_CUDA_FP16_H
#define KF_SHIM_CUDA_FP16_H
#include "kf_half_common.h"

struct __half_raw {
	unsigned short x;
};
struct __half2_raw {
	unsigned short x, y;
};

struct __attribute__((aligned(2))) __half {
	unsigned short __x;
	__half() = default;
	constexpr __half(const __half_raw &r) : __x(r.x)
	{
	}
	__half(float f) : __x(kf_f2h_bits(f))
	{
	}
	__half(double d) : __x(kf_f2h_bits((float)d))
	{
	}
	__half(int i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(unsigned int i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(short i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(unsigned short i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(long long i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(unsigned long long i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(long i) : __x(kf_f2h_bits((float)i))
	{
	}
	__half(unsigned long i) : __x(kf_f2h_bits((float)i))
	{
	}
	operator float() const
	{
		return kf_h2f_bits(__x);
	}
	operator __half_raw() const
	{
		__half_raw r;
		r.x = __x;
		return r;
	}
	__half &operator=(const __half_raw &r)
	{
		__x = r.x;
		return *this;
	}
};

struct __attribute__((aligned(4))) __half2 {
	__half x, y;
	__half2() = default;
	constexpr __half2(const __half &a, const __half &b) : x(a), y(b)
	{
	}
	__half2(const __half2_raw &r)
	{
		x.__x = r.x;
		y.__x = r.y;
	}
	operator __half2_raw() const
	{
		__half2_raw r;
		r.x = x.__x;
		r.y = y.__x;
		return r;
	}
};
typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;

static __inline__ bool __hisnan(__half a)
{
	return (a.__x & 0x7fffu) > 0x7c00u;
}
KF_HALF_OPS(__half, __half2)
KF_HALF_FUNCS(__half, __half2)

static __inline__ __half __float2half(float f)
{
	return __half(f);
}
static __inline__ __half __float2half_rn(float f)
{
	return __half(f);
}
static __inline__ __half __float2half_rz(float f)
{
	__half r(f);
	if (fabsf((float)r) > fabsf(f) && !isinf(f))
		r.__x = (unsigned short)(r.__x - 1);
	return r;
}
static __inline__ __half __double2half(double d)
{
	return __half(d);
}
static __inline__ float __half2float(__half h)
{
	return (float)h;
}
static __inline__ __half2 __float2half2_rn(float f)
{
	return __half2(__half(f), __half(f));
}
static __inline__ __half2 __floats2half2_rn(float a, float b)
{
	return __half2(__half(a), __half(b));
}
static __inline__ __half2 __float22half2_rn(float2 v)
{
	return __half2(__half(v.x), __half(v.y));
}
static __inline__ float2 __half22float2(__half2 h)
{
	return make_float2((float)h.x, (float)h.y);
}
static __inline__ __half __low2half(__half2 a)
{
	return a.x;
}
static __inline__ __half __high2half(__half2 a)
{
	return a.y;
}
static __inline__ __half2 __halves2half2(__half a, __half b)
{
	return __half2(a, b);
}
static __inline__ __half2 __half2half2(__half a)
{
	return __half2(a, a);
}
static __inline__ __half2 make_half2(__half a, __half b)
{
	return __half2(a, b);
}
static __inline__ __half2 __lows2half2(__half2 a, __half2 b)
{
	return __half2(a.x, b.x);
}
static __inline__ __half2 __highs2half2(__half2 a, __half2 b)
{
	return __half2(a.y, b.y);
}
static __inline__ __half2 __low2half2(__half2 a)
{
	return __half2(a.x, a.x);
}
static __inline__ __half2 __high2half2(__half2 a)
{
	return __half2(a.y, a.y);
}
static __inline__ __half2 __lowhigh2highlow(__half2 a)
{
	return __half2(a.y, a.x);
}
static __inline__ int __half2int_rn(__half h)
{
	return (int)nearbyintf((float)h);
}
static __inline__ int __half2int_rz(__half h)
{
	return (int)(float)h;
}
static __inline__ __half __int2half_rn(int i)
{
	return __half((float)i);
}
static __inline__ __half __uint2half_rn(unsigned i)
{
	return __half((float)i);
}
static __inline__ short __half_as_short(__half h)
{
	return (short)h.__x;
}
static __inline__ unsigned short __half_as_ushort(__half h)
{
	return h.__x;
}
static __inline__ __half __short_as_half(short s)
{
	__half h;
	h.__x = (unsigned short)s;
	return h;
}
static __inline__ __half __ushort_as_half(unsigned short s)
{
	__half h;
	h.__x = s;
	return h;
}
static __inline__ __half __ldg(const __half *p)
{
	return *p;
}
static __inline__ __half2 __ldg(const __half2 *p)
{
	return *p;
}
#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7c00u)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7bffu)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000u)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3c00u)

#endif
