/* The cpu sanitizer below the verifier: instrumented modules (kf_compile_opts.instrument) loaded by the
 * worker's cpu ops table (the worker's library, linked as the worker links it) and run with exact buffer
 * descriptions; each finding is checked field by field (kind, region, buffer, offset, threads, the
 * module offsets of its lines, the other access of a race); correct kernels run clean; the plain build
 * poisons shared memory per block; the wire protocol carries a finding and rejects a forged one. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kf.h"
#include "sandbox/common/proto.h"
#include "sandbox/sandbox.h"
#include "testing.h"

/* The worker-side ops table under test, from the worker's library (the worker links it the same way). */
#include "sandbox/worker/backend.h"

#define MSG_LEN 1024
#define GUARD 4096
static char msg[MSG_LEN];
static int mod_fd = -1;
static struct kf_compiled *mod_c;

#define NEED_SANITIZER()                                                                                     \
	do {                                                                                                 \
		if (kf_cpu_sanitizer_unavailable())                                                          \
			KF_SKIP(kf_cpu_sanitizer_unavailable());                                             \
	} while (0)

static bool load_src(const char *src, bool instrument)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kfile *k = NULL;
	if (kf_kfile_parse("san.cu", src, strlen(src), &k, &err) != KF_OK) {
		CHECKF(0, "%s", err.msg);
		return false;
	}
	struct kf_compile_opts o = {
	    .backend = KF_BACKEND_CPU, .instrument = instrument, .cache_dir = getenv("KFORGE_CACHE")};
	enum kf_status st = kf_compile(k, &o, &mod_c, &err);
	CHECKF(st == KF_OK, "%s %s", err.msg, mod_c ? mod_c->log : "");
	bool ok = false;
	if (st == KF_OK) {
		struct kf_worker_opts wo = {.backend = KF_BACKEND_CPU};
		struct kf_device_info info;
		mod_fd = memfd_create("kf-san-module", MFD_CLOEXEC);
		CHECK(mod_fd >= 0 &&
		      write(mod_fd, mod_c->image, mod_c->image_len) == (ssize_t)mod_c->image_len);
		CHECKF(kf_backend_cpu.init(&wo, &info, msg, MSG_LEN) == KF_OK, "%s", msg);
		const char *names[4];
		for (size_t i = 0; i < k->n_kernels && i < 4; i++)
			names[i] = k->kernels[i];
		st = kf_backend_cpu.load(mod_c->image, mod_c->image_len, mod_fd, names,
					 k->n_kernels < 4 ? k->n_kernels : 4, msg, MSG_LEN);
		CHECKF(st == KF_OK, "load: %s", msg);
		ok = st == KF_OK;
	}
	kf_kfile_free(k);
	return ok;
}

static void unload(void)
{
	kf_backend_cpu.shutdown();
	if (mod_fd >= 0)
		close(mod_fd);
	mod_fd = -1;
	kf_compiled_free(mod_c);
	mod_c = NULL;
}

/* A buffer as the worker lays it out: [guard | data | guard]. */
struct buf {
	struct kf_be_buffer d;
	uint64_t base;
};

static void *buf_new(struct buf *b, size_t n_bytes, enum kf_role role)
{
	CHECK(kf_backend_cpu.alloc(2 * GUARD + n_bytes, &b->base, msg, MSG_LEN) == KF_OK);
	b->d.lo = b->base;
	b->d.data = b->base + GUARD;
	b->d.n_bytes = n_bytes;
	b->d.hi = b->base + 2 * GUARD + n_bytes;
	b->d.role = role;
	b->d.is_scratch = false;
	memset((void *)(uintptr_t)b->base, 0xab, 2 * GUARD + n_bytes); /* the guards */
	memset((void *)(uintptr_t)b->d.data, 0, n_bytes);
	return (void *)(uintptr_t)b->d.data;
}

static enum kf_status run(const char *kernel, uint32_t gx, uint32_t bx, uint32_t smem, void **args,
			  const struct buf *bufs, size_t nb, uint32_t poison, struct kf_rt_san_finding *f)
{
	struct kf_be_buffer d[8];
	for (size_t i = 0; i < nb; i++)
		d[i] = bufs[i].d;
	CHECKF(kf_backend_cpu.begin_step(d, nb, poison, msg, MSG_LEN) == KF_OK, "%s", msg);
	struct kf_be_launch l = {.kernel = kernel,
				 .grid = {gx, 1, 1},
				 .block = {bx, 1, 1},
				 .smem_bytes = smem,
				 .args = args,
				 .line = 1};
	memset(f, 0, sizeof(*f));
	struct kf_be_run_stats s = {.san = f};
	bool fatal = false;
	msg[0] = '\0';
	return kf_backend_cpu.run(&l, 1, false, &s, &fatal, msg, MSG_LEN);
}

static void buf_free(struct buf *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kf_backend_cpu.free(b[i].base);
}

/* 65 threads over a 64-float output: the write just past the end (inside the guard zone, where only
 * the guards would see it) is stopped before it happens, with its thread and its line. */
