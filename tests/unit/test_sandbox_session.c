/* Worker sessions against the real kforge-worker ($KFORGE_WORKER): probing, start failures (missing
 * binary, a worker that hangs, dies or talks garbage: small shell scripts stand in for a broken worker),
 * and end-to-end cpu-backend steps (copy in, poison, run, copy out, guards, REALLOC, faults, hangs). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfile.h"
#include "sandbox/common/proto.h"
#include "sandbox/cpu/cpu.h"
#include "sandbox/sandbox.h"
#include "task.h"
#include "testing.h"

#define CANARY 0xa5c3e1f7u
#define POISON 0x7fc0dead

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
	static char p[8][512];
	static int k;
	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const char *text, int mode)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "cannot write %s\n", path);
		return;
	}
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
}

static char *read_text(const char *path)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	if (kf_buf_read_file(&b, path, NULL))
		return NULL;
	return kf_buf_detach(&b, NULL);
}

/* ---- probing and start failures (no module needed) -------------------------------------------- */

static void probe_cpu(void)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = kf_device_probe(KF_BACKEND_CPU, NULL, &info, &err);

	CHECKF(st == KF_OK, "%s", err.msg);
	CHECK_STR(info.backend, "cpu");
	CHECK_STR(info.arch, "host");
	CHECK(info.sm_count >= 1);
	CHECK(info.max_threads_per_block == 1024);
	CHECK(info.name[0] != '\0');
}

static void probe_cuda(void)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = kf_device_probe(KF_BACKEND_CUDA, NULL, &info, &err);

	if (st == KF_OK) {
		CHECK_STR(info.backend, "cuda");
		CHECK(strncmp(info.arch, "sm_", 3) == 0);
		return;
	}
	/* No GPU here: a clear "unavailable" with the reason, never a crash. */
	CHECKF(st == KF_ERR_UNAVAILABLE, "%s: %s", kf_status_name(st), err.msg);
	CHECK_CONTAINS(err.msg, "cuda");
	CHECK(strlen(err.msg) > 20);
}

static void worker_missing(void)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;

	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, "/nonexistent/kforge-worker", &info, &err),
		     KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "/nonexistent/kforge-worker");
	write_file(tmp_path("not-exec"), "#!/bin/sh\n", 0644);
	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, tmp_path("not-exec"), &info, &err), KF_ERR_IO);
	CHECK_CONTAINS(err.msg, "not-exec");
}

/* Whether pid still runs: gone, or a zombie nobody reaped yet (a container's init may never reap the
 * orphans it inherits), counts as dead. */
static bool alive(pid_t pid)
{
	char path[64], *stat, *close_paren;
	bool running;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = read_text(path);
	if (!stat)
		return false;
	close_paren = strrchr(stat, ')');
	running = close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
	free(stat);
	return running;
}

/* A worker that never answers: killed at the start timeout, with its whole process group. */
static void worker_hangs(void)
{
	char script[1024];
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU, .start_timeout_ms = 400};
	struct kf_compiled mod = {.backend = KF_BACKEND_CPU, .image = (uint8_t *)"x", .image_len = 1};
	struct kf_plan_launch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {1, 1, 1}};
	struct kf_plan plan = {.n_launches = 1, .launches = &l};
	struct kf_session *s = (struct kf_session *)&o; /* must be reset to NULL on failure */
	struct kf_err err = KF_ERR_INIT;
	double t0 = kf_now_ms();
	char *pid_text;

	/* The child sleep is in the worker's group: both must be gone afterwards. */
	snprintf(script, sizeof(script), "#!/bin/sh\nsleep 30 &\necho $! > %s\nexec sleep 30\n",
		 tmp_path("hang.pid"));
	write_file(tmp_path("hang.sh"), script, 0755);
	o.worker_path = tmp_path("hang.sh");
	CHECK_EQ_INT(kf_session_start(&o, &mod, &plan, 4096, &s, &err), KF_ERR_TIMEOUT);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "hello");
	CHECKF(kf_now_ms() - t0 < 5000, "took %.0f ms", kf_now_ms() - t0);
	pid_text = read_text(tmp_path("hang.pid"));
	CHECK(pid_text != NULL);
	if (pid_text) {
		pid_t gc = (pid_t)atoi(pid_text);
		CHECK(gc > 1);
		for (int i = 0; i < 100 && gc > 1 && alive(gc); i++)
			usleep(10000);
		CHECKF(gc > 1 && !alive(gc), "process %d of the group survived", (int)gc);
		free(pid_text);
	}
}

/* A worker that dies before its hello: a crash whose message carries its exit status and stderr. */
static void worker_dies(void)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;

	write_file(tmp_path("die.sh"), "#!/bin/sh\necho 'worker: boom on stderr' >&2\nexit 7\n", 0755);
	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, tmp_path("die.sh"), &info, &err), KF_ERR_CRASH);
	CHECK_CONTAINS(err.msg, "status 7");
	CHECK_CONTAINS(err.msg, "boom on stderr");

	write_file(tmp_path("segv.sh"), "#!/bin/sh\nkill -SEGV $$\n", 0755);
	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, tmp_path("segv.sh"), &info, &err), KF_ERR_CRASH);
	CHECK_CONTAINS(err.msg, "SIGSEGV");
}

