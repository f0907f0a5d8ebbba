// Conformance: atomics across blocks that run in parallel (int, unsigned, unsigned long long, float,
// double; Add Sub Max Min Exch CAS And Or Xor Inc).
// kforge:launch atomics grid=(64) block=(128) args=(x, acc)
extern "C" __global__ void atomics(const int *x, void *accv)
{
	int *ai = (int *)accv;
	unsigned *au = (unsigned *)accv;
	unsigned long long *al = (unsigned long long *)((char *)accv + 64);
	float *af = (float *)((char *)accv + 128);
	double *ad = (double *)((char *)accv + 192);
	int v = x[blockIdx.x * blockDim.x + threadIdx.x];
	atomicAdd(&ai[0], v);
	atomicSub(&ai[1], v);
	atomicMax(&ai[2], v);
	atomicMin(&ai[3], v);
	atomicAdd(&au[4], 1u);
	atomicAnd(&au[5], ~(1u << (v & 31)));
	atomicOr(&au[6], 1u << (v & 31));
	atomicXor(&au[7], (unsigned)v);
	atomicInc(&au[8], 99u);
	atomicExch(&ai[9], 7);
	int old = ai[10];
	for (;;) {
		int seen = atomicCAS(&ai[10], old, old + 2);
		if (seen == old)
			break;
		old = seen;
	}
	atomicAdd(&al[0], (unsigned long long)v * 1000000007ull);
	atomicAdd(&af[0], 0.5f);
	atomicAdd(&ad[0], (double)v * 0.25);
	atomicMax(&au[11], (unsigned)v * 3u);
}
