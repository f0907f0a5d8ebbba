/* Private to kforge-worker: one worker's state (the loaded module, the arena, the allocation slots)
 * and the step engine that runs a kf_step through a backend's ops table. */
#ifndef KF_WORKER_WORKER_H
#define KF_WORKER_WORKER_H

#include "../common/proto.h"
#include "backend.h"

#include <sys/types.h>

/* One allocation slot: each buffer is [guard | data rounded up to 256 bytes | guard] at base[i]. */
struct kf_wk_slot {
	bool live;
	uint64_t base[KF_MAX_BUFFERS];
};

struct kf_wk {
	const struct kf_backend_ops *ops;
	struct kf_proto_setup setup;
	bool ready; /* SETUP done: module loaded, arena mapped */
	int image_fd, arena_fd;
	uint8_t *image;
	uint8_t *arena;
	struct kf_wk_slot slots[KF_MAX_SLOTS];
	struct kf_be_launch launches[KF_MAX_LAUNCHES];
	/* Argument storage for the cuLaunchKernel convention: argp[l][a] points at argval[l][a]. */
	uint64_t argval[KF_MAX_LAUNCHES][KF_PLAN_MAX_ARGS];
	void *argp[KF_MAX_LAUNCHES][KF_PLAN_MAX_ARGS];
};

void kf_wk_init(struct kf_wk *wk, const struct kf_backend_ops *ops);

/* Maps the image and the arena, loads the module, resolves the kernels. Takes ownership of both fds
 * (closed by kf_wk_release). The status and msg go back in SETUP_OK/SETUP_ERR. */
enum kf_status kf_wk_setup(struct kf_wk *wk, const struct kf_proto_setup *s, int image_fd, int arena_fd,
			   char *msg, size_t msg_len);

/* Runs one step into res. `running` is called once right before the first launch (the worker tells
 * the parent that from now on a death is the kernel's). res->worker_dead is set on a fatal error. */
void kf_wk_step(struct kf_wk *wk, const struct kf_step *st, struct kf_step_result *res,
		void (*running)(void *ctx), void *ctx);

/* Frees every slot, unmaps, closes; does not shut the backend down. */
void kf_wk_release(struct kf_wk *wk);

/* ---- the worker's own confinement (jail.c) ---- */

/* What --jail says (the parent's choice of layers for this worker). */
struct kf_wk_jail {
	bool on;
	unsigned layers; /* enum kf_layer bits */
	uid_t uid;
	gid_t gid;
	int nproc;
};

/* Parses "layers=HEX,uid=N,gid=N[,nproc=N]"; false when malformed. */
bool kf_wk_jail_parse(const char *spec, struct kf_wk_jail *j);
/* First thing after exec: uid, namespaces, the pid-namespace relay (the caller goes on as pid 2),
 * RLIMIT_NPROC, no capabilities, no_new_privs. KF_OK, or KF_ERR_UNAVAILABLE with the reason. */
enum kf_status kf_wk_jail_enter(const struct kf_wk_jail *j, char *msg, size_t msg_len);
/* After the backend's init, before HELLO: Landlock (cpu), the backend's before_filter (cpu: its block
 * threads), then the syscall filter for every thread: the allow-list (cpu, only `sock` for messages) or
 * the deny-list (cuda). */
enum kf_status kf_wk_jail_lock(const struct kf_wk_jail *j, const struct kf_backend_ops *ops, int sock,
			       char *msg, size_t msg_len);

#endif
