/* The sandbox layers seen from the trusted parent: which are asked for ($KFORGE_SANDBOX_LAYERS) and which
 * this machine allows (probed once in small child processes), the parent's own protection (not
 * dumpable, its initial environment block zeroed), and the jail of one child: layers, a fresh uid,
 * Landlock rules, a cgroup, an environment allow-list. */
#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

/* clang-format off */
static const struct {
	const char *name, *summary;
} layer_info[KF_LAYER_COUNT] = {
	{"env", "children start from an empty environment plus an allow-list (no keys, no paths, no HOME)"},
	{"uid", "as root: every child runs under its own unprivileged uid/gid"},
	{"userns", "a user namespace (how a non-root user gets the other namespaces)"},
	{"pidns", "a pid namespace: the parent and other processes cannot be named or signalled"},
	{"netns", "a network namespace: no network"},
	{"ipcns", "an IPC namespace"},
	{"mntns", "a mount namespace; compile children get a bounded private /tmp"},
	{"landlock", "filesystem allow-list: read the system libraries (and toolchain), write only a private dir"},
	{"seccomp", "syscall allow-list for the cpu worker after setup; deny-list for compilers and the GPU worker"},
	{"cgroup", "a memory and process bound on each child and everything it starts"},
};
/* clang-format on */

const char *kf_layer_name(unsigned bit)
{
	return bit < KF_LAYER_COUNT ? layer_info[bit].name : NULL;
}

const char *kf_layer_summary(unsigned bit)
{
	return bit < KF_LAYER_COUNT ? layer_info[bit].summary : NULL;
}

/* ---- what is asked for -------------------------------------------------------------------------- */

static int layer_bit(const char *s, size_t n)
{
	for (unsigned i = 0; i < KF_LAYER_COUNT; i++)
		if (strlen(layer_info[i].name) == n && !strncmp(layer_info[i].name, s, n))
			return (int)i;
	return -1;
}

static unsigned parse_requested(const char *spec, char *bad, size_t bad_n)
{
	unsigned want = 0;
	const char *p = spec;

	bad[0] = '\0';
	if (!spec || !*spec)
		return KF_LAYERS_ALL;
	while (*p) {
		size_t n = strcspn(p, ", ");
		bool minus = false;
		const char *w = p;
		if (n && (*w == '-' || *w == '+')) {
			minus = *w == '-';
			w++;
			n--;
		}
		if (n == 3 && !strncmp(w, "all", 3)) {
			want = minus ? 0 : KF_LAYERS_ALL;
		} else if (n == 4 && !strncmp(w, "none", 4)) {
			want = 0;
		} else if (n) {
			int b = layer_bit(w, n);
			if (b < 0) {
				if (!bad[0])
					snprintf(bad, bad_n, "%.*s", (int)n, w);
			} else if (minus) {
				want &= ~(1u << b);
			} else {
				want |= 1u << b;
			}
		}
		p = w + n;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return want;
}

/* ---- what the machine allows (probed in a child) ------------------------------------------------ */

struct probe_out {
	unsigned ok;             /* layers that worked */
	int err[KF_LAYER_COUNT]; /* errno of the step that failed */
};

static uid_t probe_uid(void)
{
	return KF_SANDBOX_UID_BASE + (((uid_t)getpid() & 0x3fffff) << 8) + 255;
}

static int probe_child(void *arg, int fd)
{
	struct probe_out o;
	bool root = geteuid() == 0;
	const char *what;
	static const int ns_flag[] = {CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWNS};
	static const unsigned ns_bit[] = {KF_LAYER_PIDNS, KF_LAYER_NETNS, KF_LAYER_IPCNS, KF_LAYER_MNTNS};
	ssize_t w;

	(void)arg;
	memset(&o, 0, sizeof(o));
	if (root) {
		/* As root the namespaces need no user namespace; then the uid, then a user namespace as
		 * that uid (what kf_confine_enter does). */
		for (size_t i = 0; i < KF_ARRAY_SIZE(ns_flag); i++) {
			if (kf_confine_unshare(ns_flag[i], &what) == 0)
				o.ok |= ns_bit[i];
			else
				o.err[__builtin_ctz(ns_bit[i])] = errno;
		}
		if (kf_confine_setuid(probe_uid(), probe_uid(), &what) == 0)
			o.ok |= KF_LAYER_UID;
		else
			o.err[__builtin_ctz(KF_LAYER_UID)] = errno;
		if (kf_confine_unshare(CLONE_NEWUSER, &what) == 0)
			o.ok |= KF_LAYER_USERNS;
		else
			o.err[__builtin_ctz(KF_LAYER_USERNS)] = errno;
	} else {
		o.err[__builtin_ctz(KF_LAYER_UID)] = EPERM;
		if (kf_confine_unshare(CLONE_NEWUSER, &what) == 0) {
			o.ok |= KF_LAYER_USERNS;
			for (size_t i = 0; i < KF_ARRAY_SIZE(ns_flag); i++) {
				if (kf_confine_unshare(ns_flag[i], &what) == 0)
					o.ok |= ns_bit[i];
				else
					o.err[__builtin_ctz(ns_bit[i])] = errno;
			}
		} else {
			o.err[__builtin_ctz(KF_LAYER_USERNS)] = errno;
		}
	}
	/* A program that allows everything: can this process have a filter at all? */
	{
		struct kf_bpf p;
		kf_bpf_begin(&p);
		kf_bpf_end(&p, 0x7fff0000u /* SECCOMP_RET_ALLOW */);
		if (kf_bpf_install(&p, false, &what) == 0)
			o.ok |= KF_LAYER_SECCOMP;
		else
			o.err[__builtin_ctz(KF_LAYER_SECCOMP)] = errno;
	}
	w = write(fd, &o, sizeof(o));
	return w == (ssize_t)sizeof(o) ? 0 : 1;
}

static struct kf_sandbox_report report;
static pthread_once_t report_once = PTHREAD_ONCE_INIT;

/* cgroup bases: v2 one directory, v1 the memory and the pids hierarchy. */
static char cg_base[2][KF_JAIL_PATH];
static int cg_n;
static bool cg_v2;

static bool read_line_file(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "r");
	bool ok;
	if (!f)
		return false;
	ok = fgets(out, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\n")] = '\0';
	return ok;
}

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;
	if (fd < 0)
		return false;
	w = write(fd, text, strlen(text));
	close(fd);
	return w == (ssize_t)strlen(text);
}

