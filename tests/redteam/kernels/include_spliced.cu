// The include rules read the source as the preprocessor does: a block comment that ends on the line
// before the '#', and a directive split by a backslash-space-newline (GCC accepts both).
// kforge:launch vadd grid=(cdiv(N, 256)) block=(256) args=(x, y, z, N)
/* a comment
*/ #inc\   
lude "/etc/hostname"
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		z[i] = x[i] + y[i];
}
