// A huge initializer: 10^8 elements through nested macros. g++ once took 4 GB in seconds on this;
// now its address-space limit (and cgroup) stop it: a compile_error, and the run goes on.
// kforge:launch vadd grid=(cdiv(N, 256)) block=(256) args=(x, y, z, N)
#define KF_B0 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
#define KF_B1 KF_B0, KF_B0, KF_B0, KF_B0, KF_B0, KF_B0, KF_B0, KF_B0, KF_B0, KF_B0
#define KF_B2 KF_B1, KF_B1, KF_B1, KF_B1, KF_B1, KF_B1, KF_B1, KF_B1, KF_B1, KF_B1
#define KF_B3 KF_B2, KF_B2, KF_B2, KF_B2, KF_B2, KF_B2, KF_B2, KF_B2, KF_B2, KF_B2
#define KF_B4 KF_B3, KF_B3, KF_B3, KF_B3, KF_B3, KF_B3, KF_B3, KF_B3, KF_B3, KF_B3
#define KF_B5 KF_B4, KF_B4, KF_B4, KF_B4, KF_B4, KF_B4, KF_B4, KF_B4, KF_B4, KF_B4
#define KF_B6 KF_B5, KF_B5, KF_B5, KF_B5, KF_B5, KF_B5, KF_B5, KF_B5, KF_B5, KF_B5
#define KF_B7 KF_B6, KF_B6, KF_B6, KF_B6, KF_B6, KF_B6, KF_B6, KF_B6, KF_B6, KF_B6
__device__ int kf_big[] = {KF_B7};
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i] + (float)(kf_big[0] - 1);
}
