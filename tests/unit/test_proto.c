/* Unit tests of the parent <-> worker protocol (sandbox/common/proto.h): every message round-trips, and
 * every decoder rejects what a hostile or broken peer could send (truncation, bad counts, indices out
 * of range, missing NULs, non-finite times), and the seqpacket transport passes and polices fds. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/common/proto.h"
#include "testing.h"

static _Alignas(max_align_t) uint8_t buf[KF_PROTO_MSG_MAX];

static void set_hdr_len(void *b, size_t n)
{
	struct kf_wire_hdr *h = b;
	h->len = (uint32_t)n;
}

static void hello_roundtrip(void)
{
	struct kf_proto_hello h = {0}, d;
	struct kf_err err = KF_ERR_INIT;
	size_t n;

	h.status = KF_OK;
	h.pid = 1234;
	snprintf(h.info.backend, sizeof(h.info.backend), "cuda");
	snprintf(h.info.name, sizeof(h.info.name), "NVIDIA H200");
	snprintf(h.info.arch, sizeof(h.info.arch), "sm_90");
	h.info.cc_major = 9;
	h.info.sm_count = 132;
	h.info.global_mem_bytes = 150ull << 30;
	h.info.l2_bytes = 60ull << 20;
	h.info.max_block[2] = 64;
	h.info.max_grid[0] = 2147483647;
	h.info.max_smem_per_block_optin = 232448;
	h.info.driver_version = 13000;
	h.info.cupti = true;
	n = kf_proto_hello_encode(buf, sizeof(buf), &h);
	CHECK_EQ_INT(n, sizeof(struct kf_wire_hello));
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_OK);
	CHECK_STR(d.info.name, "NVIDIA H200");
	CHECK_STR(d.info.backend, "cuda");
	CHECK_STR(d.info.arch, "sm_90");
	CHECK_EQ_INT(d.info.sm_count, 132);
	CHECK_EQ_INT(d.info.global_mem_bytes, 150ull << 30);
	CHECK_EQ_INT(d.info.max_block[2], 64);
	CHECK_EQ_INT(d.info.max_grid[0], 2147483647);
	CHECK_EQ_INT(d.info.max_smem_per_block_optin, 232448);
	CHECK(d.info.cupti);
	CHECK_EQ_INT(d.pid, 1234);
	CHECK_EQ_INT(kf_proto_hello_encode(buf, n - 1, &h), 0); /* too small a buffer */
}

/* A hostile worker fills every string field to the brim: decoded strings end at the field size - 1. */
static void hello_missing_nul(void)
{
	struct kf_proto_hello h = {0}, d;
	struct kf_wire_hello *w = (struct kf_wire_hello *)buf;
	struct kf_err err = KF_ERR_INIT;
	size_t n;

	h.status = KF_ERR_UNAVAILABLE;
	n = kf_proto_hello_encode(buf, sizeof(buf), &h);
	memset(w->msg, 'm', sizeof(w->msg));
	memset(w->dev.name, 'n', sizeof(w->dev.name));
	memset(w->dev.backend, 'b', sizeof(w->dev.backend));
	memset(w->dev.arch, 'a', sizeof(w->dev.arch));
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_OK);
	CHECK_EQ_INT(strlen(d.msg), sizeof(d.msg) - 1);
	CHECK_EQ_INT(strlen(d.info.name), sizeof(d.info.name) - 1);
	CHECK_EQ_INT(strlen(d.info.backend), sizeof(d.info.backend) - 1);
	CHECK_EQ_INT(strlen(d.info.arch), sizeof(d.info.arch) - 1);
	CHECK_EQ_INT(d.status, KF_ERR_UNAVAILABLE);

	w->status = 999; /* not a status */
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
	w->status = -1;
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
	w->status = 0;
	w->dev.cupti = 7;
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
}

