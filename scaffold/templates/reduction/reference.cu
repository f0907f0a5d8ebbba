// Reference for @NAME@ (from the reduction template): a two-pass sum. Pass 1: each thread adds a chunk of
// 1024 elements in order, in double, into the scratch buffer; pass 2: one thread adds the chunks in order.
// Scratch is poisoned before every run, so pass 1 writes every element of it before pass 2 reads it. The
// result is the exact sum rounded about once; the tolerance admits a float tree or atomic sum (its error
// grows with N and with the magnitudes, up to about 1e-5 of the sum of |x| here).
// kforge:scratch partial f64 (cdiv(N, 1024))
// kforge:launch chunk_sums grid=(cdiv(cdiv(N, 1024), 128)) block=(128) args=(x, partial, N)
// kforge:launch total grid=(1) block=(1) args=(partial, y, N)
extern "C" __global__ void chunk_sums(const float *x, double *partial, int N)
{
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long n_chunks = ((long long)N + 1023) / 1024;
	if (c >= n_chunks)
		return;
	long long end = (c + 1) * 1024 < N ? (c + 1) * 1024 : N;
	double acc = 0.0;
	for (long long i = c * 1024; i < end; ++i)
		acc += (double)x[i];
	partial[c] = acc;
}

extern "C" __global__ void total(const double *partial, float *y, int N)
{
	long long n_chunks = ((long long)N + 1023) / 1024;
	double acc = 0.0;
	for (long long c = 0; c < n_chunks; ++c)
		acc += partial[c];
	y[0] = (float)acc;
}
