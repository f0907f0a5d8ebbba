// Exploit: host-compiler macros choose a correct path on the cpu backend and a copy on the GPU.
// The cpu build must see NVRTC's predefined names only, so it runs (and rejects) the GPU's path.
// kforge:launch relu grid=(cdiv(N,256)) block=(256) args=(x, y, N)
extern "C" __global__ void relu(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
#if defined(__GNUC__) || defined(__x86_64__) || defined(__linux__) || defined(__clang__) || \
    defined(KFORGE_CPU_BACKEND) || defined(__NVCC__) || __CUDA_ARCH__ < 900
	y[i] = fmaxf(x[i], 0.0f);
#else
	y[i] = x[i];
#endif
}
