// A kernel as it might sit in your own project (tasks/examples/README.md, "Bring your own kernel"):
// out[i] = alpha * a[i] + b[i]. `kforge tasks new scale_add --from tasks/examples/byo/scale_add.cu` makes
// a task of it.
__global__ void scale_add(const float *a, const float *b, float *out, float alpha, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = alpha * a[i] + b[i];
}
