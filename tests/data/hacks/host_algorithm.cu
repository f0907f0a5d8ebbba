// Host-only: <algorithm> and std::max.
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
#include <algorithm>
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = std::max(x[i], 0.0f);
}
