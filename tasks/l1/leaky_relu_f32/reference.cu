// Reference: Leaky ReLU over a B x D tensor, one thread per element.
// kforge:launch act_leaky_relu grid=(cdiv(B*D,256)) block=(256) args=(x, y, B, D, negative_slope)
extern "C" __global__ void act_leaky_relu(const float *in, float *out, int B, int D, float negative_slope)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * D)
		return;
	float x = in[i];
	out[i] = x >= 0.0f ? x : negative_slope * x;
}
