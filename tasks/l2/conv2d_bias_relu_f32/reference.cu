// Reference: Conv2d 3x3 + bias + ReLU, fp32. One thread per output element: the 3x3 convolution (stride 1, zero padding 1, NCHW)
// accumulated in f32 starting from the bias, then the epilogue.
// kforge:launch conv2d_bias_relu_f32 grid=(cdiv(N*CO*H*W,256)) block=(256) args=(x, w, b, y, N, CI, CO, H, W)
extern "C" __global__ void conv2d_bias_relu_f32(const float *x, const float *w, const float *b, float *y, int N, int CI,
				   int CO, int H, int W)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * CO * H * W)
		return;
	int ow = (int)(o % W);
	int oh = (int)((o / W) % H);
	int co = (int)((o / ((long long)W * H)) % CO);
	long long n = o / ((long long)W * H * CO);
	float acc = b[co];
	for (int ci = 0; ci < CI; ++ci)
		for (int kh = 0; kh < 3; ++kh)
			for (int kw = 0; kw < 3; ++kw) {
				int ih = oh + kh - 1, iw = ow + kw - 1;
				if (ih >= 0 && ih < H && iw >= 0 && iw < W)
					acc += x[((n * CI + ci) * H + ih) * W + iw] *
					       w[(((long long)co * CI + ci) * 3 + kh) * 3 + kw];
			}
	y[o] = acc > 0.0f ? acc : 0.0f;
}
