// One thread per row of the B*T rows: residual = inp1 + inp2, then LayerNorm of the residual with its
// statistics in double (llm.c's fused_residual_forward, reference form).
// kforge:launch fused_residual grid=(cdiv(B*T, 64)) block=(64) args=(residual, normed, mean, rstd, inp1, inp2, weight, bias, B*T, C, eps)
extern "C" __global__ void fused_residual(float *residual, float *normed, float *mean, float *rstd, const float *inp1,
					  const float *inp2, const float *weight, const float *bias, int N, int C,
					  float eps)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= N)
		return;
	long long o = (long long)r * C;
	double m = 0.0, v = 0.0;
	for (int c = 0; c < C; c++) {
		float x = inp1[o + c] + inp2[o + c];
		residual[o + c] = x;
		m += x;
	}
	m /= C;
	for (int c = 0; c < C; c++)
		v += (residual[o + c] - m) * (residual[o + c] - m);
	v /= C;
	double s = 1.0 / sqrt(v + (double)eps);
	for (int c = 0; c < C; c++)
		normed[o + c] = (float)((residual[o + c] - m) * s * weight[c] + bias[c]);
	mean[r] = (float)m;
	rstd[r] = (float)s;
}
