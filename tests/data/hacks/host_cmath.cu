// Host-only C++: <cmath> and std::fabs compile with g++ but not with NVRTC (the issue's
// best.cu that passed the cpu backend and failed kforge compile). Must be compile_error everywhere.
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
#include <cmath>
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = 0.5f * (x[i] + std::fabs(x[i]));
}
