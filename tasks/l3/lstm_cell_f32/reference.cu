// Reference: one LSTM cell step (torch.nn.LSTMCell, gate order i, f, g, o). One thread per (b, j) computes
// the four gate pre-activations as f32 dot products, then c' = f*c + i*g and h' = o*tanh(c').
// kforge:launch lstm_cell grid=(cdiv(H,64), B) block=(64) args=(x, h, c, w_ih, w_hh, b_ih, b_hh, h_out, c_out, B, I, H)
static __device__ float gate(const float *x, const float *h, const float *w_ih, const float *w_hh, const float *b_ih,
			     const float *b_hh, long long row, int I, int H)
{
	float acc = b_ih[row] + b_hh[row];
	for (int k = 0; k < I; ++k)
		acc += x[k] * w_ih[row * I + k];
	for (int k = 0; k < H; ++k)
		acc += h[k] * w_hh[row * H + k];
	return acc;
}

static __device__ float sigm(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

extern "C" __global__ void lstm_cell(const float *x, const float *h, const float *c, const float *w_ih,
				      const float *w_hh, const float *b_ih, const float *b_hh, float *h_out, float *c_out,
				      int B, int I, int H)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	long long b = blockIdx.y;
	if (j >= H)
		return;
	const float *xb = x + b * I, *hb = h + b * H;
	float ig = sigm(gate(xb, hb, w_ih, w_hh, b_ih, b_hh, j, I, H));
	float fg = sigm(gate(xb, hb, w_ih, w_hh, b_ih, b_hh, (long long)H + j, I, H));
	float gg = tanhf(gate(xb, hb, w_ih, w_hh, b_ih, b_hh, 2LL * H + j, I, H));
	float og = sigm(gate(xb, hb, w_ih, w_hh, b_ih, b_hh, 3LL * H + j, I, H));
	float cn = fg * c[b * H + j] + ig * gg;
	c_out[b * H + j] = cn;
	h_out[b * H + j] = og * tanhf(cn);
}
