/* The task suite's references against independent host implementations (tests/taskref): every task in
 * tasks/l1..l3 loads under --strict rules, its reference binds and plans at every public and hidden shape,
 * and at its smallest declared shape the reference, run on the cpu backend through a worker session,
 * agrees with the host C implementation within the task's tolerance; with the same tolerance an all-zero
 * output, a copy of an input and a kernel ignoring any one input must all be rejected. Then the audit:
 * on every other input distribution the task's inputs allow (mixed, large, and the structured ones:
 * outliers, offset, ties, sorted runs, zeros and denormals) the reference must agree with the host
 * implementation as the verifier would judge a candidate (kf_compare, with the distribution's NMSE
 * fallback): a reference that is inaccurate there would reject correct kernels. Failures are reported by
 * task name. */
#include <glob.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cpu/cpu.h"
#include "sandbox/sandbox.h"
#include "task.h"
#include "testing.h"
#include "verifier/compare.h"
#include "verifier/verifier.h"

#include "tests/taskref/taskref.h"

#define POISON 0x7fa5a5a5u /* a NaN for f32, an odd pattern for ints */
#define CANARY 0x5ca1ab1eu

static glob_t g_tasks;

static void find_tasks(void)
{
	if (g_tasks.gl_pathc)
		return;
	const char *dir = getenv("KFORGE_TASKS_DIR");
	char pat[512];
	snprintf(pat, sizeof(pat), "%s/l[123]/*/task.json", dir && *dir ? dir : "tasks");
	glob(pat, 0, NULL, &g_tasks);
}

/* Total elements of every tensor at shape s (how expensive a shape is). */
static int64_t shape_cost(const struct kf_task *t, const struct kf_shape *s)
{
	int64_t tot = 0, n;
	struct kf_err e = KF_ERR_INIT;
	for (size_t i = 0; i < t->n_tensors; i++)
		if (kf_task_numel(t, i, s, &n, &e) == KF_OK)
			tot += n;
	return tot;
}

static void test_suite_loads_strict(void)
{
	find_tasks();
	CHECKF(g_tasks.gl_pathc >= 51, "only %zu tasks found", g_tasks.gl_pathc);
	size_t n_ref;
	const struct taskref_entry *tab = taskref_table(&n_ref);
	size_t covered = 0;
	int levels[4] = {0};
	for (size_t i = 0; i < g_tasks.gl_pathc; i++) {
		const char *path = g_tasks.gl_pathv[i];
		struct kf_task *t = NULL;
		struct kf_kfile *k = NULL;
		struct kf_err e = KF_ERR_INIT;
		struct kf_buf warn;
		kf_buf_init(&warn, 4096);
		enum kf_status st = kf_task_load(path, KF_TASK_STRICT, &warn, &t, &e);
		CHECKF(st == KF_OK, "%s: %s", path, e.msg);
		CHECKF(warn.len == 0, "%s: warnings: %s", path, warn.data);
		kf_buf_release(&warn);
		if (st)
			continue;
		if (t->level >= 1 && t->level <= 3)
			levels[t->level]++;
		CHECKF(taskref_find(t->name) != NULL, "task '%s' has no host implementation", t->name);
		covered += taskref_find(t->name) != NULL;
		st = kf_kfile_load(t->reference, &k, &e);
		if (st == KF_OK)
			st = kf_kfile_bind(k, t, &e);
		CHECKF(st == KF_OK, "task '%s': reference: %s", t->name, e.msg);
		for (size_t s = 0; st == KF_OK && s < t->n_public + t->n_hidden; s++) {
			const struct kf_shape *sh =
			    s < t->n_public ? &t->shapes_public[s] : &t->shapes_hidden[s - t->n_public];
			struct kf_plan *p = NULL;
			enum kf_status ps = kf_plan_make(k, t, sh, &p, &e);
			CHECKF(ps == KF_OK, "task '%s' shape %zu: %s", t->name, s, e.msg);
			kf_plan_free(p);
		}
		kf_kfile_free(k);
		kf_task_free(t);
	}
	CHECKF(covered == n_ref, "%zu host implementations but only %zu tasks use them", n_ref, covered);
	(void)tab;
	CHECKF(levels[1] >= 30 && levels[2] >= 15 && levels[3] >= 6, "levels: %d %d %d", levels[1], levels[2],
	       levels[3]);
}

