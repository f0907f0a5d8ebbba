/* The kforge parent <-> kforge-worker wire protocol: fixed-layout binary messages, one per
 * SOCK_SEQPACKET datagram, each opening with a magic, a version, a type and its exact length.
 * libc-only: linked into both the trusted parent and the untrusted worker. Every decoder validates
 * lengths, counts, indices and NUL-termination; the parent treats every reply as hostile.
 *
 * Conversation (one worker per candidate evaluation):
 *   worker -> HELLO (status OK + device facts, or UNAVAILABLE + reason)
 *   parent -> SETUP (launch plan, buffer sizes) + SCM_RIGHTS [module image memfd, arena memfd]
 *   worker -> SETUP_OK | SETUP_ERR (status + reason)
 *   parent -> STEP;  worker -> RUNNING (the launches start: a death now is the kernel's) -> STEP_RESULT
 *   ... more STEPs ...
 *   parent -> QUIT (the worker exits at once, without teardown)
 *
 * A step in the worker: allocate the slot (first use, or REALLOC: new blocks before the old are freed),
 * POISON (guards get the canary, output and scratch data the poison), COPY_IN (so an explicit input
 * wins over poison), `reps` runs of the plan (FLUSH_L2 before each, a time each when TIME), COPY_OUT
 * when the runs succeeded. Device data addresses go back in addr[]. A run of the plan is its launches in
 * order, each preceded by the plan's zero operations for it (`// kforge:zero`: a byte fill of an
 * output, inout or scratch buffer's data, never of its guards).
 *
 * Arena layout for KF_STEP_COPY_OUT of buffer i at out_off (guard = KF_GUARD_BYTES):
 *   [out_off, +guard)                     front guard: canary bytes, byte k = byte (k % 4) of the
 *                                         little-endian canary
 *   [out_off + guard, +n_bytes)           the buffer's data
 *   [out_off + guard + n_bytes, +guard)   rear guard, same canary phase starting at its first byte
 * On the device every buffer is [guard | data rounded up to 256 bytes | guard]; the slack after the data
 * holds canary too, so a write just past n_bytes shows in the rear guard copied back.
 *
 * Library calls (baselines: core/baseline.h) travel in this protocol unchanged: a launch whose kernel
 * name is "@" + the op ("@cublas.gemm", never a directive's C identifier) with its operands as ordinary
 * arguments at the op's fixed positions (buffers for tensors, 8-byte scalars for the rest, 0 for an absent
 * tensor). The cuda worker prepares such launches at SETUP and runs them in STEP like kernels; a worker
 * whose backend runs no library calls answers SETUP_ERR with KF_ERR_UNAVAILABLE. */
#ifndef KF_PROTO_H
#define KF_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/kf.h"
#include "../sandbox.h"

#define KF_PROTO_MAGIC 0x5057464bu /* "KFWP" in little-endian byte order */
#define KF_PROTO_VERSION 2u
#define KF_PROTO_MSG_MAX (64 * 1024) /* bytes: the largest datagram either side sends or accepts */
#define KF_PROTO_TEXT 512            /* bytes of a reason / message field, NUL included */
#define KF_PROTO_DATA_ALIGN 256      /* bytes: device data is padded to this (cudaMalloc alignment) */

enum kf_msg_type {
	KF_MSG_HELLO = 1,
	KF_MSG_SETUP = 2,
	KF_MSG_SETUP_OK = 3,
	KF_MSG_SETUP_ERR = 4,
	KF_MSG_STEP = 5,
	KF_MSG_RUNNING = 6,
	KF_MSG_STEP_RESULT = 7,
	KF_MSG_QUIT = 8,
};

/* Header of every message; len is the whole datagram in bytes. */
struct kf_wire_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;
	uint32_t reserved;
};

/* ---- wire layouts (fixed widths, explicit padding: both binaries agree byte for byte) ------------ */

struct kf_wire_device {
	char backend[8];
	char name[128];
	char arch[16];
	int32_t cc_major, cc_minor, sm_count, max_threads_per_block;
	uint64_t global_mem_bytes, l2_bytes;
	int32_t max_block[3], max_grid[3];
	int32_t max_smem_per_block, max_smem_per_block_optin;
	int32_t sm_clock_khz, mem_clock_khz, mem_bus_width_bits, driver_version;
	uint32_t cupti, pad;
};

struct kf_wire_hello {
	struct kf_wire_hdr h;
	int32_t status;
	uint32_t pid;
	char msg[KF_PROTO_TEXT];
	struct kf_wire_device dev;
};

struct kf_wire_buffer {
	uint64_t n_bytes;
	uint32_t role;
	uint32_t is_scratch;
};

struct kf_wire_arg {
	uint32_t kind, buffer, size, pad;
	uint8_t bytes[8];
};

