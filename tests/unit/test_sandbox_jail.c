/* Tests for the confinement primitives (sandbox/common/confine.c) and the parent's protection
 * (sandbox/jail.c), each layer alone in a forked child: Landlock refuses reads, writes and execs outside
 * its rules; the separate uid (as root) cannot write root's files or signal the parent; the pid
 * namespace relay runs the child as pid 2 with the parent out of its sight; a seccomp program from the
 * BPF builder allows, refuses and checks arguments as written; the parent is not dumpable and its
 * /proc/self/environ is zeros; a cgroup bounds a child's memory. What needs root or a kernel feature
 * this machine lacks is a skip. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/common/confine.h"
#include "sandbox/jail.h"
#include "sandbox/sandbox.h"
#include "testing.h"

static char dir[] = "/tmp/kforge-jail-test-XXXXXX";

/* Runs fn in a child (kf_child_run_fn); the child writes a result code to fd. */
static int in_child(int (*fn)(void *, int), void *arg)
{
	struct kf_child_limits lim = {.timeout_ms = 20000};
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(64);
	struct kf_err err = KF_ERR_INIT;
	int code = -1;
	if (kf_child_run_fn(fn, arg, &lim, &out, &res, &err) == KF_OK && out.len == sizeof(int))
		memcpy(&code, out.data, sizeof(int));
	else
		fprintf(stderr, "  child: %s (exit %d, signal %d)\n", err.msg, res.exit_code,
			res.term_signal);
	kf_buf_release(&out);
	return code;
}

static int put(int fd, int v)
{
	return write(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : 1;
}

/* bit 0: /usr/lib readable; 1: /etc/hostname refused; 2: creating in dir refused; 3: a file under dir
 * given READ stays readable */
static int landlock_child(void *arg, int fd)
{
	const char *what;
	char ok_file[600], new_file[600];
	struct kf_fs_rule rules[] = {{"/usr/lib", KF_FS_READ}, {dir, KF_FS_READ}};
	int r = 0, f;
	(void)arg;
	snprintf(ok_file, sizeof(ok_file), "%s/readable", dir);
	snprintf(new_file, sizeof(new_file), "%s/created", dir);
	if (kf_confine_landlock(rules, KF_ARRAY_SIZE(rules), true, &what) != 0)
		return put(fd, -errno);
	if ((f = open("/usr/lib", O_RDONLY | O_DIRECTORY)) >= 0)
		r |= 1, close(f);
	if ((f = open("/etc/hostname", O_RDONLY)) < 0 && errno == EACCES)
		r |= 2;
	else if (f >= 0)
		close(f);
	if ((f = open(new_file, O_WRONLY | O_CREAT, 0600)) < 0 && errno == EACCES)
		r |= 4;
	else if (f >= 0)
		close(f);
	if ((f = open(ok_file, O_RDONLY)) >= 0)
		r |= 8, close(f);
	return put(fd, r);
}

static void landlock_alone(void)
{
	char p[600];
	int r;
	if (kf_confine_landlock_abi() <= 0)
		KF_SKIP("no Landlock here");
	snprintf(p, sizeof(p), "%s/readable", dir);
	close(open(p, O_WRONLY | O_CREAT, 0644));
	r = in_child(landlock_child, NULL);
	CHECKF(r == 15, "landlock result %d", r);
	snprintf(p, sizeof(p), "%s/created", dir);
	CHECK(access(p, F_OK) != 0);
}

/* exec of the one allowed program works, of another is refused (the dynamic loader needs the exec
 * right too: the kernel opens it as it opens the program) */
static int exec_child(void *arg, int fd)
{
	const char *what, *allowed = arg;
	char sh[4096], ld[4096];
	struct kf_fs_rule rules[] = {{"/usr/lib", KF_FS_READ},
				     {"/lib", KF_FS_READ},
				     {"/lib64", KF_FS_READ},
				     {"/etc/ld.so.cache", KF_FS_READ},
				     {allowed, KF_FS_READ | KF_FS_EXEC},
				     {ld, KF_FS_READ | KF_FS_EXEC}};
	pid_t p;
	int st, r = 0;
	if (!realpath("/bin/sh", sh) || !realpath("/lib64/ld-linux-x86-64.so.2", ld))
		return put(fd, -1);
	if (kf_confine_landlock(rules, KF_ARRAY_SIZE(rules), true, &what) != 0)
		return put(fd, -errno);
	p = fork();
	if (p == 0) {
		execl(allowed, "true", (char *)NULL);
		_exit(99);
	}
	if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		r |= 1;
	p = fork();
	if (p == 0) {
		execl(sh, "sh", "-c", "exit 0", (char *)NULL);
		_exit(errno == EACCES ? 42 : 43);
	}
	if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 42)
		r |= 2;
	return put(fd, r);
}

