/* kforge-worker: the untrusted side. `--backend cpu|cuda --fd N` speaks the protocol of
 * sandbox/common/proto.h on socket N for one module and plan; `--probe cpu|cuda` prints what the
 * backend's init found as key=value lines (exit 0 when usable, 4 when not). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"
#include "../cuda/library.h" /* --library-check (owned by the cuda backend) */
#include "../cuda/metrics.h" /* --validate-metrics (owned by the cuda backend) */

/* The backends are separate modules that may be missing from a build: weak references keep the
 * worker linkable, and a missing one reports "unavailable" instead of failing to link. */
extern const struct kf_backend_ops kf_backend_cpu __attribute__((weak));
extern const struct kf_backend_ops kf_backend_cuda __attribute__((weak));

#define EXIT_UNAVAILABLE 4
#define EXIT_PROTOCOL 3

static void usage(void)
{
	fputs("usage: kforge-worker --backend cpu|cuda --fd N [--shuffle-seed S] [--sanitize] [--host-mem "
	      "BYTES] [--jail SPEC] [--test-module ENTRY]\n"
	      "       kforge-worker --probe cpu|cuda\n"
	      "kforge-worker is started by kforge; --probe shows what a backend finds on this machine\n",
	      stderr);
}

/* Runs the backend's init, or explains why there is no backend. */
static enum kf_status backend_init(const char *name, const struct kf_worker_opts *opts,
				   const struct kf_backend_ops **ops, struct kf_proto_hello *h)
{
	const struct kf_backend_ops *o = NULL;
	bool known = true;

	memset(h, 0, sizeof(*h));
	h->pid = (uint32_t)getpid();
	if (!strcmp(name, "cpu"))
		o = &kf_backend_cpu;
	else if (!strcmp(name, "cuda"))
		o = &kf_backend_cuda;
	else
		known = false;
	*ops = o;
	if (!known) {
		h->status = KF_ERR_USAGE;
		snprintf(h->msg, sizeof(h->msg), "unknown backend '%s' (expected 'cpu' or 'cuda')", name);
	} else if (!o) {
		h->status = KF_ERR_UNAVAILABLE;
		snprintf(h->msg, sizeof(h->msg), "backend '%s' is not built into this kforge-worker", name);
	} else {
		h->status = o->init(opts, &h->info, h->msg, sizeof(h->msg));
		h->msg[sizeof(h->msg) - 1] = '\0';
		if (h->status == KF_OK && !h->info.backend[0])
			snprintf(h->info.backend, sizeof(h->info.backend), "%s", o->name);
	}
	return h->status;
}

static int probe(const char *name)
{
	struct kf_worker_opts opts = {.backend = !strcmp(name, "cuda") ? KF_BACKEND_CUDA : KF_BACKEND_CPU};
	const struct kf_backend_ops *ops;
	struct kf_proto_hello h;
	const struct kf_device_info *d = &h.info;

	if (backend_init(name, &opts, &ops, &h) != KF_OK) {
		printf("backend=%s\navailable=0\nstatus=%s\nreason=%s\n", name, kf_status_name(h.status),
		       h.msg);
		return h.status == KF_ERR_USAGE ? 2 : EXIT_UNAVAILABLE;
	}
	printf("backend=%s\navailable=1\nname=%s\narch=%s\ncc=%d.%d\nsm_count=%d\n", d->backend, d->name,
	       d->arch, d->cc_major, d->cc_minor, d->sm_count);
	printf("global_mem_bytes=%" PRIu64 "\nl2_bytes=%" PRIu64 "\nmax_threads_per_block=%d\n",
	       d->global_mem_bytes, d->l2_bytes, d->max_threads_per_block);
	printf("max_block=%d,%d,%d\nmax_grid=%d,%d,%d\n", d->max_block[0], d->max_block[1], d->max_block[2],
	       d->max_grid[0], d->max_grid[1], d->max_grid[2]);
	printf("max_smem_per_block=%d\nmax_smem_per_block_optin=%d\n", d->max_smem_per_block,
	       d->max_smem_per_block_optin);
	printf("sm_clock_khz=%d\nmem_clock_khz=%d\nmem_bus_width_bits=%d\ndriver_version=%d\ncupti=%d\n",
	       d->sm_clock_khz, d->mem_clock_khz, d->mem_bus_width_bits, d->driver_version, d->cupti ? 1 : 0);
	if (ops && ops->shutdown) /* ops is set when backend_init succeeded; the check is for the analyzer */
		ops->shutdown();
	return 0;
}

struct conn {
	int sock;
	void *buf; /* KF_PROTO_MSG_MAX bytes, malloc-aligned */
};