/* A worker that writes garbage on its socket (fd 3) broke the protocol: a crash, and it is killed. */
static void worker_talks_garbage(void)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;

	write_file(tmp_path("garbage.sh"), "#!/bin/sh\nprintf 'this is not a hello' >&3\nexec sleep 30\n",
		   0755);
	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, tmp_path("garbage.sh"), &info, &err), KF_ERR_CRASH);
	CHECK_CONTAINS(err.msg, "protocol");
}

/* Credentials in the parent's environment never reach the worker (it runs candidate code). */
static void worker_env_scrubbed(void)
{
	char script[1024];
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;
	char *env;

	/* The env layer: the worker's environment is an allow-list, so neither a key nor a path of
	 * kforge's (KFORGE_*, HOME, PATH) reaches it. */
	setenv("OPENAI_API_KEY", "sk-test-must-not-leak", 1);
	setenv("KFORGE_TEST_VISIBLE", "yes", 1);
	snprintf(script, sizeof(script), "#!/bin/sh\n/usr/bin/env > %s\nexit 0\n", tmp_path("env.txt"));
	write_file(tmp_path("env.sh"), script, 0755);
	CHECK_EQ_INT(kf_device_probe(KF_BACKEND_CPU, tmp_path("env.sh"), &info, &err), KF_ERR_CRASH);
	env = read_text(tmp_path("env.txt"));
	CHECK(env != NULL);
	if (env) {
		CHECK(!strstr(env, "sk-test-must-not-leak"));
		CHECK(!strstr(env, "KFORGE_TEST_VISIBLE"));
		CHECK(!strstr(env, "HOME="));
		CHECK(!strstr(env, "\nPATH=") && strncmp(env, "PATH=", 5));
		CHECK_CONTAINS(env, "ASAN_OPTIONS=");
		free(env);
	}
	unsetenv("OPENAI_API_KEY");
	unsetenv("KFORGE_TEST_VISIBLE");
}

/* ---- end to end on the cpu backend ------------------------------------------------------------- */

struct fx {
	struct kf_task *t;
	struct kf_kfile *k;
	struct kf_compiled *c;
	struct kf_plan *p;
};

static void fx_free(struct fx *f)
{
	kf_plan_free(f->p);
	kf_compiled_free(f->c);
	kf_kfile_free(f->k);
	kf_task_free(f->t);
	memset(f, 0, sizeof(*f));
}

/* Loads task_path, parses and binds src, compiles it for the cpu backend (with AddressSanitizer when
 * sanitize), plans it at dim=value. */
static bool fx_make_opts(struct fx *f, const char *task_path, const char *src, const char *dim, int64_t value,
			 bool sanitize)
{
	struct kf_compile_opts co = {.backend = KF_BACKEND_CPU, .sanitize = sanitize};
	struct kf_shape shape = {0};
	struct kf_err err = KF_ERR_INIT;

	memset(f, 0, sizeof(*f));
	if (kf_task_load(task_path, KF_TASK_NO_FILES, NULL, &f->t, &err) ||
	    kf_kfile_parse("kernel.cu", src, strlen(src), &f->k, &err) || kf_kfile_bind(f->k, f->t, &err) ||
	    kf_compile(f->k, &co, &f->c, &err) || kf_shape_set(&shape, dim, value) ||
	    kf_plan_make(f->k, f->t, &shape, &f->p, &err)) {
		fprintf(stderr, "  fixture: %s%s%s\n", err.msg, f->c ? "\n" : "", f->c ? f->c->log : "");
		fx_free(f);
		return false;
	}
	return true;
}

static bool fx_make(struct fx *f, const char *task_path, const char *src, const char *dim, int64_t value)
{
	return fx_make_opts(f, task_path, src, dim, value, false);
}

static const char *VECTOR_TASK = "tasks/examples/vector_add_f32/task.json";

static const char *VADD =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\tc[i] = a[i] + b[i];\n"
    "}\n";

static bool guard_ok(const uint8_t *g, size_t n, uint32_t canary)
{
	for (size_t k = 0; k < n; k++)
		if (g[k] != (uint8_t)(canary >> (8 * (k % 4))))
			return false;
	return true;
}

static void step_init(struct kf_step *st, uint32_t flags, uint32_t slot, uint32_t reps)
{
	memset(st, 0, sizeof(*st));
	st->flags = flags;
	st->slot = slot;
	st->reps = reps;
	st->poison = POISON;
	st->canary = CANARY;
	st->timeout_ms = 60000;
	for (int i = 0; i < KF_MAX_BUFFERS; i++)
		st->in_off[i] = st->out_off[i] = -1;
}

