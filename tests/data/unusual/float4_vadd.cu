// Vectorized float4 loads for the bulk, scalar code for the tail.
// kforge:launch vadd grid=(cdiv(cdiv(N,4),128)) block=(128) args=(x, y, z, N)
extern "C" __global__ void vadd(const float *__restrict__ x, const float *__restrict__ y, float *__restrict__ z, int N)
{
	int v = blockIdx.x * blockDim.x + threadIdx.x, i = 4 * v;
	if (i + 3 < N) {
		float4 a = reinterpret_cast<const float4 *>(x)[v];
		float4 b = reinterpret_cast<const float4 *>(y)[v];
		reinterpret_cast<float4 *>(z)[v] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
	} else {
		for (; i < N; i++)
			z[i] = x[i] + y[i];
	}
}
