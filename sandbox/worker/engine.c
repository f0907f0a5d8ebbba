/* The worker's step engine: allocation slots of guarded buffers, poison and canary fills, copies
 * between the shared arena and the device, the plan's zero operations, and the timed repetitions of the
 * plan. Backend-neutral: everything goes through struct kf_backend_ops (device addresses are plain
 * uint64_t). */
#include "worker.h"

#include "../../core/baseline.h" /* KF_LIBCALL_PREFIX */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define G ((uint64_t)KF_GUARD_BYTES)

_Static_assert(KF_PLAN_MAX_ARGS <= 64, "kf_be_launch.buffer_mask has a bit per argument");

static uint64_t padded(uint64_t n_bytes)
{
	return (n_bytes + KF_PROTO_DATA_ALIGN - 1) / KF_PROTO_DATA_ALIGN * KF_PROTO_DATA_ALIGN;
}

static uint64_t alloc_bytes(uint64_t n_bytes)
{
	return G + padded(n_bytes) + G;
}

void kf_wk_init(struct kf_wk *wk, const struct kf_backend_ops *ops)
{
	memset(wk, 0, sizeof(*wk));
	wk->ops = ops;
	wk->image_fd = -1;
	wk->arena_fd = -1;
}

static void slot_free(struct kf_wk *wk, struct kf_wk_slot *sl)
{
	if (!sl->live)
		return;
	for (uint32_t i = 0; i < wk->setup.n_buffers; i++)
		if (sl->base[i])
			wk->ops->free(sl->base[i]);
	memset(sl, 0, sizeof(*sl));
}

void kf_wk_release(struct kf_wk *wk)
{
	for (int s = 0; s < KF_MAX_SLOTS; s++)
		slot_free(wk, &wk->slots[s]);
	if (wk->image)
		munmap(wk->image, wk->setup.image_len);
	if (wk->arena)
		munmap(wk->arena, wk->setup.arena_bytes);
	if (wk->image_fd >= 0)
		close(wk->image_fd);
	if (wk->arena_fd >= 0)
		close(wk->arena_fd);
	wk->image = wk->arena = NULL;
	wk->image_fd = wk->arena_fd = -1;
	wk->ready = false;
}

/* Maps `len` bytes of fd after checking the file really holds them (a short memfd would SIGBUS). */
static enum kf_status map_fd(int fd, uint64_t len, int prot, int flags, uint8_t **out, const char *what,
			     char *msg, size_t msg_len)
{
	struct stat sb;
	void *p;

	if (fstat(fd, &sb) < 0) {
		snprintf(msg, msg_len, "cannot stat the %s: %s", what, strerror(errno));
		return KF_ERR_IO;
	}
	if (sb.st_size < 0 || (uint64_t)sb.st_size < len) {
		snprintf(msg, msg_len, "the %s holds %lld bytes, setup says %llu", what,
			 (long long)sb.st_size, (unsigned long long)len);
		return KF_ERR_INVALID;
	}
	if (len == 0) {
		*out = NULL;
		return KF_OK;
	}
	p = mmap(NULL, len, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(msg, msg_len, "cannot map the %s (%llu bytes): %s", what, (unsigned long long)len,
			 strerror(errno));
		return KF_ERR_NOMEM;
	}
	*out = p;
	return KF_OK;
}

