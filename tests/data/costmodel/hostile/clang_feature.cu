// Cost-model corpus, hostile (for ../copy_strided/task.json): the same shortcut as clang_only.cu, behind a
// test that does tell the builds apart: __has_feature is a macro for NVRTC and clang (kf_device_env.h does
// not take it away) but not for g++ 12. The plain cpu build (g++) runs the correct strided copy; the
// sanitizer/cost-model build (clang) and the GPU (NVRTC) write zeros. It is wrong on the GPU, so
// verification must reject it; a cost model that measures the clang build would time the shortcut.
// kforge:launch copy_strided grid=(cdiv(32 * cdiv(N, 32), 256)) block=(256) args=(x, y, N, cdiv(N, 32))
extern "C" __global__ void copy_strided(const float *x, float *y, int N, int R)
{
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#ifdef __has_feature
	if (t < N)
		y[t] = 0.0f;
#else
	if (t >= 32LL * R)
		return;
	const long long i = (t % R) * 32 + t / R;
	if (i < N)
		y[i] = x[i];
#endif
}