static void vector_add_steps(void)
{
	enum { N = 1000 };
	const size_t nb = N * sizeof(float), G = KF_GUARD_BYTES, ob = nb + 2 * KF_GUARD_BYTES;
	const size_t off_a = 0, off_b = nb, off_oc = 2 * nb, off_oa = 2 * nb + ob;
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	static struct kf_step_result r1, r2, r3, r4;
	struct kf_step st;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct rusage ru;
	struct fx f;
	float *a, *b, *c;
	uint8_t *arena;

	/* Which host compiler and shim built the modules below (part of their cache key). */
	fprintf(stderr, "  cpu compiler: %s\n", kf_cpu_compiler_id());
	if (!fx_make(&f, VECTOR_TASK, VADD, "N", N)) {
		CHECK(!"fixture");
		return;
	}
	CHECK_EQ_INT(f.p->n_buffers, 3);
	CHECKF(kf_session_start(&o, f.c, f.p, 2 * nb + 2 * ob, &s, &err) == KF_OK, "%s", err.msg);
	if (!s) {
		fx_free(&f);
		return;
	}
	CHECK_EQ_INT(kf_session_arena_size(s), 2 * nb + 2 * ob);
	CHECK_STR(kf_session_device(s)->backend, "cpu");
	arena = kf_session_arena(s);
	a = (float *)(arena + off_a);
	b = (float *)(arena + off_b);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = 1000.0f - (float)i;
	}

	/* copy in, poison, run once (timed), copy out c and (input integrity) a */
	step_init(&st, KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT | KF_STEP_TIME,
		  0, 1);
	st.in_off[0] = (int64_t)off_a;
	st.in_off[1] = (int64_t)off_b;
	st.out_off[2] = (int64_t)off_oc;
	st.out_off[0] = (int64_t)off_oa;
	CHECK_EQ_INT(kf_session_step(s, &st, &r1, &err), KF_OK);
	CHECKF(r1.status == KF_OK, "%s", r1.msg);
	CHECK(!r1.worker_dead);
	CHECK_EQ_INT(r1.n_times, 1);
	CHECK(r1.time_ns[0] > 0);
	CHECK_STR(r1.timing_source, "cpu-wall");
	c = (float *)(arena + off_oc + G);
	{
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += c[i] != a[i] + b[i];
		CHECK_EQ_INT(bad, 0);
	}
	CHECK(guard_ok(arena + off_oc, G, CANARY));
	CHECK(guard_ok(arena + off_oc + G + nb, G, CANARY));
	CHECK(guard_ok(arena + off_oa, G, CANARY));
	CHECK(memcmp(arena + off_oa + G, a, nb) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK(r1.addr[i] != 0);
		CHECK_EQ_INT(r1.addr[i] % 256, 0);
	}

	/* same slot, no REALLOC: same addresses; five timed reps */
	step_init(&st, KF_STEP_TIME, 0, 5);
	CHECK_EQ_INT(kf_session_step(s, &st, &r2, &err), KF_OK);
	CHECKF(r2.status == KF_OK, "%s", r2.msg);
	CHECK_EQ_INT(r2.n_times, 5);
	CHECK_EQ_INT(r2.kernels_seen, 5);
	CHECK(memcmp(r1.addr, r2.addr, 3 * sizeof(uint64_t)) == 0);

	/* REALLOC: every address changes (the old block was still held while the new one was made) */
	step_init(&st, KF_STEP_REALLOC | KF_STEP_POISON | KF_STEP_COPY_OUT, 0, 1);
	st.out_off[2] = (int64_t)off_oc;
	CHECK_EQ_INT(kf_session_step(s, &st, &r3, &err), KF_OK);
	CHECKF(r3.status == KF_OK, "%s", r3.msg);
	for (int i = 0; i < 3; i++)
		CHECKF(r3.addr[i] != r1.addr[i], "buffer %d kept address 0x%llx", i,
		       (unsigned long long)r1.addr[i]);
	/* another slot: other addresses again */
	step_init(&st, KF_STEP_POISON, 1, 1);
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_OK);
	CHECKF(r4.status == KF_OK, "%s", r4.msg);
	for (int i = 0; i < 3; i++)
		CHECK(r4.addr[i] != r3.addr[i]);

	/* the fresh buffers of step 3 got no inputs, but their guards were set again and copied out */
	CHECK(guard_ok(arena + off_oc, G, CANARY));
	CHECK(guard_ok(arena + off_oc + G + nb, G, CANARY));

	/* steps the parent refuses before sending: the session stays usable */
	step_init(&st, 0, KF_MAX_SLOTS, 1);
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_ERR_RANGE);
	step_init(&st, KF_STEP_COPY_OUT, 0, 1);
	st.out_off[2] = (int64_t)(2 * nb + 2 * ob - ob + 1);
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "arena");
	step_init(&st, KF_STEP_TIME, 0, 0); /* a timed step runs the plan at least once */
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_ERR_RANGE);
	/* an untimed one of 0 reps only prepares: poison, copy in; no launch, no time */
	step_init(&st, KF_STEP_POISON | KF_STEP_COPY_IN, 0, 0);
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_OK);
	CHECKF(r4.status == KF_OK && r4.n_times == 0, "%s", r4.msg);
	step_init(&st, 0, 0, 1);
	CHECK_EQ_INT(kf_session_step(s, &st, &r4, &err), KF_OK);
	CHECKF(r4.status == KF_OK, "%s", r4.msg);
	{
		/* what the parent reads of the worker from /proc: it has run, and it is idle now */
		uint64_t c0 = 0, c1 = 0;
		int th0 = 0, th1 = 0;
		CHECK_EQ_INT(kf_session_usage(s, &c0, &th0, &err), KF_OK);
		CHECK(c0 > 0);
		/* the whole tree: the jail's processes and the one running the kernels, with its pool */
		CHECKF(th0 >= 2, "%d threads", th0);
		usleep(100000);
		CHECK_EQ_INT(kf_session_usage(s, &c1, &th1, &err), KF_OK);
		CHECKF(c1 - c0 < 20000000, "an idle worker used %.1f ms in 100 ms", (double)(c1 - c0) / 1e6);
		CHECK_EQ_INT(th1, th0);
	}

	memset(&ru, 0, sizeof(ru));
	kf_session_end(s, &ru);
	CHECK(ru.ru_maxrss > 0);
	fx_free(&f);
}

