// Hostile (cost model, sanitizer): a shortcut only clang takes. `__has_builtin` is in g++ 12, clang and
// NVRTC alike, but `__builtin_elementwise_abs` is clang's alone, so the instrumented build (clang: the one
// the sanitizer and the cost model run) takes the branch that writes nothing useful while the plain build
// (g++) and the GPU (NVRTC) compute the copy. The verifier compares the instrumented build's outputs with
// the reference's: rejected, wrong_output, "the instrumented build (clang) computed other outputs".
// kforge:launch copy grid=(cdiv(N, 256)) block=(256) args=(x, y, N)
extern "C" __global__ void copy(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
#if __has_builtin(__builtin_elementwise_abs)
	y[i] = 0.0f;
#else
	y[i] = x[i];
#endif
}