static void test_oob_exact(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(65) args=(y)\n"
		      "extern \"C\" __global__ void k(float *y)\n"
		      "{\n"
		      "\ty[threadIdx.x] = 1.0f;\n"
		      "}\n",
		      true))
		return;
	struct buf b[1];
	float *y = buf_new(&b[0], 64 * 4, KF_ROLE_OUTPUT);
	void *args[] = {&y};
	struct kf_rt_san_finding f;
	CHECK_EQ_INT(run("k", 1, 65, 0, args, b, 1, 0x7fc07fc0u, &f), KF_ERR_RUNTIME);
	CHECK_EQ_INT(f.kind, KF_RT_SAN_OOB);
	CHECK_EQ_INT(f.region, KF_RT_SAN_GLOBAL);
	CHECK_EQ_INT(f.index, 0);
	CHECK_EQ_INT(f.offset, 256);
	CHECK_EQ_INT(f.region_bytes, 256);
	CHECK_EQ_INT(f.cur.op, KF_RT_SAN_STORE);
	CHECK_EQ_INT(f.cur.size, 4);
	CHECK_EQ_INT(f.cur.thread[0], 64);
	CHECK(f.cur.pc[0] != 0);
	/* the write never happened: the guard after the data still holds its bytes */
	CHECK(((uint32_t *)y)[64] == 0xababababu);
	struct kf_san_where w;
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_cpu_san_locate(mod_c, "san.cu", &f, &w, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(w.line, 4);
	buf_free(b, 1);
	unload();
}

/* Every thread adds into one __shared__ float: a race between two threads of one warp, both at line 7;
 * the same addition done with an atomic is clean. */
static void test_race_shared(void)
{
	NEED_SANITIZER();
	static const char src[] = "// kforge:launch k grid=(2) block=(64) args=(y)\n"
				  "extern \"C\" __global__ void k(float *y)\n"
				  "{\n"
				  "\t__shared__ float s;\n"
				  "\tif (threadIdx.x == 0) s = 0.0f;\n"
				  "\t__syncthreads();\n"
				  "\tATOMIC\n"
				  "\t__syncthreads();\n"
				  "\tif (threadIdx.x == 0) y[blockIdx.x] = s;\n"
				  "}\n";
	char text[1024];
	for (int atomic = 0; atomic < 2; atomic++) {
		const char *at = strstr(src, "ATOMIC");
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - src), src,
			 atomic ? "atomicAdd(&s, 1.0f);" : "s += 1.0f;", at + 6);
		if (!load_src(text, true))
			return;
		struct buf b[1];
		float *y = buf_new(&b[0], 8, KF_ROLE_OUTPUT);
		void *args[] = {&y};
		struct kf_rt_san_finding f;
		enum kf_status st = run("k", 2, 64, 0, args, b, 1, 0x7fc07fc0u, &f);
		if (atomic) {
			CHECKF(st == KF_OK && f.kind == KF_RT_SAN_NONE, "%s: %s", msg, f.detail);
			CHECK(y[0] == 64.0f && y[1] == 64.0f);
		} else {
			CHECK_EQ_INT(st, KF_ERR_RUNTIME);
			CHECK_EQ_INT(f.kind, KF_RT_SAN_RACE);
			CHECK_EQ_INT(f.region, KF_RT_SAN_SHARED);
			CHECK(f.prev.op != 0 && f.prev.pc[0] != 0);
			CHECK(f.flags & KF_RT_SAN_F_SAME_WARP);
			CHECK(f.cur.thread[0] != f.prev.thread[0]);
			struct kf_san_where w;
			struct kf_err err = KF_ERR_INIT;
			CHECKF(kf_cpu_san_locate(mod_c, "san.cu", &f, &w, &err) == KF_OK, "%s", err.msg);
			CHECK_EQ_INT(w.line, 7);
			CHECK_EQ_INT(w.prev_line, 7);
			CHECK(w.have_var && !strcmp(w.var, "s") && w.var_offset == 0);
		}
		buf_free(b, 1);
		unload();
	}
}

/* Reading shared memory no thread wrote: reported when the interval ends (here the block's end), with
 * the line of the read; written first, the same read is clean. */
static void test_uninit_shared(void)
{
	NEED_SANITIZER();
	for (int init = 0; init < 2; init++) {
		char src[512];
		snprintf(src, sizeof(src),
			 "// kforge:launch k grid=(1) block=(32) args=(y)\n"
			 "extern \"C\" __global__ void k(float *y)\n"
			 "{\n"
			 "\t__shared__ float s[32];\n"
			 "\t%s\n"
			 "\t__syncthreads();\n"
			 "\ty[threadIdx.x] = s[(threadIdx.x + 1) %% 32];\n"
			 "}\n",
			 init ? "s[threadIdx.x] = 2.0f;" : "");
		if (!load_src(src, true))
			return;
		struct buf b[1];
		float *y = buf_new(&b[0], 32 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&y};
		struct kf_rt_san_finding f;
		enum kf_status st = run("k", 1, 32, 0, args, b, 1, 0x7fc07fc0u, &f);
		if (init) {
			CHECKF(st == KF_OK && f.kind == KF_RT_SAN_NONE, "%s: %s", msg, f.detail);
		} else {
			CHECK_EQ_INT(f.kind, KF_RT_SAN_UNINIT);
			CHECK_EQ_INT(f.region, KF_RT_SAN_SHARED);
			CHECK_EQ_INT(f.cur.op, KF_RT_SAN_LOAD);
			struct kf_san_where w;
			struct kf_err err = KF_ERR_INIT;
			CHECKF(kf_cpu_san_locate(mod_c, "san.cu", &f, &w, &err) == KF_OK, "%s", err.msg);
			CHECK_EQ_INT(w.line, 7);
		}
		buf_free(b, 1);
		unload();
	}
}

