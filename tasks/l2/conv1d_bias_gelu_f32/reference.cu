// Reference: Conv1d (kernel 5, stride 1, zero padding 2) + bias + exact GELU. One thread per output element.
// kforge:launch conv1d_bias_gelu grid=(cdiv(N*CO*L,256)) block=(256) args=(x, w, b, y, N, CI, CO, L)
extern "C" __global__ void conv1d_bias_gelu(const float *x, const float *w, const float *b, float *y, int N, int CI,
					     int CO, int L)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)N * CO * L)
		return;
	int l = (int)(o % L);
	int co = (int)((o / L) % CO);
	long long n = o / ((long long)L * CO);
	float h = b[co];
	for (int ci = 0; ci < CI; ++ci)
		for (int k = 0; k < 5; ++k) {
			int li = l + k - 2;
			if (li >= 0 && li < L)
				h += x[(n * CI + ci) * L + li] * w[((long long)co * CI + ci) * 5 + k];
		}
	y[o] = 0.5f * h * (1.0f + erff(h * 0.70710678118654752f));
}
