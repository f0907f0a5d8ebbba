// Reference for @NAME@ (from the conv template): direct 3x3 cross-correlation, one thread per output
// element, the sum in a fixed order (c, r, s) in fp32; indices are 64-bit where a product of dims can pass
// 2^31.
// kforge:launch conv3x3 grid=(cdiv(N*K*H*W, 256)) block=(256) args=(x, wt, b, y, N, C, K, H, W)
extern "C" __global__ void conv3x3(const float *x, const float *wt, const float *b, float *y, int N, int C, int K,
				    int H, int W)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * K * H * W)
		return;
	int ow = (int)(o % W);
	int oh = (int)((o / W) % H);
	int k = (int)((o / ((long long)W * H)) % K);
	long long n = o / ((long long)W * H * K);
	float acc = b[k];
	for (int c = 0; c < C; ++c)
		for (int r = 0; r < 3; ++r)
			for (int s = 0; s < 3; ++s) {
				int ih = oh + r - 1, iw = ow + s - 1;
				if (ih >= 0 && ih < H && iw >= 0 && iw < W)
					acc += x[((n * C + c) * H + ih) * W + iw] * wt[(((long long)k * C + c) * 3 + r) * 3 + s];
			}
	y[o] = acc;
}
