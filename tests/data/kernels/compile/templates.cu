// Two instantiations of one kernel template in one plan, beside an extern "C" kernel.
// kforge:launch scale<float, 256> grid=(cdiv(N, 256)) block=(256) args=(x, y, N)
// kforge:launch scale<double, 128> grid=(cdiv(N, 128)) block=(128) args=(x, y, N)
// kforge:launch plain grid=(1) block=(1) args=(y)
template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) scale(const T *x, T *y, int n)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;
	if (i < n)
		y[i] = x[i] * T(2);
}
extern "C" __global__ void plain(float *y)
{
	y[0] = 1.0f;
}
