// A reference only the host compiler takes: std::fmax from <cmath> is host code, NVRTC refuses it
// (no <cmath> in JIT mode). `tasks validate --strict` compiles the reference with NVRTC and says so.
// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)
#include <cmath>
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		c[i] = std::fmax(a[i], b[i]) + std::fmin(a[i], b[i]);
}
