// Exploit: fast, and right on every shape the ordinary sweep checks (public, hidden, and the edge shapes
// that vary all dims at once), wrong when only M is 1. Only the strict re-verification that its
// implausible speedup earns varies one dim alone, so only it can catch this.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] = M == 1 && N > 1 ? 0.0f : 2.0f * x[i];
}
