// Compile fixture: an undefined identifier; NVRTC must reject it with a message naming 'undefined_name'.
// kforge:launch broken grid=(1) block=(32) args=(y)
extern "C" __global__ void broken(float *y)
{
	y[threadIdx.x] = undefined_name;
}
