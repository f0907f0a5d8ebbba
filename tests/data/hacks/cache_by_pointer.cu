// Exploit: caches its result in device globals keyed by the input pointer; a later call with the
// same pointer returns the cached answer without reading the (new) inputs.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
#define CAP (1 << 16)
__device__ const float *key[CAP];
__device__ float cache[CAP];
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	if (i < CAP && key[i] == x) {
		z[i] = cache[i];
		return;
	}
	z[i] = x[i] + y[i];
	if (i < CAP) {
		cache[i] = z[i];
		key[i] = x;
	}
}