static void send_or_die(struct conn *c, size_t n)
{
	struct kf_err err = KF_ERR_INIT;
	if (n == 0 || kf_proto_send(c->sock, c->buf, n, NULL, 0, &err)) {
		/* The parent is gone or the message could not be built: nobody to answer to. */
		fprintf(stderr, "kforge-worker: %s\n", n ? err.msg : "cannot encode a message");
		exit(EXIT_PROTOCOL);
	}
}

static void tell_running(void *ctx)
{
	struct conn *c = ctx;
	send_or_die(c, kf_proto_empty_encode(c->buf, KF_PROTO_MSG_MAX, KF_MSG_RUNNING));
}

/* The protocol loop after HELLO. Returns the exit code. Its buffers live until the process exits (main
 * does not free them), which the analyzer would call a leak. */
/* NOLINTBEGIN(clang-analyzer-unix.Malloc) */
static int serve(struct conn *c, const struct kf_backend_ops *ops)
{
	struct kf_wk *wk = malloc(sizeof(*wk));
	struct kf_proto_setup *setup = malloc(sizeof(*setup));
	struct kf_step_result *res = malloc(sizeof(*res));
	int rc = 0;

	if (!wk || !setup || !res) {
		fputs("kforge-worker: out of memory\n", stderr);
		free(wk);
		free(setup);
		free(res);
		return EXIT_PROTOCOL;
	}
	kf_wk_init(wk, ops);
	for (;;) {
		struct kf_err err = KF_ERR_INIT;
		enum kf_msg_type type;
		int fds[2];
		size_t n, n_fds;
		enum kf_status st =
		    kf_proto_recv(c->sock, c->buf, KF_PROTO_MSG_MAX, &n, fds, 2, &n_fds, &err);

		if (st == KF_ERR_CRASH)
			break; /* the parent closed the connection: nothing left to do */
		if (!st)
			st = kf_proto_type(c->buf, n, &type, &err);
		if (!st && type != KF_MSG_SETUP && n_fds)
			st = kf_err_set(&err, KF_ERR_PARSE, "unexpected descriptors with a '%d' message",
					(int)type);
		if (st) {
			for (size_t i = 0; i < n_fds; i++)
				close(fds[i]);
			fprintf(stderr, "kforge-worker: bad message from the parent: %s\n", err.msg);
			rc = EXIT_PROTOCOL;
			break;
		}
		if (type == KF_MSG_QUIT)
			break;
		if (type == KF_MSG_SETUP) {
			struct kf_proto_status reply = {KF_OK, ""};
			if (wk->ready || n_fds != 2) {
				reply.status = KF_ERR_INVALID;
				snprintf(reply.msg, sizeof(reply.msg), "%s",
					 wk->ready ? "second setup" : "setup without its two descriptors");
				for (size_t i = 0; i < n_fds; i++)
					close(fds[i]);
			} else if (kf_proto_setup_decode(c->buf, n, setup, &err)) {
				reply.status = KF_ERR_INVALID;
				snprintf(reply.msg, sizeof(reply.msg), "%s", err.msg);
				close(fds[0]);
				close(fds[1]);
			} else {
				reply.status =
				    kf_wk_setup(wk, setup, fds[0], fds[1], reply.msg, sizeof(reply.msg));
				if (reply.status) {
					kf_wk_release(wk);
					kf_wk_init(wk, ops);
				}
			}
			if (reply.status && !reply.msg[0])
				snprintf(reply.msg, sizeof(reply.msg), "%s", kf_status_name(reply.status));
			send_or_die(c, kf_proto_status_encode(
					   c->buf, KF_PROTO_MSG_MAX,
					   reply.status ? KF_MSG_SETUP_ERR : KF_MSG_SETUP_OK, &reply));
			continue;
		}
		if (type == KF_MSG_STEP) {
			struct kf_step step;
			if (kf_proto_step_decode(c->buf, n, &step, &err)) {
				memset(res, 0, sizeof(*res));
				res->status = KF_ERR_INVALID;
				snprintf(res->msg, sizeof(res->msg), "%s", err.msg);
			} else {
				kf_wk_step(wk, &step, res, tell_running, c);
			}
			send_or_die(c, kf_proto_result_encode(c->buf, KF_PROTO_MSG_MAX, res));
			if (res->worker_dead) {
				/* The device context is broken for good (e.g. a sticky CUDA fault). */
				rc = 1;
				break;
			}
			continue;
		}
		fprintf(stderr, "kforge-worker: unexpected message type %d from the parent\n", (int)type);
		rc = EXIT_PROTOCOL;
		break;
	}
	return rc; /* main exits without freeing (see there) */
}
/* NOLINTEND(clang-analyzer-unix.Malloc) */

