/* Tests for sandbox/child.c: exit codes, signals, wall-clock and CPU limits (the whole process group
 * dies), bounded output capture, the seccomp deny-list (also across exec), RLIMIT_FSIZE/AS, no network. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cancel.h"
#include "sandbox/child.h"
#include "sandbox/sandbox.h"
#include "testing.h"

static void test_exit_code(void)
{
	const char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 10000};
	enum kf_status st = kf_child_run_argv(argv, NULL, &lim, &out, &res, &err);
	CHECKF(st == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(res.exit_code, 3);
	CHECK_EQ_INT(res.term_signal, 0);
	CHECK(!res.timed_out);
	CHECK_CONTAINS(out.data, "out\n");
	CHECK_CONTAINS(out.data, "err\n");
	kf_buf_release(&out);
}

static void test_cwd_and_missing_program(void)
{
	const char *pwd[] = {"pwd", NULL};
	const char *missing[] = {"kforge-no-such-program-xyz", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_child_run_argv(pwd, "/usr", NULL, &out, &res, &err) == KF_OK);
	CHECK_STR(out.data, "/usr\n");
	kf_buf_reset(&out);
	CHECK(kf_child_run_argv(missing, NULL, NULL, &out, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, KF_CHILD_EXIT_EXEC);
	CHECK_CONTAINS(out.data, "kforge-no-such-program-xyz");
	kf_buf_release(&out);
}

static void test_killed_by_signal(void)
{
	const char *argv[] = {"sh", "-c", "kill -SEGV $$", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_child_run_argv(argv, NULL, NULL, &out, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.term_signal, SIGSEGV);
	CHECK(!res.timed_out);
	kf_buf_release(&out);
}

/* True when pid no longer runs (gone, or a zombie waiting for whoever inherited it). */
static bool pid_dead(pid_t pid)
{
	char path[64], buf[256];
	int fd;
	ssize_t n;
	char *p;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void test_timeout_kills_group(void)
{
	/* The shell starts a grandchild and prints its pid; both sleep far past the limit. */
	const char *argv[] = {"sh", "-c", "sleep 60 & echo $!; sleep 60", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 400};
	enum kf_status st = kf_child_run_argv(argv, NULL, &lim, &out, &res, &err);
	pid_t grandchild;
	CHECK_EQ_INT(st, KF_ERR_TIMEOUT);
	CHECK(res.timed_out);
	CHECK_EQ_INT(res.term_signal, SIGKILL);
	CHECKF(res.wall_ms >= 390 && res.wall_ms < 2000, "wall %.1f ms", res.wall_ms);
	CHECK_CONTAINS(err.msg, "400 ms");
	grandchild = (pid_t)atoi(out.data);
	CHECKF(grandchild > 0, "output '%s'", out.data);
	if (grandchild > 0) {
		/* SIGKILL is delivered asynchronously; give the kernel a moment (100 x 10 ms at most). */
		for (int i = 0; i < 100 && !pid_dead(grandchild); i++)
			usleep(10000);
		CHECKF(pid_dead(grandchild), "grandchild %d survived the group kill", (int)grandchild);
	}
	kf_buf_release(&out);
}

static void test_leftover_grandchild_killed_on_exit(void)
{
	/* The child exits at once but leaves a background grandchild holding the pipe: the call must come
	 * back promptly and the grandchild must be gone. */
	const char *argv[] = {"sh", "-c", "sleep 60 & echo $!", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 20000};
	pid_t grandchild;
	CHECK(kf_child_run_argv(argv, NULL, &lim, &out, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 0);
	CHECKF(res.wall_ms < 3000, "wall %.1f ms", res.wall_ms);
	grandchild = (pid_t)atoi(out.data);
	CHECK(grandchild > 0);
	if (grandchild > 0) {
		for (int i = 0; i < 100 && !pid_dead(grandchild); i++)
			usleep(10000);
		CHECK(pid_dead(grandchild));
	}
	kf_buf_release(&out);
}

static void test_output_bounded(void)
{
	/* 1 MB of output into a 4 KiB buffer: kept to the max, marked, and the child is not blocked. */
	const char *argv[] = {"sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' x; exit 0", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 20000};
	CHECKF(kf_child_run_argv(argv, NULL, &lim, &out, &res, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(res.exit_code, 0);
	CHECKF(out.len <= 4096 + 64, "len %zu", out.len);
	CHECK(out.len > 3000);
	CHECK_CONTAINS(out.data, "[... truncated ");
	CHECK(out.data[0] == 'x');
	kf_buf_release(&out);
}

/* ---- run_fn --------------------------------------------------------------------------------- */

static int fn_hello(void *arg, int fd)
{
	const char *s = arg;
	ssize_t w = write(fd, s, strlen(s));
	return w == (ssize_t)strlen(s) ? 7 : 1;
}

static void test_fn_payload(void)
{
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	CHECK(kf_child_run_fn(fn_hello, "hello", NULL, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 7);
	CHECK_STR(pl.data, "hello");
	kf_buf_release(&pl);
	/* A payload over the max is an error, not a silently cut record. */
	kf_buf_init(&pl, 3);
	CHECK_EQ_INT(kf_child_run_fn(fn_hello, "hello", NULL, &pl, &res, &err), KF_ERR_LIMIT);
	CHECK_EQ_INT(res.exit_code, 7);
	kf_buf_release(&pl);
}

/* Writes errno of each attempt as an int: tcp socket, udp socket, unix socket (0 = allowed), ptrace. */
static int fn_probe(void *arg, int fd)
{
	int r[4];
	int s = socket(AF_INET, SOCK_STREAM, 0);
	r[0] = s < 0 ? errno : 0;
	if (s >= 0)
		close(s);
	s = socket(AF_INET6, SOCK_DGRAM, 0);
	r[1] = s < 0 ? errno : 0;
	if (s >= 0)
		close(s);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	r[2] = s < 0 ? errno : 0;
	if (s >= 0)
		close(s);
	r[3] = ptrace(PTRACE_PEEKUSER, getppid(), 0, 0) == -1 ? errno : 0;
	return write(fd, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1;
}

static void test_seccomp_denies(void)
{
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 10000, .seccomp = true};
	int r[4];
	CHECKF(kf_child_run_fn(fn_probe, NULL, &lim, &pl, &res, &err) == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(res.exit_code, 0);
	CHECK_EQ_INT(pl.len, sizeof(r));
	if (pl.len == sizeof(r)) {
		memcpy(r, pl.data, sizeof(r));
		CHECK_EQ_INT(r[0], EPERM);
		CHECK_EQ_INT(r[1], EPERM);
		CHECK_EQ_INT(r[2], 0);
		CHECK_EQ_INT(r[3], EPERM);
	}
	/* Without the filter the same TCP socket is allowed: the test above measures the filter. */
	lim.seccomp = false;
	kf_buf_reset(&pl);
	CHECK(kf_child_run_fn(fn_probe, NULL, &lim, &pl, &res, &err) == KF_OK);
	if (pl.len == sizeof(r)) {
		memcpy(r, pl.data, sizeof(r));
		CHECK_EQ_INT(r[0], 0);
	}
	kf_buf_release(&pl);
}

static void test_seccomp_survives_exec(void)
{
	/* bash opens a TCP connection for /dev/tcp: refused by the filter (EPERM) after exec. */
	const char *argv[] = {"bash", "-c", "echo x > /dev/tcp/127.0.0.1/9", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 10000, .seccomp = true};
	if (access("/bin/bash", X_OK) != 0)
		KF_SKIP("no bash");
	CHECK(kf_child_run_argv(argv, NULL, &lim, &out, &res, &err) == KF_OK);
	CHECK(res.exit_code != 0);
	CHECK_CONTAINS(out.data, "Operation not permitted");
	kf_buf_release(&out);
}

static int fn_write_file(void *arg, int fd)
{
	static char block[65536];
	int f = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		return 2;
	/* 2 MiB against a 1 MiB RLIMIT_FSIZE: SIGXFSZ ends the process. */
	for (int i = 0; i < 32; i++)
		if (write(f, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 3;
	close(f);
	return 0;
}

static void test_fsize(void)
{
	char path[] = "/tmp/kforge-fsize-XXXXXX";
	int tmp = mkstemp(path);
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 10000, .fsize_bytes = 1 << 20};
	struct stat sb;
	CHECK(tmp >= 0);
	close(tmp);
	CHECK(kf_child_run_fn(fn_write_file, path, &lim, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.term_signal, SIGXFSZ);
	CHECK(stat(path, &sb) == 0 && sb.st_size == 1 << 20);
	/* Without the limit the same write succeeds. */
	lim.fsize_bytes = 0;
	CHECK(kf_child_run_fn(fn_write_file, path, &lim, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 0);
	unlink(path);
	kf_buf_release(&pl);
}

static int fn_spin(void *arg, int fd)
{
	volatile unsigned long x = 0;
	for (;;)
		x++;
	return 0;
}

static void test_cpu_limit(void)
{
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 20000, .cpu_s = 1};
	enum kf_status st = kf_child_run_fn(fn_spin, NULL, &lim, &pl, &res, &err);
	CHECK_EQ_INT(st, KF_ERR_TIMEOUT);
	CHECK(res.timed_out);
	CHECK_CONTAINS(err.msg, "CPU");
	CHECKF(res.wall_ms < 10000, "wall %.1f ms", res.wall_ms);
	kf_buf_release(&pl);
}

static int fn_alloc(void *arg, int fd)
{
	/* 1 GiB against a 256 MiB RLIMIT_AS: the mapping must be refused (mmap rather than malloc, so a
	 * sanitizer's allocator does not turn the refusal into an abort). */
	size_t n = (size_t)1 << 30;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? 42 : 43;
	munmap(p, n);
	return 0;
}

static void test_as_limit(void)
{
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 20000, .as_bytes = (uint64_t)256 << 20};
	enum kf_status st = kf_child_run_fn(fn_alloc, NULL, &lim, &pl, &res, &err);
	CHECKF(st == KF_OK, "%s", err.msg);
	CHECK_EQ_INT(res.exit_code, 42);
	/* The same mapping without the limit succeeds: the limit is what refused it. */
	lim.as_bytes = 0;
	CHECK(kf_child_run_fn(fn_alloc, NULL, &lim, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 0);
	kf_buf_release(&pl);
}

static int fn_netns(void *arg, int fd)
{
	char link[128];
	ssize_t n = readlink("/proc/self/ns/net", link, sizeof(link));
	return n > 0 && write(fd, link, (size_t)n) == n ? 0 : 1;
}

static void test_no_network(void)
{
	struct kf_buf pl = KF_BUF_INIT(128);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 10000, .no_network = true};
	char mine[128] = {0};
	ssize_t n = readlink("/proc/self/ns/net", mine, sizeof(mine) - 1);
	CHECK(n > 0);
	CHECK(kf_child_run_fn(fn_netns, NULL, &lim, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 0);
	if (getuid() != 0) {
		kf_buf_release(&pl);
		KF_SKIP("not root: unshare(CLONE_NEWNET) is refused and tolerated");
	}
	CHECKF(pl.len > 0 && strcmp(pl.data, mine) != 0, "child netns '%s' == parent '%s'", pl.data, mine);
	kf_buf_release(&pl);
}

static void test_wait_direct(void)
{
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {0};
	pid_t pid = fork();
	if (pid == 0) {
		kf_child_apply_limits(&lim);
		sleep(30);
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK_EQ_INT(kf_child_wait(pid, 200, &res, &err), KF_ERR_TIMEOUT);
	CHECK(res.timed_out);
	CHECKF(res.wall_ms < 2000, "wall %.1f", res.wall_ms);
	pid = fork();
	if (pid == 0) {
		kf_child_apply_limits(&lim);
		_exit(5);
	}
	CHECK_EQ_INT(kf_child_wait(pid, 5000, &res, &err), KF_OK);
	CHECK_EQ_INT(res.exit_code, 5);
}

/* As kforge's SIGINT handler does (core/cancel.h). */
static void on_alarm(int sig)
{
	kf_cancel_request(sig);
}

static void test_interrupt_flag(void)
{
	const char *argv[] = {"sh", "-c", "sleep 60 & echo $!; sleep 60", NULL};
	struct kf_buf out = KF_BUF_INIT(4096);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct kf_child_limits lim = {.timeout_ms = 30000};
	struct sigaction sa, old;
	struct itimerval it = {{0, 0}, {0, 300000}}; /* one SIGALRM after 300 ms */
	double t0 = kf_now_ms();
	enum kf_status st;
	pid_t grandchild;

	/* The token installed but clear: the child runs to its end. */
	kf_cancel_install();
	{
		const char *quick[] = {"sh", "-c", "sleep 0.3; exit 4", NULL};
		CHECK(kf_child_run_argv(quick, NULL, &lim, &out, &res, &err) == KF_OK);
		CHECK_EQ_INT(res.exit_code, 4);
	}
	kf_buf_reset(&out);
	/* A handler sets it 300 ms in, as kforge's SIGINT handler does: the wait gives up early and the
	 * whole group dies. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	t0 = kf_now_ms();
	setitimer(ITIMER_REAL, &it, NULL);
	st = kf_child_run_argv(argv, NULL, &lim, &out, &res, &err);
	sigaction(SIGALRM, &old, NULL);
	CHECK(kf_cancelled());
	CHECK_EQ_INT(kf_cancel_signal(), SIGALRM);
	kf_cancel_reset();
	CHECK_EQ_INT(st, KF_ERR_INTERRUPTED);
	CHECKF(kf_now_ms() - t0 < 3000, "took %.0f ms", kf_now_ms() - t0);
	CHECKF(kf_now_ms() - t0 >= 250, "took only %.0f ms", kf_now_ms() - t0);
	grandchild = (pid_t)atoi(out.data);
	CHECKF(grandchild > 0, "output '%s'", out.data);
	if (grandchild > 0) {
		for (int i = 0; i < 100 && !pid_dead(grandchild); i++)
			usleep(10000);
		CHECK(pid_dead(grandchild));
	}
	kf_buf_release(&out);
}

static int fn_dispositions(void *arg, int fd)
{
	struct sigaction a, b;
	sigset_t mask;
	sigaction(SIGINT, NULL, &a);
	sigaction(SIGPIPE, NULL, &b);
	sigprocmask(SIG_SETMASK, NULL, &mask);
	return a.sa_handler == SIG_DFL && b.sa_handler == SIG_DFL && !sigismember(&mask, SIGTERM) ? 0 : 1;
}

static void test_signals_reset(void)
{
	struct kf_buf pl = KF_BUF_INIT(64);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	struct sigaction sa, old_int, old_pipe;
	sigset_t block, old_mask;
	/* The parent catches SIGINT (as kforge does), ignores SIGPIPE and blocks SIGTERM. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGINT, &sa, &old_int);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	CHECK(kf_child_run_fn(fn_dispositions, NULL, NULL, &pl, &res, &err) == KF_OK);
	CHECK_EQ_INT(res.exit_code, 0);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	kf_cancel_reset();
	kf_buf_release(&pl);
}

KF_TEST_MAIN(TEST(test_exit_code), TEST(test_cwd_and_missing_program), TEST(test_killed_by_signal),
	     TEST(test_timeout_kills_group), TEST(test_leftover_grandchild_killed_on_exit),
	     TEST(test_output_bounded), TEST(test_fn_payload), TEST(test_seccomp_denies),
	     TEST(test_seccomp_survives_exec), TEST(test_fsize), TEST(test_cpu_limit), TEST(test_as_limit),
	     TEST(test_no_network), TEST(test_wait_direct), TEST(test_interrupt_flag),
	     TEST(test_signals_reset))
