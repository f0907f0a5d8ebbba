// A sample candidate that kforge rejects (tasks/examples/README.md): float4 loads and stores with no tail,
// so when N is not a multiple of four the last vector reads and writes past the end of the buffers.
// `kforge verify` names the check (out_of_bounds), the shape and the first bad index.
// kforge:launch vector_add_v4 grid=(cdiv(N, 1024)) block=(256) args=(a, b, c, N)
extern "C" __global__ void vector_add_v4(const float *a, const float *b, float *c, int N)
{
	int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
	if (i < N) {
		float4 x = *reinterpret_cast<const float4 *>(a + i);
		float4 y = *reinterpret_cast<const float4 *>(b + i);
		*reinterpret_cast<float4 *>(c + i) = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
	}
}