enum kf_status kf_wk_setup(struct kf_wk *wk, const struct kf_proto_setup *s, int image_fd, int arena_fd,
			   char *msg, size_t msg_len)
{
	const char *names[KF_MAX_LAUNCHES];
	size_t n_names = 0;
	enum kf_status st;

	wk->setup = *s;
	wk->image_fd = image_fd;
	wk->arena_fd = arena_fd;
	st = map_fd(image_fd, s->image_len, PROT_READ, MAP_PRIVATE, &wk->image, "module image", msg, msg_len);
	if (st)
		return st;
	st = map_fd(arena_fd, s->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, &wk->arena, "arena", msg,
		    msg_len);
	if (st)
		return st;

	/* Library calls need a backend that runs them: the cpu backend has no cuBLAS or cuDNN. */
	for (uint32_t l = 0; l < s->n_launches; l++)
		if (wk->setup.launches[l].kernel[0] == KF_LIBCALL_PREFIX && !wk->ops->prepare) {
			snprintf(
			    msg, msg_len,
			    "'%s' is a library call: the %s backend runs none (cuBLAS and cuDNN need the "
			    "cuda backend)",
			    wk->setup.launches[l].kernel + 1, wk->ops->name);
			return KF_ERR_UNAVAILABLE;
		}

	/* Each kernel name once, in plan order. */
	for (uint32_t l = 0; l < s->n_launches; l++) {
		bool seen = false;
		for (size_t k = 0; k < n_names; k++)
			seen = seen || !strcmp(names[k], wk->setup.launches[l].kernel);
		if (!seen)
			names[n_names++] = wk->setup.launches[l].kernel;
	}
	st = wk->ops->load(wk->image, s->image_len, image_fd, names, n_names, msg, msg_len);
	if (st)
		return st;

	for (uint32_t l = 0; l < s->n_launches; l++) {
		const struct kf_plan_launch *pl = &wk->setup.launches[l];
		struct kf_be_launch *bl = &wk->launches[l];
		bl->kernel = pl->kernel;
		memcpy(bl->grid, pl->grid, sizeof(bl->grid));
		memcpy(bl->block, pl->block, sizeof(bl->block));
		bl->smem_bytes = pl->smem_bytes;
		bl->line = pl->line;
		bl->args = wk->argp[l];
		bl->n_args = pl->n_args;
		bl->buffer_mask = 0;
		for (uint32_t a = 0; a < pl->n_args; a++) {
			wk->argval[l][a] = 0;
			if (pl->args[a].kind == KF_PARG_BUFFER)
				bl->buffer_mask |= (uint64_t)1 << a;
			/* A scalar's bytes sit at the start of its 8-byte cell, as the kernel reads them. */
			if (pl->args[a].kind == KF_PARG_SCALAR)
				memcpy(&wk->argval[l][a], pl->args[a].bytes, pl->args[a].size);
			wk->argp[l][a] = &wk->argval[l][a];
		}
	}
	if (wk->ops->prepare) {
		bool any = false;
		for (uint32_t l = 0; l < s->n_launches; l++)
			any = any || wk->launches[l].kernel[0] == KF_LIBCALL_PREFIX;
		if (any && (st = wk->ops->prepare(wk->launches, s->n_launches, msg, msg_len)))
			return st;
	}
	wk->ready = true;
	return KF_OK;
}

/* Allocates a fresh set of buffers for a slot. The old set stays allocated until the new one exists,
 * so every address changes (a kernel that cached a pointer from a previous step is caught). */
static enum kf_status slot_alloc(struct kf_wk *wk, struct kf_wk_slot *sl, char *msg, size_t msg_len)
{
	struct kf_wk_slot fresh = {.live = true};
	enum kf_status st;

	for (uint32_t i = 0; i < wk->setup.n_buffers; i++) {
		st = wk->ops->alloc(alloc_bytes(wk->setup.buffers[i].n_bytes), &fresh.base[i], msg, msg_len);
		if (st) {
			for (uint32_t j = 0; j < i; j++)
				wk->ops->free(fresh.base[j]);
			return st;
		}
	}
	slot_free(wk, sl);
	*sl = fresh;
	return KF_OK;
}

/* Fills n bytes at dst with the little-endian bytes of pat, byte k of the region being byte k % 4 of
 * the pattern, whatever dst's alignment: fill32 gets only 4-byte-aligned runs of whole words; the
 * ragged ends go through htod. */
static enum kf_status fill_bytes(struct kf_wk *wk, uint64_t dst, uint32_t pat, uint64_t n, char *msg,
				 size_t msg_len)
{
	uint8_t pb[4], tmp[4];
	uint64_t head = (4 - dst % 4) % 4, mid, tail;
	enum kf_status st;

	for (int k = 0; k < 4; k++)
		pb[k] = (uint8_t)(pat >> (8 * k));
	if (head > n)
		head = n;
	mid = (n - head) & ~(uint64_t)3;
	tail = n - head - mid;
	if (head) {
		for (uint64_t j = 0; j < head; j++)
			tmp[j] = pb[j % 4];
		st = wk->ops->htod(dst, tmp, head, msg, msg_len);
		if (st)
			return st;
	}
	if (mid) {
		uint32_t rot = 0;
		for (int j = 0; j < 4; j++)
			rot |= (uint32_t)pb[(head + (uint64_t)j) % 4] << (8 * j);
		st = wk->ops->fill32(dst + head, rot, mid, msg, msg_len);
		if (st)
			return st;
	}
	if (tail) {
		for (uint64_t j = 0; j < tail; j++)
			tmp[j] = pb[(head + mid + j) % 4];
		st = wk->ops->htod(dst + head + mid, tmp, tail, msg, msg_len);
		if (st)
			return st;
	}
	return KF_OK;
}

