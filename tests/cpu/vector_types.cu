// Conformance: vector types with GPU alignment, make_*, float4 reinterpret loads and stores.
// kforge:launch vec4 grid=(cdiv(N,256)) block=(64) args=(x, out, meta, N)
#include <cuda_runtime.h>
extern "C" __global__ void vec4(const float *x, float *out, int *meta, int n)
{
	int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
	if (i + 3 < n) {
		float4 v = reinterpret_cast<const float4 *>(x)[i / 4];
		float4 r = make_float4(v.w, v.z, v.y, v.x);
		*reinterpret_cast<float4 *>(out + i) = r;
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		meta[0] = alignof(float4);
		meta[1] = alignof(float2);
		meta[2] = alignof(int4);
		meta[3] = alignof(double2);
		meta[4] = sizeof(float3);
		meta[5] = alignof(uint2);
		meta[6] = alignof(short2);
		meta[7] = alignof(char4);
		int2 a = make_int2(3, 4);
		uint4 b = make_uint4(1, 2, 3, 4);
		meta[8] = a.x * a.y + (int)(b.x + b.y + b.z + b.w);
		dim3 d(5);
		meta[9] = (int)(d.x * 100 + d.y * 10 + d.z);
	}
}