/* Removes kforge-<pid>-<n> cgroups left by kforge processes that are gone. */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[KF_JAIL_PATH + 300];
		long pid;
		if (strncmp(e->d_name, "kforge-", 7) != 0)
			continue;
		pid = strtol(e->d_name + 7, NULL, 10);
		if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH)) {
			snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
			rmdir(path);
		}
	}
	closedir(d);
}

static bool cg_dir_usable(const char *base)
{
	char probe[KF_JAIL_PATH + 64];
	snprintf(probe, sizeof(probe), "%s/kforge-%d-probe", base, (int)getpid());
	if (mkdir(probe, 0700) != 0 && errno != EEXIST)
		return false;
	rmdir(probe);
	return true;
}

static void probe_cgroup(char *why, size_t why_n)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024], v2path[600] = "", mem[600] = "", pids[600] = "";
	struct stat sb;

	if (!f) {
		snprintf(why, why_n, "cannot read /proc/self/cgroup");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*b = '\0';
		if (!strcmp(line, "0") && a[1] == '\0')
			snprintf(v2path, sizeof(v2path), "%s", b + 1);
		else if (!strcmp(a + 1, "memory"))
			snprintf(mem, sizeof(mem), "%s", b + 1);
		else if (!strcmp(a + 1, "pids"))
			snprintf(pids, sizeof(pids), "%s", b + 1);
	}
	fclose(f);
	if (v2path[0] && stat("/sys/fs/cgroup/cgroup.controllers", &sb) == 0) {
		char sub[KF_JAIL_PATH + 64], ctl[256] = "";
		snprintf(cg_base[0], sizeof(cg_base[0]), "/sys/fs/cgroup%s",
			 strcmp(v2path, "/") ? v2path : "");
		snprintf(sub, sizeof(sub), "%s/cgroup.subtree_control", cg_base[0]);
		if (read_line_file(sub, ctl, sizeof(ctl)) && strstr(ctl, "memory") && strstr(ctl, "pids") &&
		    cg_dir_usable(cg_base[0])) {
			cg_n = 1;
			cg_v2 = true;
			sweep_stale(cg_base[0]);
			snprintf(report.cgroup, sizeof(report.cgroup), "v2");
			return;
		}
	}
	if (mem[0] && pids[0]) {
		snprintf(cg_base[0], sizeof(cg_base[0]), "/sys/fs/cgroup/memory%s",
			 strcmp(mem, "/") ? mem : "");
		snprintf(cg_base[1], sizeof(cg_base[1]), "/sys/fs/cgroup/pids%s",
			 strcmp(pids, "/") ? pids : "");
		if (cg_dir_usable(cg_base[0]) && cg_dir_usable(cg_base[1])) {
			cg_n = 2;
			sweep_stale(cg_base[0]);
			sweep_stale(cg_base[1]);
			snprintf(report.cgroup, sizeof(report.cgroup), "v1");
			return;
		}
	}
	snprintf(why, why_n,
		 "no writable cgroup with the memory and pids controllers (v2 delegation or v1 as root)");
}

