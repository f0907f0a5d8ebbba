// Reference: row-wise softmax of x[B, N] over N, one thread per row, three passes: the row maximum (so
// exp never overflows), the sum of exp(x - max), then the normalised values.
// Storage and math are both f32.
typedef float T;
static __device__ float ld(T v) { return v; }
static __device__ T st(float v) { return v; }

// kforge:launch softmax_rows grid=(cdiv(B,128)) block=(128) args=(x, y, B, N)
extern "C" __global__ void softmax_rows(const T *x, T *y, int B, int N)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const T *xr = x + (long long)row * N;
	T *yr = y + (long long)row * N;
	float m = -3.402823466e+38f /* -FLT_MAX (NVRTC has no <float.h>) */;
	for (int i = 0; i < N; ++i)
		m = fmaxf(m, ld(xr[i]));
	float s = 0.0f;
	for (int i = 0; i < N; ++i)
		s += expf(ld(xr[i]) - m);
	for (int i = 0; i < N; ++i)
		yr[i] = st(expf(ld(xr[i]) - m) / s);
}
