// llm.c-style bias gradient: the host zeroes dbias (cudaMemset), then each block sums a 32-column by
// 256-row tile in shared memory and adds it with one atomicAdd per column. The row count is B*T.
// kforge:zero dbias
// kforge:launch matmul_backward_bias_kernel grid=(cdiv(OC, 32), cdiv(B*T, 256)) block=(32, 8) args=(dbias, dout, B*T, OC)
extern "C" __global__ void matmul_backward_bias_kernel(float *dbias, const float *dout, int BT, int OC)
{
	__shared__ float part[8][32];
	int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 256;
	float s = 0.0f;
	if (c < OC)
		for (int r = r0 + threadIdx.y; r < r0 + 256 && r < BT; r += 8)
			s += dout[(long long)r * OC + c];
	part[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.y == 0 && c < OC) {
		float t = 0.0f;
		for (int k = 0; k < 8; k++)
			t += part[k][threadIdx.x];
		atomicAdd(&dbias[c], t);
	}
}