static void make_report(void)
{
	struct kf_sandbox_report *r = &report;
	struct kf_child_limits lim = {.timeout_ms = 10000};
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(sizeof(struct probe_out));
	struct probe_out po;
	const char *spec = getenv("KFORGE_SANDBOX_LAYERS");

	r->root = geteuid() == 0;
	r->requested = parse_requested(spec, r->bad_spec, sizeof(r->bad_spec));
	r->available = KF_LAYER_ENV;
	r->landlock_abi = kf_confine_landlock_abi();
	if (r->landlock_abi > 0)
		r->available |= KF_LAYER_LANDLOCK;
	else
		snprintf(r->why[__builtin_ctz(KF_LAYER_LANDLOCK)], sizeof(r->why[0]),
			 "this kernel has no Landlock (or it is not enabled in the LSM list)");
	memset(&po, 0, sizeof(po));
	if (kf_child_run_fn(probe_child, NULL, &lim, &out, &res, NULL) == KF_OK && out.len == sizeof(po))
		memcpy(&po, out.data, sizeof(po));
	kf_buf_release(&out);
	r->available |= po.ok & (KF_LAYER_UID | KF_LAYER_USERNS | KF_LAYER_PIDNS | KF_LAYER_NETNS |
				 KF_LAYER_IPCNS | KF_LAYER_MNTNS | KF_LAYER_SECCOMP);
	for (unsigned b = 0; b < KF_LAYER_COUNT; b++) {
		unsigned bit = 1u << b;
		if ((r->available & bit) || r->why[b][0] || bit == KF_LAYER_CGROUP)
			continue;
		if (bit == KF_LAYER_UID && !r->root)
			snprintf(r->why[b], sizeof(r->why[b]), "kforge is not running as root");
		else
			snprintf(r->why[b], sizeof(r->why[b]), "refused by the kernel: %s",
				 po.err[b] ? strerror(po.err[b]) : "probe failed");
	}
	probe_cgroup(r->why[__builtin_ctz(KF_LAYER_CGROUP)], sizeof(r->why[0]));
	if (cg_n)
		r->available |= KF_LAYER_CGROUP;
	r->active = r->requested & r->available;
	/* Without root, the other namespaces exist only inside the user namespace. */
	if (!r->root && !(r->active & KF_LAYER_USERNS))
		r->active &= ~(unsigned)(KF_LAYER_PIDNS | KF_LAYER_NETNS | KF_LAYER_IPCNS | KF_LAYER_MNTNS);
	r->parent_nodump = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0;
	r->cpu_opt_out = getenv(KF_SANDBOX_OPT_OUT_ENV) && *getenv(KF_SANDBOX_OPT_OUT_ENV);
	r->cpu_allowed = r->cpu_opt_out ||
			 ((r->active & KF_LAYER_SECCOMP) && (r->active & (KF_LAYER_LANDLOCK | KF_LAYER_UID)));
}

const struct kf_sandbox_report *kf_sandbox_report(void)
{
	kf_sandbox_protect_parent();
	pthread_once(&report_once, make_report);
	return &report;
}

enum kf_status kf_sandbox_cpu_check(struct kf_err *err)
{
	const struct kf_sandbox_report *r = kf_sandbox_report();
	if (r->cpu_allowed)
		return KF_OK;
	return kf_err_set(err, KF_ERR_UNAVAILABLE,
			  "the cpu backend runs candidate code natively and refuses to run it without its "
			  "sandbox: it needs the syscall allow-list (seccomp: %s) and Landlock (%s) or a "
			  "separate uid (%s); see 'kforge doctor', or set %s=1 to run it anyway",
			  (r->active & KF_LAYER_SECCOMP) ? "active" : "missing",
			  (r->active & KF_LAYER_LANDLOCK) ? "active" : "missing",
			  (r->active & KF_LAYER_UID) ? "active" : "missing", KF_SANDBOX_OPT_OUT_ENV);
}

/* ---- the parent ----------------------------------------------------------------------------------- */

extern char **environ;

/* The initial environment block of this process ([env_start, env_end) of /proc/self/stat): what
 * /proc/PID/environ shows, whatever environ points to now. */
