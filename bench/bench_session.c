/* Worker-session latency on the cpu backend: start (spawn, hello, setup), one small step, steady-state
 * steps and the end, in ms (medians of several rounds), each also as a ratio against the cost of
 * fork + exec + wait of /bin/true measured in the same run (the floor any process isolation pays).
 * Then the same with every sandbox layer off (this binary again, KFORGE_SANDBOX_LAYERS=none): what the
 * sandbox costs a worker, as a ratio measured in the same run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfile.h"
#include "sandbox/cpu/cpu.h"
#include "sandbox/sandbox.h"
#include "task.h"

#define ROUNDS 9
#define STEPS 50
#define N 4096

static const char *SRC =
    "// kforge:launch vector_add grid=(cdiv(N, 256)) block=(256) args=(a, b, c, N)\n"
    "extern \"C\" __global__ void vector_add(const float *a, const float *b, float *c, int N)\n"
    "{\n"
    "\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "\tif (i < N)\n"
    "\t\tc[i] = a[i] + b[i];\n"
    "}\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double spawn_true_ms(void)
{
	double t0 = kf_now_ms();
	pid_t pid = fork();
	int ws;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	waitpid(pid, &ws, 0);
	return kf_now_ms() - t0;
}

static void step_init(struct kf_step *st, uint32_t flags)
{
	memset(st, 0, sizeof(*st));
	st->flags = flags;
	st->reps = 1;
	st->poison = 0x7fc0dead;
	st->canary = 0xa5a5a5a5;
	st->timeout_ms = 30000;
	for (int i = 0; i < KF_MAX_BUFFERS; i++)
		st->in_off[i] = st->out_off[i] = -1;
}

static int measure(double *total_out);

/* The unsandboxed run: this binary again with every layer off; its start+step+end in ms (-1: failed). */
static double unsandboxed_total(void)
{
	char self[4096], line[512];
	double total = -1;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *f;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	setenv("KFORGE_SANDBOX_LAYERS", "none", 1);
	setenv("KFORGE_UNSANDBOXED_CPU_BACKEND_I_ACCEPT_THE_RISK", "1", 1);
	f = popen(self, "r");
	unsetenv("KFORGE_SANDBOX_LAYERS");
	unsetenv("KFORGE_UNSANDBOXED_CPU_BACKEND_I_ACCEPT_THE_RISK");
	if (!f)
		return -1;
	printf("-- every sandbox layer off (KFORGE_SANDBOX_LAYERS=none):\n");
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stdout);
		if (!strncmp(line, "start+step+end:", 15))
			total = strtod(line + 15, NULL);
	}
	pclose(f);
	return total;
}

int main(void)
{
	const struct kf_sandbox_report *r = kf_sandbox_report();
	const char *spec = getenv("KFORGE_SANDBOX_LAYERS");
	double total = 0, bare;
	char layers[256] = "";
	int rc;

	for (unsigned b = 0, k = 0; b < KF_LAYER_COUNT; b++)
		if (r->active & (1u << b))
			k += (unsigned)snprintf(layers + k, sizeof(layers) - k, "%s%s", k ? " " : "",
						kf_layer_name(b));
	if (spec && !strcmp(spec, "none"))
		return measure(&total);
	printf("-- sandbox layers: %s\n", layers[0] ? layers : "none");
	rc = measure(&total);
	if (rc)
		return rc;
	bare = unsandboxed_total();
	if (bare > 0)
		printf("sandbox cost per worker (start+step+end): %.3f ms sandboxed / %.3f ms bare = %.2fx\n",
		       total, bare, total / bare);
	return 0;
}