static void header_checks(void)
{
	struct kf_proto_hello h = {0}, d;
	struct kf_wire_hdr *w = (struct kf_wire_hdr *)buf;
	struct kf_err err = KF_ERR_INIT;
	enum kf_msg_type t;
	size_t n = kf_proto_hello_encode(buf, sizeof(buf), &h);

	CHECK_EQ_INT(kf_proto_type(buf, n, &t, &err), KF_OK);
	CHECK_EQ_INT(t, KF_MSG_HELLO);
	/* truncated: the datagram is shorter than the header says */
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n - 1, &d, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "header says");
	/* truncated and the header agreeing: still not a hello's size */
	set_hdr_len(buf, n - 8);
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n - 8, &d, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "expected");
	set_hdr_len(buf, n);
	CHECK_EQ_INT(kf_proto_type(buf, 7, &t, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(kf_proto_type(buf, 0, &t, &err), KF_ERR_PARSE);
	w->magic ^= 1;
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "magic");
	w->magic ^= 1;
	w->version = KF_PROTO_VERSION + 1;
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "version");
	w->version = KF_PROTO_VERSION;
	w->type = 99;
	CHECK_EQ_INT(kf_proto_type(buf, n, &t, &err), KF_ERR_PARSE);
	w->type = KF_MSG_STEP_RESULT; /* a valid type, but not what was expected */
	CHECK_EQ_INT(kf_proto_hello_decode(buf, n, &d, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "expected a 'hello'");

	n = kf_proto_empty_encode(buf, sizeof(buf), KF_MSG_QUIT);
	CHECK_EQ_INT(n, sizeof(struct kf_wire_hdr));
	CHECK_EQ_INT(kf_proto_empty_decode(buf, n, KF_MSG_QUIT, &err), KF_OK);
	CHECK_EQ_INT(kf_proto_empty_decode(buf, n, KF_MSG_RUNNING, &err), KF_ERR_PARSE);
}

static struct kf_plan_zero zeros[2] = {{2, 0, 0, 5}, {3, 1, 0xab, 6}};

/* A two-launch plan over three buffers: a(in), b(in), c(out), scratch s; c zeroed before the plan and
 * s set to 0xab before the second launch. */
static void make_plan(struct kf_plan *p, struct kf_plan_launch *l, struct kf_plan_buffer *b)
{
	memset(p, 0, sizeof(*p));
	memset(l, 0, 2 * sizeof(*l));
	memset(b, 0, 4 * sizeof(*b));
	for (int i = 0; i < 4; i++) {
		b[i].n_bytes = 4096 * (uint64_t)(i + 1);
		b[i].role = i < 2 ? KF_ROLE_INPUT : KF_ROLE_OUTPUT;
	}
	b[3].is_scratch = true;
	for (int k = 0; k < 2; k++) {
		snprintf(l[k].kernel, sizeof(l[k].kernel), "k%d", k);
		l[k].grid[0] = 16;
		l[k].grid[1] = l[k].grid[2] = 1;
		l[k].block[0] = 256;
		l[k].block[1] = l[k].block[2] = 1;
		l[k].line = 10 + k;
		l[k].n_args = 4;
		for (int a = 0; a < 3; a++) {
			l[k].args[a].kind = KF_PARG_BUFFER;
			l[k].args[a].buffer = (uint32_t)(a + k);
		}
		l[k].args[3].kind = KF_PARG_SCALAR;
		l[k].args[3].size = 4;
		l[k].args[3].bytes[0] = 0x2a;
	}
	p->n_launches = 2;
	p->launches = l;
	p->n_buffers = 4;
	p->buffers = b;
	zeros[0] = (struct kf_plan_zero){2, 0, 0, 5};
	zeros[1] = (struct kf_plan_zero){3, 1, 0xab, 6};
	p->n_zeros = 2;
	p->zeros = zeros;
}

