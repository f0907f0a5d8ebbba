/* The cpu backend's conformance corpus (the .cu files in tests/cpu): each kernel is compiled by kf_compile
 * for the cpu backend, loaded by the worker's cpu ops table (kf_backend_cpu, from the worker's library
 * libkforge-worker.a) and run; outputs are checked against host C computations. Also: the
 * unsupported-construct scan, compile errors with the user's line, a missing __syncthreads caught by the
 * shuffled fiber order, a divergent barrier reported as a deadlock, and an out-of-bounds write reported with
 * its source line in sanitize mode. */
#include <dlfcn.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kf.h"
#include "sandbox/cpu/cpu.h"
#include "sandbox/sandbox.h"
#include "testing.h"

/* The worker-side ops table under test (the worker binary links the same library). */
#include "sandbox/worker/backend.h"

#define MSG_LEN 1024
static char msgbuf[MSG_LEN];
static char *const msg = msgbuf;
static int mod_fd = -1;

/* Compiles tests/cpu/NAME.cu and loads it into the cpu backend; false (with a FAIL) on any error. */
static bool mod_open_path(const char *path, uint64_t seed, bool sanitize)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kfile *k = NULL;
	if (kf_kfile_load(path, &k, &err) != KF_OK) {
		CHECKF(0, "%s", err.msg);
		return false;
	}
	struct kf_compile_opts o = {
	    .backend = KF_BACKEND_CPU, .sanitize = sanitize, .cache_dir = getenv("KFORGE_CACHE")};
	struct kf_compiled *c = NULL;
	enum kf_status st = kf_compile(k, &o, &c, &err);
	CHECKF(st == KF_OK, "%s: %s %s", path, err.msg, c ? c->log : "");
	bool ok = false;
	if (st == KF_OK) {
		int fd = memfd_create("kf-cpu-module", MFD_CLOEXEC);
		CHECK(fd >= 0 && write(fd, c->image, c->image_len) == (ssize_t)c->image_len);
		struct kf_worker_opts wo = {
		    .backend = KF_BACKEND_CPU, .shuffle_seed = seed, .sanitize = sanitize};
		struct kf_device_info info;
		CHECKF(kf_backend_cpu.init(&wo, &info, msg, MSG_LEN) == KF_OK, "%s", msg);
		const char *names[8];
		size_t n = k->n_kernels < 8 ? k->n_kernels : 8;
		for (size_t i = 0; i < n; i++)
			names[i] = k->kernels[i];
		st = kf_backend_cpu.load(c->image, c->image_len, fd, names, n, msg, MSG_LEN);
		CHECKF(st == KF_OK, "load %s: %s", path, msg);
		ok = st == KF_OK;
		/* kept open while loaded: AddressSanitizer reads the module's debug lines through this path
		 */
		mod_fd = fd;
	}
	kf_compiled_free(c);
	kf_kfile_free(k);
	return ok;
}

static bool mod_open(const char *name, uint64_t seed, bool sanitize)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/cpu/%s.cu", name);
	return mod_open_path(path, seed, sanitize);
}

static enum kf_status mod_run(const char *kernel, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
			      uint32_t by, uint32_t bz, uint32_t smem, void **args)
{
	struct kf_be_launch l = {.kernel = kernel,
				 .grid = {gx, gy, gz},
				 .block = {bx, by, bz},
				 .smem_bytes = smem,
				 .args = args,
				 .line = 1};
	struct kf_be_run_stats s;
	bool fatal = false;
	msg[0] = '\0';
	return kf_backend_cpu.run(&l, 1, true, &s, &fatal, msg, MSG_LEN);
}

static uint64_t allocs[64];
static size_t n_allocs;

static void *dmem(size_t n_bytes)
{
	uint64_t p = 0;
	CHECK(kf_backend_cpu.alloc(n_bytes, &p, msg, MSG_LEN) == KF_OK);
	if (n_allocs < KF_ARRAY_SIZE(allocs))
		allocs[n_allocs++] = p;
	memset((void *)(uintptr_t)p, 0, n_bytes);
	return (void *)(uintptr_t)p;
}

/* Frees the test's device buffers and unloads the module. */
static void mod_close(void)
{
	for (size_t i = 0; i < n_allocs; i++)
		kf_backend_cpu.free(allocs[i]);
	n_allocs = 0;
	kf_backend_cpu.shutdown();
	if (mod_fd >= 0)
		close(mod_fd);
	mod_fd = -1;
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}
static float rndf(float lo, float hi)
{
	return lo + (hi - lo) * (float)(rnd() & 0xffffff) / 16777216.0f;
}

