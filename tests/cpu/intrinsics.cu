// Conformance: bit intrinsics and reinterpretations, __ldg, integer min/max.
// kforge:launch intrin grid=(1) block=(32) args=(x, out)
extern "C" __global__ void intrin(const unsigned *x, unsigned *out)
{
	unsigned t = threadIdx.x;
	unsigned v = __ldg(&x[t]);
	unsigned *o = out + 10 * t;
	o[0] = (unsigned)__float_as_int(1.5f + (float)t);
	o[1] = (unsigned)__float2int_rn(__int_as_float(0x40200000) * (float)t); /* 2.5 * t, ties to even */
	o[2] = (unsigned)__popc(v);
	o[3] = (unsigned)__clz((int)v);
	o[4] = (unsigned)__ffs((int)v);
	o[5] = __brev(v);
	o[6] = __byte_perm(v, 0x11223344u, 0x3210u + t);
	o[7] = (unsigned)max((int)v, 12345) + min(v, 99u);
	o[8] = __umulhi(v, 0x9e3779b9u);
	o[9] = (unsigned)__popcll(((unsigned long long)v << 32) | v) + (unsigned)__clzll((long long)v);
}