static bool env_block(uintptr_t *start, uintptr_t *end)
{
	char buf[4096];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *p, *save = NULL;
	int field = 2;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	if (!p)
		return false;
	*start = *end = 0;
	for (char *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		field++;
		if (field == 50)
			*start = (uintptr_t)strtoull(t, NULL, 10);
		else if (field == 51) {
			*end = (uintptr_t)strtoull(t, NULL, 10);
			break;
		}
	}
	return *start && *end > *start;
}

/* The environment's new home: one block for every string and the array, both kept here for the life
 * of the process (so a leak checker sees them reachable after setenv moves environ elsewhere). */
static char *volatile env_strings;
static char **volatile env_array;
static size_t env_bytes;

static void protect(void)
{
	uintptr_t start, end;
	size_t n = 0, bytes = 0, at = 0;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Move every variable to the heap (getenv keeps working), then zero the original block. */
	while (environ && environ[n])
		bytes += strlen(environ[n++]) + 1;
	char **arr = calloc(n + 1, sizeof(*arr));
	char *str = malloc(bytes ? bytes : 1);
	if (!arr || !str) {
		free(arr);
		free(str);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(environ[i]) + 1;
		memcpy(str + at, environ[i], l);
		arr[i] = str + at;
		at += l;
	}
	env_array = arr;
	env_strings = str;
	env_bytes = bytes;
	environ = arr;
	if (env_block(&start, &end)) {
		memset((void *)start, 0, end - start);
		report.env_scrubbed = true;
	}
}

static pthread_once_t protect_once = PTHREAD_ONCE_INIT;

/* At load time, before main() (and before anything of kforge's has called getenv, whose pointers into
 * the old block would read zeros afterwards). main() calls it again, as the first thing it does. */
__attribute__((constructor)) static void protect_at_start(void)
{
	pthread_once(&protect_once, protect);
}

void kf_sandbox_protect_parent(void)
{
	pthread_once(&protect_once, protect);
	/* Cheap, and a library may have turned it back on (a setuid-like credential change does). */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* ---- one child's jail ------------------------------------------------------------------------------ */

static unsigned kind_layers(enum kf_jail_kind kind, unsigned active, bool root)
{
	switch (kind) {
	case KF_JAIL_TOOLCHAIN:
	case KF_JAIL_INPROCESS:
	case KF_JAIL_CPU_WORKER:
		return active;
	case KF_JAIL_GPU_WORKER: {
		/* The NVIDIA driver needs /dev/nvidia*, /proc/driver/nvidia, its own files under /sys and
		 * large address ranges: no Landlock, no mount or pid namespace, no memory bound; a user
		 * namespace only where it is what gives a non-root user the network namespace. */
		unsigned l = active & (KF_LAYER_ENV | KF_LAYER_UID | KF_LAYER_NETNS | KF_LAYER_SECCOMP);
		if (!root && (active & KF_LAYER_NETNS))
			l |= KF_LAYER_USERNS;
		return l;
	}
	}
	return active;
}

void kf_jail_rule(struct kf_jail *j, const char *path, unsigned rights)
{
	if (!path || !*path || j->n_rules >= KF_JAIL_MAX_RULES)
		return;
	snprintf(j->paths[j->n_rules], KF_JAIL_PATH, "%s", path);
	j->rules[j->n_rules].path = j->paths[j->n_rules];
	j->rules[j->n_rules].rights = rights;
	j->n_rules++;
}

void kf_jail_setenv(struct kf_jail *j, const char *name, const char *value)
{
	if (j->n_env >= KF_JAIL_MAX_ENV || !value)
		return;
	snprintf(j->env[j->n_env], sizeof(j->env[0]), "%s=%s", name, value);
	j->envp[j->n_env] = j->env[j->n_env];
	j->n_env++;
	j->envp[j->n_env] = NULL;
}

void kf_jail_init(struct kf_jail *j, enum kf_jail_kind kind)
{
	static unsigned counter;
	const struct kf_sandbox_report *r = kf_sandbox_report();

	memset(j, 0, sizeof(*j));
	j->kind = kind;
	j->layers = kind_layers(kind, r->active, r->root);
	if (j->layers & KF_LAYER_UID) {
		unsigned seq = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED) % 255;
		j->uid = KF_SANDBOX_UID_BASE + (((uid_t)getpid() & 0x3fffff) << 8) + seq;
		j->gid = (gid_t)j->uid;
	}
	/* The dynamic loader and the system libraries, for every child. */
	kf_jail_rule(j, "/usr/lib", KF_FS_READ);
	kf_jail_rule(j, "/usr/lib64", KF_FS_READ);
	kf_jail_rule(j, "/lib", KF_FS_READ);
	kf_jail_rule(j, "/lib64", KF_FS_READ);
	kf_jail_rule(j, "/etc/ld.so.cache", KF_FS_READ);
	kf_jail_rule(j, "/dev/null", KF_FS_READ | KF_FS_WRITE);
	j->envp[0] = NULL;
}

