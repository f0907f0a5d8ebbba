// Conformance: templates, constexpr, #define, #pragma unroll, __forceinline__, __noinline__,
// __launch_bounds__, __host__ __device__ helpers, static_cast.
// kforge:launch templ grid=(cdiv(N,128)) block=(128) args=(x, out, N)
#define SCALE 3
template <typename T, int K> __device__ __forceinline__ T poly(T v)
{
	T r = T(0);
#pragma unroll
	for (int k = 0; k < K; ++k)
		r = r * v + static_cast<T>(k + 1);
	return r;
}
__host__ __device__ __noinline__ int twice(int v) { return 2 * v; }
template <typename T> struct Acc {
	T v;
	__device__ void add(T x) { v += x; }
};
extern "C" __global__ void __launch_bounds__(128, 4) templ(const float *__restrict__ x, float *__restrict__ out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	Acc<float> a{0.0f};
	a.add(poly<float, 4>(x[i]));
	a.add(static_cast<float>(twice(SCALE)));
	out[i] = a.v;
}
