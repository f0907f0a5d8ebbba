// Reference: depthwise 2-D convolution, 3x3 kernel per channel, stride 1, zero padding 1.
// x[N, C, H, W], w[C, 3, 3], b[C] -> y[N, C, H, W]. One thread per output element.
// kforge:launch dwconv2d grid=(cdiv(N*C*H*W,256)) block=(256) args=(x, w, b, y, N, C, H, W)
extern "C" __global__ void dwconv2d(const float *x, const float *w, const float *b, float *y, int N, int C, int H,
				     int W)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * C * H * W)
		return;
	int ow = (int)(o % W);
	int oh = (int)((o / W) % H);
	long long nc = o / ((long long)W * H); /* n * C + c */
	int c = (int)(nc % C);
	float acc = b[c];
	for (int kh = 0; kh < 3; ++kh)
		for (int kw = 0; kw < 3; ++kw) {
			int ih = oh + kh - 1, iw = ow + kw - 1;
			if (ih >= 0 && ih < H && iw >= 0 && iw < W)
				acc += x[(nc * H + ih) * W + iw] * w[(c * 3 + kh) * 3 + kw];
		}
	y[o] = acc;
}
