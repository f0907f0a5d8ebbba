// A sample candidate for vector_add_f32, to try `kforge verify` and `kforge profile` on (tasks/examples/README.md):
// each thread adds four consecutive elements and checks every index against N, so any N works, including
// the hidden and edge sizes that are not multiples of four.
// kforge:launch vector_add4 grid=(cdiv(N, 1024)) block=(256) args=(a, b, c, N)
extern "C" __global__ void vector_add4(const float *a, const float *b, float *c, int N)
{
	long long base = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
	for (int k = 0; k < 4; k++) {
		long long i = base + k;
		if (i < N)
			c[i] = a[i] + b[i];
	}
}
