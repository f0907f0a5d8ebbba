// Wrong: an index so far past the output (2^62 bytes) that the address is not even canonical: the plain
// run dies of SIGSEGV; the crash is re-run under the sanitizer, which stops at the access and names its
// line.
// kforge:launch relu grid=(cdiv(N,128)) block=(128) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < N ? fmaxf(x[i], 0.0f) : 0.0f;
	if (i < N)
		y[(size_t)i + ((size_t)1 << 60)] = v;
}
