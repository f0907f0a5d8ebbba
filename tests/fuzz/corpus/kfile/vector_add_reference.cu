// Reference for vector_add_f32: one thread per element, no tricks.
// A single f32 add is correctly rounded on every backend, so the task asks for an exact match.
// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)
extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		c[i] = a[i] + b[i];
}
