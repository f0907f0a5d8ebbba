// One thread per output channel, the sum over the B*T rows in double.
// kforge:launch bias_backward grid=(cdiv(OC, 64)) block=(64) args=(dbias, dout, B*T, OC)
extern "C" __global__ void bias_backward(float *dbias, const float *dout, int BT, int OC)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= OC)
		return;
	double s = 0.0;
	for (int r = 0; r < BT; r++)
		s += dout[(long long)r * OC + c];
	dbias[c] = (float)s;
}
