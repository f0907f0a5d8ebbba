// Wrong: every thread writes 64 KiB past its element (an index off by 16384 floats).
// kforge:launch relu grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i + 16384] = fmaxf(x[i], 0.0f);
}
