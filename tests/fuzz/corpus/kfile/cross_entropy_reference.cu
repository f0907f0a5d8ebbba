// Reference: mean cross-entropy of logits[B, V] against integer targets[B]. Launch 1: one thread per row
// computes logsumexp(row) - row[target] with the max subtracted first. Launch 2: one thread averages the
// B row losses in double.
// kforge:scratch row_loss f32 (B)
// kforge:launch ce_rows grid=(cdiv(B,128)) block=(128) args=(logits, targets, row_loss, B, V)
// kforge:launch ce_mean grid=(1) block=(1) args=(row_loss, loss, B)
extern "C" __global__ void ce_rows(const float *logits, const int *targets, float *row_loss, int B, int V)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *x = logits + (long long)row * V;
	float m = -3.402823466e+38f /* -FLT_MAX (NVRTC has no <float.h>) */;
	for (int i = 0; i < V; ++i)
		m = fmaxf(m, x[i]);
	float s = 0.0f;
	for (int i = 0; i < V; ++i)
		s += expf(x[i] - m);
	row_loss[row] = m + logf(s) - x[targets[row]];
}

extern "C" __global__ void ce_mean(const float *row_loss, float *loss, int B)
{
	double acc = 0.0;
	for (int i = 0; i < B; ++i)
		acc += (double)row_loss[i];
	loss[0] = (float)(acc / B);
}
