// Reference: Conv2d 3x3 (with bias) + batch-norm in inference mode + ReLU. One thread per output element:
// the convolution in f32 from the bias, then (v - mean) / sqrt(var + eps) * gamma + beta, then ReLU.
// kforge:launch conv2d_bn_relu grid=(cdiv(N*CO*H*W,256)) block=(256) args=(x, w, b, bn_mean, bn_var, gamma, beta, y, N, CI, CO, H, W, eps)
extern "C" __global__ void conv2d_bn_relu(const float *x, const float *w, const float *b, const float *bn_mean,
					   const float *bn_var, const float *gamma, const float *beta, float *y, int N,
					   int CI, int CO, int H, int W, float eps)
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
	float v = (acc - bn_mean[co]) / sqrtf(bn_var[co] + eps) * gamma[co] + beta[co];
	y[o] = v > 0.0f ? v : 0.0f;
}
