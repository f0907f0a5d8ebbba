// Reference: embedding lookup, y[t, :] = table[idx[t], :]; one thread per output element.
// kforge:launch embedding grid=(cdiv(T*D,256)) block=(256) args=(idx, table, y, T, V, D)
extern "C" __global__ void embedding(const int *idx, const float *table, float *y, int T, int V, int D)
{
	long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (o >= (long long)T * D)
		return;
	long long t = o / D, d = o % D;
	y[o] = table[(long long)idx[t] * D + d];
}
