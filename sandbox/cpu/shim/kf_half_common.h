/* Shared by the cpu backend's cuda_fp16.h and cuda_bf16.h: round-to-nearest-even conversions between
 * float and the 16-bit formats, done on bit patterns so they match the GPU exactly. */
#ifndef KF_HALF_COMMON_H
#define KF_HALF_COMMON_H
#include "kf_shim.h"

static __inline__ unsigned short kf_f2h_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u)
		return (unsigned short)(ax > 0x7f800000u ? 0x7fffu : (sign | 0x7c00u));
	if (ax >= 0x477ff000u) /* >= 65520 rounds to infinity */
		return (unsigned short)(sign | 0x7c00u);
	uint32_t e = ax >> 23;
	if (e < 113) { /* a half subnormal (or zero): q units of 2^-24 */
		if (e < 102)
			return (unsigned short)sign;
		uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
		uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), hv = 1u << (shift - 1);
		if (rem > hv || (rem == hv && (q & 1)))
			q++;
		return (unsigned short)(sign | q);
	}
	uint32_t h = ((e - 112) << 10) | ((ax >> 13) & 0x3ffu), rem = ax & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (unsigned short)(sign | h);
}

static __inline__ float kf_h2f_bits(unsigned short h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
	if (e == 0) {
		float f = (float)m * 5.9604644775390625e-8f; /* 2^-24 */
		return s ? -f : f;
	}
	if (e == 31)
		bits = s | 0x7f800000u | (m << 13);
	else
		bits = s | ((e + 112) << 23) | (m << 13);
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static __inline__ unsigned short kf_f2bf_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((u >> 16) | 0x40u); /* quiet NaN, sign kept */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}

