// Reference: y = A * x for a row-major M x K matrix. One thread per output row, f32 accumulation in
// increasing k.
// kforge:launch matvec grid=(cdiv(M,128)) block=(128) args=(A, x, y, M, K)
extern "C" __global__ void matvec(const float *A, const float *x, float *y, int M, int K)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= M)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += A[(long long)row * K + k] * x[k];
	y[row] = acc;
}
