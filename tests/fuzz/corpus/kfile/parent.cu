// Row-wise softmax, one block per row (the parent every edit in the corpus applies to).
// kforge:launch softmax_rows grid=(B) block=(256) smem=(256*4) args=(x, y, B, N)
extern "C" __global__ void softmax_rows(const float *x, float *y, int B, int N)
{
    extern __shared__ float red[];
    int row = blockIdx.x;
    const float *xr = x + (long long)row * N;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        m = fmaxf(m, xr[i]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        sum += expf(xr[i] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        y[(long long)row * N + i] = expf(xr[i] - m) / sum;
}
