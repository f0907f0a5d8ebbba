// Buggy on purpose: writes one element past the end of out (no bounds check); sanitize mode reports it
// with this file's line.
// kforge:launch oob grid=(1) block=(65) args=(out)
extern "C" __global__ void oob(float *out)
{
	out[threadIdx.x] = 1.0f;
}