/* A shuffle from a lane that exited: the value handed out is the run's poison (the GPU's is undefined)
 * and the launch finishes with a note, not a finding: whether it matters is the outputs' call. */
static void test_shfl_note(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(32) args=(y)\n"
		      "extern \"C\" __global__ void k(unsigned *y)\n"
		      "{\n"
		      "\tif (threadIdx.x >= 8) return;\n"
		      "\tunsigned v = __shfl_down_sync(0xffffffffu, threadIdx.x, 16);\n"
		      "\ty[threadIdx.x] = v;\n"
		      "}\n",
		      true))
		return;
	struct buf b[1];
	unsigned *y = buf_new(&b[0], 8 * 4, KF_ROLE_OUTPUT);
	void *args[] = {&y};
	struct kf_rt_san_finding f;
	CHECKF(run("k", 1, 32, 0, args, b, 1, 0x7bff7bffu, &f) == KF_OK, "%s", msg);
	CHECK_EQ_INT(f.kind, KF_RT_SAN_WARP_UB);
	CHECK(f.flags & KF_RT_SAN_F_EXITED);
	CHECK_EQ_INT(f.index, 16);
	CHECK_EQ_INT(f.cur.thread[0], 0);
	CHECK(f.cur.pc[0] != 0);
	CHECK(y[0] == 0x7bff7bffu); /* the poison, not lane 0's own value */
	buf_free(b, 1);
	unload();
}

/* The plain build: static and dynamic shared memory start every block with the run's poison. */
static void test_shared_poison_plain(void)
{
	if (!load_src("// kforge:launch k grid=(4) block=(32) smem=(64) args=(y)\n"
		      "extern \"C\" __global__ void k(unsigned *y)\n"
		      "{\n"
		      "\t__shared__ unsigned s[32];\n"
		      "\textern __shared__ unsigned d[];\n"
		      "\tunsigned t = threadIdx.x, b = blockIdx.x;\n"
		      "\ty[b * 48 + t] = s[t];\n"
		      "\tif (t < 16) y[b * 48 + 32 + t] = d[t];\n"
		      "\t__syncthreads();\n"
		      "\ts[t] = 7u;\n"
		      "\td[t % 16] = 9u;\n"
		      "}\n",
		      false))
		return;
	for (int p = 0; p < 2; p++) {
		uint32_t pat = p ? 0x7bff7bffu : 0x7fc07fc0u;
		struct buf b[1];
		unsigned *y = buf_new(&b[0], 4 * 48 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&y};
		struct kf_rt_san_finding f;
		CHECKF(run("k", 4, 32, 64, args, b, 1, pat, &f) == KF_OK, "%s", msg);
		int bad = 0;
		for (int i = 0; i < 4 * 48; i++)
			bad += y[i] != pat;
		CHECKF(bad == 0, "%d of %d shared words were not the poison 0x%08x", bad, 4 * 48, pat);
		buf_free(b, 1);
	}
	unload();
}

/* A forged finding from a hostile worker is refused; a real one arrives intact. */
static void test_proto_finding(void)
{
	static struct kf_step_result r, back;
	static uint64_t buf[KF_PROTO_MSG_MAX / 8];
	struct kf_err err = KF_ERR_INIT;
	memset(&r, 0, sizeof(r));
	r.status = KF_ERR_RUNTIME;
	r.san.kind = KF_RT_SAN_RACE;
	r.san.region = KF_RT_SAN_SHARED;
	r.san.cur.pc[0] = 0x1234;
	r.san_accesses = 99;
	memset(r.san.detail, 'x', sizeof(r.san.detail)); /* no NUL: cut at the end */
	size_t n = kf_proto_result_encode(buf, sizeof(buf), &r);
	CHECK(n > 0);
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_OK);
	CHECK_EQ_INT(back.san.kind, KF_RT_SAN_RACE);
	CHECK_EQ_INT(back.san.cur.pc[0], 0x1234);
	CHECK_EQ_INT(back.san_accesses, 99);
	CHECK_EQ_INT(strlen(back.san.detail), sizeof(back.san.detail) - 1);
	struct kf_wire_result *w = (struct kf_wire_result *)buf;
	w->san.kind = KF_RT_SAN_KIND_COUNT;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	w->san.kind = KF_RT_SAN_OOB;
	w->san.region = 77;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
}

/* ---- the cost model's counters ---------------------------------------------------------------- */

