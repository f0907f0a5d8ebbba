// Compile fixture: cuda_fp16.h and cuda_bf16.h resolve through the toolkit include path.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
// kforge:launch convert grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void convert(const __half *x, __nv_bfloat16 *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = __float2bfloat16(__half2float(__hmul(x[i], __float2half(0.5f))));
}
