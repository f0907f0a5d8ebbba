// Reference: cosine similarity of matching rows of a[B, D] and b[B, D], one thread per row:
// y = dot(a, b) / (max(|a|, eps) * max(|b|, eps)), eps = 1e-8.
// kforge:launch cosine_rows grid=(cdiv(B,128)) block=(128) args=(a, b, y, B, D, eps)
extern "C" __global__ void cosine_rows(const float *a, const float *b, float *y, int B, int D, float eps)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= B)
		return;
	const float *ar = a + (long long)row * D, *br = b + (long long)row * D;
	float dot = 0.0f, na = 0.0f, nb = 0.0f;
	for (int i = 0; i < D; ++i) {
		dot += ar[i] * br[i];
		na += ar[i] * ar[i];
		nb += br[i] * br[i];
	}
	y[row] = dot / (fmaxf(sqrtf(na), eps) * fmaxf(sqrtf(nb), eps));
}