/* One counted run of one launch: the counters on with cfg, the launch's counts in *c, off again. */
static enum kf_status run_cost(const char *kernel, uint32_t gx, uint32_t bx, uint32_t smem, void **args,
			       const struct buf *bufs, size_t nb, const struct kf_rt_cost_config *cfg,
			       struct kf_rt_cost *c, struct kf_rt_san_finding *f)
{
	struct kf_be_buffer d[8];
	for (size_t i = 0; i < nb; i++)
		d[i] = bufs[i].d;
	CHECKF(kf_backend_cpu.begin_step(d, nb, 0x7fc07fc0u, msg, MSG_LEN) == KF_OK, "%s", msg);
	enum kf_status st = kf_backend_cpu.cost_begin(cfg, msg, MSG_LEN);
	CHECKF(st == KF_OK, "cost_begin: %s", msg);
	if (st)
		return st;
	struct kf_be_launch l = {.kernel = kernel,
				 .grid = {gx, 1, 1},
				 .block = {bx, 1, 1},
				 .smem_bytes = smem,
				 .args = args,
				 .line = 1};
	memset(f, 0, sizeof(*f));
	memset(c, 0, sizeof(*c));
	struct kf_be_run_stats s = {.san = f, .cost = c};
	bool fatal = false;
	msg[0] = '\0';
	st = kf_backend_cpu.run(&l, 1, false, &s, &fatal, msg, MSG_LEN);
	kf_backend_cpu.cost_end();
	CHECK_EQ_INT(s.n_cost, 1);
	return st;
}

static const struct kf_rt_cost_config cost_all = {.enable = 1, .l2_bytes = 1 << 20};

