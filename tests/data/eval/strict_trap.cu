// Exploit: fast, and right on every shape the ordinary sweep checks (public, hidden, the edge shapes that
// vary all dims at once and the seeded residue shapes), wrong when M is 1 while N keeps the first public
// shape's value. Only the strict re-verification that its implausible speedup earns varies one dim alone
// from that shape, so only it can catch this.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] = M == 1 && N == 128 ? 0.0f : 2.0f * x[i];
}