/* `// kforge:zero` in the worker: a buffer zeroed before the plan is zero at the start of every run
 * (reps accumulate nothing), a zero between two launches overwrites what the first wrote, the guards
 * keep their canary; and template instantiations run in plan order under their own entry names. */
static const char *ZERO_PLAN =
    "// kforge:scratch s u8 (N)\n"
    "// kforge:zero c\n"
    "// kforge:launch acc<float, 256> grid=(cdiv(N, 256)) block=(256) args=(a, c, s, N)\n"
    "// kforge:zero s byte=7\n"
    "// kforge:launch addk<2> grid=(cdiv(N, 128)) block=(128) args=(s, b, c, N)\n"
    "template <typename T, int BLOCK>\n"
    "__global__ void acc(const T *a, T *c, unsigned char *s, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * BLOCK + threadIdx.x;\n"
    "\tif (i < N) {\n"
    "\t\tc[i] += a[i]; /* needs c zeroed */\n"
    "\t\ts[i] = 1;\n"
    "\t}\n"
    "}\n"
    "template <int K>\n"
    "__global__ void addk(const unsigned char *s, const float *b, float *c, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\tc[i] += (float)s[i] + K * b[i];\n"
    "}\n";

static void zero_and_templates(void)
{
	enum { N = 1001 };
	const size_t nb = N * sizeof(float), G = KF_GUARD_BYTES, ob = nb + 2 * KF_GUARD_BYTES;
	const size_t sb = (N + 2 * KF_GUARD_BYTES + 255) / 256 * 256;
	const size_t off_a = 0, off_b = nb, off_oc = 2 * nb, off_os = 2 * nb + ob;
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	static struct kf_step_result r;
	struct kf_step st;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f;
	float *a, *b, *c;
	uint8_t *arena;

	if (!fx_make(&f, VECTOR_TASK, ZERO_PLAN, "N", N)) {
		CHECK(!"fixture");
		return;
	}
	CHECK_EQ_INT(f.p->n_zeros, 2);
	CHECK_EQ_INT(f.c->n_names, 2);
	CHECKF(kf_session_start(&o, f.c, f.p, 2 * nb + ob + sb, &s, &err) == KF_OK, "%s", err.msg);
	if (!s) {
		fx_free(&f);
		return;
	}
	arena = kf_session_arena(s);
	a = (float *)(arena + off_a);
	b = (float *)(arena + off_b);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i * 0.25f;
		b[i] = (float)(i % 7) - 3.0f;
	}
	step_init(&st, KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT, 0, 3);
	st.in_off[0] = (int64_t)off_a;
	st.in_off[1] = (int64_t)off_b;
	st.out_off[2] = (int64_t)off_oc;
	st.out_off[3] = (int64_t)off_os;
	CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
	CHECKF(r.status == KF_OK, "%s", r.msg);
	c = (float *)(arena + off_oc + G);
	{
		int bad = 0, bad_s = 0;
		for (int i = 0; i < N; i++)
			bad += c[i] != a[i] + 7.0f + 2.0f * b[i];
		for (int i = 0; i < N; i++)
			bad_s += arena[off_os + G + (size_t)i] != 7;
		CHECK_EQ_INT(bad, 0);
		CHECK_EQ_INT(bad_s, 0);
	}
	CHECK(guard_ok(arena + off_oc, G, CANARY));
	CHECK(guard_ok(arena + off_oc + G + nb, G, CANARY));
	CHECK(guard_ok(arena + off_os, G, CANARY));
	CHECK(guard_ok(arena + off_os + G + N, G, CANARY));
	kf_session_end(s, NULL);
	fx_free(&f);

	/* without the zero the accumulation starts from poison */
	{
		char *src = kf_strdup(ZERO_PLAN), *z = strstr(src, "// kforge:zero c\n");
		memcpy(z, "// zeroing c: no", 16);
		if (!fx_make(&f, VECTOR_TASK, src, "N", N)) {
			CHECK(!"fixture");
			free(src);
			return;
		}
		CHECK_EQ_INT(f.p->n_zeros, 1);
		CHECKF(kf_session_start(&o, f.c, f.p, 2 * nb + ob + sb, &s, &err) == KF_OK, "%s", err.msg);
		if (s) {
			arena = kf_session_arena(s);
			for (int i = 0; i < N; i++)
				((float *)arena)[i] = 1.0f;
			CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
			CHECKF(r.status == KF_OK, "%s", r.msg);
			c = (float *)(arena + off_oc + G);
			CHECK(c[0] != c[0]); /* NaN poison plus anything */
			kf_session_end(s, NULL);
		}
		fx_free(&f);
		free(src);
	}
}