/* A coalesced f32 copy: 4 sectors per warp request; reading x[i * 32]: 32 (one per lane). */
static void test_cost_coalescing(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(4) block=(128) args=(x, y, s)\n"
		      "extern \"C\" __global__ void k(const float *x, float *y, int s)\n"
		      "{\n"
		      "\tunsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
		      "\ty[i] = x[i * s];\n"
		      "}\n",
		      true))
		return;
	for (int s = 1; s <= 32; s += 31) {
		struct buf b[2];
		float *x = buf_new(&b[0], 512 * 32 * 4, KF_ROLE_INPUT);
		float *y = buf_new(&b[1], 512 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&x, &y, &s};
		struct kf_rt_san_finding f;
		struct kf_rt_cost c;
		CHECKF(run_cost("k", 4, 128, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
		CHECK_EQ_INT(c.blocks_total, 4);
		CHECK_EQ_INT(c.blocks_run, 4);
		CHECK_EQ_INT(c.warps_run, 16);
		CHECK_EQ_INT(c.gld_requests, 16);
		CHECK_EQ_INT(c.gld_sectors, (uint64_t)(s == 1 ? 4 : 32) * c.gld_requests);
		CHECK_EQ_INT(c.gld_bytes, 512 * 4);
		CHECK_EQ_INT(c.gst_requests, 16);
		CHECK_EQ_INT(c.gst_sectors, 4 * c.gst_requests);
		CHECK_EQ_INT(c.touched_bytes, 512 * 32 * 4 + 512 * 4);
		CHECK_EQ_INT(c.l2_read_misses, c.gld_sectors); /* every sector read once, cold */
		CHECK_EQ_INT(c.l2_writebacks, 64);             /* y's sectors, dirty at the end */
		CHECK(c.n_sites == 2);
		CHECK_EQ_INT(c.sites[0].op, s == 1 ? KF_RT_SAN_LOAD : KF_RT_SAN_LOAD);
		CHECK_EQ_INT(c.sites[0].index, 0);
		CHECK_EQ_INT(c.sites[0].units, c.gld_sectors);
		CHECK_EQ_INT(c.sites[0].requests, 16);
		CHECK(c.sites[0].pc != 0 && c.sites[1].pc != 0 && c.sites[0].pc != c.sites[1].pc);
		CHECK_EQ_INT(c.sites[1].op, KF_RT_SAN_STORE);
		CHECK_EQ_INT(c.sites[1].index, 1);
		if (s == 1) {
			struct kf_san_where w;
			struct kf_err err = KF_ERR_INIT;
			struct kf_rt_san_finding at;
			memset(&at, 0, sizeof(at));
			at.kind = KF_RT_SAN_OOB;
			at.cur.pc[0] = c.sites[0].pc;
			CHECKF(kf_cpu_san_locate(mod_c, "san.cu", &at, &w, &err) == KF_OK, "%s", err.msg);
			CHECK_EQ_INT(w.line, 5);
		}
		for (int i = 0; i < 512; i++)
			CHECK(y[i] == x[i * s]);
		buf_free(b, 2);
	}
	unload();
}

/* A float4 copy whose components the host compiler loads one by one is still one 16-byte access per
 * lane on the GPU: 16 sectors per warp request, one request per warp and direction. The component
 * sums (v.x + v.y ...) make clang split the loads. */
static void test_cost_vector_access(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(4) block=(128) args=(x, y)\n"
		      "extern \"C\" __global__ void k(const float4 *x, float4 *y)\n"
		      "{\n"
		      "\tunsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
		      "\tfloat4 v = x[i];\n"
		      "\tfloat t = v.x + v.y + v.z + v.w;\n"
		      "\ty[i] = make_float4(t, v.y, v.z, v.w);\n"
		      "}\n",
		      true))
		return;
	struct buf b[2];
	float *x = buf_new(&b[0], 512 * 16, KF_ROLE_INPUT);
	float *y = buf_new(&b[1], 512 * 16, KF_ROLE_OUTPUT);
	void *args[] = {&x, &y};
	struct kf_rt_san_finding f;
	struct kf_rt_cost c;
	CHECKF(run_cost("k", 4, 128, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
	CHECK_EQ_INT(c.gld_requests, 16);
	CHECK_EQ_INT(c.gld_sectors, 16 * 16);
	CHECK_EQ_INT(c.gld_bytes, 512 * 16);
	CHECK_EQ_INT(c.gst_requests, 16);
	CHECK_EQ_INT(c.gst_sectors, 16 * 16);
	for (int i = 0; i < 512; i++)
		CHECK(y[4 * i] == x[4 * i] + x[4 * i + 1] + x[4 * i + 2] + x[4 * i + 3]);
	buf_free(b, 2);
	unload();
}

/* A shared transpose: tile[tx][ty] of float[32][32] puts a warp's 32 lanes in one bank (32 wavefronts
 * per request); padded to [32][33] every access is one wavefront. Barriers: per warp reaching one. */
static void test_cost_bank_conflicts(void)
{
	NEED_SANITIZER();
	for (int pad = 0; pad < 2; pad++) {
		char src[1024];
		snprintf(src, sizeof(src),
			 "// kforge:launch k grid=(1) block=(1024) args=(x, y)\n"
			 "extern \"C\" __global__ void k(const float *x, float *y)\n"
			 "{\n"
			 "\t__shared__ float tile[32][%d];\n"
			 "\tunsigned t = threadIdx.x, tx = t %% 32, ty = t / 32;\n"
			 "\ttile[tx][ty] = x[t];\n"
			 "\t__syncthreads();\n"
			 "\ty[t] = tile[ty][tx];\n"
			 "}\n",
			 pad ? 33 : 32);
		if (!load_src(src, true))
			return;
		struct buf b[2];
		float *x = buf_new(&b[0], 1024 * 4, KF_ROLE_INPUT);
		float *y = buf_new(&b[1], 1024 * 4, KF_ROLE_OUTPUT);
		for (int i = 0; i < 1024; i++)
			x[i] = (float)i;
		void *args[] = {&x, &y};
		struct kf_rt_san_finding f;
		struct kf_rt_cost c;
		CHECKF(run_cost("k", 1, 1024, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
		CHECK_EQ_INT(c.sh_requests, 64);
		CHECK_EQ_INT(c.sh_wavefronts, pad ? 64 : 32 * 32 + 32);
		CHECK_EQ_INT(c.barriers, 32);
		CHECK_EQ_INT(c.gld_sectors, 4 * 32);
		/* the conflicted store is the worst site (padded, the global load's 128 sectors are) */
		CHECK_EQ_INT(c.sites[0].region, pad ? KF_RT_SAN_GLOBAL : KF_RT_SAN_SHARED);
		CHECK_EQ_INT(c.sites[0].index, pad ? 0 : -1);
		if (!pad) {
			CHECK_EQ_INT(c.sites[0].op, KF_RT_SAN_STORE);
			CHECK_EQ_INT(c.sites[0].units, 32 * c.sites[0].requests);
		}
		CHECK(y[33] == (float)(1 * 32 + 1) && y[1] == (float)32);
		buf_free(b, 2);
		unload();
	}
}

/* 32 lanes atomicAdd on one address serialize: atom_serial = 32 x requests; a warp reduction's five
 * shuffles are five collectives per warp. */
static void test_cost_atomics_collectives(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(2) block=(64) args=(y, z)\n"
		      "extern \"C\" __global__ void k(float *y, unsigned *z)\n"
		      "{\n"
		      "\tatomicAdd(&y[0], 1.0f);\n"
		      "\tunsigned v = threadIdx.x;\n"
		      "\tfor (int o = 16; o > 0; o /= 2)\n"
		      "\t\tv += __shfl_down_sync(0xffffffffu, v, o);\n"
		      "\tif (threadIdx.x % 32 == 0) z[blockIdx.x * 2 + threadIdx.x / 32] = v;\n"
		      "}\n",
		      true))
		return;
	struct buf b[2];
	float *y = buf_new(&b[0], 4, KF_ROLE_INOUT);
	unsigned *z = buf_new(&b[1], 16, KF_ROLE_OUTPUT);
	void *args[] = {&y, &z};
	struct kf_rt_san_finding f;
	struct kf_rt_cost c;
	CHECKF(run_cost("k", 2, 64, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
	CHECK_EQ_INT(c.atom_requests, 4);
	CHECK_EQ_INT(c.atom_lanes, 128);
	CHECK_EQ_INT(c.atom_serial, 32 * c.atom_requests);
	CHECK_EQ_INT(c.atom_hot, 128);
	CHECK_EQ_INT(c.collectives, 5 * 4);
	CHECK_EQ_INT(c.barriers, 0);
	CHECK_EQ_INT(c.gst_requests, 4); /* one lane each */
	CHECK_EQ_INT(c.gst_sectors, 4);
	CHECK(y[0] == 128.0f);
	CHECK_EQ_INT(z[0], 496);
	buf_free(b, 2);
	unload();
}

/* Lane i looping i times: the warp issues its longest lane's path (warp_edges near the uniform loop's
 * where every lane runs 31 times), while the threads execute about half as many blocks. */
static void test_cost_divergence(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(32) args=(x, y, u)\n"
		      "extern \"C\" __global__ void k(const float *x, float *y, int u)\n"
		      "{\n"
		      "\tint n = u ? 31 : (int)threadIdx.x;\n"
		      "\tfloat s = 0.0f;\n"
		      "\tfor (int j = 0; j < n; j++)\n"
		      "\t\ts += x[j] * s + 1.0f;\n"
		      "\ty[threadIdx.x] = s;\n"
		      "}\n",
		      true))
		return;
	struct kf_rt_cost c[2];
	for (int u = 0; u < 2; u++) {
		struct buf b[2];
		float *x = buf_new(&b[0], 32 * 4, KF_ROLE_INPUT);
		float *y = buf_new(&b[1], 32 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&x, &y, &u};
		struct kf_rt_san_finding f;
		CHECKF(run_cost("k", 1, 32, 0, args, b, 2, &cost_all, &c[u], &f) == KF_OK, "%s", msg);
		buf_free(b, 2);
	}
	uint64_t wd = c[0].warp_edges, wu = c[1].warp_edges, td = c[0].thread_edges, tu = c[1].thread_edges;
	CHECKF(wd > 31 && wu > 31 && tu == 32 * wu, "warp %llu/%llu thread %llu/%llu", (unsigned long long)wd,
	       (unsigned long long)wu, (unsigned long long)td, (unsigned long long)tu);
	CHECKF(wd * 10 >= wu * 9 && wd * 10 <= wu * 11, "divergent warp edges %llu, uniform %llu",
	       (unsigned long long)wd, (unsigned long long)wu);
	CHECKF(td * 10 < tu * 6 && td * 10 > tu * 4, "divergent thread edges %llu, uniform %llu",
	       (unsigned long long)td, (unsigned long long)tu);
	unload();
}

/* An interval longer than the open-instance table (2 warps x 3000 loads, no barrier): lanes turn to
 * lockstep and every request still has its 32 lanes (4 sectors). */
static void test_cost_long_interval(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(64) args=(x, y)\n"
		      "extern \"C\" __global__ void k(const float *x, float *y)\n"
		      "{\n"
		      "\tfloat s = 0.0f;\n"
		      "\tfor (unsigned j = threadIdx.x; j < 64 * 3000; j += 64)\n"
		      "\t\ts += x[j];\n"
		      "\ty[threadIdx.x] = s;\n"
		      "}\n",
		      true))
		return;
	struct buf b[2];
	float *x = buf_new(&b[0], 64 * 3000 * 4, KF_ROLE_INPUT);
	float *y = buf_new(&b[1], 64 * 4, KF_ROLE_OUTPUT);
	for (int i = 0; i < 64 * 3000; i++)
		x[i] = 1.0f;
	void *args[] = {&x, &y};
	struct kf_rt_san_finding f;
	struct kf_rt_cost c;
	CHECKF(run_cost("k", 1, 64, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
	CHECK_EQ_INT(c.gld_requests, 2 * 3000);
	CHECK_EQ_INT(c.gld_sectors, 4 * c.gld_requests);
	CHECK(y[0] == 3000.0f && y[63] == 3000.0f);
	buf_free(b, 2);
	unload();
}

/* A buffer read twice: it fits the L2 model, so each sector misses once; it does not, twice; no
 * cache at all, twice too. The store's sectors are written back once, at the end. */
static void test_cost_l2(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(32) args=(x, y)\n"
		      "extern \"C\" __global__ void k(const float *x, float *y)\n"
		      "{\n"
		      "\tfloat s = 0.0f;\n"
		      "\tfor (int r = 0; r < 2; r++)\n"
		      "\t\tfor (unsigned j = threadIdx.x; j < 4096; j += 32)\n"
		      "\t\t\ts += x[j];\n"
		      "\ty[threadIdx.x] = s;\n"
		      "}\n",
		      true))
		return;
	const uint64_t l2[3] = {64 << 10, 4 << 10, 0};
	for (int k = 0; k < 3; k++) {
		struct buf b[2];
		float *x = buf_new(&b[0], 4096 * 4, KF_ROLE_INPUT);
		float *y = buf_new(&b[1], 32 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&x, &y};
		struct kf_rt_san_finding f;
		struct kf_rt_cost c;
		struct kf_rt_cost_config cfg = {.enable = 1, .l2_bytes = l2[k]};
		CHECKF(run_cost("k", 1, 32, 0, args, b, 2, &cfg, &c, &f) == KF_OK, "%s", msg);
		CHECK_EQ_INT(c.gld_requests, 256);
		CHECK_EQ_INT(c.gld_sectors, 1024);
		CHECK_EQ_INT(c.l2_read_misses, k == 0 ? 512 : 1024);
		CHECK_EQ_INT(c.l2_writebacks, 4);
		buf_free(b, 2);
	}
	/* a configuration the runtime refuses */
	struct kf_rt_cost_config bad = {.enable = 1, .l2_ways = 12, .l2_bytes = 1 << 20};
	CHECK_EQ_INT(kf_backend_cpu.cost_begin(&bad, msg, MSG_LEN), KF_ERR_INVALID);
	kf_backend_cpu.cost_end();
	unload();
}

