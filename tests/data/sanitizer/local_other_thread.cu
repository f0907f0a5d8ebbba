// Wrong: thread 0 publishes the address of its own local array through shared memory and every thread
// stores its partial sum there. A local variable is private to its thread on a GPU; on the cpu backend
// every fiber's stack is ordinary memory, so the sum comes out right there.
// kforge:launch rowsum grid=(B) block=(32) args=(x, y, B, N)
extern "C" __global__ void rowsum(const float *x, float *y, int B, int N)
{
	__shared__ float *acc;
	float mine[32];
	int t = threadIdx.x, row = blockIdx.x;
	if (t == 0)
		acc = mine;
	__syncthreads();
	float s = 0.0f;
	for (int i = t; i < N; i += 32)
		s += x[row * N + i];
	acc[t] = s;
	__syncthreads();
	if (t == 0) {
		float r = 0.0f;
		for (int k = 0; k < 32; k++)
			r += mine[k];
		y[row] = r;
	}
}
