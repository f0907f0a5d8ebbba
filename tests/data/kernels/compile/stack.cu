// Compile fixture: a local array indexed at run time lives in local memory: a stack frame > 0 bytes;
// two entry functions, each reported separately.
// kforge:launch gather grid=(1) block=(32) args=(x, n)
// kforge:launch small grid=(1) block=(32) args=(x)
extern "C" __global__ void gather(float *x, int n)
{
	float loc[256];
	for (int i = 0; i < 256; i++)
		loc[i] = x[i * n];
	float s = 0.0f;
	for (int i = 0; i < n; i++)
		s += loc[(i * 7) & 255];
	x[0] = s;
}
extern "C" __global__ void small(float *x)
{
	x[threadIdx.x] += 1.0f;
}