static void test_vadd(void)
{
	if (!mod_open("vadd", 0, false))
		return;
	int n = 1000;
	float *x = dmem(n * 4), *y = dmem(n * 4), *o = dmem(n * 4);
	for (int i = 0; i < n; i++) {
		x[i] = rndf(-1, 1);
		y[i] = rndf(-1, 1);
	}
	void *args[] = {&x, &y, &o, &n};
	CHECKF(mod_run("vadd", 4, 1, 1, 256, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += o[i] != x[i] + 2.0f * y[i];
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static void test_grid3d(void)
{
	if (!mod_open("grid3d", 0, false))
		return;
	int total = 3 * 2 * 2 * 4 * 3 * 2;
	int *o = dmem(total * 16);
	void *args[] = {&o};
	CHECKF(mod_run("grid3d", 3, 2, 2, 4, 3, 2, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int bz = 0; bz < 2; bz++)
		for (int by = 0; by < 2; by++)
			for (int bx = 0; bx < 3; bx++)
				for (int tz = 0; tz < 2; tz++)
					for (int ty = 0; ty < 3; ty++)
						for (int tx = 0; tx < 4; tx++) {
							int b = bx + 3 * (by + 2 * bz),
							    t = tx + 4 * (ty + 3 * tz), g = b * 24 + t;
							bad += o[4 * g] != (tx | ty << 4 | tz << 8);
							bad += o[4 * g + 1] != (bx | by << 4 | bz << 8);
							bad += o[4 * g + 2] != (4 | 3 << 4 | 2 << 8);
							bad +=
							    o[4 * g + 3] != (3 | 2 << 4 | 2 << 8 | 32 << 12);
						}
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static void test_shared_reduce(void)
{
	if (!mod_open("shared_reduce", 7, false))
		return;
	int n = 256 * 37 + 11, nb = (n + 255) / 256;
	float *x = dmem(n * 4), *o = dmem(nb * 4);
	for (int i = 0; i < n; i++)
		x[i] = (float)(int)(rnd() % 100); /* integers: the sum is exact in any order */
	void *args[] = {&x, &o, &n};
	CHECKF(mod_run("block_sum", nb, 1, 1, 256, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int b = 0; b < nb; b++) {
		float s = 0;
		for (int i = b * 256; i < n && i < (b + 1) * 256; i++)
			s += x[i];
		bad += o[b] != s;
	}
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static void test_dyn_smem(void)
{
	if (!mod_open("dyn_smem", 3, false))
		return;
	int B = 5, N = 200;
	float *x = dmem(B * N * 4), *o = dmem(B * N * 4);
	for (int i = 0; i < B * N; i++)
		x[i] = (float)i;
	void *args[] = {&x, &o};
	CHECKF(mod_run("reverse", B, 1, 1, N, 1, 1, N * 4 + 16, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int b = 0; b < B; b++)
		for (int t = 0; t < N; t++)
			bad += o[b * N + t] != x[b * N + N - 1 - t] + 1.0f;
	CHECK_EQ_INT(bad, 0);
	/* more dynamic shared memory than a block may have is refused before running */
	CHECK_EQ_INT(mod_run("reverse", B, 1, 1, N, 1, 1, 300000, args), KF_ERR_INVALID);
	mod_close();
}

static void test_sync_count(void)
{
	if (!mod_open("sync_count", 0, false))
		return;
	int *x = dmem(192 * 4), *o = dmem(6 * 4);
	int expect[6] = {0};
	for (int b = 0; b < 2; b++)
		for (int t = 0; t < 96; t++) {
			int v = (int)(rnd() % 200) - 50;
			if (b == 1 && t == 77)
				v = 5000;
			x[b * 96 + t] = v;
			expect[3 * b] += v > 0;
		}
	for (int b = 0; b < 2; b++) {
		expect[3 * b + 1] = 1;
		expect[3 * b + 2] = b == 1;
	}
	void *args[] = {&x, &o};
	CHECKF(mod_run("sync_count", 2, 1, 1, 96, 1, 1, 0, args) == KF_OK, "%s", msg);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(o[i], expect[i]);
	mod_close();
}

static void test_warp_shfl(void)
{
	if (!mod_open("warp_shfl", 99, false))
		return;
	float *x = dmem(128 * 4), *o = dmem(128 * 6 * 4);
	for (int i = 0; i < 128; i++)
		x[i] = (float)(i * 3 + 1);
	void *args[] = {&x, &o};
	CHECKF(mod_run("warp_shfl", 2, 1, 1, 64, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int i = 0; i < 128; i++) {
		int w = i & ~31, l = i & 31;
		bad += o[6 * i + 0] != x[w + 3];
		bad += o[6 * i + 1] != (l >= 2 ? x[i - 2] : x[i]);
		bad += o[6 * i + 2] != (l + 5 < 32 ? x[i + 5] : x[i]);
		bad += o[6 * i + 3] != x[i ^ 1];
		bad += o[6 * i + 4] != ((l % 8) + 1 < 8 ? x[i + 1] : x[i]);
		bad += o[6 * i + 5] != (float)((31 - l) * 2);
	}
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static void test_warp_vote(void)
{
	if (!mod_open("warp_vote", 5, false))
		return;
	int *x = dmem(48 * 4);
	unsigned *o = dmem(48 * 16);
	for (int i = 0; i < 48; i++)
		x[i] = (i % 5 == 3) ? -1 : (int)(rnd() % 60);
	x[40] = 55; /* one lane of the partial second warp is over 50 */
	void *args[] = {&x, &o};
	CHECKF(mod_run("warp_vote", 1, 1, 1, 48, 1, 1, 0, args) == KF_OK, "%s", msg);
	for (int w = 0; w < 2; w++) {
		unsigned live = 0, bal = 0;
		int any = 0;
		for (int l = 0; l < 32 && w * 32 + l < 48; l++) {
			int v = x[w * 32 + l];
			if (v < 0)
				continue;
			live |= 1u << l;
			bal |= (unsigned)(v > 10) << l;
			any |= v > 50;
		}
		for (int l = 0; l < 32 && w * 32 + l < 48; l++) {
			int t = w * 32 + l;
			if (x[t] < 0)
				continue;
			CHECK_EQ_INT(o[4 * t], live);
			CHECK_EQ_INT(o[4 * t + 1], bal);
			CHECK_EQ_INT(o[4 * t + 2], any);
			CHECK_EQ_INT(o[4 * t + 3], 1);
		}
	}
	mod_close();
}

static void test_warp_reduce(void)
{
	if (!mod_open("warp_reduce", 0, false))
		return;
	int *x = dmem(128 * 4), *o = dmem(4 * 4 * 4);
	for (int i = 0; i < 128; i++)
		x[i] = (int)(rnd() % 1000) - 300;
	void *args[] = {&x, &o};
	CHECKF(mod_run("warp_reduce", 2, 1, 1, 64, 1, 1, 0, args) == KF_OK, "%s", msg);
	for (int w = 0; w < 4; w++) {
		int s = 0, mn = 1 << 30;
		unsigned mx = 0;
		for (int l = 0; l < 32; l++) {
			int v = x[w * 32 + l];
			s += v;
			mn = v < mn ? v : mn;
			mx = (unsigned)v > mx ? (unsigned)v : mx;
		}
		CHECK_EQ_INT(o[4 * w], s);
		CHECK_EQ_INT(o[4 * w + 1], mn);
		CHECK_EQ_INT((unsigned)o[4 * w + 2], mx);
		CHECK_EQ_INT(o[4 * w + 3], s);
	}
	mod_close();
}

static void test_atomics(void)
{
	if (!mod_open("atomics", 0, false))
		return;
	int n = 64 * 128;
	int *x = dmem(n * 4);
	char *acc = dmem(256);
	int *ai = (int *)acc;
	unsigned *au = (unsigned *)acc;
	ai[2] = -1000000;
	ai[3] = 1000000;
	au[5] = 0xffffffffu;
	long long sum = 0;
	int mx = -1000000, mn = 1000000;
	unsigned orr = 0, andd = 0xffffffffu, xr = 0, umx = 0;
	unsigned long long lsum = 0;
	for (int i = 0; i < n; i++) {
		int v = (int)(rnd() % 100000) - 20000;
		x[i] = v;
		sum += v;
		mx = v > mx ? v : mx;
		mn = v < mn ? v : mn;
		andd &= ~(1u << (v & 31));
		orr |= 1u << (v & 31);
		xr ^= (unsigned)v;
		lsum += (unsigned long long)v * 1000000007ull;
		umx = (unsigned)v * 3u > umx ? (unsigned)v * 3u : umx;
	}
	void *args[] = {&x, &acc};
	CHECKF(mod_run("atomics", 64, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
	CHECK_EQ_INT(ai[0], (int)sum);
	CHECK_EQ_INT(ai[1], (int)-sum);
	CHECK_EQ_INT(ai[2], mx);
	CHECK_EQ_INT(ai[3], mn);
	CHECK_EQ_INT(au[4], n);
	CHECK_EQ_INT(au[5], andd);
	CHECK_EQ_INT(au[6], orr);
	CHECK_EQ_INT(au[7], xr);
	CHECK_EQ_INT(au[8], n % 100);
	CHECK_EQ_INT(ai[9], 7);
	CHECK_EQ_INT(ai[10], 2 * n);
	CHECK_EQ_INT(au[11], umx);
	CHECK(*(unsigned long long *)(acc + 64) == lsum);
	CHECK_NEAR(*(float *)(acc + 128), 0.5 * n, 0);
	CHECK_NEAR(*(double *)(acc + 192), 0.25 * (double)sum, 0);
	mod_close();
}

static void test_fence_last_block(void)
{
	if (!mod_open("fence_last_block", 11, false))
		return;
	int n = 128 * 50 + 3, nb = (n + 127) / 128;
	float *x = dmem(n * 4), *part = dmem(nb * 4), *o = dmem(4);
	unsigned *ticket = dmem(4);
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] = (float)(int)(rnd() % 16);
	void *args[] = {&x, &part, &ticket, &o, &n};
	CHECKF(mod_run("fence_sum", nb, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
	CHECK_NEAR(*o, s, 0);
	CHECK_EQ_INT(*ticket, nb); /* one atomicInc per block, none wrapped */
	mod_close();
}

static void test_math(void)
{
	if (!mod_open("math", 0, false))
		return;
	float *x = dmem(64 * 4), *o = dmem(64 * 26 * 4);
	for (int i = 0; i < 64; i++)
		x[i] = rndf(0.1f, 2.0f);
	void *args[] = {&x, &o};
	CHECKF(mod_run("math_f", 1, 1, 1, 64, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int t = 0; t < 64; t++) {
		float a = x[t], b = x[(t + 7) % 64];
		float e[26] = {expf(a),
			       expf(a),
			       exp2f(a),
			       logf(a),
			       logf(a),
			       sqrtf(a),
			       1.0f / sqrtf(a),
			       a / b,
			       fmaf(a, b, 1.0f),
			       fmaf(a, b, -1.0f),
			       tanhf(a - 1.0f),
			       erff(a - 1.0f),
			       fminf(a, b),
			       fmaxf(a, b),
			       copysignf(a, -b),
			       floorf(a * 3.0f),
			       ceilf(a * 3.0f),
			       powf(a, b),
			       (float)exp((double)a),
			       (float)log((double)a),
			       (float)sqrt((double)a),
			       (float)tanh((double)a - 1.0),
			       fabsf(-a) + (a - 1.0f > 0 ? (a - 1.0f < 1 ? a - 1.0f : 1) : 0),
			       sinf(a) + cosf(b),
			       fmaxf(a, b) - fminf(a, b),
			       (float)((t > 3 ? t : 3) + (t < 7 ? t : 7))};
		for (int f = 0; f < 26; f++)
			if (!(fabsf(o[26 * t + f] - e[f]) <= 1e-6f * fmaxf(1.0f, fabsf(e[f])))) {
				if (bad++ < 5)
					fprintf(stderr, "  math f%d t%d: %.9g vs %.9g\n", f, t, o[26 * t + f],
						e[f]);
			}
	}
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static unsigned brev32(unsigned v)
{
	unsigned r = 0;
	for (int i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

static void test_intrinsics(void)
{
	if (!mod_open("intrinsics", 0, false))
		return;
	unsigned *x = dmem(32 * 4), *o = dmem(320 * 4);
	for (int i = 0; i < 32; i++)
		x[i] = i == 0 ? 0 : rnd() >> (i % 9);
	void *args[] = {&x, &o};
	CHECKF(mod_run("intrin", 1, 1, 1, 32, 1, 1, 0, args) == KF_OK, "%s", msg);
	for (unsigned t = 0; t < 32; t++) {
		unsigned v = x[t], *r = o + 10 * t;
		float f = 1.5f + (float)t;
		unsigned fb;
		memcpy(&fb, &f, 4);
		CHECK_EQ_INT(r[0], fb);
		CHECK_EQ_INT(r[1], (unsigned)(int)nearbyintf(2.5f * (float)t));
		CHECK_EQ_INT(r[2], __builtin_popcount(v));
		CHECK_EQ_INT(r[3], v ? __builtin_clz(v) : 32);
		CHECK_EQ_INT(r[4], __builtin_ffs((int)v));
		CHECK_EQ_INT(r[5], brev32(v));
		uint64_t pair = ((uint64_t)0x11223344u << 32) | v;
		unsigned s = 0x3210u + t, e6 = 0;
		for (int i = 0; i < 4; i++)
			e6 |= (unsigned)((pair >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
		CHECK_EQ_INT(r[6], e6);
		CHECK_EQ_INT(r[7], (unsigned)((int)v > 12345 ? (int)v : 12345) + (v < 99u ? v : 99u));
		CHECK_EQ_INT(r[8], (unsigned)(((uint64_t)v * 0x9e3779b9u) >> 32));
		CHECK_EQ_INT(r[9], 2 * __builtin_popcount(v) + (v ? __builtin_clzll((uint64_t)v) : 64));
	}
	mod_close();
}

static void test_vector_types(void)
{
	if (!mod_open("vector_types", 0, false))
		return;
	int n = 1024;
	float *x = dmem(n * 4), *o = dmem(n * 4);
	int *meta = dmem(10 * 4);
	for (int i = 0; i < n; i++)
		x[i] = (float)i;
	void *args[] = {&x, &o, &meta, &n};
	CHECKF(mod_run("vec4", 4, 1, 1, 64, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += o[i] != x[(i & ~3) + 3 - (i & 3)];
	CHECK_EQ_INT(bad, 0);
	int expect[10] = {16, 8, 16, 16, 12, 8, 4, 4, 12 + 10, 511};
	for (int i = 0; i < 10; i++)
		CHECK_EQ_INT(meta[i], expect[i]);
	mod_close();
}

/* Host reference conversions, written independently of the shim: exact rounding via double. */
static uint16_t ref_f2h(float f)
{
	if (isnan(f))
		return 0x7fff;
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	double a = fabs((double)f);
	if (a >= 65520.0)
		return sign | 0x7c00;
	int e;
	double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	if (a == 0)
		return sign;
	double unit = e - 1 < -14 ? ldexp(1.0, -24) : ldexp(1.0, e - 1 - 10);
	double q = nearbyint(a / unit); /* ties to even in the default rounding mode */
	double v = q * unit;
	(void)m;
	/* encode v */
	if (v < ldexp(1.0, -14))
		return sign | (uint16_t)q;
	int ee;
	double mm = frexp(v, &ee);
	return sign | (uint16_t)((ee - 1 + 15) << 10) | (uint16_t)((mm * 2 - 1) * 1024);
}
static float ref_h2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	if (e == 31)
		return m ? NAN : ((h & 0x8000) ? -INFINITY : INFINITY);
	double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
	return (float)((h & 0x8000) ? -v : v);
}
static uint16_t ref_f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint32_t lo = u & 0xffff, hi = u >> 16;
	if (lo > 0x8000 || (lo == 0x8000 && (hi & 1)))
		hi++;
	return (uint16_t)hi;
}
static float ref_bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static void test_half(void)
{
	if (!mod_open("half", 0, false))
		return;
	float *x = dmem(64 * 4), *fo = dmem(64 * 3 * 4);
	uint16_t *ho = dmem(64 * 4 * 2), *bo = dmem(64 * 3 * 2);
	for (int i = 0; i < 64; i++)
		x[i] = rndf(-8, 8);
	x[0] = 1.0f + 1.0f / 2048.0f; /* exactly halfway between two halves: ties to even (1.0) */
	x[1] = 1.0f + 3.0f / 2048.0f; /* halfway, rounds up to even */
	x[2] = 65519.0f;              /* just under the overflow threshold */
	x[3] = 3.0e-6f;               /* a half subnormal */
	x[4] = 1.00390625f;           /* 1 + 2^-8: halfway in bfloat16, ties to even */
	x[5] = 1.01171875f;           /* 1 + 3*2^-8: halfway, rounds up */
	void *args[] = {&x, &ho, &bo, &fo};
	CHECKF(mod_run("halfk", 1, 1, 1, 64, 1, 1, 0, args) == KF_OK, "%s", msg);
	int bad = 0;
	for (int t = 0; t < 64; t++) {
		float a = x[t], b = x[63 - t];
		uint16_t ha = ref_f2h(a), hb = ref_f2h(b);
		float fa = ref_h2f(ha), fb = ref_h2f(hb);
		bad += ho[4 * t] != ha;
		bad += ho[4 * t + 1] != ref_f2h(fa + fb);
		bad += ho[4 * t + 2] != ref_f2h(fa * fb);
		bad += ho[4 * t + 3] != ref_f2h(fmaf(fb, fb, 1.0f));
		uint16_t ba = ref_f2bf(a), bb = ref_f2bf(b);
		bad += bo[3 * t] != ba;
		bad += bo[3 * t + 1] != ref_f2bf(ref_bf2f(ba) + ref_bf2f(bb));
		bad += bo[3 * t + 2] != ref_f2bf(ref_bf2f(ba) * ref_bf2f(bb));
		bad += fo[3 * t] != fa + ref_bf2f(ba);
		bad += fo[3 * t + 1] != fa - fb;
		bad += fo[3 * t + 2] != (float)(fb > fa) + ref_h2f(ref_f2h(fmaf(fa, fa, 1.0f)));
		if (bad && t < 8) {
			fprintf(stderr, "  half t=%d a=%.9g b=%.9g:", t, a, b);
			for (int q = 0; q < 4; q++)
				fprintf(stderr, " %04x", ho[4 * t + q]);
			fprintf(stderr, " | %04x %04x %04x | %04x %04x | %.9g %.9g %.9g\n", ha,
				ref_f2h(fa + fb), ref_f2h(fa * fb), ref_f2h(fmaf(fb, fb, 1.0f)),
				ref_f2bf(ref_bf2f(ba) + ref_bf2f(bb)), fo[3 * t], fo[3 * t + 1],
				fo[3 * t + 2]);
		}
	}
	CHECK_EQ_INT(ho[0], 0x3c00);
	CHECK_EQ_INT(ho[4], 0x3c02);
	CHECK_EQ_INT(bo[12], 0x3f80);
	CHECK_EQ_INT(bo[15], 0x3f82);
	CHECK_EQ_INT(bad, 0);
	mod_close();
}

static void test_templates_and_globals(void)
{
	if (mod_open("templates", 0, false)) {
		int n = 300;
		float *x = dmem(n * 4), *o = dmem(n * 4);
		for (int i = 0; i < n; i++)
			x[i] = rndf(-2, 2);
		void *args[] = {&x, &o, &n};
		CHECKF(mod_run("templ", 3, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
		int bad = 0;
		for (int i = 0; i < n; i++) {
			float v = x[i], r = 0;
			for (int k = 0; k < 4; k++)
				r = r * v + (float)(k + 1);
			bad += o[i] != r + 6.0f;
		}
		CHECK_EQ_INT(bad, 0);
		mod_close();
	}
	if (mod_open("constant_device", 0, false)) {
		float *o = dmem(128 * 4);
		void *args[] = {&o};
		CHECKF(mod_run("cdev", 4, 1, 1, 32, 1, 1, 0, args) == KF_OK, "%s", msg);
		static const float c[4] = {1, -2, 0.5f, 4};
		static const int tb[8] = {3, 1, 4, 1, 5, 9, 2, 6};
		int bad = 0;
		for (int i = 0; i < 128; i++)
			bad += o[i] != c[i % 4] * (float)tb[i % 8];
		CHECK_EQ_INT(bad, 0);
		mod_close();
	}
}

static void test_coop_groups(void)
{
	if (!mod_open("coop_groups", 21, false))
		return;
	int *x = dmem(256 * 4), *o = dmem(6 * 4);
	for (int i = 0; i < 256; i++)
		x[i] = (int)(rnd() % 1000);
	void *args[] = {&x, &o};
	CHECKF(mod_run("cg_sum", 2, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
	for (int b = 0; b < 2; b++) {
		int s = 0, m = 0;
		for (int i = 0; i < 128; i++)
			s += x[b * 128 + i];
		for (int i = 40; i < 48; i++)
			m = x[b * 128 + i] > m ? x[b * 128 + i] : m;
		CHECK_EQ_INT(o[3 * b], s);
		CHECK_EQ_INT(o[3 * b + 1], m);
		CHECK_EQ_INT(o[3 * b + 2], x[b * 128 + 43]);
	}
	mod_close();
}

/* The example tasks' reference kernels (tasks/examples) against host C, at one odd shape each. */
static void test_example_references(void)
{
	if (mod_open_path("tasks/examples/vector_add_f32/reference.cu", 3, false)) {
		int n = 1000;
		float *a = dmem(n * 4), *b = dmem(n * 4), *c = dmem(n * 4);
		for (int i = 0; i < n; i++) {
			a[i] = rndf(-3, 3);
			b[i] = rndf(-3, 3);
		}
		void *args[] = {&a, &b, &c, &n};
		CHECKF(mod_run("vector_add", (n + 255) / 256, 1, 1, 256, 1, 1, 0, args) == KF_OK, "%s", msg);
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += c[i] != a[i] + b[i];
		CHECK_EQ_INT(bad, 0);
		mod_close();
	}
	if (mod_open_path("tasks/examples/softmax_rows_f32/reference.cu", 3, false)) {
		int B = 5, N = 1001;
		float *x = dmem(B * N * 4), *y = dmem(B * N * 4);
		for (int i = 0; i < B * N; i++)
			x[i] = rndf(-10, 10);
		void *args[] = {&x, &y, &B, &N};
		CHECKF(mod_run("softmax_rows", B, 1, 1, 256, 1, 1, 256 * 4, args) == KF_OK, "%s", msg);
		int bad = 0;
		for (int r = 0; r < B; r++) {
			double m = -1e30, s = 0;
			for (int i = 0; i < N; i++)
				m = fmax(m, x[r * N + i]);
			for (int i = 0; i < N; i++)
				s += exp(x[r * N + i] - m);
			for (int i = 0; i < N; i++)
				bad += !(fabs(y[r * N + i] - exp(x[r * N + i] - m) / s) <= 1e-6);
		}
		CHECK_EQ_INT(bad, 0);
		mod_close();
	}
	if (mod_open_path("tasks/examples/matmul_f32/reference.cu", 3, false)) {
		int M = 37, N = 45, K = 29;
		float *A = dmem(M * K * 4), *B = dmem(K * N * 4), *C = dmem(M * N * 4);
		for (int i = 0; i < M * K; i++)
			A[i] = rndf(-1, 1);
		for (int i = 0; i < K * N; i++)
			B[i] = rndf(-1, 1);
		void *args[] = {&A, &B, &C, &M, &N, &K};
		CHECKF(mod_run("matmul", (N + 15) / 16, (M + 15) / 16, 1, 16, 16, 1, 0, args) == KF_OK, "%s",
		       msg);
		int bad = 0;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double s = 0;
				for (int k = 0; k < K; k++)
					s += (double)A[i * K + k] * B[k * N + j];
				bad += !(fabs(C[i * N + j] - s) <= 1e-4);
			}
		CHECK_EQ_INT(bad, 0);
		mod_close();
	}
}

static void test_llm_style(void)
{
	if (!mod_open("llm_style", 77, false))
		return;
	/* rows must stay 16-byte aligned for the float4 loads (as on the GPU): many rows of N = 1004, then
	 * one row of N = 1003 for the scalar tail */
	static const int shapes[2][2] = {{6, 1004}, {1, 1003}};
	for (int sh = 0; sh < 2; sh++) {
		int B = shapes[sh][0], N = shapes[sh][1];
		float *x = dmem(B * N * 4), *y = dmem(B * N * 4);
		for (int i = 0; i < B * N; i++)
			x[i] = rndf(-5, 5);
		void *args[] = {&x, &y, &B, &N};
		CHECKF(mod_run("row_softmax", B, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
		int bad = 0;
		for (int r = 0; r < B; r++) {
			double m = -1e30, s = 0;
			for (int i = 0; i < N; i++)
				m = fmax(m, x[r * N + i]);
			for (int i = 0; i < N; i++)
				s += exp(x[r * N + i] - m);
			for (int i = 0; i < N; i++)
				bad += !(fabs(y[r * N + i] - exp(x[r * N + i] - m) / s) <= 1e-6);
		}
		CHECK_EQ_INT(bad, 0);
	}
	mod_close();
}

static void matmul_ref(const float *A, const float *B, float *C, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float s = 0;
			for (int k = 0; k < n; k++)
				s += A[i * n + k] * B[k * n + j];
			C[i * n + j] = s;
		}
}

static int matmul_errors(const char *file, const char *kernel, uint64_t seed, int n)
{
	if (!mod_open(file, seed, false))
		return -1;
	float *A = dmem(n * n * 4), *B = dmem(n * n * 4), *C = dmem(n * n * 4), *R = malloc(n * n * 4);
	for (int i = 0; i < n * n; i++) {
		A[i] = rndf(-1, 1);
		B[i] = rndf(-1, 1);
	}
	matmul_ref(A, B, R, n);
	void *args[] = {&A, &B, &C, &n};
	uint32_t g = (uint32_t)(n + 15) / 16;
	int bad = -1;
	if (mod_run(kernel, g, g, 1, 16, 16, 1, 0, args) == KF_OK) {
		bad = 0;
		for (int i = 0; i < n * n; i++)
			bad += !(fabsf(C[i] - R[i]) <= 1e-4f * (1 + fabsf(R[i])));
	} else {
		CHECKF(0, "%s", msg);
	}
	free(R);
	mod_close();
	return bad;
}

static void test_tiled_matmul(void)
{
	CHECK_EQ_INT(matmul_errors("tiled_matmul", "matmul_tiled", 0, 67), 0);
	CHECK_EQ_INT(matmul_errors("tiled_matmul", "matmul_tiled", 1234, 67), 0);
}

static void test_missing_sync_caught(void)
{
	/* the tiled kernel without its first barrier is wrong in program order and in shuffled order */
	CHECK(matmul_errors("tiled_matmul_nosync", "matmul_nosync", 0, 48) > 0);
	CHECK(matmul_errors("tiled_matmul_nosync", "matmul_nosync", 99, 48) > 0);
	/* a neighbour read without a barrier passes in program order; the shuffle exposes it */
	for (int pass = 0; pass < 2; pass++) {
		if (!mod_open("neighbor_race", pass ? 4242 : 0, false))
			return;
		int n = 512;
		float *x = dmem(n * 4), *o = dmem(n * 4);
		for (int i = 0; i < n; i++)
			x[i] = (float)(i + 1);
		void *args[] = {&x, &o, &n};
		CHECKF(mod_run("neighbor", 4, 1, 1, 128, 1, 1, 0, args) == KF_OK, "%s", msg);
		int bad = 0;
		for (int i = 0; i < n; i++)
			bad += o[i] != x[i] + (i % 128 ? x[i - 1] : 0.0f);
		if (pass == 0)
			CHECK_EQ_INT(bad, 0);
		else
			CHECK(bad > 0);
		mod_close();
	}
}

static void test_divergent_barrier(void)
{
	if (!mod_open("divergent_barrier", 0, false))
		return;
	float *o = dmem(64 * 4);
	void *args[] = {&o};
	double t0 = kf_now_ms();
	enum kf_status st = mod_run("divergent", 2, 1, 1, 64, 1, 1, 0, args);
	CHECK_EQ_INT(st, KF_ERR_RUNTIME);
	CHECK_CONTAINS(msg, "deadlock");
	CHECK_CONTAINS(msg, "divergent");
	CHECK(kf_now_ms() - t0 < 2000);
	/* the module stays usable after a deadlock */
	CHECK_EQ_INT(mod_run("fine", 1, 1, 1, 32, 1, 1, 0, args), KF_OK);
	CHECK(o[5] == 2.0f);
	mod_close();
}

/* Exited threads do not block a barrier (as on the GPU), and __syncthreads_count counts the arrivals. */
static void test_early_return_barrier(void)
{
	enum { N = 100 };
	if (!mod_open("early_return_barrier", 0, false))
		return;
	float *x = dmem(128 * 4), *y = dmem(128 * 4);
	int n = N;
	for (int i = 0; i < 128; i++) {
		x[i] = (float)i * 0.5f;
		y[i] = -1.0f;
	}
	void *args[] = {&x, &y, &n};
	CHECK_EQ_INT(mod_run("early", 2, 1, 1, 64, 1, 1, 0, args), KF_OK);
	for (int i = 0; i < N; i++) {
		float cnt = i < 64 ? 64.0f : (float)(N - 64);
		if (y[i] != 2.0f * x[i] + cnt) {
			CHECKF(0, "y[%d] = %g, want %g", i, y[i], 2.0f * x[i] + cnt);
			break;
		}
	}
	CHECK(y[N] == -1.0f);
	mod_close();
}

static void test_launch_limits(void)
{
	if (!mod_open("vadd", 0, false))
		return;
	int n = 4;
	float *x = dmem(16);
	void *args[] = {&x, &x, &x, &n};
	CHECK_EQ_INT(mod_run("vadd", 1, 1, 1, 2048, 1, 1, 0, args), KF_ERR_INVALID);
	CHECK_CONTAINS(msg, "line 1");
	CHECK_EQ_INT(mod_run("vadd", 1, 70000, 1, 32, 1, 1, 0, args), KF_ERR_INVALID);
	CHECK_EQ_INT(mod_run("nosuch", 1, 1, 1, 32, 1, 1, 0, args), KF_ERR_INVALID);
	mod_close();
}

static struct kf_kfile *kfile_of(const char *src)
{
	struct kf_kfile *k = NULL;
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_kfile_parse("cand.cu", src, strlen(src), &k, &err) == KF_OK, "%s", err.msg);
	return k;
}

static void test_scan_unsupported(void)
{
	static const struct {
		const char *body;
		const char *what;
	} cases[] = {
	    {"  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(x[0]));\n", "inline PTX"},
	    {"  nvcuda::wmma::fragment<int> f;\n", "wmma"},
	    {"  __pipeline_commit();\n", "async copies"},
	    {"  cub::WarpReduce<float> r;\n", "CUB"},
	    {"  cooperative_groups::this_grid().sync();\n", "cooperative groups"},
	    {"  float v = tex1Dfetch<float>(t, 0);\n", "textures"},
	    {"  child<<<1, 1>>>(x);\n", "dynamic parallelism"},
	    /* the holes the issue found: these gave a compile_error quoting the shim's internals */
	    {"  auto t = cooperative_groups::tiled_partition<64>(cooperative_groups::this_thread_block());\n",
	     "tiles larger than a warp"},
	    {"  __shared__ cooperative_groups::block_tile_memory<128> m;\n", "tiles larger than a warp"},
	    {"  cooperative_groups::thread_group g = cooperative_groups::this_thread_block();\n",
	     "thread_group"},
	    {"  auto t = cooperative_groups::tiled_partition(cooperative_groups::this_thread_block(), 16);\n",
	     "known only at run time"},
	    {"  curandState s; curand_init(0, 0, 0, &s);\n", "cuRAND"},
	    {"  float *p = (float *)malloc(16); free(p);\n", "heap"},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		char src[1024];
		snprintf(src, sizeof(src),
			 "// kforge:launch k grid=(1) block=(32) args=(x)\n"
			 "// a comment saying asm( or wmma:: is not a use\n"
			 "extern \"C\" __global__ void k(float *x)\n{\n%s}\n",
			 cases[i].body);
		struct kf_kfile *k = kfile_of(src);
		if (!k)
			continue;
		struct kf_err err = KF_ERR_INIT;
		CHECK_EQ_INT(kf_scan_unsupported(k, KF_BACKEND_CPU, &err), KF_ERR_UNSUPPORTED);
		CHECK_CONTAINS(err.msg, "cand.cu:5:");
		CHECK_CONTAINS(err.msg, cases[i].what);
		CHECK_EQ_INT(kf_scan_unsupported(k, KF_BACKEND_CUDA, &err), KF_OK);
		struct kf_compiled *c = NULL;
		struct kf_compile_opts o = {.backend = KF_BACKEND_CPU, .cache_dir = getenv("KFORGE_CACHE")};
		CHECK_EQ_INT(kf_cpu_compile(k, &o, &c, &err), KF_ERR_UNSUPPORTED);
		CHECK(c == NULL);
		kf_kfile_free(k);
	}
	struct kf_kfile *k =
	    kfile_of("// kforge:launch k grid=(1) block=(32) args=(x)\n"
		     "extern \"C\" __global__ void k(float *x) { x[0] = 1; /* asm( in a comment */ }\n");
	struct kf_err err = KF_ERR_INIT;
	if (k)
		CHECKF(kf_scan_unsupported(k, KF_BACKEND_CPU, &err) == KF_OK, "%s", err.msg);
	kf_kfile_free(k);
}

/* NVRTC first (kf_compile_checked): a cpu build only of what NVRTC compiles, with NVRTC's log when it
 * does not; a host-compiler failure of what NVRTC accepts is `unsupported` with the user's line, never a
 * compile error quoting the shim; the host's predefined names are hidden from the kernel file. */
static void test_nvrtc_first(void)
{
	static const struct {
		const char *head, *body;
		enum kf_status want;
		bool nvrtc_log; /* KF_ERR_COMPILE from NVRTC: the log is NVRTC's */
		const char *text;
	} cases[] = {
	    {"#include <cmath>\n", "  x[0] = std::fabs(x[0]);\n", KF_ERR_COMPILE, true, "cmath"},
	    {"", "  x[0] = INFINITY;\n", KF_ERR_COMPILE, true, "INFINITY"},
	    {"#include <float.h>\n", "  x[0] = FLT_MAX;\n", KF_ERR_COMPILE, true, "float.h"},
	    {"", "  x[0] = M_PI;\n", KF_ERR_COMPILE, true, "M_PI"},
	    {"#include <cuda.h>\n", "  x[0] = 1;\n", KF_ERR_COMPILE, false, "CUDA driver API"},
	    {"#include <cublas_v2.h>\n", "  x[0] = 1;\n", KF_ERR_COMPILE, false,
	     "cannot call host libraries"},
	    {"#include <cooperative_groups.h>\n",
	     "  cooperative_groups::thread_group g = cooperative_groups::this_thread_block(); g.sync();\n",
	     KF_ERR_UNSUPPORTED, false, "cand.cu:5:"},
	    /* no scan rule knows it: the host compiler's own words, the user's line, no shim path */
	    {"", "  x[0] = __vabsdiffu4(1u, 2u);\n", KF_ERR_UNSUPPORTED, false,
	     "cand.cu:4: uses a construct"},
	    {"", "  assert(x != 0); printf(\"%d\\n\", 1); x[0] = 1;\n", KF_OK, false, NULL},
	    /* the host's names are NVRTC's here: no __GNUC__, __x86_64__ or __NVCC__; __CUDA_ARCH__ 900 */
	    {"#if defined(__GNUC__) || defined(__x86_64__) || defined(__linux__) || defined(__NVCC__)\n"
	     "#error the host compiler's names leak into the kernel file\n#endif\n"
	     "static_assert(__CUDA_ARCH__ == 900 && __CUDACC_RTC__, \"NVRTC's names\");\n",
	     "  x[0] = 1;\n", KF_OK, false, NULL},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		char src[2048];
		snprintf(src, sizeof(src),
			 "// kforge:launch k grid=(1) block=(32) args=(x)\n%s"
			 "extern \"C\" __global__ void k(float *x)\n{\n%s}\n",
			 cases[i].head, cases[i].body);
		/* the body is line 4, or 5 after a one-line head */
		struct kf_kfile *k = kfile_of(src);
		if (!k)
			continue;
		struct kf_err err = KF_ERR_INIT;
		struct kf_compiled *c = NULL;
		struct kf_compile_opts o = {.backend = KF_BACKEND_CPU, .cache_dir = getenv("KFORGE_CACHE")};
		enum kf_status st = kf_compile_checked(k, &o, &c, &err);
		CHECKF(st == cases[i].want, "case %zu: %s: %s %s", i, kf_status_name(st), err.msg,
		       c ? c->log : "");
		if (st == KF_ERR_COMPILE && c) {
			CHECK_CONTAINS(c->log, cases[i].text);
			CHECK(c->backend == (cases[i].nvrtc_log ? KF_BACKEND_CUDA : KF_BACKEND_CPU));
		} else if (st == KF_ERR_UNSUPPORTED) {
			CHECK(c == NULL);
			CHECK_CONTAINS(err.msg, cases[i].text);
			CHECKF(!strstr(err.msg, "cpu-shim-"), "a shim path in '%s'", err.msg);
		} else if (st == KF_OK && c) {
			CHECK_STR(c->gpu_arch, "sm_90");
			CHECK(c->backend == KF_BACKEND_CPU && c->n_kernels == 1 &&
			      c->kernels[0].registers > 0);
		}
		kf_compiled_free(c);
		kf_kfile_free(k);
	}
	/* the conformance corpus itself is CUDA that NVRTC compiles */
	static const char *const corpus[] = {"vadd", "grid3d",     "shared_reduce", "dyn_smem",
					     "math", "llm_style",  "intrinsics",    "vector_types",
					     "half", "coop_groups"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(corpus); i++) {
		char path[128];
		struct kf_kfile *k = NULL;
		struct kf_compiled *c = NULL;
		struct kf_err err = KF_ERR_INIT;
		struct kf_compile_opts o = {.backend = KF_BACKEND_CUDA, .cache_dir = getenv("KFORGE_CACHE")};
		snprintf(path, sizeof(path), "tests/cpu/%s.cu", corpus[i]);
		CHECKF(kf_kfile_load(path, &k, &err) == KF_OK, "%s", err.msg);
		if (k)
			CHECKF(kf_compile(k, &o, &c, &err) == KF_OK, "%s: %s %s", path, err.msg,
			       c ? c->log : "");
		kf_compiled_free(c);
		kf_kfile_free(k);
	}
}

static void test_compile_error_line(void)
{
	struct kf_kfile *k = kfile_of("// kforge:launch k grid=(1) block=(32) args=(x)\n"
				      "extern \"C\" __global__ void k(float *x)\n"
				      "{\n"
				      "  x[threadIdx.x] = undefined_thing;\n"
				      "}\n");
	if (!k)
		return;
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_compile_opts o = {.backend = KF_BACKEND_CPU, .cache_dir = getenv("KFORGE_CACHE")};
	CHECK_EQ_INT(kf_cpu_compile(k, &o, &c, &err), KF_ERR_COMPILE);
	CHECK(c != NULL);
	if (c) {
		CHECK_CONTAINS(c->log, "cand.cu:4:");
		CHECK_CONTAINS(c->log, "undefined_thing");
	}
	kf_compiled_free(c);
	kf_kfile_free(k);
	CHECK_CONTAINS(kf_cpu_compiler_id(), "shim");
}

/* Sanitize mode: the module is built with AddressSanitizer; a write past the end of a buffer is reported
 * with the kernel file's line. The launch runs in a forked child (ASan ends the process on a report);
 * this test binary is itself built with ASan, so the runtime is loaded first, as LD_PRELOAD does in the
 * worker. */
static void test_sanitize_oob(void)
{
	if (!dlsym(RTLD_DEFAULT, "__asan_init"))
		KF_SKIP("this test binary is not built with AddressSanitizer");
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		if (!mod_open("oob_write", 0, true))
			_exit(3);
		float *o = malloc(64 * sizeof(float)); /* one short of the 65 threads */
		void *args[] = {&o};
		mod_run("oob", 1, 1, 1, 65, 1, 1, 0, args);
		_exit(0);
	}
	close(pfd[1]);
	struct kf_buf out = KF_BUF_INIT(1 << 20);
	char buf[4096];
	ssize_t r;
	while ((r = read(pfd[0], buf, sizeof(buf))) > 0)
		kf_buf_add_truncated(&out, buf, (size_t)r);
	close(pfd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	CHECKF(!(WIFEXITED(status) && WEXITSTATUS(status) == 0), "the out-of-bounds write went unreported");
	CHECK_CONTAINS(out.data, "heap-buffer-overflow");
	CHECK_CONTAINS(out.data, "oob_write.cu:6");
	kf_buf_release(&out);
}

KF_TEST_MAIN(TEST(test_vadd), TEST(test_grid3d), TEST(test_shared_reduce), TEST(test_dyn_smem),
	     TEST(test_sync_count), TEST(test_warp_shfl), TEST(test_warp_vote), TEST(test_warp_reduce),
	     TEST(test_atomics), TEST(test_fence_last_block), TEST(test_math), TEST(test_intrinsics),
	     TEST(test_vector_types), TEST(test_half), TEST(test_templates_and_globals),
	     TEST(test_coop_groups), TEST(test_llm_style), TEST(test_example_references),
	     TEST(test_tiled_matmul), TEST(test_missing_sync_caught), TEST(test_divergent_barrier),
	     TEST(test_early_return_barrier), TEST(test_launch_limits), TEST(test_scan_unsupported),
	     TEST(test_nvrtc_first), TEST(test_compile_error_line), TEST(test_sanitize_oob))
