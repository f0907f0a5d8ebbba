// Buggy on purpose: never finishes; the session's step timeout kills the worker.
// kforge:launch spin grid=(1) block=(32) args=(out)
extern "C" __global__ void spin(volatile int *out)
{
	while (out[0] != 12345)
		out[1] = out[1] + 1;
}
