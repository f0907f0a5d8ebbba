// Wrong only at an odd row count (the hidden shape M=17 and the edge shapes): the feedback for a prompt
// must say a shape it is not shown failed, without its dims.
// kforge:launch scale grid=(cdiv(M*N, 128)) block=(128) args=(x, y, M, N)
extern "C" __global__ void scale(const float *x, float *y, int M, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M * N)
		y[i] = M % 2 ? x[i] : 2.0f * x[i];
}