void kf_jail_cgroup(struct kf_jail *j, uint64_t mem_bytes, int pids)
{
	static unsigned counter;
	unsigned seq;

	if (!(j->layers & KF_LAYER_CGROUP) || !cg_n)
		return;
	seq = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < cg_n; i++) {
		char f[KF_JAIL_PATH + 64], v[32];
		snprintf(j->cg_dir[i], KF_JAIL_PATH, "%s/kforge-%d-%u", cg_base[i], (int)getpid(), seq);
		if (mkdir(j->cg_dir[i], 0700) != 0 && errno != EEXIST) {
			j->cg_dir[i][0] = '\0';
			break;
		}
		j->n_cg = (size_t)i + 1;
		if (mem_bytes && (cg_v2 || i == 0)) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)mem_bytes);
			snprintf(f, sizeof(f), "%s/%s", j->cg_dir[i],
				 cg_v2 ? "memory.max" : "memory.limit_in_bytes");
			write_text(f, v);
			if (cg_v2) {
				snprintf(f, sizeof(f), "%s/memory.swap.max", j->cg_dir[i]);
				write_text(f, "0");
			}
		}
		if (pids > 0 && (cg_v2 || i == 1)) {
			snprintf(v, sizeof(v), "%d", pids);
			snprintf(f, sizeof(f), "%s/pids.max", j->cg_dir[i]);
			write_text(f, v);
		}
	}
}

void kf_jail_release(struct kf_jail *j)
{
	for (size_t i = 0; i < j->n_cg; i++) {
		if (!j->cg_dir[i][0])
			continue;
		if (cg_v2) {
			char f[KF_JAIL_PATH + 32];
			snprintf(f, sizeof(f), "%s/cgroup.kill", j->cg_dir[i]);
			write_text(f, "1");
		}
		/* Killed processes leave the cgroup once reaped (by their init, a moment later). */
		for (int tries = 0; tries < 50; tries++) {
			if (rmdir(j->cg_dir[i]) == 0 || errno == ENOENT)
				break;
			usleep(2000);
		}
		j->cg_dir[i][0] = '\0';
	}
	j->n_cg = 0;
}

int kf_jail_give_dir(const struct kf_jail *j, const char *dir)
{
	if (!(j->layers & KF_LAYER_UID))
		return 0;
	return chown(dir, j->uid, j->gid);
}

static void jail_die(const char *what, int e)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "kforge sandbox: %s: %s\n", what, strerror(e));
	if (n > 0) {
		ssize_t w = write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		(void)w;
	}
	_exit(KF_CHILD_EXIT_SETUP);
}

void kf_jail_join_cgroup(const struct kf_jail *j)
{
	for (size_t i = 0; i < j->n_cg; i++) {
		char f[KF_JAIL_PATH + 32];
		snprintf(f, sizeof(f), "%s/cgroup.procs", j->cg_dir[i]);
		if (!write_text(f, "0"))
			jail_die("joining the cgroup", errno);
	}
}

void kf_jail_enter(const struct kf_jail *j, int nproc)
{
	struct kf_confine_plan plan = {
	    .layers = j->layers,
	    .uid = j->uid,
	    .gid = j->gid,
	    .nproc = nproc,
	    .tmp_dir = j->tmp_dir[0] ? j->tmp_dir : NULL,
	    .tmp_bytes = j->tmp_bytes,
	};
	const char *what = "sandbox";

	kf_jail_join_cgroup(j);
	if (kf_confine_enter(&plan, &what) != 0)
		jail_die(what, errno);
	if ((j->layers & KF_LAYER_LANDLOCK) && kf_confine_landlock(j->rules, j->n_rules, true, &what) != 0)
		jail_die(what, errno);
	if (j->layers & KF_LAYER_ENV) {
		environ = (char **)j->envp;
		/* A child that runs in-process (NVRTC) holds a copy of the parent's memory: the copy of the
		 * environment, keys and all, goes (getenv pointers into it read zeros from here on). */
		if (j->kind == KF_JAIL_INPROCESS && env_strings)
			memset(env_strings, 0, env_bytes);
	}
}

void kf_jail_worker_arg(const struct kf_jail *j, char *out, size_t n)
{
	snprintf(out, n, "layers=%x,uid=%u,gid=%u", j->layers, (unsigned)j->uid, (unsigned)j->gid);
}
