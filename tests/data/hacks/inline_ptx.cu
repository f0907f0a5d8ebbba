// Unsupported on the cpu backend: inline PTX.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float r;
	if (i < N) {
		asm("add.f32 %0, %1, %2;" : "=f"(r) : "f"(x[i]), "f"(y[i]));
		z[i] = r;
	}
}
