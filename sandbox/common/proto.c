/* Encoding, decoding and validation of the parent <-> worker protocol (proto.h), and the seqpacket
 * transport with fd passing. The wire structs below are laid out with explicit widths and padding so
 * both binaries agree byte for byte; the decoders never trust a length, count, index or string. */
#include "proto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ALL_STEP_FLAGS                                                                                       \
	(KF_STEP_REALLOC | KF_STEP_COPY_IN | KF_STEP_POISON | KF_STEP_COPY_OUT | KF_STEP_FLUSH_L2 |          \
	 KF_STEP_TIME | KF_STEP_COST)

/* Largest buffer the protocol accepts (bytes): keeps every offset sum far from overflow. */
#define MAX_BUFFER_BYTES (1ull << 46)

static void hdr_init(struct kf_wire_hdr *h, enum kf_msg_type type, size_t len)
{
	h->magic = KF_PROTO_MAGIC;
	h->version = KF_PROTO_VERSION;
	h->type = (uint16_t)type;
	h->len = (uint32_t)len;
	h->reserved = 0;
}

/* Copies a string into a fixed field, always NUL-terminated, rest zeroed (no stale bytes leak). */
static void put_str(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;
	memset(dst, 0, cap);
	if (n)
		memcpy(dst, src, n);
}

