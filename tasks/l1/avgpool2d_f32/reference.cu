// Reference: avg pooling, 2x2 window, stride 2, ceil mode: x[N, C, H, W] -> y[N, C, cdiv(H,2), cdiv(W,2)].
// One thread per output element; windows are clipped at the bottom/right edge.
// kforge:launch avgpool2d grid=(cdiv(N*C*cdiv(H,2)*cdiv(W,2),256)) block=(256) args=(x, y, N, C, H, W)
extern "C" __global__ void avgpool2d(const float *x, float *y, int N, int C, int H, int W)
{
	int HO = (H + 1) / 2, WO = (W + 1) / 2;
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * C * HO * WO)
		return;
	int ow = (int)(o % WO);
	int oh = (int)((o / WO) % HO);
	long long nc = o / ((long long)WO * HO);
	float acc = 0.0f;
	int cnt = 0;
	for (int dh = 0; dh < 2; ++dh)
		for (int dw = 0; dw < 2; ++dw) {
			int ih = 2 * oh + dh, iw = 2 * ow + dw;
			if (ih < H && iw < W) {
				acc += x[(nc * H + ih) * W + iw];
				cnt += 1;
			}
		}
	y[o] = acc / (float)cnt;
}
