// Wrong: one write 4352 bytes past the output's end, beyond the 4 KiB guard zone (and its padding), so
// the guards never see it; the sanitizer's bounds are exact.
// kforge:launch relu grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = fmaxf(x[i], 0.0f);
	if (i == 0)
		y[N + 1088] = 0.0f;
}
