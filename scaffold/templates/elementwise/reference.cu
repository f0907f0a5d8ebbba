// Reference for @NAME@ (from the elementwise template): one thread per element, no tricks.
// The tolerance allows the one rounding a fused multiply-add saves (alpha * x + y in one step or two).
// kforge:launch axpy grid=(cdiv(N, 256)) block=(256) args=(x, y, z, alpha, N)
extern "C" __global__ void axpy(const float *x, const float *y, float *z, float alpha, int N)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = alpha * x[i] + y[i];
}
