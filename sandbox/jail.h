/* Private to sandbox/: what one child gets from the sandbox layers (which layers, its uid, its Landlock
 * rules, its cgroup, its environment), built in the parent before the fork and entered by the child
 * (kf_jail_enter) before it runs anything untrusted. */
#ifndef KF_SANDBOX_JAIL_H
#define KF_SANDBOX_JAIL_H

#include "common/confine.h"
#include "sandbox.h"

#define KF_JAIL_MAX_RULES 32
#define KF_JAIL_PATH 512
#define KF_JAIL_MAX_ENV 8

enum kf_jail_kind {
	KF_JAIL_TOOLCHAIN,  /* a host compiler run: may exec the toolchain's programs only */
	KF_JAIL_INPROCESS,  /* a forked function (NVRTC): no exec at all */
	KF_JAIL_CPU_WORKER, /* kforge-worker for the cpu backend (confines itself after exec) */
	KF_JAIL_GPU_WORKER, /* kforge-worker for the cuda backend: what the NVIDIA driver tolerates */
};

struct kf_jail {
	enum kf_jail_kind kind;
	unsigned layers; /* the active layers this child gets */
	uid_t uid;       /* KF_LAYER_UID: a fresh id from KF_SANDBOX_UID_BASE */
	gid_t gid;
	size_t n_rules; /* Landlock */
	struct kf_fs_rule rules[KF_JAIL_MAX_RULES];
	char paths[KF_JAIL_MAX_RULES][KF_JAIL_PATH];
	char tmp_dir[KF_JAIL_PATH]; /* KF_LAYER_MNTNS: mount point of the private tmpfs ("" none) */
	uint64_t tmp_bytes;
	size_t n_cg; /* cgroups made for this child, joined by it, removed by kf_jail_release */
	char cg_dir[2][KF_JAIL_PATH];
	size_t n_env; /* KF_LAYER_ENV: the whole environment of the child */
	char *envp[KF_JAIL_MAX_ENV + 1];
	char env[KF_JAIL_MAX_ENV][KF_JAIL_PATH + 32];
};

/* The active layers for this kind of child and, with KF_LAYER_UID, a fresh uid/gid. Landlock rules
 * for the system libraries are added for every kind. */
void kf_jail_init(struct kf_jail *j, enum kf_jail_kind kind);
/* Adds a Landlock rule (paths that do not exist are skipped when the rules are applied). */
void kf_jail_rule(struct kf_jail *j, const char *path, unsigned rights);
/* Adds NAME=VALUE to the child's environment (used when KF_LAYER_ENV is active). */
void kf_jail_setenv(struct kf_jail *j, const char *name, const char *value);
/* With KF_LAYER_CGROUP: a cgroup for this child bounded to mem_bytes of memory (0: no memory bound) and
 * pids tasks. A cgroup that cannot be made is a warning-free no-op (the layer was probed). */
void kf_jail_cgroup(struct kf_jail *j, uint64_t mem_bytes, int pids);
/* After the child is reaped: removes its cgroups. */
void kf_jail_release(struct kf_jail *j);
/* Makes dir (created by the parent for this child) the child's own: with KF_LAYER_UID it is chowned to
 * the child's uid. 0 or -1 with errno. */
int kf_jail_give_dir(const struct kf_jail *j, const char *dir);

/* In the forked child: moves it into the jail's cgroups (kf_jail_enter does this first). */
void kf_jail_join_cgroup(const struct kf_jail *j);

/* In the forked child, before exec (or before the function runs): joins the cgroups, enters the
 * namespaces and the uid (kf_confine_enter), applies the Landlock rules, switches to the jail's
 * environment. Writes a line to fd 2 and _exit()s with KF_CHILD_EXIT_SETUP on any failure. */
void kf_jail_enter(const struct kf_jail *j, int nproc);

/* kforge-worker's --jail argument for this jail ("layers=HEX,uid=N,gid=N"). */
void kf_jail_worker_arg(const struct kf_jail *j, char *out, size_t n);

#endif