static void setup_roundtrip(void)
{
	struct kf_plan p;
	struct kf_plan_launch l[2];
	struct kf_plan_buffer b[4];
	static struct kf_proto_setup s, d;
	struct kf_err err = KF_ERR_INIT;
	size_t n;

	make_plan(&p, l, b);
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_OK);
	n = kf_proto_setup_encode(buf, sizeof(buf), &s);
	CHECK_EQ_INT(n, sizeof(struct kf_wire_setup));
	CHECK_EQ_INT(kf_proto_setup_decode(buf, n, &d, &err), KF_OK);
	CHECK_EQ_INT(d.n_buffers, 4);
	CHECK_EQ_INT(d.n_launches, 2);
	CHECK_EQ_INT(d.image_len, 1000);
	CHECK_EQ_INT(d.arena_bytes, 1 << 20);
	CHECK_EQ_INT(d.guard_bytes, KF_GUARD_BYTES);
	CHECK_EQ_INT(d.buffers[3].n_bytes, 16384);
	CHECK(d.buffers[3].is_scratch);
	CHECK_EQ_INT(d.buffers[2].role, KF_ROLE_OUTPUT);
	CHECK_STR(d.launches[1].kernel, "k1");
	CHECK_EQ_INT(d.launches[1].args[2].buffer, 3);
	CHECK_EQ_INT(d.launches[1].args[3].kind, KF_PARG_SCALAR);
	CHECK_EQ_INT(d.launches[1].args[3].bytes[0], 0x2a);
	CHECK_EQ_INT(d.launches[0].block[0], 256);
	CHECK_EQ_INT(d.launches[1].line, 11);
	CHECK_EQ_INT(d.n_zeros, 2);
	CHECK(d.zeros[0].buffer == 2 && d.zeros[0].before == 0 && d.zeros[0].byte == 0 &&
	      d.zeros[0].line == 5);
	CHECK(d.zeros[1].buffer == 3 && d.zeros[1].before == 1 && d.zeros[1].byte == 0xab);

	/* plans the protocol cannot carry */
	zeros[0].buffer = 0; /* an input */
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "line 5: zero of buffer 0");
	zeros[0].buffer = 2;
	zeros[1].before = 2; /* no such launch */
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
	zeros[1].before = 1;
	zeros[1].byte = 256;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
	zeros[1].byte = 0xab;
	p.n_zeros = KF_MAX_ZEROS + 1;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_LIMIT);
	p.n_zeros = 2;
	l[0].args[1].buffer = 4;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
	l[0].args[1].buffer = 1;
	l[0].args[3].size = 2;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
	l[0].args[3].size = 4;
	p.n_buffers = KF_MAX_BUFFERS + 1;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_LIMIT);
	p.n_buffers = 4;
	p.n_launches = 0;
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_ERR_INVALID);
}

/* The worker's side: a SETUP with counts or indices that do not hold is refused, never indexed. */
static void setup_hostile(void)
{
	struct kf_plan p;
	struct kf_plan_launch l[2];
	struct kf_plan_buffer b[4];
	static struct kf_proto_setup s, d;
	struct kf_wire_setup *w = (struct kf_wire_setup *)buf;
	struct kf_err err = KF_ERR_INIT;
	size_t n;

	make_plan(&p, l, b);
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, 1 << 20, &err), KF_OK);
	n = kf_proto_setup_encode(buf, sizeof(buf), &s);
