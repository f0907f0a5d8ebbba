// llm.c fused_residual_forward_kernel5: a warp per row of the B*T rows, weight and bias staged in dynamic
// shared memory (2*C floats), mean then variance by warp reductions (two passes over the residual the
// warp just wrote). The launch passes N = B*T and sizes the shared memory from C, as llm.c's host code.
// kforge:launch fused_residual_forward_kernel5 grid=(cdiv(B*T, 4)) block=(32, 4) smem=(2 * C * 4) args=(residual, normed, mean, rstd, inp1, inp2, weight, bias, B*T, C, eps)
__device__ inline float warpReduceSum(float val)
{
	for (int offset = 16; offset > 0; offset /= 2)
		val += __shfl_xor_sync(0xFFFFFFFF, val, offset);
	return val;
}
extern "C" __global__ void fused_residual_forward_kernel5(float *residual, float *normed, float *mean, float *rstd,
							  const float *inp1, const float *inp2, const float *weight,
							  const float *bias, int N, int C, float eps)
{
	extern __shared__ float params[];
	float *s_weight = params, *s_bias = params + C;
	for (int i = threadIdx.x + threadIdx.y * 32; i < C; i += 32 * blockDim.y) {
		s_weight[i] = weight[i];
		s_bias[i] = bias[i];
	}
	__syncthreads();
	int idx = blockIdx.x * blockDim.y + threadIdx.y;
	if (idx >= N)
		return;
	residual += (long long)C * idx;
	normed += (long long)C * idx;
	inp1 += (long long)C * idx;
	inp2 += (long long)C * idx;
	float sum = 0.0f;
	for (int c = threadIdx.x; c < C; c += 32) {
		float v = inp1[c] + inp2[c];
		residual[c] = v;
		sum += v;
	}
	float m = warpReduceSum(sum) / C;
	float var = 0.0f;
	for (int c = threadIdx.x; c < C; c += 32) {
		float d = residual[c] - m;
		var += d * d;
	}
	float s = rsqrtf(warpReduceSum(var) / C + eps);
	for (int c = threadIdx.x; c < C; c += 32)
		normed[c] = s_weight[c] * ((residual[c] - m) * s) + s_bias[c];
	if (threadIdx.x == 0) {
		mean[idx] = m;
		rstd[idx] = s;
	}
}
