// Conformance: the math library and fast intrinsics kernels use (float and double forms).
// kforge:launch math_f grid=(1) block=(64) args=(x, out)
#define NF 26
extern "C" __global__ void math_f(const float *x, float *out)
{
	unsigned t = threadIdx.x;
	float a = x[t];           /* in (0.1, 2) */
	float b = x[(t + 7) % 64];
	float *o = out + NF * t;
	o[0] = expf(a);
	o[1] = __expf(a);
	o[2] = exp2f(a);
	o[3] = logf(a);
	o[4] = __logf(a);
	o[5] = sqrtf(a);
	o[6] = rsqrtf(a);
	o[7] = __fdividef(a, b);
	o[8] = fmaf(a, b, 1.0f);
	o[9] = __fmaf_rn(a, b, -1.0f);
	o[10] = tanhf(a - 1.0f);
	o[11] = erff(a - 1.0f);
	o[12] = fminf(a, b);
	o[13] = fmaxf(a, b);
	o[14] = copysignf(a, -b);
	o[15] = floorf(a * 3.0f);
	o[16] = ceilf(a * 3.0f);
	o[17] = powf(a, b);
	o[18] = (float)exp((double)a);
	o[19] = (float)log((double)a);
	o[20] = (float)sqrt((double)a);
	o[21] = (float)tanh((double)a - 1.0);
	o[22] = fabsf(-a) + __saturatef(a - 1.0f);
	o[23] = sinf(a) + cosf(b);
	o[24] = max(a, b) - min(a, b);
	o[25] = (float)(max(3, (int)t) + min(7u, t));
}
