// A kernel that never returns: every thread spins. tests/integration/cancel.sh interrupts it while it
// runs in the worker.
// kforge:launch act_relu grid=(cdiv(B*D,256)) block=(256) args=(x, y, B, D)
extern "C" __global__ void act_relu(const float *in, float *out, int B, int D)
{
	volatile unsigned long long n = 0;
	for (;;)
		n = n + 1;
}