static void landlock_exec_only_listed(void)
{
	char t[4096];
	if (kf_confine_landlock_abi() <= 0)
		KF_SKIP("no Landlock here");
	if (!realpath("/bin/true", t))
		KF_SKIP("no /bin/true");
	CHECK_EQ_INT(in_child(exec_child, t), 3);
}

/* bit 0: cannot open a root-owned 0644 file for writing; 1: cannot signal the parent; 2: ids dropped */
static int uid_child(void *arg, int fd)
{
	const char *what, *file = arg;
	pid_t parent = getppid();
	uid_t u = KF_SANDBOX_UID_BASE + 12345;
	int r = 0, f;
	if (kf_confine_setuid(u, u, &what) != 0)
		return put(fd, -errno);
	if ((f = open(file, O_WRONLY | O_APPEND)) < 0 && errno == EACCES)
		r |= 1;
	else if (f >= 0)
		close(f);
	if (kill(parent, 0) != 0 && errno == EPERM)
		r |= 2;
	if (getuid() == u && geteuid() == u && getgid() == u)
		r |= 4;
	return put(fd, r);
}

static void uid_alone(void)
{
	char f[600];
	if (geteuid() != 0)
		KF_SKIP("needs root (the uid layer is a root-only layer)");
	snprintf(f, sizeof(f), "%s/root-owned", dir);
	close(open(f, O_WRONLY | O_CREAT, 0644));
	CHECK_EQ_INT(in_child(uid_child, f), 7);
}

/* In a user + pid namespace: pid 2 under the relay's init, the parent cannot be named. */
static int pidns_child(void *arg, int fd)
{
	const char *what;
	pid_t outer = *(pid_t *)arg;
	int r = 0;
	if (kf_confine_unshare(CLONE_NEWUSER | CLONE_NEWPID, &what) != 0 &&
	    kf_confine_unshare(CLONE_NEWPID, &what) != 0)
		return put(fd, -errno);
	if (kf_confine_pidns_relay(&what) != 0)
		return put(fd, -errno);
	if (getpid() == 2)
		r |= 1;
	if (getppid() == 1)
		r |= 2;
	if (kill(outer, SIGSTOP) != 0 && errno == ESRCH)
		r |= 4;
	return put(fd, r);
}

static void pidns_relay(void)
{
	pid_t me = getpid();
	int r = in_child(pidns_child, &me);
	if (r < 0)
		KF_SKIP("no pid namespace here");
	CHECKF(r == 7, "pidns result %d", r);
}

/* A program from the BPF builder: openat only without write flags, kill only of itself, getuid EACCES,
 * everything else allowed (a sanitizer runtime in the child makes calls of its own). */
static int bpf_child(void *arg, int fd)
{
	struct kf_bpf *p = malloc(sizeof(*p));
	const char *what;
	uint32_t self;
	int r = 0, f;
	(void)arg;
	if (!p)
		return put(fd, -1);
	self = (uint32_t)getpid();
	kf_bpf_begin(p);
	kf_bpf_allow(p, SYS_write);
	kf_bpf_allow_arg_clear(p, SYS_openat, 2, O_WRONLY | O_RDWR | O_CREAT, SECCOMP_RET_ERRNO | EPERM);
	kf_bpf_allow_arg_in(p, SYS_kill, 0, &self, 1, false, SECCOMP_RET_ERRNO | EPERM);
	kf_bpf_action(p, SYS_getuid, SECCOMP_RET_ERRNO | EACCES);
	kf_bpf_end(p, SECCOMP_RET_ALLOW);
	if (kf_bpf_install(p, false, &what) != 0)
		return put(fd, -errno);
	if ((f = open("/etc/hostname", O_RDONLY)) >= 0)
		r |= 1, close(f);
	if (open("/tmp/kforge-bpf-test", O_WRONLY | O_CREAT, 0600) < 0 && errno == EPERM)
		r |= 2;
	if (kill((pid_t)self, 0) == 0)
		r |= 4;
	if (kill(1, 0) != 0 && errno == EPERM)
		r |= 8;
	if (syscall(SYS_getuid) < 0 && errno == EACCES)
		r |= 16;
	return put(fd, r);
}

static void bpf_builder(void)
{
	CHECK_EQ_INT(in_child(bpf_child, NULL), 31);
	CHECK(access("/tmp/kforge-bpf-test", F_OK) != 0);
}

/* The initial environment block ([env_start, env_end) of /proc/self/stat, readable for this process
 * even when it is not dumpable) holds only zeros once the parent is protected. */
static void parent_protected(void)
{
	char buf[4096], *p, *save = NULL;
	uintptr_t start = 0, end = 0;
	int fd, field = 2;
	ssize_t n;

	kf_sandbox_protect_parent();
	CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0);
	fd = open("/proc/self/stat", O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	for (char *t = p ? strtok_r(p + 1, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 50)
			start = (uintptr_t)strtoull(t, NULL, 10);
		else if (field == 51)
			end = (uintptr_t)strtoull(t, NULL, 10);
	}
	CHECKF(start && end > start, "no environment block in /proc/self/stat");
	for (uintptr_t a = start; a < end && start; a++)
		if (*(const char *)a) {
			CHECKF(0, "byte %zu of the environment block is still set", (size_t)(a - start));
			break;
		}
	/* getenv still works: the variables live on the heap now */
	setenv("KFORGE_JAIL_TEST", "yes", 1);
	CHECK_STR(getenv("KFORGE_JAIL_TEST"), "yes");
	CHECK(getenv("PATH") != NULL);
}