/* u8 buffers of odd length: the rear guard starts unaligned and must still hold the canary in phase,
 * and a write one past the end lands in it. */
static const char *U8_TASK =
    "{\"format\": \"kforge-task/1\", \"name\": \"inc_u8\", \"title\": \"t\", \"category\": "
    "\"elementwise\", \"level\": 1, \"description\": \"y = x + 1\", \"dims\": [\"N\"], "
    "\"shapes\": {\"public\": [{\"N\": 1003}], \"hidden\": [{\"N\": 5}]}, "
    "\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"u8\", \"shape\": [\"N\"]}, "
    "{\"name\": \"y\", \"role\": \"output\", \"dtype\": \"u8\", \"shape\": [\"N\"]}], "
    "\"reference\": \"reference.cu\"}\n";

static const char *INC_U8 =
    "// kforge:launch inc grid=(cdiv(N, 128)) block=(128) args=(x, y, N)\n"
    "extern \"C\" __global__ void inc(const unsigned char *x, unsigned char *y, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\ty[i] = (unsigned char)(x[i] + 1);\n"
    "}\n";

static const char *INC_U8_OOB =
    "// kforge:launch inc grid=(cdiv(N, 128)) block=(128) args=(x, y, N)\n"
    "extern \"C\" __global__ void inc(const unsigned char *x, unsigned char *y, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i <= N)\n" /* one too many */
    "\t\ty[i] = (unsigned char)(x[i < N ? i : 0] + 1);\n"
    "}\n";

static void run_u8(const char *src, bool expect_oob)
{
	enum { N = 1003 };
	const size_t G = KF_GUARD_BYTES, ob = N + 2 * KF_GUARD_BYTES;
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	static struct kf_step_result r;
	struct kf_step st;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f;
	uint8_t *arena, *y;

	write_file(tmp_path("u8.json"), U8_TASK, 0644);
	if (!fx_make(&f, tmp_path("u8.json"), src, "N", N)) {
		CHECK(!"fixture");
		return;
	}
	CHECKF(kf_session_start(&o, f.c, f.p, N + ob, &s, &err) == KF_OK, "%s", err.msg);
	if (!s) {
		fx_free(&f);
		return;
	}
	arena = kf_session_arena(s);
	for (int i = 0; i < N; i++)
		arena[i] = (uint8_t)(i * 7);
	step_init(&st, KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT, 0, 1);
	st.in_off[0] = 0;
	st.out_off[1] = N;
	CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
	CHECKF(r.status == KF_OK, "%s", r.msg);
	y = arena + N + G;
	{
		int bad = 0;
		for (int i = 0; i < N; i++)
			bad += y[i] != (uint8_t)(arena[i] + 1);
		CHECK_EQ_INT(bad, 0);
	}
	CHECK(guard_ok(arena + N, G, CANARY));
	if (expect_oob) {
		CHECK(!guard_ok(y + N, G, CANARY));
		CHECK(guard_ok(y + N + 1, G - 4, CANARY >> 8 | CANARY << 24)); /* only that byte was hit */
	} else {
		CHECK(guard_ok(y + N, G, CANARY));
	}
	kf_session_end(s, NULL);
	fx_free(&f);
}

static void unaligned_guards(void)
{
	run_u8(INC_U8, false);
}

static void write_past_end_hits_guard(void)
{
	run_u8(INC_U8_OOB, true);
}

static const char *VADD_NULL =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tvolatile float *volatile p = 0;\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\tp[i] = a[i] + b[i];\n"
    "}\n";

static const char *VADD_SPIN =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tvolatile int spin = 1;\n"
    "\twhile (spin)\n"
    "\t\t;\n"
    "\tc[0] = a[0] + b[0];\n"
    "}\n";

static const char *VADD_TRAP =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tif (threadIdx.x == 3)\n"
    "\t\t__trap();\n"
    "\tc[0] = a[0] + b[0];\n"
    "}\n";