/* 20000 blocks over a small budget: a few chunks run (blocks_run < blocks_total, as many blocks
 * wrote as ran), at positions the seed decides; budget 0, or a budget the grid fits, runs all. */
static void test_cost_sampling(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(20000) block=(32) args=(y)\n"
		      "extern \"C\" __global__ void k(unsigned *y)\n"
		      "{\n"
		      "\ty[blockIdx.x * 32 + threadIdx.x] = 1u;\n"
		      "}\n",
		      true))
		return;
	static unsigned char ran[2][20000];
	const uint32_t nbk = 20000;
	for (int k = 0; k < 4; k++) {
		struct buf b[1];
		unsigned *y = buf_new(&b[0], nbk * 32 * 4, KF_ROLE_OUTPUT);
		void *args[] = {&y};
		struct kf_rt_san_finding f;
		struct kf_rt_cost c;
		struct kf_rt_cost_config cfg = {.enable = 1,
						.l2_bytes = 1 << 20,
						.access_budget = k == 2   ? 0
								 : k == 3 ? 1000000
									  : 32 * 100,
						.sample_seed = k == 1 ? 99 : 7};
		uint32_t gx = k == 3 ? 64 : nbk;
		CHECKF(run_cost("k", gx, 32, 0, args, b, 1, &cfg, &c, &f) == KF_OK, "%s", msg);
		uint64_t wrote = 0;
		for (uint32_t i = 0; i < gx; i++) {
			if (k < 2)
				ran[k][i] = y[i * 32] == 1u;
			wrote += y[i * 32] == 1u;
		}
		CHECK_EQ_INT(c.blocks_total, gx);
		CHECK_EQ_INT(wrote, c.blocks_run);
		if (k < 2) {
			CHECKF(c.blocks_run >= 4 && c.blocks_run < 200, "%llu blocks ran",
			       (unsigned long long)c.blocks_run);
			CHECK(c.accesses < 2 * 32 * 100);
		} else {
			CHECK_EQ_INT(c.blocks_run, gx);
			CHECK_EQ_INT(c.gst_requests, gx);
		}
		buf_free(b, 1);
	}
	CHECK(memcmp(ran[0], ran[1], sizeof(ran[0])) != 0);
	/* the chunks spread over the grid: a block in each quarter ran */
	for (int q = 0; q < 4; q++) {
		int any = 0;
		for (uint32_t i = q * nbk / 4; i < (q + 1) * nbk / 4; i++)
			any |= ran[0][i];
		CHECKF(any, "no block of quarter %d ran", q);
	}
	unload();
}

