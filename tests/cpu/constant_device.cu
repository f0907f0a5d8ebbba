// Conformance: __constant__ and __device__ globals (with initializers), a __device__ global counter.
// kforge:launch cdev grid=(4) block=(32) args=(out)
__constant__ float coeffs[4] = {1.0f, -2.0f, 0.5f, 4.0f};
__device__ int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ unsigned long long visits;
extern "C" __global__ void cdev(float *out)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	atomicAdd(&visits, 1ull);
	out[i] = coeffs[i % 4] * (float)table[i % 8];
}
