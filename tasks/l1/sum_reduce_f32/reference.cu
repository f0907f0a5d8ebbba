// Reference: sum over the middle dimension of x[B, R, C]; one thread per output (b, c) walks r in order.
// kforge:launch reduce_sum grid=(cdiv(B*C,256)) block=(256) args=(x, y, B, R, C)
extern "C" __global__ void reduce_sum(const float *x, float *y, int B, int R, int C)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)B * C)
		return;
	long long b = o / C, c = o % C;
	float acc = 0.0f;
	for (int r = 0; r < R; ++r) {
		float v = x[(b * R + r) * C + c];
		acc += v;
	}
	y[o] = acc;
}