/* True when some element of got lies outside the tolerance of want: a kernel producing got fails. */
static bool differs(const struct kf_task *t, size_t b, const double *got, const double *want, size_t n)
{
	struct kf_tol tol = kf_task_tolerance(t, t->tensors[b].dtype);
	for (size_t i = 0; i < n; i++)
		if (!(fabs(got[i] - want[i]) <= tol.atol + tol.rtol * fabs(want[i])))
			return true;
	return false;
}

/* The task must reject the do-nothing kernels it could be fooled by, judged with its own tolerance at
 * this shape and the init distribution: an all-zero output, a copy of an input of the output's size, and
 * (for each input) a kernel that ignores that input, modelled as the host implementation with the input
 * zeroed. Every output tensor must tell them apart from the right answer in at least one element. */
static int check_not_degenerate(const struct kf_task *t, const struct kf_plan *p, const struct taskref_io *io,
				taskref_fn fn)
{
	int bad = 0;
	size_t n_t = t->n_tensors;
	for (size_t b = 0; b < n_t; b++) {
		if (t->tensors[b].role == KF_ROLE_INPUT)
			continue;
		size_t n = (size_t)p->buffers[b].numel;
		double *zero = calloc(n ? n : 1, sizeof(double));
		if (!zero)
			return 1;
		if (!differs(t, b, zero, io->data[b], n)) {
			fprintf(stderr, "  task '%s': an all-zero '%s' passes\n", t->name,
				t->tensors[b].name);
			bad = 1;
		}
		free(zero);
		for (size_t a = 0; a < n_t; a++)
			if (t->tensors[a].role == KF_ROLE_INPUT &&
			    p->buffers[a].numel == p->buffers[b].numel &&
			    !differs(t, b, io->data[a], io->data[b], n)) {
				fprintf(stderr, "  task '%s': copying '%s' into '%s' passes\n", t->name,
					t->tensors[a].name, t->tensors[b].name);
				bad = 1;
			}
	}
	for (size_t a = 0; a < n_t; a++) {
		if (t->tensors[a].role != KF_ROLE_INPUT)
			continue;
		double *alt[KF_MAX_BUFFERS] = {0};
		bool ok = true;
		for (size_t b = 0; b < n_t && ok; b++) {
			size_t n = (size_t)p->buffers[b].numel;
			alt[b] = calloc(n ? n : 1, sizeof(double));
			ok = alt[b] != NULL;
			if (ok && b != a && t->tensors[b].role == KF_ROLE_INPUT)
				memcpy(alt[b], io->data[b], n * sizeof(double));
		}
		if (ok) {
			struct taskref_io io2 = *io;
			io2.data = alt;
			fn(&io2);
			bool caught = false;
			for (size_t b = 0; b < n_t; b++)
				if (t->tensors[b].role != KF_ROLE_INPUT &&
				    differs(t, b, alt[b], io->data[b], (size_t)p->buffers[b].numel))
					caught = true;
			if (!caught) {
				fprintf(stderr, "  task '%s': a kernel ignoring input '%s' passes\n", t->name,
					t->tensors[a].name);
				bad = 1;
			}
		}
		for (size_t b = 0; b < n_t; b++)
			free(alt[b]);
		if (!ok)
			return 1;
	}
	return bad;
}

/* The element count of the last extent of tensor b at shape s: the row the structured inputs use. */
static size_t row_of(const struct kf_task *t, size_t b, const struct kf_shape *s, size_t numel)
{
	int64_t v;
	const struct kf_tensor *te = &t->tensors[b];
	if (!te->rank || kf_expr_eval(te->shape[te->rank - 1], s, &v, NULL) || v < 1 || (size_t)v > numel)
		return numel;
	return (size_t)v;
}

/* One more step of the reference on inputs of distribution dist, judged against the host implementation
 * as the verifier judges a candidate against the reference. Returns 0 when they agree. */
static int audit_dist(const struct kf_task *t, const struct kf_shape *s, const struct kf_plan *p,
		      struct kf_session *ses, const int64_t *in_off, const int64_t *out_off,
		      enum kf_input_dist dist, uint64_t seed, struct taskref_io *io, taskref_fn fn)
{
	uint8_t *arena = kf_session_arena(ses);
	struct kf_step step;
	struct kf_step_result *res = calloc(1, sizeof(*res));
	struct kf_err e = KF_ERR_INIT;
	int bad = 0;
	char shape[256];

