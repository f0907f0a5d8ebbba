// Correct but slow: every thread recomputes its element 200 times (redundant loads and stores).
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N) {
		for (int r = 0; r < 200; r++) {
			volatile float s = x[i] + y[i];
			z[i] = s;
		}
	}
}