/* Runs one step of src expecting the worker to die or be killed with status want. */
static void run_fatal(const char *src, enum kf_status want, int timeout_ms, const char *needle)
{
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	static struct kf_step_result r;
	struct kf_step st;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f;
	double t0;

	if (!fx_make(&f, VECTOR_TASK, src, "N", 512)) {
		CHECK(!"fixture");
		return;
	}
	CHECKF(kf_session_start(&o, f.c, f.p, 3 * 2048, &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		step_init(&st, KF_STEP_COPY_IN | KF_STEP_POISON, 0, 1);
		st.in_off[0] = 0;
		st.in_off[1] = 2048;
		st.timeout_ms = timeout_ms;
		t0 = kf_now_ms();
		CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
		CHECKF(r.status == want, "status %s, want %s: %s", kf_status_name(r.status),
		       kf_status_name(want), r.msg);
		CHECK(r.worker_dead);
		CHECK_CONTAINS(r.msg, needle);
		CHECKF(kf_now_ms() - t0 < timeout_ms + 5000.0, "took %.0f ms", kf_now_ms() - t0);
		/* the dead session refuses further steps, and says so in the result too */
		CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_ERR_INVALID);
		CHECK(r.worker_dead);
		kf_session_end(s, NULL);
	}
	fx_free(&f);

	/* and the next session works */
	if (!fx_make(&f, VECTOR_TASK, VADD, "N", 512)) {
		CHECK(!"fixture");
		return;
	}
	s = NULL;
	CHECKF(kf_session_start(&o, f.c, f.p, 3 * 2048, &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		step_init(&st, KF_STEP_POISON, 0, 1);
		CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
		CHECKF(r.status == KF_OK, "%s", r.msg);
		kf_session_end(s, NULL);
	}
	fx_free(&f);
}

static void null_deref_is_runtime(void)
{
	run_fatal(VADD_NULL, KF_ERR_RUNTIME, 30000, "while the kernels ran");
}

static void trap_is_runtime(void)
{
	run_fatal(VADD_TRAP, KF_ERR_RUNTIME, 30000, "while the kernels ran");
}

static void infinite_loop_times_out(void)
{
	run_fatal(VADD_SPIN, KF_ERR_TIMEOUT, 1500, "1500 ms");
}

/* A sanitized module (AddressSanitizer preloaded into the worker) writing past its whole allocation,
 * beyond the guard: ASan's report makes it a runtime fault with the report's summary. A near write
 * stays inside the guard zone, which the canary check catches instead. */
static const char *VADD_FAR_OOB =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\tc[i] = a[i] + b[i];\n"
    "\tif (i == 0)\n"
    "\t\tc[N + 1024 + 1] = 1.0f; /* data 2 KiB + rear guard 4 KiB = 1536 floats: 4 bytes past the block */\n"
    "}\n";

static void sanitized_oob_is_runtime(void)
{
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU, .sanitize = true};
	static struct kf_step_result r;
	struct kf_step st;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f;
	enum kf_status rc;

	if (!fx_make_opts(&f, VECTOR_TASK, VADD_FAR_OOB, "N", 512, true)) {
		CHECK(!"fixture");
		return;
	}
	rc = kf_session_start(&o, f.c, f.p, 3 * 2048, &s, &err);
	if (rc == KF_ERR_UNAVAILABLE && strstr(err.msg, "AddressSanitizer")) {
		fx_free(&f);
		KF_SKIP("no AddressSanitizer runtime for the host compiler");
	}
	CHECKF(rc == KF_OK, "%s", err.msg);
	if (s) {
		step_init(&st, KF_STEP_COPY_IN | KF_STEP_POISON, 0, 1);
		st.in_off[0] = 0;
		st.in_off[1] = 2048;
		st.timeout_ms = 60000;
		CHECK_EQ_INT(kf_session_step(s, &st, &r, &err), KF_OK);
		CHECKF(r.status == KF_ERR_RUNTIME, "status %s: %s", kf_status_name(r.status), r.msg);
		CHECK(r.worker_dead);
		CHECK_CONTAINS(r.msg, "AddressSanitizer");
		CHECK_CONTAINS(kf_session_log(s), "heap-buffer-overflow");
		CHECK_CONTAINS(kf_session_log(s), "WRITE of size 4");
		kf_session_end(s, NULL);
	}
	fx_free(&f);
}

/* A plan naming a kernel the module does not have is refused at setup; so is a module of the other
 * backend. */
static void setup_refusals(void)
{
	static const char *other =
	    "// kforge:launch vector_add2 grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
	    "extern \"C\" __global__ void vector_add2(const float *a, const float *b, float *c, int N)\n"
	    "{\n"
	    "}\n";
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f, g;

	if (!fx_make(&f, VECTOR_TASK, VADD, "N", 64)) {
		CHECK(!"fixture");
		return;
	}
	if (!fx_make(&g, VECTOR_TASK, other, "N", 64)) {
		CHECK(!"fixture");
		fx_free(&f);
		return;
	}
	CHECK_EQ_INT(kf_session_start(&o, f.c, g.p, 4096, &s, &err), KF_ERR_INVALID);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "vector_add2");
	f.c->backend = KF_BACKEND_CUDA;
	CHECK_EQ_INT(kf_session_start(&o, f.c, f.p, 4096, &s, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "cuda");
	f.c->backend = KF_BACKEND_CPU;
	/* a module that is not a shared object at all */
	{
		struct kf_compiled junk = *f.c;
		junk.image = (uint8_t *)"definitely not ELF";
		junk.image_len = 18;
		CHECK_EQ_INT(kf_session_start(&o, &junk, f.p, 4096, &s, &err), KF_ERR_INVALID);
		CHECK(s == NULL);
	}
	kf_session_end(NULL, NULL); /* a no-op */
	fx_free(&f);
	fx_free(&g);
}

/* A library call ("@cublas.gemm", core/baseline.h) reaching a cpu worker: the worker refuses it as
 * unavailable at setup (it never looks the name up in the module, which would be a mere bad launch). */