static __inline__ float kf_bf2f_bits(unsigned short b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* The arithmetic of a 16-bit float type H (a struct with a float conversion and a float constructor)
 * and its pair type H2, computed in float and rounded back, as CUDA's headers define it. */
#define KF_HALF_OPS(H, H2)                                                                                   \
	static __inline__ H operator+(const H &a, const H &b)                                                \
	{                                                                                                    \
		return H((float)a + (float)b);                                                               \
	}                                                                                                    \
	static __inline__ H operator-(const H &a, const H &b)                                                \
	{                                                                                                    \
		return H((float)a - (float)b);                                                               \
	}                                                                                                    \
	static __inline__ H operator*(const H &a, const H &b)                                                \
	{                                                                                                    \
		return H((float)a * (float)b);                                                               \
	}                                                                                                    \
	static __inline__ H operator/(const H &a, const H &b)                                                \
	{                                                                                                    \
		return H((float)a / (float)b);                                                               \
	}                                                                                                    \
	static __inline__ H &operator+=(H &a, const H &b)                                                    \
	{                                                                                                    \
		return a = a + b;                                                                            \
	}                                                                                                    \
	static __inline__ H &operator-=(H &a, const H &b)                                                    \
	{                                                                                                    \
		return a = a - b;                                                                            \
	}                                                                                                    \
	static __inline__ H &operator*=(H &a, const H &b)                                                    \
	{                                                                                                    \
		return a = a * b;                                                                            \
	}                                                                                                    \
	static __inline__ H &operator/=(H &a, const H &b)                                                    \
	{                                                                                                    \
		return a = a / b;                                                                            \
	}                                                                                                    \
	static __inline__ H operator-(const H &a)                                                            \
	{                                                                                                    \
		H r = a;                                                                                     \
		r.__x ^= 0x8000u;                                                                            \
		return r;                                                                                    \
	}                                                                                                    \
	static __inline__ H operator+(const H &a)                                                            \
	{                                                                                                    \
		return a;                                                                                    \
	}                                                                                                    \
	static __inline__ H &operator++(H &a)                                                                \
	{                                                                                                    \
		return a = H((float)a + 1.0f);                                                               \
	}                                                                                                    \
	static __inline__ H &operator--(H &a)                                                                \
	{                                                                                                    \
		return a = H((float)a - 1.0f);                                                               \
	}                                                                                                    \
	static __inline__ H operator++(H &a, int)                                                            \
	{                                                                                                    \
		H o = a;                                                                                     \
		++a;                                                                                         \
		return o;                                                                                    \
	}                                                                                                    \
	static __inline__ H operator--(H &a, int)                                                            \
	{                                                                                                    \
		H o = a;                                                                                     \
		--a;                                                                                         \
		return o;                                                                                    \
	}                                                                                                    \
	static __inline__ bool operator==(const H &a, const H &b)                                            \
	{                                                                                                    \
		return (float)a == (float)b;                                                                 \
	}                                                                                                    \
	static __inline__ bool operator!=(const H &a, const H &b)                                            \
	{                                                                                                    \
		return (float)a != (float)b;                                                                 \
	}                                                                                                    \
	static __inline__ bool operator<(const H &a, const H &b)                                             \
	{                                                                                                    \
		return (float)a < (float)b;                                                                  \
	}                                                                                                    \
	static __inline__ bool operator>(const H &a, const H &b)                                             \
	{                                                                                                    \
		return (float)a > (float)b;                                                                  \
	}                                                                                                    \
	static __inline__ bool operator<=(const H &a, const H &b)                                            \
	{                                                                                                    \
		return (float)a <= (float)b;                                                                 \
	}                                                                                                    \
	static __inline__ bool operator>=(const H &a, const H &b)                                            \
	{                                                                                                    \
		return (float)a >= (float)b;                                                                 \
	}                                                                                                    \
	static __inline__ H2 operator+(const H2 &a, const H2 &b)                                             \
	{                                                                                                    \
		return H2(a.x + b.x, a.y + b.y);                                                             \
	}                                                                                                    \
	static __inline__ H2 operator-(const H2 &a, const H2 &b)                                             \
	{                                                                                                    \
		return H2(a.x - b.x, a.y - b.y);                                                             \
	}                                                                                                    \
	static __inline__ H2 operator*(const H2 &a, const H2 &b)                                             \
	{                                                                                                    \
		return H2(a.x * b.x, a.y * b.y);                                                             \
	}                                                                                                    \
	static __inline__ H2 operator/(const H2 &a, const H2 &b)                                             \
	{                                                                                                    \
		return H2(a.x / b.x, a.y / b.y);                                                             \
	}                                                                                                    \
	static __inline__ H2 &operator+=(H2 &a, const H2 &b)                                                 \
	{                                                                                                    \
		return a = a + b;                                                                            \
	}                                                                                                    \
	static __inline__ H2 &operator-=(H2 &a, const H2 &b)                                                 \
	{                                                                                                    \
		return a = a - b;                                                                            \
	}                                                                                                    \
	static __inline__ H2 &operator*=(H2 &a, const H2 &b)                                                 \
	{                                                                                                    \
		return a = a * b;                                                                            \
	}                                                                                                    \
	static __inline__ H2 &operator/=(H2 &a, const H2 &b)                                                 \
	{                                                                                                    \
		return a = a / b;                                                                            \
	}                                                                                                    \
	static __inline__ H2 operator-(const H2 &a)                                                          \
	{                                                                                                    \
		return H2(-a.x, -a.y);                                                                       \
	}                                                                                                    \
	static __inline__ bool operator==(const H2 &a, const H2 &b)                                          \
	{                                                                                                    \
		return a.x == b.x && a.y == b.y;                                                             \
	}                                                                                                    \
	static __inline__ bool operator!=(const H2 &a, const H2 &b)                                          \
	{                                                                                                    \
		return !(a == b);                                                                            \
	}

/* Named intrinsics shared by both formats: CUDA overloads the same names for __half and __nv_bfloat16. */
#define KF_HALF_FUNCS(H, H2)                                                                                 \
	static __inline__ H __hadd(H a, H b)                                                                 \
	{                                                                                                    \
		return a + b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hsub(H a, H b)                                                                 \
	{                                                                                                    \
		return a - b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hmul(H a, H b)                                                                 \
	{                                                                                                    \
		return a * b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hdiv(H a, H b)                                                                 \
	{                                                                                                    \
		return a / b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hadd_rn(H a, H b)                                                              \
	{                                                                                                    \
		return a + b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hsub_rn(H a, H b)                                                              \
	{                                                                                                    \
		return a - b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hmul_rn(H a, H b)                                                              \
	{                                                                                                    \
		return a * b;                                                                                \
	}                                                                                                    \
	static __inline__ H __hfma(H a, H b, H c)                                                            \
	{                                                                                                    \
		return H(fmaf((float)a, (float)b, (float)c));                                                \
	}                                                                                                    \
	static __inline__ H kf_sat(H a)                                                                      \
	{                                                                                                    \
		float f = (float)a;                                                                          \
		return H(f < 0.f ? 0.f : (f > 1.f ? 1.f : f));                                               \
	}                                                                                                    \
	static __inline__ H __hadd_sat(H a, H b)                                                             \
	{                                                                                                    \
		return kf_sat(a + b);                                                                        \
	}                                                                                                    \
	static __inline__ H __hsub_sat(H a, H b)                                                             \
	{                                                                                                    \
		return kf_sat(a - b);                                                                        \
	}                                                                                                    \
	static __inline__ H __hmul_sat(H a, H b)                                                             \
	{                                                                                                    \
		return kf_sat(a * b);                                                                        \
	}                                                                                                    \
	static __inline__ H __hfma_sat(H a, H b, H c)                                                        \
	{                                                                                                    \
		return kf_sat(__hfma(a, b, c));                                                              \
	}                                                                                                    \
	static __inline__ H __hfma_relu(H a, H b, H c)                                                       \
	{                                                                                                    \
		H r = __hfma(a, b, c);                                                                       \
		return (float)r < 0.f ? H(0.f) : r;                                                          \
	}                                                                                                    \
	static __inline__ H __hneg(H a)                                                                      \
	{                                                                                                    \
		return -a;                                                                                   \
	}                                                                                                    \
	static __inline__ H __habs(H a)                                                                      \
	{                                                                                                    \
		H r = a;                                                                                     \
		r.__x &= 0x7fffu;                                                                            \
		return r;                                                                                    \
	}                                                                                                    \
	static __inline__ H __hmax(H a, H b)                                                                 \
	{                                                                                                    \
		return H(fmaxf((float)a, (float)b));                                                         \
	}                                                                                                    \
	static __inline__ H __hmin(H a, H b)                                                                 \
	{                                                                                                    \
		return H(fminf((float)a, (float)b));                                                         \
	}                                                                                                    \
	static __inline__ H __hmax_nan(H a, H b)                                                             \
	{                                                                                                    \
		return __hisnan(a) || __hisnan(b) ? H(NAN) : __hmax(a, b);                                   \
	}                                                                                                    \
	static __inline__ H __hmin_nan(H a, H b)                                                             \
	{                                                                                                    \
		return __hisnan(a) || __hisnan(b) ? H(NAN) : __hmin(a, b);                                   \
	}                                                                                                    \
	static __inline__ bool __heq(H a, H b)                                                               \
	{                                                                                                    \
		return a == b;                                                                               \
	}                                                                                                    \
	static __inline__ bool __hne(H a, H b)                                                               \
	{                                                                                                    \
		return a != b;                                                                               \
	}                                                                                                    \
	static __inline__ bool __hlt(H a, H b)                                                               \
	{                                                                                                    \
		return a < b;                                                                                \
	}                                                                                                    \
	static __inline__ bool __hle(H a, H b)                                                               \
	{                                                                                                    \
		return a <= b;                                                                               \
	}                                                                                                    \
	static __inline__ bool __hgt(H a, H b)                                                               \
	{                                                                                                    \
		return a > b;                                                                                \
	}                                                                                                    \
	static __inline__ bool __hge(H a, H b)                                                               \
	{                                                                                                    \
		return a >= b;                                                                               \
	}                                                                                                    \
	static __inline__ int __hisinf(H a)                                                                  \
	{                                                                                                    \
		float f = (float)a;                                                                          \
		return isinf(f) ? (f < 0 ? -1 : 1) : 0;                                                      \
	}                                                                                                    \
	static __inline__ H hsqrt(H a)                                                                       \
	{                                                                                                    \
		return H(sqrtf((float)a));                                                                   \
	}                                                                                                    \
	static __inline__ H hrsqrt(H a)                                                                      \
	{                                                                                                    \
		return H(1.0f / sqrtf((float)a));                                                            \
	}                                                                                                    \
	static __inline__ H hrcp(H a)                                                                        \
	{                                                                                                    \
		return H(1.0f / (float)a);                                                                   \
	}                                                                                                    \
	static __inline__ H hexp(H a)                                                                        \
	{                                                                                                    \
		return H(expf((float)a));                                                                    \
	}                                                                                                    \
	static __inline__ H hexp2(H a)                                                                       \
	{                                                                                                    \
		return H(exp2f((float)a));                                                                   \
	}                                                                                                    \
	static __inline__ H hexp10(H a)                                                                      \
	{                                                                                                    \
		return H(exp10f((float)a));                                                                  \
	}                                                                                                    \
	static __inline__ H hlog(H a)                                                                        \
	{                                                                                                    \
		return H(logf((float)a));                                                                    \
	}                                                                                                    \
	static __inline__ H hlog2(H a)                                                                       \
	{                                                                                                    \
		return H(log2f((float)a));                                                                   \
	}                                                                                                    \
	static __inline__ H hlog10(H a)                                                                      \
	{                                                                                                    \
		return H(log10f((float)a));                                                                  \
	}                                                                                                    \
	static __inline__ H hsin(H a)                                                                        \
	{                                                                                                    \
		return H(sinf((float)a));                                                                    \
	}                                                                                                    \
	static __inline__ H hcos(H a)                                                                        \
	{                                                                                                    \
		return H(cosf((float)a));                                                                    \
	}                                                                                                    \
	static __inline__ H htanh(H a)                                                                       \
	{                                                                                                    \
		return H(tanhf((float)a));                                                                   \
	}                                                                                                    \
	static __inline__ H hfloor(H a)                                                                      \
	{                                                                                                    \
		return H(floorf((float)a));                                                                  \
	}                                                                                                    \
	static __inline__ H hceil(H a)                                                                       \
	{                                                                                                    \
		return H(ceilf((float)a));                                                                   \
	}                                                                                                    \
	static __inline__ H htrunc(H a)                                                                      \
	{                                                                                                    \
		return H(truncf((float)a));                                                                  \
	}                                                                                                    \
	static __inline__ H hrint(H a)                                                                       \
	{                                                                                                    \
		return H(nearbyintf((float)a));                                                              \
	}                                                                                                    \
	static __inline__ H2 __hadd2(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return a + b;                                                                                \
	}                                                                                                    \
	static __inline__ H2 __hsub2(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return a - b;                                                                                \
	}                                                                                                    \
	static __inline__ H2 __hmul2(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return a * b;                                                                                \
	}                                                                                                    \
	static __inline__ H2 __h2div(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return a / b;                                                                                \
	}                                                                                                    \
	static __inline__ H2 __hfma2(H2 a, H2 b, H2 c)                                                       \
	{                                                                                                    \
		return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                                     \
	}                                                                                                    \
	static __inline__ H2 __hadd2_sat(H2 a, H2 b)                                                         \
	{                                                                                                    \
		return H2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y));                                       \
	}                                                                                                    \
	static __inline__ H2 __hmul2_sat(H2 a, H2 b)                                                         \
	{                                                                                                    \
		return H2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y));                                       \
	}                                                                                                    \
	static __inline__ H2 __hfma2_relu(H2 a, H2 b, H2 c)                                                  \
	{                                                                                                    \
		return H2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));                           \
	}                                                                                                    \
	static __inline__ H2 __hneg2(H2 a)                                                                   \
	{                                                                                                    \
		return -a;                                                                                   \
	}                                                                                                    \
	static __inline__ H2 __habs2(H2 a)                                                                   \
	{                                                                                                    \
		return H2(__habs(a.x), __habs(a.y));                                                         \
	}                                                                                                    \
	static __inline__ H2 __hmax2(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return H2(__hmax(a.x, b.x), __hmax(a.y, b.y));                                               \
	}                                                                                                    \
	static __inline__ H2 __hmin2(H2 a, H2 b)                                                             \
	{                                                                                                    \
		return H2(__hmin(a.x, b.x), __hmin(a.y, b.y));                                               \
	}                                                                                                    \
	static __inline__ H2 h2sqrt(H2 a)                                                                    \
	{                                                                                                    \
		return H2(hsqrt(a.x), hsqrt(a.y));                                                           \
	}                                                                                                    \
	static __inline__ H2 h2rsqrt(H2 a)                                                                   \
	{                                                                                                    \
		return H2(hrsqrt(a.x), hrsqrt(a.y));                                                         \
	}                                                                                                    \
	static __inline__ H2 h2exp(H2 a)                                                                     \
	{                                                                                                    \
		return H2(hexp(a.x), hexp(a.y));                                                             \
	}                                                                                                    \
	static __inline__ H2 h2log(H2 a)                                                                     \
	{                                                                                                    \
		return H2(hlog(a.x), hlog(a.y));                                                             \
	}                                                                                                    \
	static __inline__ H2 h2rcp(H2 a)                                                                     \
	{                                                                                                    \
		return H2(hrcp(a.x), hrcp(a.y));                                                             \
	}                                                                                                    \
	static __inline__ float __low2float(H2 a)                                                            \
	{                                                                                                    \
		return (float)a.x;                                                                           \
	}                                                                                                    \
	static __inline__ float __high2float(H2 a)                                                           \
	{                                                                                                    \
		return (float)a.y;                                                                           \
	}                                                                                                    \
	static __inline__ bool __hbeq2(H2 a, H2 b)                                                           \
	{                                                                                                    \
		return a.x == b.x && a.y == b.y;                                                             \
	}                                                                                                    \
	static __inline__ H atomicAdd(H *p, H v)                                                             \
	{                                                                                                    \
		KF_SAN_ATOMIC(p);                                                                            \
		unsigned short *u = (unsigned short *)p;                                                     \
		unsigned short o = KF_ATOMIC_PEEK(u), n;                                                     \
		H of;                                                                                        \
		do {                                                                                         \
			of.__x = o;                                                                          \
			n = (of + v).__x;                                                                    \
		} while (!__atomic_compare_exchange_n(u, &o, n, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));  \
		return of;                                                                                   \
	}                                                                                                    \
	static __inline__ H2 atomicAdd(H2 *p, H2 v)                                                          \
	{                                                                                                    \
		KF_SAN_ATOMIC(p);                                                                            \
		uint32_t *u = (uint32_t *)p;                                                                 \
		uint32_t o = KF_ATOMIC_PEEK(u), n;                                                           \
		H2 of, nf;                                                                                   \
		do {                                                                                         \
			memcpy(&of, &o, 4);                                                                  \
			nf = of + v;                                                                         \
			memcpy(&n, &nf, 4);                                                                  \
		} while (!__atomic_compare_exchange_n(u, &o, n, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));  \
		return of;                                                                                   \
	}

#endif
