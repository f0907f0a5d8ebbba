/* The host side of CUPTI's range profiler, offline: `kforge-worker --validate-metrics GH100 ...` builds a
 * config image for the metrics kforge uses (pass count > 0), and rejects a bogus name cleanly (by the
 * allow-list, before NVIDIA's library sees it: an unknown name can crash inside it). Runs the worker
 * binary, so a crash in CUPTI would show up as a signal here, not kill the test. */
#include <sys/wait.h>
#include <unistd.h>

#include "kf.h"
#include "testing.h"

#define FIVE                                                                                                 \
	"gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,"                         \
	"sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_"       \
	"active,"                                                                                            \
	"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"

/* The worker to run. libcupti's host library cannot load under AddressSanitizer (RTLD_DEEPBIND), so
 * when $KFORGE_WORKER is the sanitized build (BUILD/asan/kforge-worker, as tests/run.sh sets it) the
 * plain build beside it (BUILD/kforge-worker, which `make test` also builds) is used. */
static const char *worker_path(void)
{
	static char path[1024];
	const char *w = getenv("KFORGE_WORKER");
	if (!w || !*w)
		return "build/kforge-worker";
	const char *tail = "/asan/kforge-worker";
	size_t n = strlen(w), t = strlen(tail);
	if (n > t && n - t < sizeof(path) && strcmp(w + n - t, tail) == 0) {
		snprintf(path, sizeof(path), "%.*s/kforge-worker", (int)(n - t), w);
		if (access(path, X_OK) == 0)
			return path;
	}
	return w;
}

/* Runs the worker with args (already quoted for the shell); stdout into out; the exit status, or -1
 * when it died by a signal. */
static int run_worker(const char *args, char *out, size_t out_len)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1", worker_path(), args);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -2;
	size_t n = fread(out, 1, out_len - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void test_validate_gh100(void)
{
	char out_buf[4096], *out = out_buf;
	if (access(worker_path(), X_OK) != 0)
		KF_SKIP("no kforge-worker binary (set KFORGE_WORKER)");
	int rc = run_worker("--validate-metrics GH100 " FIVE, out, sizeof(out_buf));
	if (rc == 4) {
		fprintf(stderr, "%s", out);
		KF_SKIP("the range profiler's host API is not usable from this worker");
	}
	fprintf(stderr, "%s", out);
	CHECK_EQ_INT(rc, 0);
	CHECK_CONTAINS(out, "valid=1");
	CHECK_CONTAINS(out, "chip=GH100");
	CHECK_EQ_INT(field(out, "metrics="), 5);
	CHECKF(field(out, "passes=") > 0, "passes %ld", field(out, "passes="));
	CHECKF(field(out, "config_image_bytes=") > 0, "image %ld bytes", field(out, "config_image_bytes="));
}

static void test_reject_bogus(void)
{
	char out_buf[4096], *out = out_buf;
	if (access(worker_path(), X_OK) != 0)
		KF_SKIP("no kforge-worker binary (set KFORGE_WORKER)");
	int rc = run_worker("--validate-metrics GH100 gpu__time_duration.sum,bogus__metric.sum", out,
			    sizeof(out_buf));
	CHECK_EQ_INT(rc, 1);
	CHECK_CONTAINS(out, "valid=0");
	CHECK_CONTAINS(out, "reason=metric 'bogus__metric.sum' is not in kforge's allow-list");
	/* a chip CUPTI does not know, and a malformed chip name */
	rc = run_worker("--validate-metrics XX999 gpu__time_duration.sum", out, sizeof(out_buf));
	if (rc != 4) {
		CHECK_EQ_INT(rc, 1);
		CHECK_CONTAINS(out, "XX999");
	}
	rc = run_worker("--validate-metrics 'gh100;x' gpu__time_duration.sum", out, sizeof(out_buf));
	CHECK_EQ_INT(rc, 1);
	CHECK_CONTAINS(out, "not a chip name");
	rc = run_worker("--validate-metrics GH100", out, sizeof(out_buf));
	CHECK_EQ_INT(rc, 2);
	rc = run_worker("--validate-metrics GH100 ','", out, sizeof(out_buf));
	CHECK_EQ_INT(rc, 1);
	CHECK_CONTAINS(out, "no metric");
}

/* The GPU side of the range profiler: without a usable GPU it is a skip with the reason (exit 4); with
 * one, the built-in kernel's metrics must be plausible. */
static void test_selftest(void)
{
	char out_buf[4096], *out = out_buf;
	if (access(worker_path(), X_OK) != 0)
		KF_SKIP("no kforge-worker binary (set KFORGE_WORKER)");
	int rc = run_worker("--metrics-selftest 2>/dev/null", out, sizeof(out_buf));
	fprintf(stderr, "%s", out);
	if (rc == 4) {
		CHECK_CONTAINS(out, "skip=1");
		CHECK_CONTAINS(out, "reason=");
		return;
	}
	CHECK_EQ_INT(rc, 0);
	CHECK_CONTAINS(out, "ok=1");
	CHECK_CONTAINS(out, "gpu__time_duration.sum=");
	rc = run_worker("--metrics-selftest bogus__metric.sum", out, sizeof(out_buf));
	CHECK(rc == 1 || rc == 4);
}

KF_TEST_MAIN(TEST(test_validate_gh100), TEST(test_reject_bogus), TEST(test_selftest))