static void library_call_on_cpu(void)
{
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU};
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct fx f;

	if (!fx_make(&f, VECTOR_TASK, VADD, "N", 64)) {
		CHECK(!"fixture");
		return;
	}
	snprintf(f.p->launches[0].kernel, sizeof(f.p->launches[0].kernel), "@cublas.gemm");
	CHECK_EQ_INT(kf_session_start(&o, f.c, f.p, 4096, &s, &err), KF_ERR_UNAVAILABLE);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "'cublas.gemm' is a library call: the cpu backend runs none");
	fx_free(&f);
}

/* ---- a hostile worker: this test binary, re-executed as the worker -------------------------------- */

/* When kf_session_start runs this binary as its worker (argv "--backend cpu --fd 3 ..."), it speaks
 * the protocol and misbehaves as $KFORGE_TEST_EVIL says: fault injection for the parent's defences
 * against a worker that lies (a candidate kernel runs inside the cpu worker and can corrupt it). */
/* The modes, passed to the re-executed binary as its --shuffle-seed (index + 1): the worker's
 * environment is an allow-list, so nothing of the test's own environment gets there. */
static const char *const evil_modes[] = {"bad-result",    "nan-time",     "shrink-arena", "fd-in-reply",
					 "wrong-backend", "flood-stderr", "hang-in-step", "die-in-step"};

static int evil_worker(int argc, char **argv)
{
	static _Alignas(max_align_t) uint8_t b[KF_PROTO_MSG_MAX];
	const char *mode = NULL;
	struct kf_proto_hello h;
	int sock = 3, fds[2], trunc_errno = 0;
	size_t n, n_fds;

	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--shuffle-seed")) {
			unsigned long m = strtoul(argv[i + 1], NULL, 10);
			if (m >= 1 && m <= KF_ARRAY_SIZE(evil_modes))
				mode = evil_modes[m - 1];
		}
	if (!mode)
		return 9;
	if (!strcmp(mode, "flood-stderr")) {
		static char junk[65536];
		memset(junk, 'E', sizeof(junk));
		for (int i = 0; i < 160; i++) /* 10 MiB, far past the parent's 64 KiB log */
			if (write(2, junk, sizeof(junk)) < 0)
				return 8;
	}
	memset(&h, 0, sizeof(h));
	h.status = KF_OK;
	snprintf(h.info.backend, sizeof(h.info.backend), "%s",
		 strcmp(mode, "wrong-backend") ? "cpu" : "cuda");
	snprintf(h.info.arch, sizeof(h.info.arch), "host");
	n = kf_proto_hello_encode(b, sizeof(b), &h);
	fds[0] = 0;
	if (kf_proto_send(sock, b, n, fds, !strcmp(mode, "fd-in-reply") ? 1 : 0, NULL))
		return 7;
	for (;;) {
		enum kf_msg_type type;
		struct kf_step st;
		static struct kf_step_result r;
		if (kf_proto_recv(sock, b, sizeof(b), &n, fds, 2, &n_fds, NULL) ||
		    kf_proto_type(b, n, &type, NULL))
			_exit(0);
		if (type == KF_MSG_SETUP) {
			struct kf_proto_status ok = {KF_OK, ""};
			/* The arena is sealed: a worker cannot shrink it under the parent (a SIGBUS there).
			 */
			if (n_fds == 2 && ftruncate(fds[1], 0) != 0)
				trunc_errno = errno;
			n = kf_proto_status_encode(b, sizeof(b), KF_MSG_SETUP_OK, &ok);
			kf_proto_send(sock, b, n, NULL, 0, NULL);
			continue;
		}
		if (type != KF_MSG_STEP || kf_proto_step_decode(b, n, &st, NULL))
			_exit(0);
		n = kf_proto_empty_encode(b, sizeof(b), KF_MSG_RUNNING);
		kf_proto_send(sock, b, n, NULL, 0, NULL);
		if (!strcmp(mode, "hang-in-step"))
			for (;;)
				pause();
		if (!strcmp(mode, "die-in-step"))
			kill(getpid(), SIGBUS);
		memset(&r, 0, sizeof(r));
		r.status = KF_OK;
		snprintf(r.msg, sizeof(r.msg), "ftruncate: %s",
			 trunc_errno ? strerror(trunc_errno) : "allowed");
		r.n_times = st.reps;
		if (!strcmp(mode, "bad-result"))
			r.n_times = st.reps + 5;
		if (!strcmp(mode, "nan-time"))
			r.time_ns[0] = NAN;
		n = kf_proto_result_encode(b, sizeof(b), &r);
		kf_proto_send(sock, b, n, NULL, 0, NULL);
	}
}

/* Starts a session whose worker is this binary in mode `mode`. */
static enum kf_status evil_start(const char *mode, struct kf_session **s, struct kf_err *err)
{
	static struct kf_plan_buffer buf = {.name = "x", .n_bytes = 1024, .role = KF_ROLE_OUTPUT};
	static struct kf_plan_launch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {1, 1, 1}, .n_args = 1};
	static struct kf_plan plan = {.n_launches = 1, .launches = &l, .n_buffers = 1, .buffers = &buf};
	static struct kf_compiled mod = {
	    .backend = KF_BACKEND_CPU, .image = (uint8_t *)"not a module", .image_len = 12};
	static char self[4096];
	struct kf_worker_opts o = {.backend = KF_BACKEND_CPU, .start_timeout_ms = 20000};
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[k > 0 ? k : 0] = '\0';
	o.worker_path = self;
	for (size_t i = 0; i < KF_ARRAY_SIZE(evil_modes); i++)
		if (!strcmp(evil_modes[i], mode))
			o.shuffle_seed = i + 1;
	return kf_session_start(&o, &mod, &plan, 65536, s, err);
}

