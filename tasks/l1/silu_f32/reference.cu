// Reference: SiLU (Swish) over a B x D tensor, one thread per element.
// kforge:launch act_silu grid=(cdiv(B*D,256)) block=(256) args=(x, y, B, D)
extern "C" __global__ void act_silu(const float *in, float *out, int B, int D)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * D)
		return;
	float x = in[i];
	out[i] = x / (1.0f + expf(-x));
}
