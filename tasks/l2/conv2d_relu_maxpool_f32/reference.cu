// Reference: Conv2d 3x3 + bias + ReLU, then 2x2 max pooling (stride 2, ceil mode). Launch 1 writes the
// activated convolution to scratch (one thread per element); launch 2 pools it (one thread per output).
// kforge:scratch a f32 (N*CO*H*W)
// kforge:launch conv2d_bias_relu grid=(cdiv(N*CO*H*W,256)) block=(256) args=(x, w, b, a, N, CI, CO, H, W)
// kforge:launch maxpool2x2 grid=(cdiv(N*CO*cdiv(H,2)*cdiv(W,2),256)) block=(256) args=(a, y, N, CO, H, W)
extern "C" __global__ void conv2d_bias_relu(const float *x, const float *w, const float *b, float *a, int N, int CI,
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
	a[o] = acc > 0.0f ? acc : 0.0f;
}

extern "C" __global__ void maxpool2x2(const float *a, float *y, int N, int C, int H, int W)
{
	int HO = (H + 1) / 2, WO = (W + 1) / 2;
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * C * HO * WO)
		return;
	int ow = (int)(o % WO);
	int oh = (int)((o / WO) % HO);
	long long nc = o / ((long long)WO * HO);
	float m = a[(nc * H + 2 * oh) * W + 2 * ow];
	for (int dh = 0; dh < 2; ++dh)
		for (int dw = 0; dw < 2; ++dw) {
			int ih = 2 * oh + dh, iw = 2 * ow + dw;
			if (ih < H && iw < W)
				m = fmaxf(m, a[(nc * H + ih) * W + iw]);
		}
	y[o] = m;
}
