// A two-pass reduction through a harness-owned scratch buffer that the first pass fully writes.
// Exercises kforge:scratch and a two-line kforge:launch plan: prose that mentions the word is no directive.
// kforge:scratch part f32 (B*cdiv(N,256))
// kforge:launch partial grid=(cdiv(N,256), B) block=(256) args=(x, part, B, N)
// kforge:launch finish grid=(B) block=(1) args=(part, y, B, N)
extern "C" __global__ void partial(const float *x, float *part, int B, int N)
{
	__shared__ float s[256];
	int t = threadIdx.x, i = blockIdx.x * 256 + t, b = blockIdx.y;
	s[t] = i < N ? x[(long long)b * N + i] : 0.0f;
	__syncthreads();
	for (int w = 128; w > 0; w >>= 1) {
		if (t < w)
			s[t] += s[t + w];
		__syncthreads();
	}
	if (t == 0)
		part[b * gridDim.x + blockIdx.x] = s[0];
}
extern "C" __global__ void finish(const float *part, float *y, int B, int N)
{
	int b = blockIdx.x, n = (N + 255) / 256;
	float acc = 0.0f;
	for (int j = 0; j < n; j++)
		acc += part[b * n + j];
	y[b] = acc;
}