struct kf_wire_launch {
	char kernel[128];
	uint32_t grid[3], block[3];
	uint32_t smem_bytes, n_args;
	int32_t line;
	uint32_t pad;
	struct kf_wire_arg args[KF_PLAN_MAX_ARGS];
};

struct kf_wire_zero {
	uint32_t buffer, before, byte;
	int32_t line;
};

struct kf_wire_setup {
	struct kf_wire_hdr h;
	uint64_t image_len, arena_bytes;
	uint32_t guard_bytes, n_buffers, n_launches, n_zeros;
	struct kf_wire_buffer buffers[KF_MAX_BUFFERS];
	struct kf_wire_launch launches[KF_MAX_LAUNCHES];
	struct kf_wire_zero zeros[KF_MAX_ZEROS];
};

struct kf_wire_status {
	struct kf_wire_hdr h;
	int32_t status;
	uint32_t pad;
	char msg[KF_PROTO_TEXT];
};

struct kf_wire_step {
	struct kf_wire_hdr h;
	uint32_t flags, slot, reps, poison, canary;
	int32_t timeout_ms;
	int64_t in_off[KF_MAX_BUFFERS];
	int64_t out_off[KF_MAX_BUFFERS];
	struct kf_rt_cost_config cost; /* KF_STEP_COST */
};

struct kf_wire_result {
	struct kf_wire_hdr h;
	int32_t status;
	uint32_t worker_dead, n_times, kernels_seen;
	char msg[KF_PROTO_TEXT];
	char timing_source[16];
	uint64_t addr[KF_MAX_BUFFERS];
	struct kf_rt_san_finding san;
	uint64_t san_accesses, san_untracked_bytes;
	uint32_t n_cost, pad;
	struct kf_rt_cost cost[KF_MAX_LAUNCHES]; /* KF_STEP_COST: n_cost used */
	double time_ns[KF_MAX_REPS];
};

/* No implicit padding anywhere: both sides must agree on every byte. */
_Static_assert(sizeof(struct kf_wire_hdr) == 16, "hdr layout");
_Static_assert(sizeof(struct kf_wire_device) == 240, "device layout");
_Static_assert(sizeof(struct kf_wire_hello) == 16 + 8 + KF_PROTO_TEXT + 240, "hello layout");
_Static_assert(sizeof(struct kf_wire_launch) == 168 + 24 * KF_PLAN_MAX_ARGS, "launch layout");
_Static_assert(sizeof(struct kf_wire_setup) <= KF_PROTO_MSG_MAX, "setup fits a datagram");
_Static_assert(sizeof(struct kf_wire_result) <= KF_PROTO_MSG_MAX, "result fits a datagram");
_Static_assert(sizeof(struct kf_rt_san_access) == 64 && sizeof(struct kf_rt_san_finding) == 352,
	       "sanitizer finding layout");
_Static_assert(sizeof(struct kf_rt_cost_config) == 32 && sizeof(struct kf_rt_cost_site) == 48 &&
		   sizeof(struct kf_rt_cost) == 32 + 23 * 8 + KF_RT_COST_MAX_SITES * 48,
	       "cost counters layout");
_Static_assert(sizeof(struct kf_wire_step) == 16 + 24 + 16 * KF_MAX_BUFFERS + 32, "step layout");

/* ---- decoded forms --------------------------------------------------------------------------- */

/* HELLO: the backend's init result. */
struct kf_proto_hello {
	enum kf_status status; /* OK, or UNAVAILABLE / another code with msg */
	uint32_t pid;          /* the worker's own idea of its pid (informational) */
	char msg[KF_PROTO_TEXT];
	struct kf_device_info info; /* meaningful when status is OK */
};

struct kf_proto_buffer {
	uint64_t n_bytes;
	enum kf_role role;
	bool is_scratch;
};

/* SETUP: what the worker needs to run the plan. The two fds travel beside it (SCM_RIGHTS). */
struct kf_proto_setup {
	uint64_t image_len;   /* bytes of the module image in the image memfd */
	uint64_t arena_bytes; /* size of the arena memfd */
	uint32_t guard_bytes; /* KF_GUARD_BYTES */
	uint32_t n_buffers, n_launches, n_zeros;
	struct kf_proto_buffer buffers[KF_MAX_BUFFERS];
	struct kf_plan_launch launches[KF_MAX_LAUNCHES];
	struct kf_plan_zero zeros[KF_MAX_ZEROS]; /* before launch `before`, in plan order */
};

/* SETUP_OK / SETUP_ERR. */
struct kf_proto_status {
	enum kf_status status;
	char msg[KF_PROTO_TEXT];
};

/* ---- building and checking ------------------------------------------------------------------- */