	kf_shape_format(s, shape, sizeof(shape));
	if (!res)
		return 1;
	for (size_t b = 0; b < t->n_tensors; b++) {
		size_t n = (size_t)p->buffers[b].numel;
		struct kf_rng rng;
		if (in_off[b] < 0)
			continue;
		kf_rng_seed(&rng, kf_mix64(seed + b));
		kf_inputs_fill_rows(arena + in_off[b], t->tensors[b].dtype, n, row_of(t, b, s, n),
				    &t->tensors[b], dist, &rng);
		for (size_t i = 0; i < n; i++)
			io->data[b][i] = kf_elem_get(arena + in_off[b], t->tensors[b].dtype, i);
	}
	memset(&step, 0, sizeof(step));
	step.flags = KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT;
	step.reps = 1;
	step.poison = POISON;
	step.canary = CANARY;
	step.timeout_ms = 120000;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		step.in_off[b] = in_off[b];
		step.out_off[b] = out_off[b];
	}
	if (kf_session_step(ses, &step, res, &e) != KF_OK || res->status != KF_OK) {
		fprintf(stderr, "  task '%s' %s %s inputs: step: %s %s\n", t->name, shape,
			kf_input_dist_name(dist), e.msg, res->msg);
		free(res);
		return 1;
	}
	fn(io);
	for (size_t b = 0; b < t->n_tensors; b++) {
		enum kf_dtype dt = t->tensors[b].dtype;
		size_t n = (size_t)p->buffers[b].numel;
		struct kf_tol tol = kf_task_tolerance(t, dt);
		struct kf_cmp cmp;
		void *want;
		if (t->tensors[b].role == KF_ROLE_INPUT)
			continue;
		want = malloc(n * kf_dtype_size(dt) + 8);
		if (!want) {
			bad = 1;
			break;
		}
		for (size_t i = 0; i < n; i++)
			kf_elem_set(want, dt, i, io->data[b][i]);
		kf_compare(arena + out_off[b] + KF_GUARD_BYTES, want, dt, n, &tol, &cmp);
		if (cmp.verdict == KF_VERDICT_WRONG_OUTPUT && cmp.nmse <= kf_verify_nmse_fallback(dist, dt))
			cmp.verdict = KF_VERDICT_PASS;
		if (cmp.verdict != KF_VERDICT_PASS) {
			fprintf(stderr,
				"  task '%s' %s %s inputs: %s in '%s': element %lld = %.9g, host %.9g; %llu "
				"bad, NMSE %.3g "
				"(atol %g x %.3g, rtol %g)\n",
				t->name, shape, kf_input_dist_name(dist), kf_verdict_name(cmp.verdict),
				t->tensors[b].name, (long long)cmp.first_bad, cmp.got, cmp.want,
				(unsigned long long)cmp.n_bad, cmp.nmse, tol.atol, cmp.atol_scale, tol.rtol);
			bad = 1;
		}
		free(want);
	}
	free(res);
	return bad;
}

/* Runs task t's reference at shape s on the cpu backend and compares with the host implementation.
 * Returns 0 when they agree; prints the reason otherwise. */
