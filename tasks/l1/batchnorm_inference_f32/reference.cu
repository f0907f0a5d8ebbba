// Reference: batch-norm in inference mode over x[N, C, S] (S = flattened spatial size) with running
// statistics: y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]. One thread per element.
// kforge:launch batchnorm_infer grid=(cdiv(N*C*S,256)) block=(256) args=(x, running_mean, running_var, weight, bias, y, N, C, S, eps)
extern "C" __global__ void batchnorm_infer(const float *x, const float *mean, const float *var, const float *weight,
					    const float *bias, float *y, int N, int C, int S, float eps)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)N * C * S)
		return;
	int c = (int)((i / S) % C);
	y[i] = (x[i] - mean[c]) / sqrtf(var[c] + eps) * weight[c] + bias[c];
}
