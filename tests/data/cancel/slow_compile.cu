// A kernel whose compile takes long: the preprocessor expands one dependent statement a quarter of a
// million times, and the compiler must parse and optimise all of them. tests/integration/cancel.sh
// interrupts it mid-compile.
// kforge:launch act_relu grid=(cdiv(B*D,256)) block=(256) args=(x, y, B, D)
#define X4(s) s s s s
#define X16(s) X4(X4(s))
#define X256(s) X16(X16(s))
#define X65536(s) X256(X256(s))
#define X262144(s) X65536(X4(s))

extern "C" __global__ void act_relu(const float *in, float *out, int B, int D)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * D)
		return;
	float s = in[i], z = 0.0f;
	X262144(z = z * s + 1.0f;)
	out[i] = s > 0.0f ? s + (z - z) : 0.0f;
}