/* Counting keeps memcheck: the write past the end still stops the launch before it happens. A plain
 * module has no counters. */
static void test_cost_memcheck(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(1) block=(65) args=(y)\n"
		      "extern \"C\" __global__ void k(float *y)\n"
		      "{\n"
		      "\ty[threadIdx.x] = 1.0f;\n"
		      "}\n",
		      true))
		return;
	struct buf b[1];
	float *y = buf_new(&b[0], 64 * 4, KF_ROLE_OUTPUT);
	void *args[] = {&y};
	struct kf_rt_san_finding f;
	struct kf_rt_cost c;
	CHECK_EQ_INT(run_cost("k", 1, 65, 0, args, b, 1, &cost_all, &c, &f), KF_ERR_RUNTIME);
	CHECK_EQ_INT(f.kind, KF_RT_SAN_OOB);
	CHECK_EQ_INT(f.cur.thread[0], 64);
	CHECK(((uint32_t *)y)[64] == 0xababababu);
	/* then the sanitizer's own mode is back: counting is off */
	struct buf b2[1];
	float *y2 = buf_new(&b2[0], 65 * 4, KF_ROLE_OUTPUT);
	void *args2[] = {&y2};
	CHECKF(run("k", 1, 65, 0, args2, b2, 1, 0x7fc07fc0u, &f) == KF_OK, "%s", msg);
	buf_free(b, 1);
	buf_free(b2, 1);
	unload();
	if (!load_src("// kforge:launch k grid=(1) block=(32) args=(y)\n"
		      "extern \"C\" __global__ void k(float *y) { y[threadIdx.x] = 1.0f; }\n",
		      false))
		return;
	CHECK_EQ_INT(kf_backend_cpu.cost_begin(&cost_all, msg, MSG_LEN), KF_ERR_UNSUPPORTED);
	CHECK(strstr(msg, "cost counters") != NULL);
	unload();
}

/* What counting costs beside the sanitizer's own mode, on a coalesced copy (printed, not checked). */
static void test_cost_overhead(void)
{
	NEED_SANITIZER();
	if (!load_src("// kforge:launch k grid=(256) block=(256) args=(x, y)\n"
		      "extern \"C\" __global__ void k(const float *x, float *y)\n"
		      "{\n"
		      "\tunsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;\n"
		      "\tfloat s = 0.0f;\n"
		      "\tfor (unsigned j = i; j < 8 * n; j += n)\n"
		      "\t\ts += x[j] > 0.5f ? x[j] : -x[j];\n"
		      "\ty[i] = s;\n"
		      "}\n",
		      true))
		return;
	const size_t n = 8 * 256 * 256;
	double t[2] = {1e9, 1e9};
	for (int rep = 0; rep < 6; rep++) {
		int mode = rep % 2;
		struct buf b[2];
		float *x = buf_new(&b[0], n * 4, KF_ROLE_INPUT);
		float *y = buf_new(&b[1], n * 4, KF_ROLE_OUTPUT);
		void *args[] = {&x, &y};
		struct kf_rt_san_finding f;
		struct kf_rt_cost c;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (mode)
			CHECKF(run_cost("k", 256, 256, 0, args, b, 2, &cost_all, &c, &f) == KF_OK, "%s", msg);
		else
			CHECKF(run("k", 256, 256, 0, args, b, 2, 0x7fc07fc0u, &f) == KF_OK, "%s", msg);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
		if (dt < t[mode]) /* the best of three each */
			t[mode] = dt;
		buf_free(b, 2);
	}
	fprintf(stderr, "  cost counting %.3f s, sanitizer %.3f s (best of 3): ratio %.2f\n", t[1], t[0],
		t[1] / t[0]);
	unload();
}