static int check_task(const struct kf_task *t, const struct kf_shape *s, uint64_t seed)
{
	struct kf_err e = KF_ERR_INIT;
	struct kf_kfile *k = NULL;
	struct kf_plan *p = NULL;
	struct kf_compiled *c = NULL;
	struct kf_session *ses = NULL;
	struct kf_step_result *res = NULL;
	double *dd[KF_MAX_BUFFERS] = {0};
	int bad = 1;
	char shape[256];
	kf_shape_format(s, shape, sizeof(shape));

	if (kf_kfile_load(t->reference, &k, &e) || kf_kfile_bind(k, t, &e) || kf_plan_make(k, t, s, &p, &e)) {
		fprintf(stderr, "  task '%s': %s\n", t->name, e.msg);
		goto out;
	}
	struct kf_compile_opts co = {0};
	co.backend = KF_BACKEND_CPU;
	if (kf_compile(k, &co, &c, &e) != KF_OK) {
		fprintf(stderr, "  task '%s': compile: %s %s\n", t->name, e.msg, c ? c->log : "");
		goto out;
	}
	/* arena: inputs, then [guard|data|guard] per plan buffer */
	int64_t in_off[KF_MAX_BUFFERS], out_off[KF_MAX_BUFFERS];
	size_t off = 0;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		in_off[b] = out_off[b] = -1;
		if (b < t->n_tensors && t->tensors[b].role != KF_ROLE_OUTPUT) {
			in_off[b] = (int64_t)off;
			off += (p->buffers[b].n_bytes + 63) / 64 * 64;
		}
	}
	for (size_t b = 0; b < p->n_buffers && b < KF_MAX_BUFFERS; b++) {
		out_off[b] = (int64_t)off;
		off += (2 * KF_GUARD_BYTES + p->buffers[b].n_bytes + 255) / 256 * 256;
	}
	struct kf_worker_opts wo = {0};
	wo.backend = KF_BACKEND_CPU;
	wo.start_timeout_ms = 30000;
	if (kf_session_start(&wo, c, p, off ? off : 4096, &ses, &e) != KF_OK) {
		fprintf(stderr, "  task '%s': session: %s\n", t->name, e.msg);
		goto out;
	}
	uint8_t *arena = kf_session_arena(ses);
	struct kf_rng rng;
	kf_rng_seed(&rng, seed);
	for (size_t b = 0; b < t->n_tensors; b++) {
		size_t n = (size_t)p->buffers[b].numel;
		dd[b] = calloc(n ? n : 1, sizeof(double));
		if (!dd[b])
			goto out;
		if (in_off[b] < 0)
			continue;
		void *data = arena + in_off[b];
		kf_inputs_fill(data, t->tensors[b].dtype, n, &t->tensors[b], KF_INPUT_INIT, &rng);
		for (size_t i = 0; i < n; i++)
			dd[b][i] = kf_elem_get(data, t->tensors[b].dtype, i);
	}
	struct kf_step step;
	memset(&step, 0, sizeof(step));
	step.flags = KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT;
	step.reps = 1;
	step.poison = POISON;
	step.canary = CANARY;
	step.timeout_ms = 120000;
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++) {
		step.in_off[b] = in_off[b];
		step.out_off[b] = out_off[b];
	}
	res = calloc(1, sizeof(*res));
	if (!res)
		goto out;
	if (kf_session_step(ses, &step, res, &e) != KF_OK || res->status != KF_OK) {
		fprintf(stderr, "  task '%s' %s: step: %s %s\n", t->name, shape, e.msg, res->msg);
		goto out;
	}

	/* host implementation on the same (dtype-rounded) inputs */
	const char *tn[KF_MAX_BUFFERS], *dn[KF_MAX_DIMS], *pn[KF_MAX_BUFFERS];
	double pv[KF_MAX_BUFFERS];
	int64_t dv[KF_MAX_DIMS];
	for (size_t b = 0; b < t->n_tensors; b++)
		tn[b] = t->tensors[b].name;
	for (size_t d = 0; d < t->n_dims && d < KF_MAX_DIMS; d++) {
		dn[d] = t->dims[d];
		kf_shape_get(s, t->dims[d], &dv[d]);
	}
	for (size_t q = 0; q < t->n_params && q < KF_MAX_BUFFERS; q++) {
		pn[q] = t->params[q].name;
		pv[q] = (t->params[q].dtype == KF_DTYPE_F32 || t->params[q].dtype == KF_DTYPE_F64)
			    ? (t->params[q].dtype == KF_DTYPE_F32 ? (double)(float)t->params[q].value
								  : t->params[q].value)
			    : (double)t->params[q].ivalue;
	}
	struct taskref_io io = {t->n_tensors, tn, dd, t->n_dims, dn, dv, t->n_params, pn, pv};
	taskref_fn fn = taskref_find(t->name);
	if (!fn) {
		fprintf(stderr, "  task '%s': no host implementation\n", t->name);
		goto out;
	}
	fn(&io);

	bad = 0;
	for (size_t b = 0; b < t->n_tensors; b++) {
		if (t->tensors[b].role == KF_ROLE_INPUT)
			continue;
		enum kf_dtype dt = t->tensors[b].dtype;
		struct kf_tol tol = kf_task_tolerance(t, dt);
		const uint8_t *got = arena + out_off[b] + KF_GUARD_BYTES;
		size_t n = (size_t)p->buffers[b].numel, nbad = 0;
		for (size_t i = 0; i < n; i++) {
			double g = kf_elem_get(got, dt, i), want = dd[b][i];
			if (!(fabs(g - want) <= tol.atol + tol.rtol * fabs(want))) {
				if (!nbad)
					fprintf(
					    stderr,
					    "  task '%s' %s: %s[%zu] = %.9g, host %.9g (atol %g rtol %g)\n",
					    t->name, shape, t->tensors[b].name, i, g, want, tol.atol,
					    tol.rtol);
				nbad++;
			}
		}
		if (nbad) {
			fprintf(stderr, "  task '%s': %zu of %zu elements of '%s' differ\n", t->name, nbad, n,
				t->tensors[b].name);
			bad = 1;
		}
	}
	if (!bad)
		bad = check_not_degenerate(t, p, &io, fn);
	/* the audit: every other distribution an input allows, in the same worker */
	for (int d = KF_INPUT_MIXED; d < KF_INPUT_DIST_COUNT; d++) {
		bool allowed = false;
		for (size_t b = 0; b < t->n_tensors; b++)
			allowed |= t->tensors[b].role != KF_ROLE_OUTPUT &&
				   kf_inputs_dist_allowed(&t->tensors[b], (enum kf_input_dist)d);
		if (allowed)
			bad |= audit_dist(t, s, p, ses, in_off, out_off, (enum kf_input_dist)d,
					  kf_mix64(seed + (uint64_t)d), &io, fn);
	}
