// Reference: mean squared error over all elements of pred[B, N] and target[B, N]. Launch 1: one thread per
// row sums its squared differences in double; launch 2: one thread adds the rows and divides.
// kforge:scratch row_sum f64 (B)
// kforge:launch mse_rows grid=(cdiv(B,128)) block=(128) args=(pred, target, row_sum, B, N)
// kforge:launch mse_mean grid=(1) block=(1) args=(row_sum, loss, B, N)
extern "C" __global__ void mse_rows(const float *pred, const float *target, double *row_sum, int B, int N)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	double acc = 0.0;
	for (int i = 0; i < N; ++i) {
		double d = (double)pred[(long long)row * N + i] - (double)target[(long long)row * N + i];
		acc += d * d;
	}
	row_sum[row] = acc;
}

extern "C" __global__ void mse_mean(const double *row_sum, float *loss, int B, int N)
{
	double acc = 0.0;
	for (int i = 0; i < B; ++i)
		acc += row_sum[i];
	loss[0] = (float)(acc / ((double)B * N));
}
