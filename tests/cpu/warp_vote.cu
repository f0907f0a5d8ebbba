// Conformance: __ballot_sync, __any_sync, __all_sync, __activemask; lanes that exited are not counted.
// kforge:launch warp_vote grid=(1) block=(48) args=(x, out)
extern "C" __global__ void warp_vote(const int *x, unsigned *out)
{
	unsigned t = threadIdx.x;
	int v = x[t];
	if (v < 0)
		return; /* exited lanes drop out of every later collective */
	unsigned live = __activemask();
	unsigned b = __ballot_sync(live, v > 10);
	int any = __any_sync(live, v > 50);
	int all = __all_sync(live, v >= 0);
	out[4 * t + 0] = live;
	out[4 * t + 1] = b;
	out[4 * t + 2] = (unsigned)any;
	out[4 * t + 3] = (unsigned)all;
}