/* A forged cost result from a hostile worker is refused (decoder, and against the plan). */
static void test_proto_cost(void)
{
	static struct kf_step_result r, back;
	static uint64_t buf[KF_PROTO_MSG_MAX / 8];
	static struct kf_proto_setup s;
	struct kf_err err = KF_ERR_INIT;
	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	s.n_launches = 1;
	s.n_buffers = 1;
	uint32_t g[3] = {8, 1, 1}, bl[3] = {64, 1, 1};
	memcpy(s.launches[0].grid, g, sizeof(g));
	memcpy(s.launches[0].block, bl, sizeof(bl));
	r.status = KF_OK;
	r.n_cost = 1;
	struct kf_rt_cost *c = &r.cost[0];
	memcpy(c->grid, g, sizeof(g));
	memcpy(c->block, bl, sizeof(bl));
	c->blocks_total = 8;
	c->blocks_run = 8;
	c->warps_run = 16;
	c->gld_requests = 16;
	c->gld_sectors = 64;
	c->gld_bytes = 2048;
	c->n_sites = 1;
	c->sites[0] = (struct kf_rt_cost_site){.pc = 0x40,
					       .op = KF_RT_SAN_LOAD,
					       .region = KF_RT_SAN_GLOBAL,
					       .index = 0,
					       .requests = 16,
					       .units = 64,
					       .bytes = 2048};
	size_t n = kf_proto_result_encode(buf, sizeof(buf), &r);
	CHECK(n > 0);
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_OK);
	CHECK_EQ_INT(back.n_cost, 1);
	CHECK_EQ_INT(back.cost[0].gld_sectors, 64);
	CHECKF(kf_proto_result_check_cost(&back, KF_STEP_COST, &s, &err) == KF_OK, "%s", err.msg);
	/* counts for a step that asked for none */
	CHECK_EQ_INT(kf_proto_result_check_cost(&back, 0, &s, &err), KF_ERR_PARSE);
	struct kf_wire_result *w = (struct kf_wire_result *)buf;
	w->cost[0].blocks_run = 9;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	CHECK(strstr(err.msg, "blocks_run") != NULL);
	w->cost[0].blocks_run = 8;
	w->cost[0].sites[0].region = KF_RT_SAN_LOCAL;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	CHECK(strstr(err.msg, "region") != NULL);
	w->cost[0].sites[0].region = KF_RT_SAN_GLOBAL;
	w->cost[0].gld_sectors = 15;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	w->cost[0].gld_sectors = 64;
	w->n_cost = KF_MAX_LAUNCHES + 1;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	w->n_cost = 2; /* more launches than the plan has (the second one all zero: no block) */
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_ERR_PARSE);
	w->n_cost = 1;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 1, &back, &err), KF_OK);
	back.cost[0].grid[0] = 9; /* not the plan's launch */
	back.cost[0].blocks_total = back.cost[0].blocks_run = 9;
	CHECK_EQ_INT(kf_proto_result_check_cost(&back, KF_STEP_COST, &s, &err), KF_ERR_PARSE);
	back.n_cost = 2;
	CHECK_EQ_INT(kf_proto_result_check_cost(&back, KF_STEP_COST, &s, &err), KF_ERR_PARSE);
	/* a cost step is one untimed run */
	struct kf_step stp = {.flags = KF_STEP_COST | KF_STEP_TIME, .reps = 1};
	CHECK_EQ_INT(kf_proto_step_check(&stp, &s, &err), KF_ERR_INVALID);
	stp.flags = KF_STEP_COST;
	stp.cost.l2_ways = 3;
	CHECK_EQ_INT(kf_proto_step_check(&stp, &s, &err), KF_ERR_INVALID);
	stp.cost.l2_ways = 16;
	stp.cost.l2_bytes = 50 << 20;
	CHECKF(kf_proto_step_check(&stp, &s, &err) == KF_OK, "%s", err.msg);
}

KF_TEST_MAIN(TEST(test_cost_vector_access), TEST(test_oob_exact), TEST(test_race_shared),
	     TEST(test_uninit_shared), TEST(test_shfl_note), TEST(test_shared_poison_plain),
	     TEST(test_proto_finding), TEST(test_cost_coalescing), TEST(test_cost_bank_conflicts),
	     TEST(test_cost_atomics_collectives), TEST(test_cost_divergence), TEST(test_cost_long_interval),
	     TEST(test_cost_l2), TEST(test_cost_sampling), TEST(test_cost_memcheck), TEST(test_cost_overhead),
	     TEST(test_proto_cost))
