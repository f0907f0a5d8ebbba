// Conformance: __half/__half2 and __nv_bfloat16/__nv_bfloat162 conversions (round to nearest even)
// and arithmetic, as cuda_fp16.h and cuda_bf16.h define them.
// kforge:launch halfk grid=(1) block=(64) args=(x, hout, bout, fout)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halfk(const float *x, __half *hout, __nv_bfloat16 *bout, float *fout)
{
	unsigned t = threadIdx.x;
	float a = x[t], b = x[63 - t];
	__half ha = __float2half(a), hb = __float2half_rn(b);
	hout[4 * t + 0] = ha;
	hout[4 * t + 1] = __hadd(ha, hb);
	hout[4 * t + 2] = ha * hb;
	__half2 h2 = __floats2half2_rn(a, b);
	__half2 s2 = __hfma2(h2, h2, __float2half2_rn(1.0f));
	hout[4 * t + 3] = __high2half(s2);
	__nv_bfloat16 ba = __float2bfloat16(a), bb = __float2bfloat16(b);
	bout[3 * t + 0] = ba;
	bout[3 * t + 1] = ba + bb;
	__nv_bfloat162 p = __floats2bfloat162_rn(a, b);
	bout[3 * t + 2] = __hmul(p.x, p.y);
	fout[3 * t + 0] = __half2float(ha) + __bfloat162float(ba);
	float2 f2 = __half22float2(h2);
	fout[3 * t + 1] = f2.x - f2.y;
	fout[3 * t + 2] = (float)(hb > ha) + __low2float(s2);
}
