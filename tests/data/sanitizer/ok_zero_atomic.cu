// Correct: the output is zeroed by the harness (kforge:zero, a host cudaMemset) before the launch, then
// every thread adds its partial sum with an atomic: initialised before it is read, never a race.
// kforge:zero y
// kforge:launch rowsum grid=(B, 4) block=(64) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	int row = blockIdx.x;
	float s = 0.0f;
	for (int i = blockIdx.y * 64 + threadIdx.x; i < N; i += 256)
		s += x[row * N + i];
	atomicAdd(&y[row], s);
}
