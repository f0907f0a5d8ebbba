// Reference: ELU over a B x D tensor, one thread per element.
// kforge:launch act_elu grid=(cdiv(B*D,256)) block=(256) args=(x, y, B, D, alpha)
extern "C" __global__ void act_elu(const float *in, float *out, int B, int D, float alpha)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * D)
		return;
	float x = in[i];
	out[i] = x > 0.0f ? x : alpha * expm1f(x);
}
