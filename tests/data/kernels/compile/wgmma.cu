// Compile fixture: Hopper-only PTX (wgmma) in inline asm; compiles only for sm_90a, which kforge must
// pick by itself when asked for sm_90.
// kforge:launch fence grid=(1) block=(128) args=(y)
extern "C" __global__ void fence(float *y)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	y[threadIdx.x] = 1.0f;
}