static void evil_step(struct kf_session *s, uint32_t flags, int timeout_ms, struct kf_step_result *r,
		      enum kf_status want_rc, enum kf_status want_status, const char *needle)
{
	struct kf_step st;
	struct kf_err err = KF_ERR_INIT;

	step_init(&st, flags, 0, 3);
	st.timeout_ms = timeout_ms;
	CHECK_EQ_INT(kf_session_step(s, &st, r, &err), want_rc);
	CHECKF(r->status == want_status, "status %s: %s", kf_status_name(r->status), r->msg);
	CHECK_CONTAINS(r->msg, needle);
}

static void hostile_results(void)
{
	static struct kf_step_result r;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;

	/* more times than reps: the parent kills it and says the protocol broke, as a result (a
	 * verdict for the candidate that did it), not as an error that would stop the whole run */
	CHECKF(evil_start("bad-result", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		evil_step(s, KF_STEP_TIME, 20000, &r, KF_OK, KF_ERR_CRASH, "protocol");
		CHECK(r.worker_dead);
		kf_session_end(s, NULL);
	}
	s = NULL;
	CHECKF(evil_start("nan-time", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		evil_step(s, KF_STEP_TIME, 20000, &r, KF_OK, KF_ERR_CRASH, "protocol");
		kf_session_end(s, NULL);
	}
	/* the arena cannot be shrunk by the worker; the parent reads all of it afterwards */
	s = NULL;
	CHECKF(evil_start("shrink-arena", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		volatile uint8_t sum = 0;
		evil_step(s, 0, 20000, &r, KF_OK, KF_OK, "ftruncate: Operation not permitted");
		for (size_t i = 0; i < kf_session_arena_size(s); i++)
			sum ^= kf_session_arena(s)[i];
		(void)sum;
		kf_session_end(s, NULL);
	}
}

static void hostile_start(void)
{
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;

	CHECK_EQ_INT(evil_start("fd-in-reply", &s, &err), KF_ERR_CRASH);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "protocol");
	CHECK_EQ_INT(evil_start("wrong-backend", &s, &err), KF_ERR_CRASH);
	CHECK_CONTAINS(err.msg, "'cuda'");
	/* 10 MiB on stderr before the hello: drained while waiting, kept to its bound */
	CHECKF(evil_start("flood-stderr", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		CHECK(strlen(kf_session_log(s)) <= 64 * 1024);
		CHECK(strlen(kf_session_log(s)) >= 1024);
		kf_session_end(s, NULL);
	}
}

static void hostile_deaths(void)
{
	static struct kf_step_result r;
	struct kf_session *s = NULL;
	struct kf_err err = KF_ERR_INIT;
	double t0;

	CHECKF(evil_start("hang-in-step", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		t0 = kf_now_ms();
		evil_step(s, 0, 500, &r, KF_OK, KF_ERR_TIMEOUT, "while the kernels ran");
		CHECK(r.worker_dead);
		CHECKF(kf_now_ms() - t0 < 4000, "took %.0f ms", kf_now_ms() - t0);
		kf_session_end(s, NULL);
	}
	s = NULL;
	CHECKF(evil_start("die-in-step", &s, &err) == KF_OK, "%s", err.msg);
	if (s) {
		/* SIGBUS while the kernels ran: a kernel fault (a sanitized build reports it through ASan) */
		evil_step(s, 0, 20000, &r, KF_OK, KF_ERR_RUNTIME, "while the kernels ran");
		CHECK(r.worker_dead);
		kf_session_end(s, NULL);
	}
}

static void setup_tmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/kforge-session.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void cleanup_tmp(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static const struct kf_test_case cases[] = {
    TEST(probe_cpu),
    TEST(probe_cuda),
    TEST(worker_missing),
    TEST(worker_hangs),
    TEST(worker_dies),
    TEST(worker_talks_garbage),
    TEST(worker_env_scrubbed),
    TEST(vector_add_steps),
    TEST(zero_and_templates),
    TEST(unaligned_guards),
    TEST(write_past_end_hits_guard),
    TEST(null_deref_is_runtime),
    TEST(trap_is_runtime),
    TEST(infinite_loop_times_out),
    TEST(sanitized_oob_is_runtime),
    TEST(setup_refusals),
    TEST(library_call_on_cpu),
    TEST(hostile_start),
    TEST(hostile_results),
    TEST(hostile_deaths),
};

int main(int argc, char **argv)
{
	int rc;
	if (argc > 1 && !strcmp(argv[1], "--backend"))
		return evil_worker(argc, argv);
	setup_tmp();
	rc = kf_test_run(cases, KF_ARRAY_SIZE(cases), argc, argv);
	cleanup_tmp();
	return rc;
}
