// Reference: a 3-layer MLP, y = L3(relu(L2(relu(L1(x))))), each L an nn.Linear (w is out x in). Three
// launches of one simple linear kernel; the hidden activations live in scratch.
// kforge:scratch h1 f32 (B*H)
// kforge:scratch h2 f32 (B*H)
// kforge:launch linear grid=(cdiv(H,16), cdiv(B,16)) block=(16,16) args=(x, w1, b1, h1, B, H, D, 1)
// kforge:launch linear grid=(cdiv(H,16), cdiv(B,16)) block=(16,16) args=(h1, w2, b2, h2, B, H, H, 1)
// kforge:launch linear grid=(cdiv(O,16), cdiv(B,16)) block=(16,16) args=(h2, w3, b3, y, B, O, H, 0)

/* y = x @ w^T + b (+ optional ReLU): x is M x K, w is N x K (nn.Linear layout); one thread per output. */
extern "C" __global__ void linear(const float *x, const float *w, const float *b, float *y, int M, int N, int K,
				   int relu)
{
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	if (m >= M || n >= N)
		return;
	float acc = 0.0f;
	for (int k = 0; k < K; ++k)
		acc += x[(long long)m * K + k] * w[(long long)n * K + k];
	acc += b[n];
	y[(long long)m * N + n] = (relu && acc < 0.0f) ? 0.0f : acc;
}
