// Reference: max over the middle dimension of x[B, R, C]; one thread per output (b, c) walks r in order.
// kforge:launch reduce_max grid=(cdiv(B*C,256)) block=(256) args=(x, y, B, R, C)
extern "C" __global__ void reduce_max(const float *x, float *y, int B, int R, int C)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)B * C)
		return;
	long long b = o / C, c = o % C;
	float acc = -3.402823466e+38f /* -FLT_MAX */;
	for (int r = 0; r < R; ++r) {
		float v = x[(b * R + r) * C + c];
		acc = fmaxf(acc, v);
	}
	y[o] = acc;
}
