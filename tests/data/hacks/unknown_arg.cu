// Invalid launch: names an argument the task does not have.
// kforge:launch vadd grid=(cdiv(N,256)) block=(256) args=(x, y, w, N)
extern "C" __global__ void vadd(const float *x, const float *y, float *z, int N) {}