/* A cgroup of 64 MiB: a child that touches 256 MiB is killed (OOM), not allowed to finish. */
static int hog_child(void *arg, int fd)
{
	const struct kf_jail *j = arg;
	size_t n = (size_t)256 << 20;
	char *p;
	kf_jail_join_cgroup(j);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return put(fd, 2);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	return put(fd, 1);
}

static void cgroup_bounds_memory(void)
{
	struct kf_jail *j = malloc(sizeof(*j));
	struct kf_child_limits lim = {.timeout_ms = 20000};
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(64);
	if (!j)
		return;
	if (!(kf_sandbox_report()->active & KF_LAYER_CGROUP)) {
		free(j);
		KF_SKIP("no writable cgroup here");
	}
	kf_jail_init(j, KF_JAIL_TOOLCHAIN);
	kf_jail_cgroup(j, (uint64_t)64 << 20, 16);
	CHECK(j->n_cg >= 1);
	kf_child_run_fn(hog_child, j, &lim, &out, &res, NULL);
	CHECKF(res.term_signal == SIGKILL && out.len == 0, "signal %d, %zu bytes", res.term_signal, out.len);
	kf_jail_release(j);
	CHECK(j->n_cg == 0);
	kf_buf_release(&out);
	free(j);
}

/* In the in-process compile child (NVRTC forks the parent's memory) the heap copy of the parent's
 * environment, keys and all, is zeroed before any compiler code runs: the pointer getenv gave the parent
 * reads zeros there, and getenv finds nothing. */
static int inprocess_child(void *arg, int fd)
{
	const char *p = arg;
	return put(fd, (p[0] == '\0' ? 1 : 0) | (getenv("KF_JAIL_TEST_SECRET") == NULL ? 2 : 0));
}

static void inprocess_env_zeroed(void)
{
	const char *secret = getenv("KF_JAIL_TEST_SECRET");
	if (!secret) {
		/* The variable must be in the environment this process started with: run a copy of this
		 * binary with it set, for this test alone. */
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		pid_t pid;
		int st = -1;
		if (n <= 0)
			KF_SKIP("no /proc/self/exe");
		self[n] = '\0';
		pid = fork();
		if (pid == 0) {
			char *argv[] = {self, (char *)"inprocess_env_zeroed", NULL};
			setenv("KF_JAIL_TEST_SECRET", "sk-jail-test-0123456789abcdefghij", 1);
			execv(self, argv);
			_exit(127);
		}
		CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
		CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the copy failed (status %d)", st);
		return;
	}
	struct kf_jail *j = malloc(sizeof(*j));
	struct kf_child_limits lim = {.timeout_ms = 20000};
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(64);
	int code = -1;
	if (!j)
		return;
	kf_jail_init(j, KF_JAIL_INPROCESS);
	if (!(j->layers & KF_LAYER_ENV)) {
		free(j);
		KF_SKIP("the env layer is off");
	}
	lim.jail = j;
	CHECK(kf_child_run_fn(inprocess_child, (void *)secret, &lim, &out, &res, NULL) == KF_OK);
	if (out.len == sizeof(int))
		memcpy(&code, out.data, sizeof(int));
	CHECKF(code == 3, "child saw the environment (code %d)", code);
	CHECK(getenv("KF_JAIL_TEST_SECRET") && secret[0] == 's'); /* the parent keeps its own */
	kf_jail_release(j);
	kf_buf_release(&out);
	free(j);
}

static void layer_names(void)
{
	CHECK_STR(kf_layer_name(0), "env");
	CHECK_STR(kf_layer_name(7), "landlock");
	CHECK_STR(kf_layer_name(8), "seccomp");
	CHECK(kf_layer_name(KF_LAYER_COUNT) == NULL);
	for (unsigned b = 0; b < KF_LAYER_COUNT; b++)
		CHECK(kf_layer_summary(b) && kf_layer_summary(b)[0]);
}

int main(int argc, char **argv)
{
	static const struct kf_test_case tests[] = {
	    TEST(landlock_alone),
	    TEST(landlock_exec_only_listed),
	    TEST(uid_alone),
	    TEST(pidns_relay),
	    TEST(bpf_builder),
	    TEST(parent_protected),
	    TEST(cgroup_bounds_memory),
	    TEST(inprocess_env_zeroed),
	    TEST(layer_names),
	};
	int rc;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(dir, 0755);
	rc = kf_test_run(tests, KF_ARRAY_SIZE(tests), argc, argv);
	{
		char cmd[200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return rc;
}