static int measure(double *total_out)
{
	struct kf_compile_opts co = {.backend = KF_BACKEND_CPU};
	struct kf_worker_opts wo = {.backend = KF_BACKEND_CPU};
	struct kf_shape shape = {0};
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	struct kf_kfile *k = NULL;
	struct kf_compiled *c = NULL;
	struct kf_plan *p = NULL;
	static struct kf_step_result res;
	double base[ROUNDS], start[ROUNDS], first[ROUNDS], end[ROUNDS], idle_end[ROUNDS], steady[STEPS];
	const size_t nb = N * sizeof(float), ob = nb + 2 * KF_GUARD_BYTES, arena = 2 * nb + ob;
	int rc = 0;

	fprintf(stderr, "cpu compiler: %s\n", kf_cpu_compiler_id());
	if (kf_task_load("tasks/examples/vector_add_f32/task.json", KF_TASK_NO_FILES, NULL, &t, &err) ||
	    kf_kfile_parse("vector_add.cu", SRC, strlen(SRC), &k, &err) || kf_kfile_bind(k, t, &err) ||
	    kf_compile(k, &co, &c, &err) || kf_shape_set(&shape, "N", N) ||
	    kf_plan_make(k, t, &shape, &p, &err)) {
		fprintf(stderr, "bench_session: %s\n", err.msg);
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		struct kf_session *s = NULL;
		struct kf_step st;
		double t0;

		base[r] = spawn_true_ms();
		t0 = kf_now_ms();
		if (kf_session_start(&wo, c, p, arena, &s, &err)) {
			fprintf(stderr, "bench_session: %s\n", err.msg);
			rc = 1;
			break;
		}
		start[r] = kf_now_ms() - t0;
		step_init(&st, KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT);
		st.in_off[0] = 0;
		st.in_off[1] = (int64_t)nb;
		st.out_off[2] = (int64_t)(2 * nb);
		t0 = kf_now_ms();
		if (kf_session_step(s, &st, &res, &err) || res.status) {
			fprintf(stderr, "bench_session: step: %s %s\n", err.msg, res.msg);
			rc = 1;
		}
		first[r] = kf_now_ms() - t0;
		if (r == 0) {
			for (int i = 0; i < STEPS; i++) {
				t0 = kf_now_ms();
				kf_session_step(s, &st, &res, &err);
				steady[i] = kf_now_ms() - t0;
			}
		}
		t0 = kf_now_ms();
		kf_session_end(s, NULL);
		end[r] = kf_now_ms() - t0;

		/* The end of a session that ran nothing: the protocol's part of the end without the cpu
		 * runtime's teardown (fiber stacks, thread pool). */
		if (kf_session_start(&wo, c, p, arena, &s, &err)) {
			fprintf(stderr, "bench_session: %s\n", err.msg);
			rc = 1;
			break;
		}
		t0 = kf_now_ms();
		kf_session_end(s, NULL);
		idle_end[r] = kf_now_ms() - t0;
	}
	if (!rc) {
		double b = median(base, ROUNDS), s0 = median(start, ROUNDS), f = median(first, ROUNDS);
		double e = median(end, ROUNDS), st = median(steady, STEPS);
		printf("baseline fork+exec+wait /bin/true: %8.3f ms\n", b);
		printf("session start (spawn+hello+setup): %8.3f ms  (%.1fx baseline)\n", s0, s0 / b);
		printf("first step (N=%d, in+poison+run+out): %6.3f ms  (%.1fx baseline)\n", N, f, f / b);
		printf("steady step (median of %d):        %8.3f ms  (%.2fx baseline)\n", STEPS, st, st / b);
		printf("session end (quit+reap):           %8.3f ms  (%.1fx baseline)\n", e, e / b);
		printf("session end, no step run:          %8.3f ms  (%.1fx baseline)\n",
		       median(idle_end, ROUNDS), median(idle_end, ROUNDS) / b);
		printf("start+step+end:                    %8.3f ms  (%.1fx baseline)\n", s0 + f + e,
		       (s0 + f + e) / b);
		*total_out = s0 + f + e;
	}
	kf_plan_free(p);
	kf_compiled_free(c);
	kf_kfile_free(k);
	kf_task_free(t);
	return rc;
}