#define MUTATE(stmt, undo, want)                                                                             \
	do {                                                                                                 \
		stmt;                                                                                        \
		CHECKF(kf_proto_setup_decode(buf, n, &d, &err) == KF_ERR_PARSE, "%s accepted", #stmt);       \
		CHECK_CONTAINS(err.msg, want);                                                               \
		undo;                                                                                        \
	} while (0)
	MUTATE(w->n_buffers = KF_MAX_BUFFERS + 1, w->n_buffers = 4, "buffers");
	MUTATE(w->n_launches = 0, w->n_launches = 2, "launches");
	MUTATE(w->n_launches = KF_MAX_LAUNCHES + 1, w->n_launches = 2, "launches");
	MUTATE(w->guard_bytes = 16, w->guard_bytes = KF_GUARD_BYTES, "guard");
	MUTATE(w->image_len = 0, w->image_len = 1000, "image");
	MUTATE(w->buffers[1].role = 7, w->buffers[1].role = 0, "role");
	MUTATE(w->buffers[1].n_bytes = ~0ull, w->buffers[1].n_bytes = 8192, "bytes");
	MUTATE(w->launches[1].n_args = KF_PLAN_MAX_ARGS + 1, w->launches[1].n_args = 4, "arguments");
	MUTATE(w->launches[1].args[0].buffer = 4, w->launches[1].args[0].buffer = 1, "names buffer 4");
	/* an index that is valid for the array but not for this plan's 4 buffers */
	MUTATE(w->launches[0].args[2].buffer = KF_MAX_BUFFERS - 1, w->launches[0].args[2].buffer = 2,
	       "names buffer");
	MUTATE(w->launches[0].args[3].size = 5, w->launches[0].args[3].size = 4, "5-byte scalar");
	MUTATE(w->launches[0].args[3].kind = 9, w->launches[0].args[3].kind = KF_PARG_SCALAR, "kind");
	MUTATE(w->launches[0].grid[1] = 0, w->launches[0].grid[1] = 1, "zero grid");
	MUTATE(memset(w->launches[0].kernel, 'x', sizeof(w->launches[0].kernel)),
	       snprintf(w->launches[0].kernel, 128, "k0"), "NUL");
	MUTATE(w->launches[0].kernel[0] = 0, snprintf(w->launches[0].kernel, 128, "k0"), "kernel name");
	MUTATE(w->n_zeros = KF_MAX_ZEROS + 1, w->n_zeros = 2, "zero operations");
	MUTATE(w->zeros[0].buffer = 1, w->zeros[0].buffer = 2, "zero 0 fills buffer 1"); /* an input */
	MUTATE(w->zeros[0].buffer = 4, w->zeros[0].buffer = 2, "fills buffer 4");
	MUTATE(w->zeros[1].before = 2, w->zeros[1].before = 1, "before launch 2");
	MUTATE(w->zeros[1].byte = 300, w->zeros[1].byte = 0xab, "byte 300");
#undef MUTATE
	CHECK_EQ_INT(kf_proto_setup_decode(buf, n, &d, &err), KF_OK); /* every undo restored it */
	CHECK_EQ_INT(kf_proto_setup_decode(buf, n - 1, &d, &err), KF_ERR_PARSE);
	/* a misaligned buffer is refused rather than read in place */
	memmove(buf + 1, buf, n);
	CHECK_EQ_INT(kf_proto_setup_decode(buf + 1, n, &d, &err), KF_ERR_INTERNAL);
}

static void step_roundtrip_and_check(void)
{
	struct kf_plan p;
	struct kf_plan_launch l[2];
	struct kf_plan_buffer b[4];
	static struct kf_proto_setup s;
	struct kf_step st, d;
	struct kf_wire_step *w = (struct kf_wire_step *)buf;
	struct kf_err err = KF_ERR_INIT;
	size_t n;
	const uint64_t arena = 1 << 20;

	make_plan(&p, l, b);
	CHECK_EQ_INT(kf_proto_setup_from_plan(&s, &p, 1000, arena, &err), KF_OK);
	memset(&st, 0, sizeof(st));
	st.flags = KF_STEP_COPY_IN | KF_STEP_COPY_OUT | KF_STEP_POISON | KF_STEP_TIME;
	st.slot = 3;
	st.reps = 5;
	st.poison = 0x7fc00001;
	st.canary = 0xdeadbeef;
	st.timeout_ms = 1500;
	for (int i = 0; i < KF_MAX_BUFFERS; i++)
		st.in_off[i] = st.out_off[i] = -1;
	st.in_off[0] = 0;
	st.in_off[1] = 4096;
	st.out_off[2] = 65536;
	st.out_off[3] = 131072;
	n = kf_proto_step_encode(buf, sizeof(buf), &st);
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_OK);
	CHECK(memcmp(&st, &d, sizeof(st)) == 0);
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_OK);

	w->slot = KF_MAX_SLOTS;
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_ERR_PARSE);
	w->slot = 0;
	w->reps = 0; /* a timed step runs the plan at least once */
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_ERR_PARSE);
	w->flags &= ~(uint32_t)KF_STEP_TIME; /* an untimed one may only prepare or read back */
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_OK);
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_OK);
	d.flags |= KF_STEP_TIME;
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_ERR_RANGE);
	w->flags |= KF_STEP_TIME;
	w->reps = KF_MAX_REPS + 1;
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_ERR_PARSE);
	w->reps = 1;
	w->flags = 1u << 20;
	CHECK_EQ_INT(kf_proto_step_decode(buf, n, &d, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(kf_proto_step_decode(buf, n + 8, &d, &err), KF_ERR_PARSE);

	/* offsets against the arena: buffer 2 is 12 KiB, so [guard|data|guard] is 20 KiB */
	d = st;
	d.out_off[2] = (int64_t)(arena - 20480);
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_OK);
	d.out_off[2] += 1;
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_ERR_RANGE);
	CHECK_CONTAINS(err.msg, "buffer 2");
	d = st;
	d.in_off[1] = -2;
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_ERR_RANGE);
	d.in_off[1] = INT64_MAX;
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_ERR_RANGE);
	d.flags &= ~(uint32_t)KF_STEP_COPY_IN; /* offsets of a copy that does not happen are not read */
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_OK);
	d = st;
	d.in_off[10] = INT64_MIN; /* a buffer the plan does not have */
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_OK);
	d.slot = KF_MAX_SLOTS;
	CHECK_EQ_INT(kf_proto_step_check(&d, &s, &err), KF_ERR_RANGE);
	CHECK_EQ_INT(kf_proto_out_bytes(12288, KF_GUARD_BYTES), 12288 + 2 * KF_GUARD_BYTES);
}

