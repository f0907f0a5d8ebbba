// Hang: never terminates.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	volatile int spin = 1;
	while (spin)
		;
}
