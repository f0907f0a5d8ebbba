// Reference: scaled dot-product attention (no mask), O = softmax(Q K^T / sqrt(D)) V per (batch, head).
// One thread per query row: pass 1 finds the row max of the scores, pass 2 sums exp(score - max), pass 3
// accumulates the probability-weighted values in f32 scratch, then the row is scaled and stored.
// Storage and math are both f32.
typedef float T;
static __device__ float ld(T v) { return v; }
static __device__ T st(float v) { return v; }

// kforge:scratch acc f32 (B*H*T*D)
// kforge:launch sdpa grid=(cdiv(B*H*T,64)) block=(64) args=(q, k, v, o, acc, B, H, T, D)
extern "C" __global__ void sdpa(const T *q, const T *k, const T *v, T *o, float *acc, int B, int H, int T_, int D)
{
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; /* (b, h, i) flattened */
	if (r >= (long long)B * H * T_)
		return;
	long long bh = r / T_;
	const T *qi = q + r * D;
	const T *kb = k + bh * T_ * D;
	const T *vb = v + bh * T_ * D;
	float *a = acc + r * D;
	float scale = 1.0f / sqrtf((float)D);
	float m = -3.402823466e+38f /* -FLT_MAX (NVRTC has no <float.h>) */;
	for (int j = 0; j < T_; ++j) {
		float s = 0.0f;
		for (int d = 0; d < D; ++d)
			s += ld(qi[d]) * ld(kb[(long long)j * D + d]);
		m = fmaxf(m, s * scale);
	}
	float l = 0.0f;
	for (int d = 0; d < D; ++d)
		a[d] = 0.0f;
	for (int j = 0; j < T_; ++j) {
		float s = 0.0f;
		for (int d = 0; d < D; ++d)
			s += ld(qi[d]) * ld(kb[(long long)j * D + d]);
		float p = expf(s * scale - m);
		l += p;
		for (int d = 0; d < D; ++d)
			a[d] += p * ld(vb[(long long)j * D + d]);
	}
	for (int d = 0; d < D; ++d)
		o[r * D + d] = st(a[d] / l);
}