/* Fills s from a plan: KF_ERR_LIMIT when it has more launches, buffers, zeros or arguments than the
 * protocol carries, KF_ERR_INVALID for an argument naming a missing buffer, a scalar that is not 4 or 8
 * bytes, or a zero of an input buffer, a missing buffer or launch, or a value over a byte. */
enum kf_status kf_proto_setup_from_plan(struct kf_proto_setup *s, const struct kf_plan *plan,
					uint64_t image_len, uint64_t arena_bytes, struct kf_err *err);

/* Checks a step against the session's buffers and arena: slot, reps, every offset (-1 or inside the
 * arena with the bytes it moves); a KF_STEP_COST step runs once (reps 1, neither TIME nor FLUSH_L2) with
 * a valid counter configuration. KF_ERR_INVALID/KF_ERR_RANGE with the reason. Both sides call it. */
enum kf_status kf_proto_step_check(const struct kf_step *st, const struct kf_proto_setup *s,
				   struct kf_err *err);

/* Bytes [guard | n_bytes | guard] that COPY_OUT writes to the arena for a buffer of n_bytes. */
uint64_t kf_proto_out_bytes(uint64_t n_bytes, uint32_t guard_bytes);

/* ---- encoders: write one message into buf (cap >= its size, aligned like malloc memory), return its
 * length, 0 if cap is short ----------------------------------------------------------------------- */

size_t kf_proto_hello_encode(void *buf, size_t cap, const struct kf_proto_hello *h);
size_t kf_proto_setup_encode(void *buf, size_t cap, const struct kf_proto_setup *s);
/* type: KF_MSG_SETUP_OK or KF_MSG_SETUP_ERR */
size_t kf_proto_status_encode(void *buf, size_t cap, enum kf_msg_type type, const struct kf_proto_status *st);
size_t kf_proto_step_encode(void *buf, size_t cap, const struct kf_step *st);
size_t kf_proto_result_encode(void *buf, size_t cap, const struct kf_step_result *r);
/* A message with no body: KF_MSG_QUIT, KF_MSG_RUNNING. */
size_t kf_proto_empty_encode(void *buf, size_t cap, enum kf_msg_type type);

/* ---- decoders: every one rejects a wrong magic, version, type or length with KF_ERR_PARSE; buf must be
 * aligned like malloc memory (setup and result are read in place) --------------------------------- */

/* Reads the header of a received datagram: its type when magic, version and len agree with n. */
enum kf_status kf_proto_type(const void *buf, size_t n, enum kf_msg_type *type, struct kf_err *err);
enum kf_status kf_proto_hello_decode(const void *buf, size_t n, struct kf_proto_hello *h, struct kf_err *err);
enum kf_status kf_proto_setup_decode(const void *buf, size_t n, struct kf_proto_setup *s, struct kf_err *err);
enum kf_status kf_proto_status_decode(const void *buf, size_t n, struct kf_proto_status *st,
				      struct kf_err *err);
enum kf_status kf_proto_step_decode(const void *buf, size_t n, struct kf_step *st, struct kf_err *err);
/* reps: the reps of the step this answers (n_times may not exceed it). The cost counters are checked
 * for consistency on their own (kf_proto_result_check_cost checks them against the plan). */
enum kf_status kf_proto_result_decode(const void *buf, size_t n, uint32_t reps, struct kf_step_result *r,
				      struct kf_err *err);
enum kf_status kf_proto_empty_decode(const void *buf, size_t n, enum kf_msg_type type, struct kf_err *err);
/* A decoded result's cost counters against the step (flags) and the plan they claim to count: counts
 * only for a KF_STEP_COST step, at most one per launch (every launch when the step succeeded), each
 * with its launch's grid, block and dynamic shared memory. KF_ERR_PARSE naming the field. */
enum kf_status kf_proto_result_check_cost(const struct kf_step_result *r, uint32_t flags,
					  const struct kf_proto_setup *s, struct kf_err *err);

/* ---- transport --------------------------------------------------------------------------------- */

/* Sends one datagram with up to 4 fds attached (SCM_RIGHTS); MSG_NOSIGNAL, EINTR retried.
 * KF_ERR_IO with the errno text; a closed peer is KF_ERR_CRASH. */
enum kf_status kf_proto_send(int sock, const void *buf, size_t n, const int *fds, size_t n_fds,
			     struct kf_err *err);

/* Receives one datagram into buf (cap bytes). fds (max_fds slots, may be 0) receive attached
 * descriptors, close-on-exec; descriptors beyond max_fds are closed and the message rejected. A
 * datagram longer than cap is KF_ERR_PARSE. The peer's end: KF_ERR_CRASH "connection closed" (n = 0).
 * EAGAIN on a non-blocking socket is KF_ERR_TIMEOUT. */
enum kf_status kf_proto_recv(int sock, void *buf, size_t cap, size_t *n, int *fds, size_t max_fds,
			     size_t *n_fds, struct kf_err *err);

#endif