static enum kf_status poison(struct kf_wk *wk, const struct kf_wk_slot *sl, const struct kf_step *stp,
			     char *msg, size_t msg_len)
{
	for (uint32_t i = 0; i < wk->setup.n_buffers; i++) {
		const struct kf_proto_buffer *b = &wk->setup.buffers[i];
		uint64_t base = sl->base[i], nb = b->n_bytes;
		enum kf_status st = fill_bytes(wk, base, stp->canary, G, msg, msg_len);
		/* The rear canary covers the 256-byte padding too: a write just past the data shows. */
		if (!st)
			st = fill_bytes(wk, base + G + nb, stp->canary, padded(nb) - nb + G, msg, msg_len);
		if (!st && (b->role == KF_ROLE_OUTPUT || b->is_scratch))
			st = fill_bytes(wk, base + G, stp->poison, nb, msg, msg_len);
		if (st)
			return st;
	}
	return KF_OK;
}

static bool zero_before(const struct kf_proto_setup *s, uint32_t l)
{
	for (uint32_t z = 0; z < s->n_zeros; z++)
		if (s->zeros[z].before == l)
			return true;
	return false;
}

/* One run of the plan: its launches in order, each preceded by the zero operations placed before it
 * (`// kforge:zero`: every byte of the buffer's data set, as a host cudaMemset would; the guards keep
 * their canary). Launches with no zero between them go to the backend in one call; the run's time and
 * kernel count are the sums over those calls (a memset is not a kernel: no clock counts it). */
static enum kf_status run_plan(struct kf_wk *wk, const struct kf_wk_slot *sl, bool want_time,
			       struct kf_be_run_stats *stats, bool *fatal, char *msg, size_t msg_len)
{
	const struct kf_proto_setup *s = &wk->setup;
	struct kf_rt_san_finding *san = stats->san;
	struct kf_rt_cost *cost = stats->cost;
	uint32_t l = 0;

	memset(stats, 0, sizeof(*stats));
	stats->san = san;
	stats->cost = cost;
	while (l < s->n_launches) {
		struct kf_be_run_stats part;
		uint32_t end = l + 1;
		enum kf_status st;
		for (uint32_t z = 0; z < s->n_zeros; z++) {
			const struct kf_plan_zero *pz = &s->zeros[z];
			if (pz->before != l)
				continue;
			st = fill_bytes(wk, sl->base[pz->buffer] + G, pz->byte * 0x01010101u,
					s->buffers[pz->buffer].n_bytes, msg, msg_len);
			if (!st && wk->ops->host_wrote)
				wk->ops->host_wrote(sl->base[pz->buffer] + G, s->buffers[pz->buffer].n_bytes);
			if (st) {
				char m[KF_PROTO_TEXT];
				snprintf(m, sizeof(m), "line %d: cannot zero buffer %u: %s", (int)pz->line,
					 (unsigned)pz->buffer, msg);
				snprintf(msg, msg_len, "%s", m);
				return st;
			}
		}
		while (end < s->n_launches && !zero_before(s, end))
			end++;
		memset(&part, 0, sizeof(part));
		part.san = san;
		part.launch_base = l;
		part.cost = cost ? cost + l : NULL;
		st = wk->ops->run(&wk->launches[l], end - l, want_time, &part, fatal, msg, msg_len);
		if (cost && part.n_cost)
			stats->n_cost = l + part.n_cost;
		stats->san_accesses += part.san_accesses;
		stats->san_untracked_bytes = part.san_untracked_bytes;
		if (st)
			return st;
		stats->time_ns += part.time_ns;
		stats->kernels_seen += part.kernels_seen;
		memcpy(stats->timing_source, part.timing_source, sizeof(stats->timing_source));
		l = end;
	}
	return KF_OK;
}

static void fail(struct kf_step_result *res, enum kf_status st, const char *what, const char *msg)
{
	res->status = st;
	snprintf(res->msg, sizeof(res->msg), "%s%s%s", what, msg[0] ? ": " : "", msg);
}

