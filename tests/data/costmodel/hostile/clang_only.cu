// Cost-model corpus, hostile (for ../copy_strided/task.json): a kernel whose code under #ifdef __clang__
// takes a shortcut, a coalesced store of zeros that skips the loads (wrong values, and far cheaper than
// the copy). The sanitizer and cost-model build is clang, the plain cpu build g++, the GPU's NVRTC; the
// cpu backend's kf_device_env.h takes __clang__ away in both cpu builds and NVRTC does not define it, so
// today the shortcut is dead code everywhere and the kernel is the reference's strided copy: it must pass
// verification and the cost model must predict the reference's time for it, never the shortcut's.
// kforge:launch copy_strided grid=(cdiv(32 * cdiv(N, 32), 256)) block=(256) args=(x, y, N, cdiv(N, 32))
extern "C" __global__ void copy_strided(const float *x, float *y, int N, int R)
{
	const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#ifdef __clang__
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
