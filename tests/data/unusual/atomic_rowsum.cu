// Float atomics: every thread adds its element into the row sum (order-dependent rounding).
// The output is harness-owned and poisoned, so a first launch zeroes it.
// kforge:launch zero grid=(cdiv(B,128)) block=(128) args=(y, B)
// kforge:launch rowsum grid=(cdiv(N,256), B) block=(256) args=(x, y, B, N)
extern "C" __global__ void zero(float *y, int B)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < B)
		y[i] = 0.0f;
}
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y;
	if (i < N)
		atomicAdd(&y[b], x[(long long)b * N + i]);
}