static void result_roundtrip_and_hostile(void)
{
	static struct kf_step_result r, d;
	struct kf_wire_result *w = (struct kf_wire_result *)buf;
	struct kf_err err = KF_ERR_INIT;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.status = KF_ERR_RUNTIME;
	snprintf(r.msg, sizeof(r.msg), "CUDA_ERROR_ILLEGAL_ADDRESS in launch 1");
	r.worker_dead = true;
	r.n_times = 3;
	r.time_ns[0] = 1.5;
	r.time_ns[2] = 1e9;
	r.addr[5] = 0x7f0000001000ull;
	r.kernels_seen = 6;
	snprintf(r.timing_source, sizeof(r.timing_source), "cupti");
	n = kf_proto_result_encode(buf, sizeof(buf), &r);
	CHECK_EQ_INT(n, sizeof(struct kf_wire_result));
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_OK);
	CHECK_EQ_INT(d.status, KF_ERR_RUNTIME);
	CHECK(d.worker_dead);
	CHECK_EQ_INT(d.n_times, 3);
	CHECK_NEAR(d.time_ns[2], 1e9, 0);
	CHECK_EQ_INT(d.addr[5], 0x7f0000001000ull);
	CHECK_EQ_INT(d.kernels_seen, 6);
	CHECK_STR(d.timing_source, "cupti");
	CHECK_CONTAINS(d.msg, "ILLEGAL_ADDRESS");

	/* more times than reps asked for */
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 2, &d, &err), KF_ERR_PARSE);
	w->n_times = KF_MAX_REPS + 1;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, KF_MAX_REPS + 5, &d, &err), KF_ERR_PARSE);
	w->n_times = 3;
	w->time_ns[1] = NAN;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_ERR_PARSE);
	w->time_ns[1] = -1.0;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_ERR_PARSE);
	w->time_ns[1] = INFINITY;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_ERR_PARSE);
	w->time_ns[1] = 2.0;
	w->status = KF_STATUS_COUNT;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_ERR_PARSE);
	w->status = KF_OK;
	w->worker_dead = 2;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_ERR_PARSE);
	w->worker_dead = 0;
	memset(w->msg, 'z', sizeof(w->msg));
	memset(w->timing_source, 'q', sizeof(w->timing_source));
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_OK);
	CHECK_EQ_INT(strlen(d.msg), sizeof(d.msg) - 1);
	CHECK_EQ_INT(strlen(d.timing_source), sizeof(d.timing_source) - 1);
	/* a time past n_times is not copied (no stale data is believed) */
	w->time_ns[3] = 77;
	CHECK_EQ_INT(kf_proto_result_decode(buf, n, 3, &d, &err), KF_OK);
	CHECK_NEAR(d.time_ns[3], 0, 0);
	CHECK_EQ_INT(kf_proto_result_decode(buf, n - 1, 3, &d, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(kf_proto_result_decode(buf, 16, 3, &d, &err), KF_ERR_PARSE);
}

static void status_messages(void)
{
	struct kf_proto_status st = {KF_ERR_INVALID, "kernel 'k' not found"}, d;
	struct kf_wire_status *w = (struct kf_wire_status *)buf;
	struct kf_err err = KF_ERR_INIT;
	size_t n = kf_proto_status_encode(buf, sizeof(buf), KF_MSG_SETUP_ERR, &st);

	CHECK_EQ_INT(kf_proto_status_decode(buf, n, &d, &err), KF_OK);
	CHECK_EQ_INT(d.status, KF_ERR_INVALID);
	CHECK_STR(d.msg, "kernel 'k' not found");
	w->status = KF_OK; /* an error message that claims success */
	CHECK_EQ_INT(kf_proto_status_decode(buf, n, &d, &err), KF_ERR_PARSE);
	st.status = KF_ERR_INVALID;
	n = kf_proto_status_encode(buf, sizeof(buf), KF_MSG_SETUP_OK, &st);
	CHECK_EQ_INT(kf_proto_status_decode(buf, n, &d, &err), KF_ERR_PARSE);
	st.status = KF_OK;
	n = kf_proto_status_encode(buf, sizeof(buf), KF_MSG_SETUP_OK, &st);
	CHECK_EQ_INT(kf_proto_status_decode(buf, n, &d, &err), KF_OK);
	n = kf_proto_empty_encode(buf, sizeof(buf), KF_MSG_QUIT);
	CHECK_EQ_INT(kf_proto_status_decode(buf, n, &d, &err), KF_ERR_PARSE);
}

static int fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void transport(void)
{
	int sv[2], p[2], fds[2];
	size_t n, n_fds;
	struct kf_err err = KF_ERR_INIT;
	uint8_t small[64];
	char c = 0;

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	n = kf_proto_empty_encode(buf, sizeof(buf), KF_MSG_QUIT);
	CHECK_EQ_INT(kf_proto_send(sv[0], buf, n, p, 2, &err), KF_OK);
	CHECK_EQ_INT(kf_proto_recv(sv[1], buf, sizeof(buf), &n, fds, 2, &n_fds, &err), KF_OK);
	CHECK_EQ_INT(n, sizeof(struct kf_wire_hdr));
	CHECK_EQ_INT(n_fds, 2);
	if (n_fds == 2) {
		/* the received write end reaches the original read end */
		CHECK(write(fds[1], "x", 1) == 1);
		CHECK(read(p[0], &c, 1) == 1 && c == 'x');
		CHECK(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
		close(fds[0]);
		close(fds[1]);
	}

	/* descriptors the receiver did not ask for are closed and the message refused */
	CHECK_EQ_INT(kf_proto_send(sv[0], buf, n, p, 2, &err), KF_OK);
	fds[0] = fds[1] = -1;
	CHECK_EQ_INT(kf_proto_recv(sv[1], buf, sizeof(buf), &n, fds, 1, &n_fds, &err), KF_ERR_PARSE);
	CHECK_EQ_INT(n_fds, 0);
	CHECK(fds[0] < 0 || !fd_is_open(fds[0]));

	/* a datagram longer than the buffer is refused, not cut and believed */
	n = kf_proto_hello_encode(buf, sizeof(buf), &(struct kf_proto_hello){0});
	CHECK_EQ_INT(kf_proto_send(sv[0], buf, n, NULL, 0, &err), KF_OK);
	CHECK_EQ_INT(kf_proto_recv(sv[1], small, sizeof(small), &n, NULL, 0, NULL, &err), KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "longer");

	/* the peer's close is a crash, and sending to a closed peer does not raise SIGPIPE */
	close(sv[0]);
	CHECK_EQ_INT(kf_proto_recv(sv[1], buf, sizeof(buf), &n, NULL, 0, NULL, &err), KF_ERR_CRASH);
	CHECK_EQ_INT(kf_proto_send(sv[1], buf, 16, NULL, 0, &err), KF_ERR_CRASH);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

KF_TEST_MAIN(TEST(hello_roundtrip), TEST(hello_missing_nul), TEST(header_checks), TEST(setup_roundtrip),
	     TEST(setup_hostile), TEST(step_roundtrip_and_check), TEST(result_roundtrip_and_hostile),
	     TEST(status_messages), TEST(transport))
