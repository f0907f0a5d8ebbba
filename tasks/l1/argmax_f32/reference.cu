// Reference: argmax over the middle dimension of x[B, R, C]; the first index of the maximum wins (as in
// PyTorch). One thread per output (b, c).
// kforge:launch argmax grid=(cdiv(B*C,256)) block=(256) args=(x, idx, B, R, C)
extern "C" __global__ void argmax(const float *x, long long *idx, int B, int R, int C)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)B * C)
		return;
	long long b = o / C, c = o % C;
	float best = x[(b * R) * C + c];
	long long arg = 0;
	for (int r = 1; r < R; ++r) {
		float v = x[(b * R + r) * C + c];
		if (v > best) {
			best = v;
			arg = r;
		}
	}
	idx[o] = arg;
}