out:
	for (size_t b = 0; b < KF_MAX_BUFFERS; b++)
		free(dd[b]);
	free(res);
	kf_session_end(ses, NULL);
	kf_compiled_free(c);
	kf_plan_free(p);
	kf_kfile_free(k);
	return bad;
}

/* Checks the tasks with index % n_jobs == job; returns how many failed. */
static int check_share(int job, int n_jobs)
{
	const char *only = getenv("KFORGE_TASKS_ONLY"); /* a substring, to rerun one task */
	int n_bad = 0;
	for (size_t i = (size_t)job; i < g_tasks.gl_pathc; i += (size_t)n_jobs) {
		struct kf_task *t = NULL;
		struct kf_err e = KF_ERR_INIT;
		if (kf_task_load(g_tasks.gl_pathv[i], 0, NULL, &t, &e) != KF_OK)
			continue; /* reported by test_suite_loads_strict */
		if (only && !strstr(t->name, only)) {
			kf_task_free(t);
			continue;
		}
		/* the cheapest declared shape (public or hidden) keeps the whole suite within seconds */
		const struct kf_shape *best = NULL;
		int64_t best_cost = 0;
		for (size_t s = 0; s < t->n_public + t->n_hidden; s++) {
			const struct kf_shape *sh =
			    s < t->n_public ? &t->shapes_public[s] : &t->shapes_hidden[s - t->n_public];
			int64_t cost = shape_cost(t, sh);
			if (!best || cost < best_cost) {
				best = sh;
				best_cost = cost;
			}
		}
		if (check_task(t, best, 0x9e3779b97f4a7c15ull ^ (uint64_t)i)) {
			fprintf(stderr, "  FAIL task '%s'\n", t->name);
			n_bad++;
		}
		kf_task_free(t);
	}
	return n_bad;
}

/* The reference compiles (about 3 s each on first use, then cached in $KFORGE_CACHE) dominate, so the
 * tasks are split over two forked processes, one per core here. */
static void test_references_match_host(void)
{
	find_tasks();
	struct kf_device_info info;
	struct kf_err e = KF_ERR_INIT;
	if (kf_device_probe(KF_BACKEND_CPU, NULL, &info, &e) != KF_OK)
		KF_SKIP("cpu backend unavailable");
	/* kf_compile reaches the cpu backend through a weak reference; this call links it in */
	fprintf(stderr, "  cpu backend: %s\n", kf_cpu_compiler_id());
	enum { JOBS = 2 };
	pid_t pid[JOBS];
	int n_bad = 0;
	fflush(NULL);
	for (int j = 0; j < JOBS; j++) {
		pid[j] = fork();
		if (pid[j] == 0)
			_exit(check_share(j, JOBS) > 0);
		CHECKF(pid[j] > 0, "fork failed");
	}
	for (int j = 0; j < JOBS; j++) {
		int status = 0;
		if (pid[j] <= 0 || waitpid(pid[j], &status, 0) != pid[j])
			continue;
		CHECKF(WIFEXITED(status), "checker %d ended by signal %d", j,
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			n_bad++;
	}
	CHECKF(n_bad == 0,
	       "some references disagree with their host implementations or accept a do-nothing kernel "
	       "(the lines above name them)");
}

int main(int argc, char **argv)
{
	static const struct kf_test_case cases[] = {
	    TEST(test_suite_loads_strict),
	    TEST(test_references_match_host),
	};
	int rc = kf_test_run(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
	globfree(&g_tasks);
	return rc;
}