int main(int argc, char **argv)
{
	struct kf_worker_opts opts = {0};
	const char *backend = NULL, *probe_name = NULL, *jail_spec = NULL;
	const struct kf_backend_ops *ops = NULL;
	struct kf_proto_hello hello;
	struct kf_wk_jail jail = {0};
	char jail_msg[KF_PROTO_TEXT] = "";
	enum kf_status jail_st;
	struct conn c = {-1, NULL};
	uint64_t v;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	/* --validate-metrics CHIP LIST: CUPTI range-profiler host check, sandbox/cuda/metrics.cpp */
	if (argc >= 2 && !strcmp(argv[1], "--validate-metrics"))
		return kf_cuda_validate_metrics_main(argc - 1, argv + 1);
	/* --library-check: cuBLAS, cuBLASLt and cuDNN load and describe calls, sandbox/cuda/library.c */
	if (argc >= 2 && !strcmp(argv[1], "--library-check"))
		return kf_culib_check_main(argc - 1, argv + 1);
	/* --metrics-selftest [LIST]: the range profiler on this GPU, sandbox/cuda/selftest.c */
	if (argc >= 2 && !strcmp(argv[1], "--metrics-selftest"))
		return kf_cuda_metrics_selftest_main(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		/* argv[i] is non-null for i < argc */
		// NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker)
		if (!strcmp(a, "--probe") && next) {
			probe_name = next;
			i++;
		} else if (!strcmp(a, "--backend") && next) {
			backend = next;
			i++;
		} else if (!strcmp(a, "--fd") && kf_parse_u64(next, &v) && v <= 1024) {
			c.sock = (int)v;
			i++;
		} else if (!strcmp(a, "--shuffle-seed") && kf_parse_u64(next, &v)) {
			opts.shuffle_seed = v;
			i++;
		} else if (!strcmp(a, "--host-mem") && kf_parse_u64(next, &v)) {
			opts.host_mem_bytes = v;
			i++;
		} else if (!strcmp(a, "--sanitize")) {
			opts.sanitize = true;
		} else if (!strcmp(a, "--jail") && next) {
			jail_spec = next;
			i++;
		} else if (!strcmp(a, "--test-module") && next) {
			opts.test_entry = next;
			i++;
		} else {
			usage();
			return 2;
		}
	}
	if (probe_name)
		return probe(probe_name);
	if (!backend || c.sock < 0) {
		usage();
		return 2;
	}
	if (jail_spec && !kf_wk_jail_parse(jail_spec, &jail)) {
		usage();
		return 2;
	}
	/* Confinement before anything else happens; a worker that cannot have its sandbox says so in
	 * HELLO and runs nothing. */
	jail_st = kf_wk_jail_enter(&jail, jail_msg, sizeof(jail_msg));
	opts.backend = !strcmp(backend, "cuda") ? KF_BACKEND_CUDA : KF_BACKEND_CPU;
	c.buf = malloc(KF_PROTO_MSG_MAX);
	if (!c.buf) {
		fputs("kforge-worker: out of memory\n", stderr);
		return EXIT_PROTOCOL;
	}
	if (jail_st == KF_OK) {
		backend_init(backend, &opts, &ops, &hello);
		if (hello.status == KF_OK)
			jail_st = kf_wk_jail_lock(&jail, ops, c.sock, jail_msg, sizeof(jail_msg));
	}
	if (jail_st != KF_OK) {
		memset(&hello, 0, sizeof(hello));
		hello.pid = (uint32_t)getpid();
		hello.status = jail_st;
		snprintf(hello.msg, sizeof(hello.msg), "%s", jail_msg);
	}
	send_or_die(&c, kf_proto_hello_encode(c.buf, KF_PROTO_MSG_MAX, &hello));
	if (hello.status != KF_OK) {
		/* The parent reads the reason from HELLO; wait for its QUIT or its close. */
		size_t n;
		kf_proto_recv(c.sock, c.buf, KF_PROTO_MSG_MAX, &n, NULL, 0, NULL, NULL);
		free(c.buf);
		return EXIT_UNAVAILABLE;
	}
	rc = serve(&c, ops);
	/* No orderly teardown: the process ends here, and the kernel reclaims memory, threads and device
	 * contexts far faster (the cpu runtime's stack unmapping and thread joins took ~6x a fork+exec in
	 * bench_session, the exit alone 0.7x). stderr is unbuffered; nothing else needs flushing. */
	_exit(rc);
}
