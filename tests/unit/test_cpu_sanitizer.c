/* The cpu sanitizer below the verifier: instrumented modules (kf_compile_opts.instrument) loaded by the
 * worker's cpu ops table (the worker's library, linked as the worker links it) and run with exact buffer
 * descriptions; each finding is checked field by field (kind, region, buffer, offset, threads, the
 * module offsets of its lines, the other access of a race); correct kernels run clean; the plain build
 * poisons shared memory per block; the wire protocol carries a finding and rejects a forged one. */
#include <string.h>
#include <sys/mman.h>
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

KF_TEST_MAIN(TEST(test_oob_exact), TEST(test_race_shared), TEST(test_uninit_shared), TEST(test_shfl_note),
	     TEST(test_shared_poison_plain), TEST(test_proto_finding))