/* Copies a received fixed field into dst, cut at the first NUL or at cap-1. */
static void get_str(char *dst, size_t cap, const char *src, size_t src_cap)
{
	size_t n = strnlen(src, src_cap);
	if (n > cap - 1)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool status_valid(int32_t s)
{
	return s >= 0 && s < KF_STATUS_COUNT;
}

enum kf_status kf_proto_type(const void *buf, size_t n, enum kf_msg_type *type, struct kf_err *err)
{
	struct kf_wire_hdr h;

	if (n < sizeof(h))
		return kf_err_set(err, KF_ERR_PARSE, "message of %zu bytes is shorter than its header", n);
	memcpy(&h, buf, sizeof(h));
	if (h.magic != KF_PROTO_MAGIC)
		return kf_err_set(err, KF_ERR_PARSE, "bad magic 0x%08x", (unsigned)h.magic);
	if (h.version != KF_PROTO_VERSION)
		return kf_err_set(err, KF_ERR_PARSE, "protocol version %u, expected %u", (unsigned)h.version,
				  KF_PROTO_VERSION);
	if (h.len != n)
		return kf_err_set(err, KF_ERR_PARSE, "header says %u bytes, datagram has %zu",
				  (unsigned)h.len, n);
	if (h.type < KF_MSG_HELLO || h.type > KF_MSG_QUIT)
		return kf_err_set(err, KF_ERR_PARSE, "unknown message type %u", (unsigned)h.type);
	*type = (enum kf_msg_type)h.type;
	return KF_OK;
}

static const char *type_name(enum kf_msg_type t)
{
	static const char *const names[] = {"?",    "hello",   "setup",       "setup_ok", "setup_err",
					    "step", "running", "step_result", "quit"};
	return (unsigned)t < KF_ARRAY_SIZE(names) ? names[t] : "?";
}

/* Checks the header and that the datagram is exactly `size` bytes of type `want`. */
static enum kf_status expect(const void *buf, size_t n, enum kf_msg_type want, size_t size,
			     struct kf_err *err)
{
	enum kf_msg_type t;
	enum kf_status st = kf_proto_type(buf, n, &t, err);
	if (st)
		return st;
	if (t != want)
		return kf_err_set(err, KF_ERR_PARSE, "expected a '%s' message, got '%s'", type_name(want),
				  type_name(t));
	if (n != size)
		return kf_err_set(err, KF_ERR_PARSE, "'%s' message of %zu bytes, expected %zu",
				  type_name(want), n, size);
	return KF_OK;
}

/* ---- hello ---------------------------------------------------------------------------------- */

size_t kf_proto_hello_encode(void *buf, size_t cap, const struct kf_proto_hello *h)
{
	struct kf_wire_hello w;
	const struct kf_device_info *d = &h->info;

	if (cap < sizeof(w))
		return 0;
	memset(&w, 0, sizeof(w));
	hdr_init(&w.h, KF_MSG_HELLO, sizeof(w));
	w.status = (int32_t)h->status;
	w.pid = h->pid;
	put_str(w.msg, sizeof(w.msg), h->msg);
	put_str(w.dev.backend, sizeof(w.dev.backend), d->backend);
	put_str(w.dev.name, sizeof(w.dev.name), d->name);
	put_str(w.dev.arch, sizeof(w.dev.arch), d->arch);
	w.dev.cc_major = d->cc_major;
	w.dev.cc_minor = d->cc_minor;
	w.dev.sm_count = d->sm_count;
	w.dev.max_threads_per_block = d->max_threads_per_block;
	w.dev.global_mem_bytes = d->global_mem_bytes;
	w.dev.l2_bytes = d->l2_bytes;
	for (int i = 0; i < 3; i++) {
		w.dev.max_block[i] = d->max_block[i];
		w.dev.max_grid[i] = d->max_grid[i];
	}
	w.dev.max_smem_per_block = d->max_smem_per_block;
	w.dev.max_smem_per_block_optin = d->max_smem_per_block_optin;
	w.dev.sm_clock_khz = d->sm_clock_khz;
	w.dev.mem_clock_khz = d->mem_clock_khz;
	w.dev.mem_bus_width_bits = d->mem_bus_width_bits;
	w.dev.driver_version = d->driver_version;
	w.dev.cupti = d->cupti ? 1 : 0;
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

enum kf_status kf_proto_hello_decode(const void *buf, size_t n, struct kf_proto_hello *h, struct kf_err *err)
{
	struct kf_wire_hello w;
	struct kf_device_info *d = &h->info;
	enum kf_status st = expect(buf, n, KF_MSG_HELLO, sizeof(w), err);

	if (st)
		return st;
	memcpy(&w, buf, sizeof(w));
	if (!status_valid(w.status))
		return kf_err_set(err, KF_ERR_PARSE, "hello: status %d out of range", (int)w.status);
	if (w.dev.cupti > 1)
		return kf_err_set(err, KF_ERR_PARSE, "hello: cupti flag %u is not 0 or 1",
				  (unsigned)w.dev.cupti);
	memset(h, 0, sizeof(*h));
	h->status = (enum kf_status)w.status;
	h->pid = w.pid;
	get_str(h->msg, sizeof(h->msg), w.msg, sizeof(w.msg));
	get_str(d->backend, sizeof(d->backend), w.dev.backend, sizeof(w.dev.backend));
	get_str(d->name, sizeof(d->name), w.dev.name, sizeof(w.dev.name));
	get_str(d->arch, sizeof(d->arch), w.dev.arch, sizeof(w.dev.arch));
	d->cc_major = w.dev.cc_major;
	d->cc_minor = w.dev.cc_minor;
	d->sm_count = w.dev.sm_count;
	d->max_threads_per_block = w.dev.max_threads_per_block;
	d->global_mem_bytes = w.dev.global_mem_bytes;
	d->l2_bytes = w.dev.l2_bytes;
	for (int i = 0; i < 3; i++) {
		d->max_block[i] = w.dev.max_block[i];
		d->max_grid[i] = w.dev.max_grid[i];
	}
	d->max_smem_per_block = w.dev.max_smem_per_block;
	d->max_smem_per_block_optin = w.dev.max_smem_per_block_optin;
	d->sm_clock_khz = w.dev.sm_clock_khz;
	d->mem_clock_khz = w.dev.mem_clock_khz;
	d->mem_bus_width_bits = w.dev.mem_bus_width_bits;
	d->driver_version = w.dev.driver_version;
	d->cupti = w.dev.cupti != 0;
	return KF_OK;
}

/* ---- setup ---------------------------------------------------------------------------------- */

/* A zero operation must fill an output, inout or scratch buffer before an existing launch. */
static bool zero_valid(const struct kf_plan_zero *z, uint32_t n_buffers, uint32_t n_launches,
		       const struct kf_proto_buffer *buffers)
{
	return z->buffer < n_buffers && z->before < n_launches && z->byte <= 255 &&
	       (buffers[z->buffer].role != KF_ROLE_INPUT || buffers[z->buffer].is_scratch);
}

enum kf_status kf_proto_setup_from_plan(struct kf_proto_setup *s, const struct kf_plan *plan,
					uint64_t image_len, uint64_t arena_bytes, struct kf_err *err)
{
	memset(s, 0, sizeof(*s));
	if (plan->n_launches == 0)
		return kf_err_set(err, KF_ERR_INVALID, "plan has no launches");
	if (plan->n_launches > KF_MAX_LAUNCHES)
		return kf_err_set(err, KF_ERR_LIMIT, "plan has %zu launches, at most %d are supported",
				  plan->n_launches, KF_MAX_LAUNCHES);
	if (plan->n_buffers > KF_MAX_BUFFERS)
		return kf_err_set(err, KF_ERR_LIMIT, "plan has %zu buffers, at most %d are supported",
				  plan->n_buffers, KF_MAX_BUFFERS);
	s->image_len = image_len;
	s->arena_bytes = arena_bytes;
	s->guard_bytes = KF_GUARD_BYTES;
	s->n_buffers = (uint32_t)plan->n_buffers;
	s->n_launches = (uint32_t)plan->n_launches;
	for (size_t i = 0; i < plan->n_buffers; i++) {
		const struct kf_plan_buffer *b = &plan->buffers[i];
		if (b->n_bytes > MAX_BUFFER_BYTES)
			return kf_err_set(err, KF_ERR_LIMIT, "buffer '%s' of %llu bytes is too large",
					  b->name, (unsigned long long)b->n_bytes);
		s->buffers[i].n_bytes = b->n_bytes;
		s->buffers[i].role = b->role;
		s->buffers[i].is_scratch = b->is_scratch;
	}
	for (size_t l = 0; l < plan->n_launches; l++) {
		const struct kf_plan_launch *pl = &plan->launches[l];
		if (pl->n_args > KF_PLAN_MAX_ARGS)
			return kf_err_set(err, KF_ERR_LIMIT, "line %d: %u arguments, at most %d", pl->line,
					  pl->n_args, KF_PLAN_MAX_ARGS);
		if (!memchr(pl->kernel, '\0', sizeof(pl->kernel)) || !pl->kernel[0])
			return kf_err_set(err, KF_ERR_INVALID, "line %d: bad kernel name", pl->line);
		for (uint32_t a = 0; a < pl->n_args; a++) {
			const struct kf_parg *pa = &pl->args[a];
			if (pa->kind == KF_PARG_BUFFER && pa->buffer >= plan->n_buffers)
				return kf_err_set(err, KF_ERR_INVALID,
						  "line %d: argument %u names buffer %u of %zu", pl->line, a,
						  pa->buffer, plan->n_buffers);
			if (pa->kind == KF_PARG_SCALAR && pa->size != 4 && pa->size != 8)
				return kf_err_set(err, KF_ERR_INVALID,
						  "line %d: argument %u is a %u-byte scalar", pl->line, a,
						  pa->size);
			if (pa->kind != KF_PARG_BUFFER && pa->kind != KF_PARG_SCALAR)
				return kf_err_set(err, KF_ERR_INVALID, "line %d: argument %u has kind %d",
						  pl->line, a, (int)pa->kind);
		}
		s->launches[l] = *pl;
	}
	if (plan->n_zeros > KF_MAX_ZEROS)
		return kf_err_set(err, KF_ERR_LIMIT, "plan has %zu zero operations, at most %d are supported",
				  plan->n_zeros, KF_MAX_ZEROS);
	s->n_zeros = (uint32_t)plan->n_zeros;
	for (size_t z = 0; z < plan->n_zeros; z++) {
		if (!zero_valid(&plan->zeros[z], s->n_buffers, s->n_launches, s->buffers))
			return kf_err_set(err, KF_ERR_INVALID,
					  "line %d: zero of buffer %u before launch %u with byte %u is not "
					  "allowed",
					  plan->zeros[z].line, plan->zeros[z].buffer, plan->zeros[z].before,
					  plan->zeros[z].byte);
		s->zeros[z] = plan->zeros[z];
	}
	return KF_OK;
}

size_t kf_proto_setup_encode(void *buf, size_t cap, const struct kf_proto_setup *s)
{
	static struct kf_wire_setup zero;
	struct kf_wire_setup *w = buf;

	if (cap < sizeof(*w) || (uintptr_t)buf % _Alignof(max_align_t) || s->n_buffers > KF_MAX_BUFFERS ||
	    s->n_launches > KF_MAX_LAUNCHES || s->n_zeros > KF_MAX_ZEROS)
		return 0;
	*w = zero;
	hdr_init(&w->h, KF_MSG_SETUP, sizeof(*w));
	w->image_len = s->image_len;
	w->arena_bytes = s->arena_bytes;
	w->guard_bytes = s->guard_bytes;
	w->n_buffers = s->n_buffers;
	w->n_launches = s->n_launches;
	w->n_zeros = s->n_zeros;
	for (uint32_t z = 0; z < s->n_zeros; z++) {
		w->zeros[z].buffer = s->zeros[z].buffer;
		w->zeros[z].before = s->zeros[z].before;
		w->zeros[z].byte = s->zeros[z].byte;
		w->zeros[z].line = s->zeros[z].line;
	}
	for (uint32_t i = 0; i < s->n_buffers; i++) {
		w->buffers[i].n_bytes = s->buffers[i].n_bytes;
		w->buffers[i].role = (uint32_t)s->buffers[i].role;
		w->buffers[i].is_scratch = s->buffers[i].is_scratch ? 1 : 0;
	}
	for (uint32_t l = 0; l < s->n_launches; l++) {
		const struct kf_plan_launch *pl = &s->launches[l];
		struct kf_wire_launch *wl = &w->launches[l];
		uint32_t na = pl->n_args <= KF_PLAN_MAX_ARGS ? pl->n_args : KF_PLAN_MAX_ARGS;
		put_str(wl->kernel, sizeof(wl->kernel), pl->kernel);
		memcpy(wl->grid, pl->grid, sizeof(wl->grid));
		memcpy(wl->block, pl->block, sizeof(wl->block));
		wl->smem_bytes = pl->smem_bytes;
		wl->n_args = na;
		wl->line = pl->line;
		for (uint32_t a = 0; a < na; a++) {
			wl->args[a].kind = (uint32_t)pl->args[a].kind;
			wl->args[a].buffer = pl->args[a].buffer;
			wl->args[a].size = pl->args[a].size;
			memcpy(wl->args[a].bytes, pl->args[a].bytes, 8);
		}
	}
	return sizeof(*w);
}

enum kf_status kf_proto_setup_decode(const void *buf, size_t n, struct kf_proto_setup *s, struct kf_err *err)
{
	const struct kf_wire_setup *w;
	enum kf_status st = expect(buf, n, KF_MSG_SETUP, sizeof(*w), err);

	if (st)
		return st;
	/* Read in place (the message is large): the caller's buffer must be aligned for any type. */
	if ((uintptr_t)buf % _Alignof(max_align_t))
		return kf_err_set(err, KF_ERR_INTERNAL, "setup: receive buffer is misaligned");
	w = buf;
	memset(s, 0, sizeof(*s));
	if (w->guard_bytes != KF_GUARD_BYTES)
		return kf_err_set(err, KF_ERR_PARSE, "setup: guard of %u bytes, expected %d",
				  (unsigned)w->guard_bytes, KF_GUARD_BYTES);
	if (w->image_len == 0 || w->image_len > MAX_BUFFER_BYTES)
		return kf_err_set(err, KF_ERR_PARSE, "setup: image of %llu bytes",
				  (unsigned long long)w->image_len);
	if (w->arena_bytes > MAX_BUFFER_BYTES)
		return kf_err_set(err, KF_ERR_PARSE, "setup: arena of %llu bytes",
				  (unsigned long long)w->arena_bytes);
	if (w->n_buffers > KF_MAX_BUFFERS)
		return kf_err_set(err, KF_ERR_PARSE, "setup: %u buffers, at most %d", (unsigned)w->n_buffers,
				  KF_MAX_BUFFERS);
	if (w->n_launches == 0 || w->n_launches > KF_MAX_LAUNCHES)
		return kf_err_set(err, KF_ERR_PARSE, "setup: %u launches, expected 1..%d",
				  (unsigned)w->n_launches, KF_MAX_LAUNCHES);
	if (w->n_zeros > KF_MAX_ZEROS)
		return kf_err_set(err, KF_ERR_PARSE, "setup: %u zero operations, at most %d",
				  (unsigned)w->n_zeros, KF_MAX_ZEROS);
	s->image_len = w->image_len;
	s->arena_bytes = w->arena_bytes;
	s->guard_bytes = w->guard_bytes;
	s->n_buffers = w->n_buffers;
	s->n_launches = w->n_launches;
	for (uint32_t i = 0; i < w->n_buffers; i++) {
		const struct kf_wire_buffer *wb = &w->buffers[i];
		if (wb->n_bytes > MAX_BUFFER_BYTES)
			return kf_err_set(err, KF_ERR_PARSE, "setup: buffer %u of %llu bytes", (unsigned)i,
					  (unsigned long long)wb->n_bytes);
		if (wb->role > KF_ROLE_INOUT || wb->is_scratch > 1)
			return kf_err_set(err, KF_ERR_PARSE, "setup: buffer %u has role %u scratch %u",
					  (unsigned)i, (unsigned)wb->role, (unsigned)wb->is_scratch);
		s->buffers[i].n_bytes = wb->n_bytes;
		s->buffers[i].role = (enum kf_role)wb->role;
		s->buffers[i].is_scratch = wb->is_scratch != 0;
	}
	for (uint32_t l = 0; l < w->n_launches; l++) {
		const struct kf_wire_launch *wl = &w->launches[l];
		struct kf_plan_launch *pl = &s->launches[l];
		if (!memchr(wl->kernel, '\0', sizeof(wl->kernel)) || !wl->kernel[0])
			return kf_err_set(err, KF_ERR_PARSE,
					  "setup: launch %u has no NUL-terminated kernel name", (unsigned)l);
		if (wl->n_args > KF_PLAN_MAX_ARGS)
			return kf_err_set(err, KF_ERR_PARSE, "setup: launch %u has %u arguments", (unsigned)l,
					  (unsigned)wl->n_args);
		for (int d = 0; d < 3; d++)
			if (wl->grid[d] == 0 || wl->block[d] == 0)
				return kf_err_set(err, KF_ERR_PARSE,
						  "setup: launch %u has a zero grid or block", (unsigned)l);
		memcpy(pl->kernel, wl->kernel, sizeof(pl->kernel));
		memcpy(pl->grid, wl->grid, sizeof(pl->grid));
		memcpy(pl->block, wl->block, sizeof(pl->block));
		pl->smem_bytes = wl->smem_bytes;
		pl->n_args = wl->n_args;
		pl->line = wl->line;
		for (uint32_t a = 0; a < wl->n_args; a++) {
			const struct kf_wire_arg *wa = &wl->args[a];
			struct kf_parg *pa = &pl->args[a];
			if (wa->kind == KF_PARG_BUFFER) {
				if (wa->buffer >= w->n_buffers)
					return kf_err_set(
					    err, KF_ERR_PARSE,
					    "setup: launch %u argument %u names buffer %u of %u", (unsigned)l,
					    (unsigned)a, (unsigned)wa->buffer, (unsigned)w->n_buffers);
				pa->kind = KF_PARG_BUFFER;
				pa->buffer = wa->buffer;
			} else if (wa->kind == KF_PARG_SCALAR) {
				if (wa->size != 4 && wa->size != 8)
					return kf_err_set(err, KF_ERR_PARSE,
							  "setup: launch %u argument %u is a %u-byte scalar",
							  (unsigned)l, (unsigned)a, (unsigned)wa->size);
				pa->kind = KF_PARG_SCALAR;
				pa->size = wa->size;
				memcpy(pa->bytes, wa->bytes, 8);
			} else {
				return kf_err_set(err, KF_ERR_PARSE,
						  "setup: launch %u argument %u has kind %u", (unsigned)l,
						  (unsigned)a, (unsigned)wa->kind);
			}
		}
	}
	s->n_zeros = w->n_zeros;
	for (uint32_t z = 0; z < w->n_zeros; z++) {
		const struct kf_wire_zero *wz = &w->zeros[z];
		struct kf_plan_zero pz = {wz->buffer, wz->before, wz->byte, wz->line};
		if (!zero_valid(&pz, s->n_buffers, s->n_launches, s->buffers))
			return kf_err_set(
			    err, KF_ERR_PARSE, "setup: zero %u fills buffer %u before launch %u with byte %u",
			    (unsigned)z, (unsigned)wz->buffer, (unsigned)wz->before, (unsigned)wz->byte);
		s->zeros[z] = pz;
	}
	return KF_OK;
}

/* ---- setup_ok / setup_err ------------------------------------------------------------------- */

size_t kf_proto_status_encode(void *buf, size_t cap, enum kf_msg_type type, const struct kf_proto_status *st)
{
	struct kf_wire_status w;

	if (cap < sizeof(w))
		return 0;
	memset(&w, 0, sizeof(w));
	hdr_init(&w.h, type, sizeof(w));
	w.status = (int32_t)st->status;
	put_str(w.msg, sizeof(w.msg), st->msg);
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

enum kf_status kf_proto_status_decode(const void *buf, size_t n, struct kf_proto_status *st,
				      struct kf_err *err)
{
	struct kf_wire_status w;
	enum kf_msg_type t;
	enum kf_status rc = kf_proto_type(buf, n, &t, err);

	if (rc)
		return rc;
	if (t != KF_MSG_SETUP_OK && t != KF_MSG_SETUP_ERR)
		return kf_err_set(err, KF_ERR_PARSE, "expected 'setup_ok' or 'setup_err', got '%s'",
				  type_name(t));
	if (n != sizeof(w))
		return kf_err_set(err, KF_ERR_PARSE, "'%s' message of %zu bytes, expected %zu", type_name(t),
				  n, sizeof(w));
	memcpy(&w, buf, sizeof(w));
	if (!status_valid(w.status))
		return kf_err_set(err, KF_ERR_PARSE, "%s: status %d out of range", type_name(t),
				  (int)w.status);
	if ((t == KF_MSG_SETUP_OK) != (w.status == KF_OK))
		return kf_err_set(err, KF_ERR_PARSE, "'%s' carries status '%s'", type_name(t),
				  kf_status_name((enum kf_status)w.status));
	st->status = (enum kf_status)w.status;
	get_str(st->msg, sizeof(st->msg), w.msg, sizeof(w.msg));
	return KF_OK;
}

/* ---- step ------------------------------------------------------------------------------------ */

size_t kf_proto_step_encode(void *buf, size_t cap, const struct kf_step *st)
{
	struct kf_wire_step w;

	if (cap < sizeof(w))
		return 0;
	memset(&w, 0, sizeof(w));
	hdr_init(&w.h, KF_MSG_STEP, sizeof(w));
	w.flags = st->flags;
	w.slot = st->slot;
	w.reps = st->reps;
	w.poison = st->poison;
	w.canary = st->canary;
	w.timeout_ms = st->timeout_ms;
	memcpy(w.in_off, st->in_off, sizeof(w.in_off));
	memcpy(w.out_off, st->out_off, sizeof(w.out_off));
	w.cost = st->cost;
	memcpy(buf, &w, sizeof(w));
	return sizeof(w);
}

enum kf_status kf_proto_step_decode(const void *buf, size_t n, struct kf_step *st, struct kf_err *err)
{
	struct kf_wire_step w;
	enum kf_status rc = expect(buf, n, KF_MSG_STEP, sizeof(w), err);

	if (rc)
		return rc;
	memcpy(&w, buf, sizeof(w));
	if (w.flags & ~(uint32_t)ALL_STEP_FLAGS)
		return kf_err_set(err, KF_ERR_PARSE, "step: unknown flags 0x%x", (unsigned)w.flags);
	if (w.slot >= KF_MAX_SLOTS)
		return kf_err_set(err, KF_ERR_PARSE, "step: slot %u of %d", (unsigned)w.slot, KF_MAX_SLOTS);
	/* 0 reps: a step that only prepares (poison, copy in) or reads back; a timed step runs the plan */
	if ((w.reps == 0 && (w.flags & KF_STEP_TIME)) || w.reps > KF_MAX_REPS)
		return kf_err_set(err, KF_ERR_PARSE, "step: %u reps, expected %d..%d", (unsigned)w.reps,
				  w.flags & KF_STEP_TIME ? 1 : 0, KF_MAX_REPS);
	memset(st, 0, sizeof(*st));
	st->flags = w.flags;
	st->slot = w.slot;
	st->reps = w.reps;
	st->poison = w.poison;
	st->canary = w.canary;
	st->timeout_ms = w.timeout_ms;
	memcpy(st->in_off, w.in_off, sizeof(st->in_off));
	memcpy(st->out_off, w.out_off, sizeof(st->out_off));
	st->cost = w.cost;
	return KF_OK;
}

uint64_t kf_proto_out_bytes(uint64_t n_bytes, uint32_t guard_bytes)
{
	return n_bytes + 2ull * guard_bytes;
}

enum kf_status kf_proto_step_check(const struct kf_step *st, const struct kf_proto_setup *s,
				   struct kf_err *err)
{
	if (st->flags & ~(uint32_t)ALL_STEP_FLAGS)
		return kf_err_set(err, KF_ERR_INVALID, "step has unknown flags 0x%x", (unsigned)st->flags);
	if (st->slot >= KF_MAX_SLOTS)
		return kf_err_set(err, KF_ERR_RANGE, "step slot %u is out of range 0..%d", (unsigned)st->slot,
				  KF_MAX_SLOTS - 1);
	if ((st->reps == 0 && (st->flags & KF_STEP_TIME)) || st->reps > KF_MAX_REPS)
		return kf_err_set(err, KF_ERR_RANGE, "step reps %u is out of range %d..%d",
				  (unsigned)st->reps, st->flags & KF_STEP_TIME ? 1 : 0, KF_MAX_REPS);
	if (st->flags & KF_STEP_COST) {
		const struct kf_rt_cost_config *c = &st->cost;
		if (st->reps != 1 || (st->flags & (KF_STEP_TIME | KF_STEP_FLUSH_L2)))
			return kf_err_set(err, KF_ERR_INVALID,
					  "a cost step runs the plan once, untimed (reps %u, flags 0x%x)",
					  (unsigned)st->reps, (unsigned)st->flags);
		if (c->enable > 1 || (c->l2_ways & (c->l2_ways - 1)) || c->l2_ways > 64 ||
		    c->l2_bytes > ((uint64_t)1 << 30) ||
		    (c->l2_bytes && c->l2_bytes < 32ull * (c->l2_ways ? c->l2_ways : 16)))
			return kf_err_set(err, KF_ERR_INVALID,
					  "cost step: l2_ways %u, l2_bytes %llu (ways a power of two <= 64, "
					  "bytes at most 1 GiB and at least one set)",
					  (unsigned)c->l2_ways, (unsigned long long)c->l2_bytes);
	}
	/* Offsets of buffers the plan does not have are never read. */
	for (uint32_t i = 0; i < s->n_buffers && i < KF_MAX_BUFFERS; i++) {
		uint64_t nb = s->buffers[i].n_bytes, ob = kf_proto_out_bytes(nb, s->guard_bytes);
		int64_t in = st->in_off[i], out = st->out_off[i];
		if ((st->flags & KF_STEP_COPY_IN) && in != -1 &&
		    (in < 0 || nb > s->arena_bytes || (uint64_t)in > s->arena_bytes - nb))
			return kf_err_set(err, KF_ERR_RANGE,
					  "buffer %u: input at arena offset %lld (+%llu bytes) is outside "
					  "the %llu-byte arena",
					  (unsigned)i, (long long)in, (unsigned long long)nb,
					  (unsigned long long)s->arena_bytes);
		if ((st->flags & KF_STEP_COPY_OUT) && out != -1 &&
		    (out < 0 || ob > s->arena_bytes || (uint64_t)out > s->arena_bytes - ob))
			return kf_err_set(err, KF_ERR_RANGE,
					  "buffer %u: output at arena offset %lld (+%llu bytes) is outside "
					  "the %llu-byte arena",
					  (unsigned)i, (long long)out, (unsigned long long)ob,
					  (unsigned long long)s->arena_bytes);
	}
	return KF_OK;
}

/* ---- step result ----------------------------------------------------------------------------- */

/* One launch's counts from a hostile worker: every relation the runtime's counting keeps must hold (an
 * instruction has at least one sector or wavefront and lane, ...), so a forged number that breaks one
 * is refused; what still passes is only ever a cost estimate. */
static enum kf_status cost_check(const struct kf_rt_cost *c, uint32_t i, struct kf_err *err)
{
	const char *bad = NULL;
	uint64_t nt = (uint64_t)c->block[0] * c->block[1] * c->block[2];
	uint64_t nb = (uint64_t)c->grid[0] * c->grid[1] * c->grid[2];
	if (nt == 0 || nt > 1024)
		bad = "block";
	else if (nb == 0 || c->blocks_total != nb)
		bad = "blocks_total";
	else if (c->blocks_run > c->blocks_total)
		bad = "blocks_run";
	else if (c->warps_run < c->blocks_run || c->warps_run > c->blocks_run * ((nt + 31) / 32))
		bad = "warps_run";
	else if (c->smem_bytes > KF_RT_DSMEM_MAX)
		bad = "smem_bytes";
	else if (c->n_sites > KF_RT_COST_MAX_SITES)
		bad = "n_sites";
	else if (c->gld_sectors < c->gld_requests || (c->gld_requests && !c->gld_bytes))
		bad = "gld_sectors";
	else if (c->gst_sectors < c->gst_requests || (c->gst_requests && !c->gst_bytes))
		bad = "gst_sectors";
	else if (c->sh_wavefronts < c->sh_requests)
		bad = "sh_wavefronts";
	else if (c->atom_lanes < c->atom_requests || c->atom_lanes > 32 * c->atom_requests)
		bad = "atom_lanes";
	else if (c->atom_serial < c->atom_requests || c->atom_serial > c->atom_lanes)
		bad = "atom_serial";
	else if (c->atom_hot > c->atom_lanes || (c->atom_lanes && !c->atom_hot))
		bad = "atom_hot";
	else if (c->warp_edges > c->thread_edges)
		bad = "warp_edges";
	if (bad)
		return kf_err_set(err, KF_ERR_PARSE, "step result: cost of launch %u: bad %s", (unsigned)i,
				  bad);
	for (uint32_t k = 0; k < c->n_sites; k++) {
		const struct kf_rt_cost_site *s = &c->sites[k];
		if (s->op < KF_RT_SAN_LOAD || s->op > KF_RT_SAN_ATOMIC)
			bad = "op";
		else if (s->region != KF_RT_SAN_GLOBAL && s->region != KF_RT_SAN_SHARED &&
			 s->region != KF_RT_SAN_DSHARED)
			bad = "region";
		else if (s->region == KF_RT_SAN_GLOBAL ? s->index < 0 || s->index >= KF_MAX_BUFFERS
						       : s->index != -1)
			bad = "index";
		else if (s->pad)
			bad = "pad";
		else if (!s->requests || s->units < s->requests || s->bytes < s->requests)
			bad = "units";
		else if (k && s->units > c->sites[k - 1].units)
			bad = "order";
		if (bad)
			return kf_err_set(err, KF_ERR_PARSE,
					  "step result: cost of launch %u: site %u: bad %s", (unsigned)i,
					  (unsigned)k, bad);
	}
	return KF_OK;
}

enum kf_status kf_proto_result_check_cost(const struct kf_step_result *r, uint32_t flags,
					  const struct kf_proto_setup *s, struct kf_err *err)
{
	if (!(flags & KF_STEP_COST)) {
		if (r->n_cost)
			return kf_err_set(err, KF_ERR_PARSE,
					  "step result: n_cost %u for a step that counts nothing",
					  (unsigned)r->n_cost);
		return KF_OK;
	}
	if (r->n_cost > s->n_launches || (r->status == KF_OK && r->n_cost != s->n_launches))
		return kf_err_set(err, KF_ERR_PARSE, "step result: n_cost %u for a plan of %u launches",
				  (unsigned)r->n_cost, (unsigned)s->n_launches);
	for (uint32_t i = 0; i < r->n_cost; i++) {
		const struct kf_rt_cost *c = &r->cost[i];
		const struct kf_plan_launch *l = &s->launches[i];
		if (memcmp(c->grid, l->grid, sizeof(c->grid)) ||
		    memcmp(c->block, l->block, sizeof(c->block)) || c->smem_bytes != l->smem_bytes)
			return kf_err_set(err, KF_ERR_PARSE,
					  "step result: cost of launch %u: grid, block or "
					  "smem_bytes differ from the plan's",
					  (unsigned)i);
		for (uint32_t k = 0; k < c->n_sites; k++)
			if (c->sites[k].region == KF_RT_SAN_GLOBAL &&
			    (uint32_t)c->sites[k].index >= s->n_buffers)
				return kf_err_set(
				    err, KF_ERR_PARSE,
				    "step result: cost of launch %u: site %u: index %d of %u buffers",
				    (unsigned)i, (unsigned)k, (int)c->sites[k].index, (unsigned)s->n_buffers);
	}
	return KF_OK;
}

size_t kf_proto_result_encode(void *buf, size_t cap, const struct kf_step_result *r)
{
	static struct kf_wire_result zero;
	struct kf_wire_result *w = buf;
	uint32_t nt = r->n_times <= KF_MAX_REPS ? r->n_times : KF_MAX_REPS;

	if (cap < sizeof(*w) || (uintptr_t)buf % _Alignof(max_align_t))
		return 0;
	*w = zero;
	hdr_init(&w->h, KF_MSG_STEP_RESULT, sizeof(*w));
	w->status = (int32_t)r->status;
	w->worker_dead = r->worker_dead ? 1 : 0;
	w->n_times = nt;
	w->kernels_seen = r->kernels_seen;
	put_str(w->msg, sizeof(w->msg), r->msg);
	put_str(w->timing_source, sizeof(w->timing_source), r->timing_source);
	memcpy(w->addr, r->addr, sizeof(w->addr));
	w->san = r->san;
	w->san.detail[sizeof(w->san.detail) - 1] = '\0';
	w->san_accesses = r->san_accesses;
	w->san_untracked_bytes = r->san_untracked_bytes;
	w->n_cost = r->n_cost <= KF_MAX_LAUNCHES ? r->n_cost : KF_MAX_LAUNCHES;
	memcpy(w->cost, r->cost, w->n_cost * sizeof(w->cost[0]));
	memcpy(w->time_ns, r->time_ns, nt * sizeof(double));
	return sizeof(*w);
}

enum kf_status kf_proto_result_decode(const void *buf, size_t n, uint32_t reps, struct kf_step_result *r,
				      struct kf_err *err)
{
	const struct kf_wire_result *w;
	enum kf_status st = expect(buf, n, KF_MSG_STEP_RESULT, sizeof(*w), err);

	if (st)
		return st;
	if ((uintptr_t)buf % _Alignof(max_align_t))
		return kf_err_set(err, KF_ERR_INTERNAL, "step result: receive buffer is misaligned");
	w = buf;
	if (!status_valid(w->status))
		return kf_err_set(err, KF_ERR_PARSE, "step result: status %d out of range", (int)w->status);
	if (w->worker_dead > 1)
		return kf_err_set(err, KF_ERR_PARSE, "step result: worker_dead %u is not 0 or 1",
				  (unsigned)w->worker_dead);
	if (w->n_times > reps || w->n_times > KF_MAX_REPS)
		return kf_err_set(err, KF_ERR_PARSE, "step result: %u times for %u reps",
				  (unsigned)w->n_times, (unsigned)reps);
	for (uint32_t i = 0; i < w->n_times; i++)
		if (!isfinite(w->time_ns[i]) || w->time_ns[i] < 0)
			return kf_err_set(err, KF_ERR_PARSE, "step result: time %u is %g ns", (unsigned)i,
					  w->time_ns[i]);
	if (w->san.kind >= KF_RT_SAN_KIND_COUNT || w->san.region >= KF_RT_SAN_REGION_COUNT)
		return kf_err_set(err, KF_ERR_PARSE, "step result: sanitizer finding kind %u region %u",
				  (unsigned)w->san.kind, (unsigned)w->san.region);
	if (w->n_cost > KF_MAX_LAUNCHES || w->pad)
		return kf_err_set(err, KF_ERR_PARSE, "step result: n_cost %u (at most %d)",
				  (unsigned)w->n_cost, KF_MAX_LAUNCHES);
	for (uint32_t i = 0; i < w->n_cost; i++) {
		st = cost_check(&w->cost[i], i, err);
		if (st)
			return st;
	}
	memset(r, 0, sizeof(*r));
	r->status = (enum kf_status)w->status;
	r->worker_dead = w->worker_dead != 0;
	r->n_cost = w->n_cost;
	memcpy(r->cost, w->cost, w->n_cost * sizeof(r->cost[0]));
	r->san = w->san;
	r->san.detail[sizeof(r->san.detail) - 1] = '\0';
	for (size_t i = 0; r->san.detail[i]; i++) /* outside text */
		if ((unsigned char)r->san.detail[i] < 0x20 || (unsigned char)r->san.detail[i] >= 0x7f)
			r->san.detail[i] = '?';
	r->san_accesses = w->san_accesses;
	r->san_untracked_bytes = w->san_untracked_bytes;
	r->n_times = w->n_times;
	r->kernels_seen = w->kernels_seen;
	get_str(r->msg, sizeof(r->msg), w->msg, sizeof(w->msg));
	get_str(r->timing_source, sizeof(r->timing_source), w->timing_source, sizeof(w->timing_source));
	memcpy(r->addr, w->addr, sizeof(r->addr));
	memcpy(r->time_ns, w->time_ns, w->n_times * sizeof(double));
	return KF_OK;
}

/* ---- empty messages --------------------------------------------------------------------------- */

size_t kf_proto_empty_encode(void *buf, size_t cap, enum kf_msg_type type)
{
	struct kf_wire_hdr h;
	if (cap < sizeof(h))
		return 0;
	hdr_init(&h, type, sizeof(h));
	memcpy(buf, &h, sizeof(h));
	return sizeof(h);
}

enum kf_status kf_proto_empty_decode(const void *buf, size_t n, enum kf_msg_type type, struct kf_err *err)
{
	return expect(buf, n, type, sizeof(struct kf_wire_hdr), err);
}

/* ---- transport --------------------------------------------------------------------------------- */

#define MAX_FDS 4

enum kf_status kf_proto_send(int sock, const void *buf, size_t n, const int *fds, size_t n_fds,
			     struct kf_err *err)
{
	union {
		char raw[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {(void *)buf, n};
	struct msghdr mh = {0};
	ssize_t w;

	if (n_fds > MAX_FDS)
		return kf_err_set(err, KF_ERR_INTERNAL, "cannot send %zu descriptors", n_fds);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (n_fds) {
		struct cmsghdr *c;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.raw;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	do
		w = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		int e = errno;
		return kf_err_set(err,
				  e == EPIPE || e == ECONNRESET || e == ENOTCONN ? KF_ERR_CRASH : KF_ERR_IO,
				  "cannot send to the peer: %s", strerror(e));
	}
	if ((size_t)w != n)
		return kf_err_set(err, KF_ERR_IO, "short send: %zd of %zu bytes", w, n);
	return KF_OK;
}

enum kf_status kf_proto_recv(int sock, void *buf, size_t cap, size_t *n, int *fds, size_t max_fds,
			     size_t *n_fds, struct kf_err *err)
{
	union {
		char raw[CMSG_SPACE(sizeof(int) * MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, cap};
	struct msghdr mh = {0};
	struct cmsghdr *c;
	size_t got = 0;
	bool extra = false;
	ssize_t r;

	*n = 0;
	if (n_fds)
		*n_fds = 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.raw;
	mh.msg_controllen = sizeof(ctl.raw);
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int e = errno;
		if (e == EAGAIN || e == EWOULDBLOCK)
			return kf_err_set(err, KF_ERR_TIMEOUT, "no message yet");
		return kf_err_set(err, e == ECONNRESET ? KF_ERR_CRASH : KF_ERR_IO,
				  "cannot receive from the peer: %s", strerror(e));
	}
	/* Collect (or close) every descriptor that came along, whatever else is wrong. */
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && got < max_fds)
				fds[got++] = fd;
			else {
				close(fd);
				extra = true;
			}
		}
	}
	if (n_fds)
		*n_fds = got;
	if (r == 0 && !got)
		return kf_err_set(err, KF_ERR_CRASH, "connection closed");
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || extra) {
		for (size_t i = 0; i < got; i++)
			close(fds[i]);
		if (n_fds)
			*n_fds = 0;
		if (mh.msg_flags & MSG_TRUNC)
			return kf_err_set(err, KF_ERR_PARSE, "message longer than %zu bytes", cap);
		if (mh.msg_flags & MSG_CTRUNC)
			return kf_err_set(err, KF_ERR_PARSE, "descriptor list truncated");
		return kf_err_set(err, KF_ERR_PARSE, "message carries more than %zu descriptors", max_fds);
	}
	*n = (size_t)r;
	return KF_OK;
}
