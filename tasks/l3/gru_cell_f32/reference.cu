// Reference: one GRU cell step (torch.nn.GRUCell, gate order r, z, n). One thread per (b, j):
// r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
// h' = (1 - z) * n + z * h. Dot products in f32 in increasing k.
// kforge:launch gru_cell grid=(cdiv(H,64), B) block=(64) args=(x, h, w_ih, w_hh, b_ih, b_hh, h_out, B, I, H)
static __device__ float dot(const float *a, const float *w, long long row, int n)
{
	float acc = 0.0f;
	for (int k = 0; k < n; ++k)
		acc += a[k] * w[row * n + k];
	return acc;
}

extern "C" __global__ void gru_cell(const float *x, const float *h, const float *w_ih, const float *w_hh,
				     const float *b_ih, const float *b_hh, float *h_out, int B, int I, int H)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	long long b = blockIdx.y;
	if (j >= H)
		return;
	const float *xb = x + b * I, *hb = h + b * H;
	long long rr = j, zr = (long long)H + j, nr = 2LL * H + j;
	float r = 1.0f / (1.0f + expf(-(dot(xb, w_ih, rr, I) + b_ih[rr] + dot(hb, w_hh, rr, H) + b_hh[rr])));
	float z = 1.0f / (1.0f + expf(-(dot(xb, w_ih, zr, I) + b_ih[zr] + dot(hb, w_hh, zr, H) + b_hh[zr])));
	float n = tanhf(dot(xb, w_ih, nr, I) + b_ih[nr] + r * (dot(hb, w_hh, nr, H) + b_hh[nr]));
	h_out[b * H + j] = (1.0f - z) * n + z * hb[j];
}