void kf_wk_step(struct kf_wk *wk, const struct kf_step *stp, struct kf_step_result *res,
		void (*running)(void *ctx), void *ctx)
{
	const struct kf_proto_setup *s = &wk->setup;
	struct kf_wk_slot *sl;
	struct kf_err err = KF_ERR_INIT;
	char msg[KF_PROTO_TEXT] = "";
	enum kf_status st;
	bool fatal = false;

	memset(res, 0, sizeof(*res));
	if (!wk->ready) {
		fail(res, KF_ERR_INVALID, "step before setup", "");
		return;
	}
	st = kf_proto_step_check(stp, s, &err);
	if (st) {
		fail(res, KF_ERR_INVALID, "bad step", err.msg);
		return;
	}
	sl = &wk->slots[stp->slot];
	if (!sl->live || (stp->flags & KF_STEP_REALLOC)) {
		st = slot_alloc(wk, sl, msg, sizeof(msg));
		if (st) {
			fail(res, st, "cannot allocate the buffers", msg);
			return;
		}
	}
	for (uint32_t i = 0; i < s->n_buffers; i++)
		res->addr[i] = sl->base[i] + G;

	if (stp->flags & KF_STEP_POISON) {
		st = poison(wk, sl, stp, msg, sizeof(msg));
		if (st) {
			fail(res, st, "cannot poison the buffers", msg);
			return;
		}
	}
	if (stp->flags & KF_STEP_COPY_IN) {
		for (uint32_t i = 0; i < s->n_buffers; i++) {
			if (stp->in_off[i] == -1 || s->buffers[i].n_bytes == 0)
				continue;
			st = wk->ops->htod(sl->base[i] + G, wk->arena + stp->in_off[i], s->buffers[i].n_bytes,
					   msg, sizeof(msg));
			if (st) {
				char what[64];
				snprintf(what, sizeof(what), "cannot copy buffer %u in", (unsigned)i);
				fail(res, st, what, msg);
				return;
			}
		}
	}
	for (uint32_t l = 0; l < s->n_launches; l++)
		for (uint32_t a = 0; a < s->launches[l].n_args; a++)
			if (s->launches[l].args[a].kind == KF_PARG_BUFFER)
				wk->argval[l][a] = sl->base[s->launches[l].args[a].buffer] + G;

	if (wk->ops->begin_step) {
		struct kf_be_buffer bb[KF_MAX_BUFFERS];
		for (uint32_t i = 0; i < s->n_buffers; i++) {
			bb[i].lo = sl->base[i];
			bb[i].data = sl->base[i] + G;
			bb[i].n_bytes = s->buffers[i].n_bytes;
			bb[i].hi = sl->base[i] + alloc_bytes(s->buffers[i].n_bytes);
			bb[i].role = s->buffers[i].role;
			bb[i].is_scratch = s->buffers[i].is_scratch;
		}
		st = wk->ops->begin_step(bb, s->n_buffers, (stp->flags & KF_STEP_POISON) ? stp->poison : 0,
					 msg, sizeof(msg));
		if (st) {
			fail(res, st, "cannot prepare the run", msg);
			return;
		}
	}
	bool cost = (stp->flags & KF_STEP_COST) != 0;
	if (cost) {
		/* one run with the counters on (kf_proto_step_check: reps 1, nothing timed) */
		if (!wk->ops->cost_begin) {
			snprintf(msg, sizeof(msg), "the %s backend has no cost counters", wk->ops->name);
			fail(res, KF_ERR_UNSUPPORTED, "cost step", msg);
			return;
		}
		st = wk->ops->cost_begin(&stp->cost, msg, sizeof(msg));
		if (st) {
			fail(res, st, "cost step", msg);
			return;
		}
	}
	if (running)
		running(ctx);
	for (uint32_t rep = 0; rep < stp->reps; rep++) {
		struct kf_be_run_stats stats;
		memset(&stats, 0, sizeof(stats));
		stats.san = &res->san;
		stats.cost = cost ? res->cost : NULL;
		if ((stp->flags & KF_STEP_FLUSH_L2) && wk->ops->flush_l2) {
			st = wk->ops->flush_l2(msg, sizeof(msg));
			if (st) {
				if (cost)
					wk->ops->cost_end();
				fail(res, st, "cannot flush the L2", msg);
				return;
			}
		}
		msg[0] = '\0';
		st = run_plan(wk, sl, (stp->flags & KF_STEP_TIME) != 0, &stats, &fatal, msg, sizeof(msg));
		res->san_accesses += stats.san_accesses;
		res->san_untracked_bytes = stats.san_untracked_bytes;
		if (cost) {
			res->n_cost = stats.n_cost;
			wk->ops->cost_end();
		}
		if (st) {
			res->status = st;
			snprintf(res->msg, sizeof(res->msg), "%s", msg[0] ? msg : kf_status_name(st));
			res->worker_dead = fatal;
			return;
		}
		if (stp->flags & KF_STEP_TIME)
			res->time_ns[res->n_times++] = stats.time_ns;
		res->kernels_seen += stats.kernels_seen;
		memcpy(res->timing_source, stats.timing_source, sizeof(res->timing_source));
		res->timing_source[sizeof(res->timing_source) - 1] = '\0';
	}

	if (stp->flags & KF_STEP_COPY_OUT) {
		for (uint32_t i = 0; i < s->n_buffers; i++) {
			if (stp->out_off[i] == -1)
				continue;
			st = wk->ops->dtoh(wk->arena + stp->out_off[i], sl->base[i],
					   kf_proto_out_bytes(s->buffers[i].n_bytes, KF_GUARD_BYTES), msg,
					   sizeof(msg));
			if (st) {
				char what[64];
				snprintf(what, sizeof(what), "cannot copy buffer %u out", (unsigned)i);
				fail(res, st, what, msg);
				return;
			}
		}
	}
	res->status = KF_OK;
}
