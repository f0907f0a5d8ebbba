/* The cpu sanitizer: part of the fiber runtime of an instrumented module (KF_SANITIZE, compiled into
 * rt-san.o, itself not instrumented). clang calls __sanitizer_cov_load/store* before every load and store
 * of the kernel's code; the shim calls kf_san_atomic and kf_san_fence; the runtime reports block starts,
 * barriers, __syncwarp and every shuffle. From that, per byte of every tracked region, it checks:
 *  - memcheck: the access lies inside one live allocation: a plan buffer's data (exact bytes, not its
 *    guards), the block's static shared memory, the launch's dynamic shared memory (smem bytes), the
 *    thread's own stack, the module's globals;
 *  - initcheck: shared memory read before written in that block; an output or scratch buffer read
 *    before written in that run of the plan;
 *  - racecheck: two threads touching the same bytes, one a plain write, neither ordered before the
 *    other: same block and barrier interval without a __syncwarp naming both (same warp), or different
 *    blocks of one launch unless the writer ran __threadfence after the write (the fence-and-flag
 *    idiom). Atomics never race with atomics; a plain read racing with an atomic is not reported (the
 *    compare-and-swap loop idiom); two plain writes of the same value are not reported (benign);
 *  - warp UB: a shuffle reading a lane that exited or does not take part, a mask without the caller.
 * Blocks run one at a time on one OS thread in this mode, so the shadow state needs no locks. The first
 * finding stops the launch (kf_rt_launch returns KF_RT_SANITIZER) before the access happens, so a wild
 * write is reported with its line instead of crashing the worker. */
#ifndef KF_SAN_H
#define KF_SAN_H

#include <string.h>

/* Shadow of one tracked byte (32 bytes). Threads are launch-wide ids + 1 (0: none); intervals count up
 * at every launch, block start and barrier, so a stale entry is recognised by its interval alone. */
struct kf_san_cell {
	uint32_t w, r;       /* last writer; last reader (the first of several in one interval) */
	uint32_t wint, rint; /* the interval of that write, of the reads */
	uint32_t wpc, rpc;   /* their instructions (module offsets) */
	uint16_t wsw, rsw;   /* the warp's __syncwarp count at that write; the largest at those reads */
	uint16_t wfc;        /* the writer's __threadfence count at the write */
	uint8_t flags;       /* KF_C_* */
	uint8_t pad;
};
#define KF_C_W_ATOMIC 1u
#define KF_C_R_MANY 2u
#define KF_C_R_MULTIWARP 4u

enum { KF_SCOPE_NONE = 0, KF_SCOPE_STEP = 1, KF_SCOPE_BLOCK = 2 };

/* A tracked region: [lo, hi) is the allocation (a buffer with its guards), [dlo, dhi) what may be
 * accessed; cells shadow [dlo, dhi) (NULL: memcheck only). */
struct kf_san_region {
	uintptr_t lo, hi, dlo, dhi;
	uint32_t kind; /* kf_rt_san_region */
	int32_t index; /* GLOBAL: buffer index */
	uint32_t init; /* KF_SCOPE_*: uninitialised until written in that scope (NONE: always defined) */
	bool race_ok;  /* races tracked */
	struct kf_san_cell *cells;
	size_t cells_bytes; /* mapped */
};

#define KF_SAN_MAX_REGIONS (KF_RT_SAN_MAX_BUFFERS + 8)
#define KF_RT_SAN_MAX_BUFFERS 64
#define KF_SAN_SHADOW_CAP ((size_t)1 << 30) /* bytes of shadow (32 per tracked byte) in all */
#define KF_SAN_RING 16

struct kf_san_warp {
	uint32_t seq; /* completed __syncwarp of this warp in this block */
	uint32_t ring_seq[KF_SAN_RING], ring_mask[KF_SAN_RING];
};

/* A plain write over another thread's unordered write: decided at this thread's next event, when the
 * new value can be compared with the old (the same value is a benign race). */
struct kf_san_pending {
	bool live;
	uintptr_t addr;
	uint32_t n, prev_gtid, prev_pc;
	unsigned char old[16];
	struct kf_rt_san_access cur;
	struct kf_san_region region;
};

static struct {
	bool active; /* a fiber runs: the hooks check */
	bool stopped;
	bool ready;
	uintptr_t mod_base;
	struct kf_san_region reg[KF_SAN_MAX_REGIONS]; /* the table searched: fixed + buffers, by lo */
	int n_reg;
	struct kf_san_region fixed[8]; /* shared pieces, dynamic shared memory, module data: found once */
	int n_fixed;
	struct kf_san_region gbuf[KF_RT_SAN_MAX_BUFFERS]; /* plan buffers (their shadow kept by index) */
	uintptr_t tls_lo;                                 /* the module's thread-local block on this thread */
	uint32_t n_buffers;
	uintptr_t code_lo[8], code_hi[8];
	int n_code;
	uint32_t interval, launch_start, block_start, step_start;
	uint64_t block_linear;
	uint32_t nthreads;
	dim3 grid, block;
	uint32_t smem_bytes;
	bool gtid_ok;     /* launch ids fit in 32 bits */
	uint16_t *nfence; /* per launch thread */
	uint64_t n_launch_threads;
	struct kf_san_warp warps[32];
	struct kf_san_pending *pend; /* per thread of the block */
	uint32_t *seq;               /* per thread of the block */
	unsigned n_pend;
	unsigned pend_live;
	uint64_t accesses;
	uint64_t untracked_bytes;
	size_t shadow_bytes;
	struct kf_rt_san_finding finding;
	/* An uninitialised read is reported when its barrier interval ends, unless a race on the same
	 * bytes comes first: in the fibers' order the reader may simply have run before the writer. */
	struct kf_rt_san_finding uninit;
	bool uninit_live;
	struct kf_rt_san_finding ub; /* the first shuffle from an inactive lane (kf_san_shfl_ub) */
	bool ub_live;
	struct kf_block *blk;
} kf_san KF_RT_STATE;

extern "C" KF_HIDDEN char __start_kf_rt_state[], __stop_kf_rt_state[];

/* ---- ids and call sites ------------------------------------------------------------------------ */

static void kf_san_ids(uint64_t gtid1, uint32_t block3[3], uint32_t thread3[3])
{
	uint64_t g = gtid1 - 1, bl = g / kf_san.nthreads;
	uint32_t t = (uint32_t)(g % kf_san.nthreads);
	block3[0] = (uint32_t)(bl % kf_san.grid.x);
	block3[1] = (uint32_t)((bl / kf_san.grid.x) % kf_san.grid.y);
	block3[2] = (uint32_t)(bl / ((uint64_t)kf_san.grid.x * kf_san.grid.y));
	thread3[0] = t % kf_san.block.x;
	thread3[1] = (t / kf_san.block.x) % kf_san.block.y;
	thread3[2] = t / (kf_san.block.x * kf_san.block.y);
}

static inline uint32_t kf_san_gtid(const struct kf_fiber *f)
{
	return (uint32_t)(kf_san.block_linear * kf_san.nthreads + f->linear + 1);
}

static uint64_t kf_san_off(uintptr_t pc)
{
	return pc > kf_san.mod_base ? pc - kf_san.mod_base : 0;
}

/* pc[0] = the instruction (ret0 is the return address of a hook called right before it: the call
 * carries the access's line, the instruction after it may not), then up to three callers found through
 * the frame pointers, checked to stay in the fiber's stack. */
static void kf_san_frames(struct kf_rt_san_access *a, uintptr_t ret0, void *const *fp,
			  const struct kf_fiber *f)
{
	uintptr_t base = (uintptr_t)f & kf_rt_stack_mask, lo = base + 2 * 4096, hi = base + kf_cfg_stack;
	memset(a->pc, 0, sizeof(a->pc));
	a->pc[0] = kf_san_off(ret0 - 1);
	void *const *p = fp;
	for (int i = 1; i < 4; i++) {
		if ((uintptr_t)p < lo || (uintptr_t)p + 16 > hi)
			break;
		void *const *next = (void *const *)p[0];
		if ((uintptr_t)next <= (uintptr_t)p || (uintptr_t)next + 16 > hi)
			break;
		uintptr_t ret = (uintptr_t)next[1];
		if (!ret)
			break;
		a->pc[i] = kf_san_off(ret - 1);
		p = next;
	}
}

static void kf_san_cur(struct kf_rt_san_access *a, const struct kf_fiber *f, uint32_t op, uint32_t n,
		       uintptr_t ret0, void *const *fp)
{
	a->op = op;
	a->size = n;
	kf_san_ids(kf_san_gtid(f), a->block, a->thread);
	kf_san_frames(a, ret0, fp, f);
}

/* Ends the launch at a finding: the fiber never resumes (its stack is prepared afresh next block). */
static void kf_san_stop(struct kf_fiber *f)
{
	kf_san.stopped = true;
	kf_san.finding.accesses = kf_san.accesses;
	if (f) {
		kf_san.active = false;
		f->state = KF_F_EXIT;
		kf_to_sched(f, true);
		__builtin_trap();
	}
}

static void kf_san_begin_finding(uint32_t kind, const struct kf_san_region *r, uintptr_t a)
{
	struct kf_rt_san_finding *F = &kf_san.finding;
	memset(F, 0, sizeof(*F));
	F->kind = kind;
	F->addr = a;
	F->index = -1;
	F->region = r ? r->kind : KF_RT_SAN_NOWHERE;
	if (r) {
		F->index = r->index;
		F->offset = (int64_t)(a - r->dlo);
		F->region_bytes = r->dhi - r->dlo;
		if (r->kind == KF_RT_SAN_SHARED)
			F->tls_offset = a - kf_san.tls_lo;
	}
}

/* ---- regions ----------------------------------------------------------------------------------- */

static bool kf_san_shadow(struct kf_san_region *r)
{
	size_t n = (size_t)(r->dhi - r->dlo) * sizeof(struct kf_san_cell);
	if (r->cells && r->cells_bytes >= n) {
		return true;
	}
	if (r->cells) {
		munmap(r->cells, r->cells_bytes);
		kf_san.shadow_bytes -= r->cells_bytes;
	}
	r->cells = 0;
	r->cells_bytes = 0;
	if (!n)
		return true;
	if (kf_san.shadow_bytes + n > KF_SAN_SHADOW_CAP) {
		kf_san.untracked_bytes += r->dhi - r->dlo;
		return true; /* memcheck only */
	}
	void *p = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	r->cells = (struct kf_san_cell *)p;
	r->cells_bytes = n;
	kf_san.shadow_bytes += n;
	return true;
}

static int kf_san_code_cb(struct dl_phdr_info *info, size_t, void *)
{
	bool mine = false;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (uintptr_t)&kf_rt_switch >= lo &&
		    (uintptr_t)&kf_rt_switch < lo + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	kf_san.mod_base = info->dlpi_addr;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_flags & PF_W) {
			/* __device__ globals and the like: defined from the start, races tracked; the
			 * runtime's own variables (kf_rt_state) cut out */
			uintptr_t cut_lo = (uintptr_t)__start_kf_rt_state,
				  cut_hi = (uintptr_t)__stop_kf_rt_state;
			uintptr_t piece[2][2] = {{lo, cut_lo > lo && cut_lo < hi ? cut_lo : hi},
						 {cut_hi > lo && cut_hi < hi ? cut_hi : hi, hi}};
			if (!(cut_lo >= lo && cut_lo < hi))
				piece[1][0] = hi;
			for (int k = 0; k < 2; k++) {
				if (piece[k][1] <= piece[k][0] || kf_san.n_fixed >= 8)
					continue;
				struct kf_san_region *r = &kf_san.fixed[kf_san.n_fixed++];
				memset(r, 0, sizeof(*r));
				r->lo = r->dlo = piece[k][0];
				r->hi = r->dhi = piece[k][1];
				r->kind = KF_RT_SAN_MODULE;
				r->index = -1;
				r->init = KF_SCOPE_NONE;
				r->race_ok = true;
			}
		} else if (kf_san.n_code < 8) {
			kf_san.code_lo[kf_san.n_code] = lo;
			kf_san.code_hi[kf_san.n_code++] = hi;
		}
	}
	return 1;
}

static int kf_san_region_cmp(const void *a, const void *b)
{
	const struct kf_san_region *x = (const struct kf_san_region *)a, *y = (const struct kf_san_region *)b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The regions that do not change: this thread's static shared memory (its TLS pieces), its dynamic
 * shared memory, the module's writable data. */
static bool kf_san_fixed_regions(void)
{
	struct kf_block tmp;
	memset(&tmp, 0, sizeof(tmp));
	kf_san.n_fixed = 0;
	kf_shared_find(&tmp);
	kf_san.tls_lo = (uintptr_t)tmp.tls_lo;
	for (int i = 0; i < tmp.n_shared; i++) {
		struct kf_san_region *r = &kf_san.fixed[kf_san.n_fixed++];
		memset(r, 0, sizeof(*r));
		r->lo = r->dlo = (uintptr_t)tmp.shared_lo[i];
		r->hi = r->dhi = (uintptr_t)tmp.shared_hi[i];
		r->kind = KF_RT_SAN_SHARED;
		r->index = -1;
		r->init = KF_SCOPE_BLOCK;
		r->race_ok = true;
	}
	struct kf_san_region *d = &kf_san.fixed[kf_san.n_fixed++];
	memset(d, 0, sizeof(*d));
	d->lo = d->dlo = (uintptr_t)kf_dsmem;
	d->hi = d->dhi = (uintptr_t)(kf_dsmem + sizeof(kf_dsmem));
	d->kind = KF_RT_SAN_DSHARED;
	d->index = -1;
	d->init = KF_SCOPE_BLOCK;
	d->race_ok = true;
	dl_iterate_phdr(kf_san_code_cb, 0);
	for (int i = 0; i < kf_san.n_fixed; i++)
		if (!kf_san_shadow(&kf_san.fixed[i]))
			return false;
	return true;
}

/* The table searched by kf_san_find: the fixed regions and the n plan buffers, sorted by address. */
static void kf_san_table(size_t n)
{
	kf_san.n_reg = 0;
	for (int i = 0; i < kf_san.n_fixed; i++)
		kf_san.reg[kf_san.n_reg++] = kf_san.fixed[i];
	for (size_t i = 0; i < n; i++)
		kf_san.reg[kf_san.n_reg++] = kf_san.gbuf[i];
	qsort(kf_san.reg, (size_t)kf_san.n_reg, sizeof(kf_san.reg[0]), kf_san_region_cmp);
}

KF_EXPORT int kf_san_abi_version(void)
{
	return KF_RT_SAN_ABI_VERSION;
}

KF_EXPORT int kf_san_configure(const struct kf_rt_san_buffer *bufs, size_t n)
{
	if (n > KF_RT_SAN_MAX_BUFFERS)
		return KF_RT_INVALID;
	if (!kf_san.ready) {
		if (!kf_san_fixed_regions())
			return KF_RT_NOMEM;
		kf_san.ready = true;
	}
	kf_san.untracked_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		struct kf_san_region *r = &kf_san.gbuf[i];
		r->lo = bufs[i].lo;
		r->hi = bufs[i].hi;
		r->dlo = bufs[i].data;
		r->dhi = bufs[i].data + bufs[i].n_bytes;
		r->kind = KF_RT_SAN_GLOBAL;
		r->index = (int32_t)i;
		r->init = bufs[i].initialized ? KF_SCOPE_NONE : KF_SCOPE_STEP;
		r->race_ok = true;
		/* shadow by offset: what an earlier run left there is older than this run's intervals */
		if (!kf_san_shadow(r))
			return KF_RT_NOMEM;
	}
	kf_san_table(n);
	kf_san.n_buffers = (uint32_t)n;
	/* a new run: nothing of an output or scratch buffer is written yet */
	kf_san.step_start = ++kf_san.interval;
	return KF_RT_OK;
}

#define KF_SAN_HOST 0xffffffffu /* the writer id of the loader's own writes */

KF_EXPORT void kf_san_host_write(uint64_t addr, uint64_t n_bytes)
{
	if (!kf_san.ready)
		return;
	for (int i = 0; i < kf_san.n_reg; i++) {
		struct kf_san_region *r = &kf_san.reg[i];
		if (!r->cells || addr + n_bytes <= r->dlo || addr >= r->dhi)
			continue;
		uintptr_t lo = addr > r->dlo ? addr : r->dlo,
			  hi = addr + n_bytes < r->dhi ? addr + n_bytes : r->dhi;
		for (uintptr_t a = lo; a < hi; a++) {
			/* written in this run (initialised), in an interval before the next launch's (no
			 * race) */
			struct kf_san_cell *c = r->cells + (a - r->dlo);
			memset(c, 0, sizeof(*c));
			c->w = KF_SAN_HOST;
			c->wint = kf_san.interval;
		}
	}
}

KF_EXPORT void kf_san_take(struct kf_rt_san_finding *out, struct kf_rt_san_stats *stats)
{
	if (out)
		*out = kf_san.finding;
	if (stats) {
		stats->accesses = kf_san.accesses;
		stats->untracked_bytes = kf_san.untracked_bytes;
	}
}

static struct kf_san_region *kf_san_find(uintptr_t a)
{
	static KF_RT_STATE int last;
	if (last < kf_san.n_reg && a >= kf_san.reg[last].lo && a < kf_san.reg[last].hi)
		return &kf_san.reg[last];
	int lo = 0, hi = kf_san.n_reg - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		struct kf_san_region *r = &kf_san.reg[mid];
		if (a < r->lo)
			hi = mid - 1;
		else if (a >= r->hi)
			lo = mid + 1;
		else {
			last = mid;
			return r;
		}
	}
	return 0;
}

/* ---- ordering ---------------------------------------------------------------------------------- */

/* Was there a __syncwarp in warp w naming every lane of `lanes` after the warp's count was `since`? */
static bool kf_san_warp_synced(unsigned w, uint16_t since, uint32_t lanes)
{
	const struct kf_san_warp *W = &kf_san.warps[w & 31];
	uint32_t n = W->seq < KF_SAN_RING ? W->seq : KF_SAN_RING;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t s = W->seq - k, slot = s % KF_SAN_RING;
		if ((int16_t)(uint16_t)(W->ring_seq[slot] - since) <= 0)
			return false;
		if ((W->ring_mask[slot] & lanes) == lanes)
			return true;
	}
	/* more __syncwarp since than the ring holds: surely one named both */
	return W->seq > KF_SAN_RING &&
	       (int16_t)(uint16_t)(W->ring_seq[(W->seq - KF_SAN_RING + 1) % KF_SAN_RING] - since) > 1;
}

/* Is an earlier access by thread g (gtid + 1) in interval `in`, at warp count sw (and fence count fc,
 * for a write), ordered before the current thread's access? */
static bool kf_san_ordered(const struct kf_fiber *f, uint32_t g, uint32_t in, uint16_t sw, bool write,
			   uint16_t fc)
{
	uint32_t me = kf_san_gtid(f);
	if (g == me)
		return true;
	uint64_t base = kf_san.block_linear * kf_san.nthreads + 1;
	bool same_block = g >= base && g < base + kf_san.nthreads;
	if (in == kf_san.interval) {
		unsigned t = (unsigned)(g - base);
		if (same_block && t / 32 == f->warp)
			return kf_san_warp_synced(f->warp, sw, (1u << (t & 31)) | (1u << f->lane));
		return false;
	}
	if (in >= kf_san.block_start && same_block)
		return true; /* a barrier in between */
	/* an earlier block of this launch: only a write published by a later __threadfence */
	if (write && kf_san.nfence && g - 1 < kf_san.n_launch_threads)
		return kf_san.nfence[g - 1] != fc;
	return !kf_san.nfence && write; /* ids too large to keep fence counts: assume the idiom */
}

/* ---- the checks -------------------------------------------------------------------------------- */

static void kf_san_report_race(struct kf_fiber *f, const struct kf_san_region *r, uintptr_t a, uint32_t op,
			       uint32_t n, uintptr_t ret0, void *const *fp, uint32_t prev_g, uint32_t prev_pc,
			       uint32_t prev_op, const char *what)
{
	kf_san_begin_finding(KF_RT_SAN_RACE, r, a);
	struct kf_rt_san_finding *F = &kf_san.finding;
	kf_san_cur(&F->cur, f, op, n, ret0, fp);
	if (prev_g) {
		F->prev.op = prev_op;
		F->prev.size = 0;
		kf_san_ids(prev_g, F->prev.block, F->prev.thread);
		F->prev.pc[0] = prev_pc;
	}
	if (prev_op == KF_RT_SAN_STORE || prev_op == KF_RT_SAN_ATOMIC)
		F->flags |= KF_RT_SAN_F_PREV_WRITE;
	uint64_t base = kf_san.block_linear * kf_san.nthreads + 1;
	if (prev_g >= base && prev_g < base + kf_san.nthreads && (prev_g - base) / 32 == f->warp)
		F->flags |= KF_RT_SAN_F_SAME_WARP;
	snprintf(F->detail, sizeof(F->detail), "%s", what);
	kf_san_stop(f);
}

static void kf_san_resolve(struct kf_fiber *f)
{
	struct kf_san_pending *p = &kf_san.pend[f->linear];
	if (!p->live)
		return;
	p->live = false;
	kf_san.pend_live--;
	if (!memcmp((const void *)p->addr, p->old, p->n))
		return; /* the same value written twice: benign */
	kf_san_begin_finding(KF_RT_SAN_RACE, &p->region, p->addr);
	struct kf_rt_san_finding *F = &kf_san.finding;
	F->cur = p->cur;
	F->prev.op = KF_RT_SAN_STORE;
	kf_san_ids(p->prev_gtid, F->prev.block, F->prev.thread);
	F->prev.pc[0] = p->prev_pc;
	F->flags |= KF_RT_SAN_F_PREV_WRITE;
	uint64_t base = kf_san.block_linear * kf_san.nthreads + 1;
	if (p->prev_gtid >= base && p->prev_gtid < base + kf_san.nthreads &&
	    (p->prev_gtid - base) / 32 == f->warp)
		F->flags |= KF_RT_SAN_F_SAME_WARP;
	snprintf(F->detail, sizeof(F->detail), "write after another thread's write (different values)");
	kf_san_stop(f);
}

/* The checks of one access, byte by byte, on the shadow of its region. */
static void kf_san_check(struct kf_fiber *f, struct kf_san_region *r, const struct kf_rt_mem_event *ev,
			 uintptr_t ret0, void *const *fp)
{
	if (!r->cells)
		return;
	uintptr_t a = (uintptr_t)ev->addr;
	uint32_t n = ev->size, op = ev->op;
	struct kf_san_cell *c = r->cells + (a - r->dlo);
	uint32_t scope = r->kind == KF_RT_SAN_GLOBAL || r->kind == KF_RT_SAN_MODULE ? kf_san.launch_start
										    : kf_san.block_start;
	uint32_t me = kf_san_gtid(f), in = kf_san.interval, pc = (uint32_t)ev->pc;
	uint16_t sw = (uint16_t)kf_san.warps[f->warp & 31].seq;
	uint16_t fc = kf_san.nfence && me - 1 < kf_san.n_launch_threads ? kf_san.nfence[me - 1] : 0;
	bool atomic = op == KF_RT_SAN_ATOMIC, reads = op == KF_RT_SAN_LOAD || atomic;
	uint32_t init_from = r->init == KF_SCOPE_STEP    ? kf_san.step_start
			     : r->init == KF_SCOPE_BLOCK ? kf_san.block_start
							 : 0;
	bool race = r->race_ok && kf_san.gtid_ok;
	uint64_t base = kf_san.block_linear * kf_san.nthreads + 1;
	/* The bytes of an access almost always share one history (one word written and read whole): then
	 * the checks run once and the result is copied to the other cells. */
	uint32_t n_check = n;
	if (n > 1 && n <= 16) {
		bool same = true;
		for (uint32_t i = 1; i < n && same; i++)
			same = !memcmp(&c[i], &c[0], sizeof(*c));
		if (same)
			n_check = 1;
	}
	struct kf_san_cell *c0 = c;
	for (uint32_t i = 0; i < n_check; i++, c++) {
		if (reads && init_from && !kf_san.uninit_live && !(c->w && c->wint >= init_from)) {
			kf_san_begin_finding(KF_RT_SAN_UNINIT, r, a + i);
			kf_san_cur(&kf_san.finding.cur, f, op, n, ret0, fp);
			snprintf(kf_san.finding.detail, sizeof(kf_san.finding.detail), "%s",
				 r->kind == KF_RT_SAN_GLOBAL
				     ? "read before anything wrote it in this run of the plan"
				     : "read before any thread of the block wrote it");
			kf_san.uninit = kf_san.finding;
			kf_san.uninit_live = true;
			memset(&kf_san.finding, 0, sizeof(kf_san.finding));
		}
		if (!race)
			continue;
		bool written = c->w && c->wint >= scope, w_atomic = c->flags & KF_C_W_ATOMIC;
		bool readers = c->r && c->rint >= scope;
		if (op == KF_RT_SAN_LOAD) {
			/* read after write; a plain read of an atomically updated word is the CAS-loop idiom
			 */
			if (written && !w_atomic && !kf_san_ordered(f, c->w, c->wint, c->wsw, true, c->wfc))
				kf_san_report_race(
				    f, r, a + i, op, n, ret0, fp, c->w, c->wpc, KF_RT_SAN_STORE,
				    "read of bytes another thread wrote, with no barrier or __syncwarp "
				    "between");
			if (!readers || c->rint != in) {
				c->flags &= (uint8_t) ~(KF_C_R_MANY | KF_C_R_MULTIWARP);
				c->r = me;
				c->rint = in;
				c->rpc = pc;
				c->rsw = sw;
			} else {
				if (c->r != me) {
					unsigned rt = (unsigned)(c->r - base);
					c->flags |= KF_C_R_MANY;
					if (c->r < base || c->r >= base + kf_san.nthreads ||
					    rt / 32 != f->warp)
						c->flags |= KF_C_R_MULTIWARP;
				}
				if ((int16_t)(uint16_t)(sw - c->rsw) > 0)
					c->rsw = sw;
			}
			continue;
		}
		/* a write, plain or atomic: after another thread's write */
		if (written && !kf_san_ordered(f, c->w, c->wint, c->wsw, true, c->wfc)) {
			if (w_atomic || atomic) {
				if (!(w_atomic && atomic)) /* atomics never race with atomics */
					kf_san_report_race(f, r, a + i, op, n, ret0, fp, c->w, c->wpc,
							   w_atomic ? KF_RT_SAN_ATOMIC : KF_RT_SAN_STORE,
							   atomic ? "atomic on bytes another thread wrote "
								    "plainly, with no barrier "
								    "between"
								  : "plain write over another thread's "
								    "atomic, with no barrier between");
			} else if (n <= 16) {
				/* plain over plain: a race unless both wrote the same value (decided at this
				 * thread's next event, when the new value is there) */
				struct kf_san_pending *p = &kf_san.pend[f->linear];
				if (!p->live) {
					p->live = true;
					kf_san.pend_live++;
					p->addr = a;
					p->n = n;
					memcpy(p->old, (const void *)a, n);
					p->prev_gtid = c->w;
					p->prev_pc = c->wpc;
					p->region = *r;
					kf_san_cur(&p->cur, f, op, n, ret0, fp);
				}
			} else {
				kf_san_report_race(
				    f, r, a + i, op, n, ret0, fp, c->w, c->wpc, KF_RT_SAN_STORE,
				    "write over another thread's write, with no barrier or __syncwarp "
				    "between");
			}
		}
		/* ... and after other threads' reads (an atomic after a plain read is the CAS idiom too) */
		if (!atomic && readers && (c->r != me || (c->flags & KF_C_R_MANY))) {
			bool ordered;
			if (c->rint != in) {
				ordered = kf_san_ordered(f, c->r, c->rint, c->rsw, false, 0);
			} else if (c->flags & KF_C_R_MULTIWARP) {
				ordered = false;
			} else {
				unsigned rt = (unsigned)(c->r - base);
				bool in_block = c->r >= base && c->r < base + kf_san.nthreads;
				uint32_t lanes =
				    (1u << f->lane) | ((c->flags & KF_C_R_MANY) ? 0 : 1u << (rt & 31));
				ordered = in_block && rt / 32 == f->warp &&
					  kf_san_warp_synced(f->warp, c->rsw, lanes);
			}
			if (!ordered)
				kf_san_report_race(
				    f, r, a + i, op, n, ret0, fp, c->r == me ? 0 : c->r, c->rpc,
				    KF_RT_SAN_LOAD,
				    c->r == me ? "write of bytes other threads read, with no barrier or "
						 "__syncwarp between"
					       : "write of bytes another thread read, with no barrier or "
						 "__syncwarp between");
		}
		c->w = me;
		c->wint = in;
		c->wpc = pc;
		c->wsw = sw;
		c->wfc = fc;
		c->flags = (uint8_t)((c->flags & ~KF_C_W_ATOMIC) | (atomic ? KF_C_W_ATOMIC : 0));
		if (!atomic) { /* earlier reads were checked against this write; later ones check it */
			c->r = 0;
			c->flags &= (uint8_t) ~(KF_C_R_MANY | KF_C_R_MULTIWARP);
		}
	}
	for (uint32_t i = n_check; i < n; i++)
		c0[i] = c0[0];
}

/* An address in no region: another thread's stack, the module's code and constants, or nowhere. */
static void kf_san_outside(struct kf_fiber *f, uintptr_t a, uint32_t n, uint32_t op, uintptr_t ret0,
			   void *const *fp)
{
	for (int i = 0; i < kf_san.n_code; i++)
		if (a >= kf_san.code_lo[i] && a + n <= kf_san.code_hi[i]) {
			if (op == KF_RT_SAN_LOAD)
				return; /* constants, string literals */
			break;
		}
	struct kf_block *b = kf_san.blk;
	uintptr_t rb = a & kf_rt_stack_mask;
	kf_san_begin_finding(KF_RT_SAN_OOB, 0, a);
	struct kf_rt_san_finding *F = &kf_san.finding;
	for (unsigned i = 0; b && i < b->n; i++)
		if (((uintptr_t)b->f[i] & kf_rt_stack_mask) == rb) {
			F->region = KF_RT_SAN_LOCAL;
			F->index = (int32_t)i;
			snprintf(F->detail, sizeof(F->detail),
				 "local memory of another thread (thread %u of the block)", i);
			break;
		}
	if (F->region == KF_RT_SAN_NOWHERE && a >= 65536) {
		/* the nearest plan buffer, for "N bytes past the end of y" */
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < kf_san.n_reg; i++) {
			const struct kf_san_region *r = &kf_san.reg[i];
			if (r->kind != KF_RT_SAN_GLOBAL)
				continue;
			uint64_t d = a >= r->dhi ? a - r->dhi : r->dlo > a ? r->dlo - a : 0;
			if (d < best) {
				best = d;
				F->index = r->index;
				F->offset = (int64_t)(a - r->dlo);
				F->region_bytes = r->dhi - r->dlo;
			}
		}
		snprintf(F->detail, sizeof(F->detail), "%s",
			 a < 65536 ? "a null or near-null pointer" : "no allocation of the plan holds it");
	}
	kf_san_cur(&F->cur, f, op, n, ret0, fp);
	kf_san_stop(f);
}

/* ---- the cost model's counters (kf_cost_configure; kf_rt_abi.h) ----------------------------------
 * With counting on, every global and shared access that passed memcheck is one lane of a warp
 * instruction instance, keyed (warp, pc, seq). Lanes run one after another between
 * barriers, so the open instances of a block wait in a bounded table, flushed at every barrier, block end
 * and launch end; an interval too long for half the table turns to lockstep (kf_cost_record) and
 * flushes its oldest half when full, so long loops still group. A flushed instance gives its 32-byte sectors
 * (global: coalescing, fed to the L2 model in order) or its wavefronts (shared), and is summed per call site.
 * The racecheck and initcheck shadow is skipped; memcheck stays. */

#define KF_COST_INST_CAP 2048u  /* open warp instructions of a block */
#define KF_COST_INST_HASH 8192u /* slots of their hash (power of two, > 2x the cap) */
#define KF_COST_SITE_CAP 1024u  /* call sites summed (more: counted in the totals only) */
#define KF_COST_SITE_HASH 2048u
#define KF_COST_HOT_HASH 8192u /* addresses whose atomics are counted for atom_hot (more: not) */
#define KF_COST_L2_MAX ((uint64_t)1 << 30)
#define KF_COST_LANE_SECTORS 64u /* one lane's sectors deduplicated (a memcpy's beyond: counted as is) */

/* A thread's last lane entry (instance + 1, lane; 0: none) and where its access ended. */
struct kf_cost_last {
	uint32_t inst, lane, epoch, pad;
};

struct kf_cost_lane {
	uint64_t addr;
	uint32_t size, pad;
};

struct kf_cost_inst {
	uint64_t pc;
	uint32_t warp, seq, op, region;
	int32_t index;
	uint32_t n;     /* lanes so far */
	uint32_t hslot; /* its slot in inst_hash */
	uint32_t pad;
	struct kf_cost_lane l[32];
};

struct kf_cost_site_acc {
	uint64_t pc;
	uint32_t op, region;
	int32_t index;
	uint32_t used;
	uint64_t requests, units, bytes;
};

static struct {
	bool on;  /* counting for the coming launches */
	bool run; /* counting this launch */
	struct kf_rt_cost_config cfg;
	struct kf_rt_cost res; /* the last launch's counts (kf_cost_take) */
	/* open instances of the block, in creation order; inst_hash: index + 1 (0: empty) */
	struct kf_cost_inst *inst;
	uint32_t n_inst;
	uint32_t *inst_hash;
	/* L2 model: sets of `ways` lines, most recently used first; a line is sector + 1 (0: empty), bit 63
	 * dirty */
	uint64_t *l2;
	size_t l2_lines, l2_map_bytes;
	uint64_t l2_sets;
	uint32_t l2_ways;
	bool l2_used;
	uint64_t l2_dirty; /* dirty lines now */
	struct kf_cost_site_acc *sites;
	uint32_t n_sites;
	uint64_t *hot_addr; /* atomics per address: address + 1 (0: empty), count */
	uint32_t *hot_n;
	uint64_t touched; /* bit i: plan buffer i accessed */
	uint32_t *edges;  /* per thread of the block: basic blocks in this barrier interval */
	/* per thread of the block: its last lane entry (instance + 1, lane; 0: none) and where it ended, so
	 * the next access that continues it is one vector access (kf_cost_record) */
	struct kf_cost_last *last;
	uint32_t epoch; /* bumped at every flush: the instances moved */
	uint32_t n_edges;
	/* block sampling */
	bool sampled;
	uint32_t n_chunks, chunk;
	uint64_t start[KF_RT_COST_CHUNKS];
	uint64_t pos, left, acc0, share, n_blocks;
	bool chunk_first;
} kf_cost KF_RT_STATE;

static uint64_t kf_cost_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static void kf_cost_free_tables(void)
{
	free(kf_cost.inst);
	free(kf_cost.inst_hash);
	free(kf_cost.sites);
	free(kf_cost.hot_addr);
	free(kf_cost.hot_n);
	free(kf_cost.edges);
	free(kf_cost.last);
	kf_cost.last = 0;
	if (kf_cost.l2)
		munmap(kf_cost.l2, kf_cost.l2_map_bytes);
	memset(&kf_cost, 0, sizeof(kf_cost));
}

KF_EXPORT int kf_cost_abi_version(void)
{
	return KF_RT_COST_ABI_VERSION;
}

KF_EXPORT int kf_cost_configure(const struct kf_rt_cost_config *c)
{
	if (!c)
		return KF_RT_INVALID;
	if (!c->enable) {
		kf_cost.on = false;
		return KF_RT_OK;
	}
	uint32_t ways = c->l2_ways ? c->l2_ways : 16;
	if (c->enable != 1 || (ways & (ways - 1)) || ways > 64 || c->l2_bytes > KF_COST_L2_MAX)
		return KF_RT_INVALID;
	uint64_t sets = c->l2_bytes / (32ull * ways);
	if (c->l2_bytes && !sets)
		return KF_RT_INVALID; /* smaller than one set */
	if (!kf_cost.inst) {
		kf_cost.inst = (struct kf_cost_inst *)malloc(KF_COST_INST_CAP * sizeof(*kf_cost.inst));
		kf_cost.inst_hash = (uint32_t *)calloc(KF_COST_INST_HASH, sizeof(uint32_t));
		kf_cost.sites = (struct kf_cost_site_acc *)calloc(KF_COST_SITE_HASH, sizeof(*kf_cost.sites));
		kf_cost.hot_addr = (uint64_t *)calloc(KF_COST_HOT_HASH, sizeof(uint64_t));
		kf_cost.hot_n = (uint32_t *)calloc(KF_COST_HOT_HASH, sizeof(uint32_t));
		if (!kf_cost.inst || !kf_cost.inst_hash || !kf_cost.sites || !kf_cost.hot_addr ||
		    !kf_cost.hot_n) {
			kf_cost_free_tables();
			return KF_RT_NOMEM;
		}
	}
	size_t lines = (size_t)(sets * ways), bytes = lines * sizeof(uint64_t);
	if (lines != kf_cost.l2_lines) {
		if (kf_cost.l2)
			munmap(kf_cost.l2, kf_cost.l2_map_bytes);
		kf_cost.l2 = 0;
		kf_cost.l2_lines = kf_cost.l2_map_bytes = 0;
		if (lines) {
			void *p = mmap(0, bytes, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (p == MAP_FAILED)
				return KF_RT_NOMEM;
			kf_cost.l2 = (uint64_t *)p;
			kf_cost.l2_lines = lines;
			kf_cost.l2_map_bytes = bytes;
			kf_cost.l2_used = false; /* fresh pages are zero */
		}
	}
	kf_cost.l2_sets = sets;
	kf_cost.l2_ways = ways;
	kf_cost.cfg = *c;
	kf_cost.cfg.l2_ways = ways;
	kf_cost.on = true;
	return KF_RT_OK;
}

KF_EXPORT void kf_cost_take(struct kf_rt_cost *out)
{
	if (out)
		*out = kf_cost.res;
}

/* ---- the L2 model: one sector (read, write, or an atomic's read-modify-write) ------------------- */
static void kf_cost_l2(uint64_t sector, bool read, bool write)
{
	struct kf_rt_cost *R = &kf_cost.res;
	if (!kf_cost.l2) { /* no cache: every sector goes to DRAM */
		R->l2_read_misses += read;
		R->l2_writebacks += write;
		return;
	}
	kf_cost.l2_used = true;
	uint32_t W = kf_cost.l2_ways;
	uint64_t *set = kf_cost.l2 + (kf_cost_mix(sector) % kf_cost.l2_sets) * W;
	uint64_t tag = sector + 1, line = 0;
	const uint64_t DIRTY = 1ull << 63;
	uint32_t i = 0;
	for (; i < W; i++)
		if ((set[i] & ~DIRTY) == tag) {
			line = set[i];
			break;
		}
	if (i == W) { /* a miss: the least recently used line goes */
		i = W - 1;
		if (set[i] & DIRTY) {
			R->l2_writebacks++;
			kf_cost.l2_dirty--;
		}
		/* a write allocates without reading: the model takes every store as a full-sector write */
		R->l2_read_misses += read;
		line = tag;
	}
	if (write && !(line & DIRTY)) {
		line |= DIRTY;
		kf_cost.l2_dirty++;
	}
	memmove(set + 1, set, i * sizeof(uint64_t));
	set[0] = line;
}

static void kf_cost_l2_reset(void)
{
	if (kf_cost.l2 && kf_cost.l2_used)
		memset(kf_cost.l2, 0, kf_cost.l2_lines * sizeof(uint64_t));
	kf_cost.l2_used = false;
	kf_cost.l2_dirty = 0;
}

static void kf_cost_sort(uint64_t *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		uint64_t x = v[i];
		uint32_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void kf_cost_site_add(const struct kf_cost_inst *I, uint64_t units, uint64_t bytes)
{
	uint64_t h = kf_cost_mix(I->pc * 31 + I->op * 7 + I->region * 3 + (uint64_t)(uint32_t)I->index);
	for (uint32_t k = 0; k < KF_COST_SITE_HASH; k++) {
		struct kf_cost_site_acc *s = &kf_cost.sites[(h + k) & (KF_COST_SITE_HASH - 1)];
		if (!s->used) {
			if (kf_cost.n_sites >= KF_COST_SITE_CAP)
				return;
			kf_cost.n_sites++;
			s->used = 1;
			s->pc = I->pc;
			s->op = I->op;
			s->region = I->region;
			s->index = I->index;
		} else if (s->pc != I->pc || s->op != I->op || s->region != I->region || s->index != I->index)
			continue;
		s->requests++;
		s->units += units;
		s->bytes += bytes;
		return;
	}
}

static void kf_cost_hot(uint64_t addr)
{
	uint64_t h = kf_cost_mix(addr);
	for (uint32_t k = 0; k < 64; k++) {
		uint32_t s = (uint32_t)((h + k) & (KF_COST_HOT_HASH - 1));
		if (kf_cost.hot_addr[s] == addr + 1 || !kf_cost.hot_addr[s]) {
			kf_cost.hot_addr[s] = addr + 1;
			if (++kf_cost.hot_n[s] > kf_cost.res.atom_hot)
				kf_cost.res.atom_hot = kf_cost.hot_n[s];
			return;
		}
	}
}

/* One warp instruction's lanes: its sectors or wavefronts. */
static void kf_cost_flush_one(const struct kf_cost_inst *I)
{
	struct kf_rt_cost *R = &kf_cost.res;
	uint64_t v[32 * KF_COST_LANE_SECTORS / 16 + 64]; /* sectors (global) or words (shared) */
	uint32_t nv = 0;
	uint64_t bytes = 0, units = 0, extra = 0;
	bool shared = I->region != KF_RT_SAN_GLOBAL;

	unsigned shift = shared ? 2 : 5;
	for (uint32_t i = 0; i < I->n; i++) {
		uint64_t a = I->l[i].addr, sz = I->l[i].size ? I->l[i].size : 1;
		uint64_t lo = a >> shift, hi = (a + sz - 1) >> shift;
		bytes += sz;
		if (hi - lo + 1 > KF_COST_LANE_SECTORS || nv + (hi - lo + 1) > sizeof(v) / sizeof(v[0])) {
			/* a large copy by one lane: its units as they are, not deduplicated */
			extra += hi - lo + 1;
			if (!shared)
				for (uint64_t s = lo; s <= hi; s++)
					kf_cost_l2(s, I->op != KF_RT_SAN_STORE, I->op != KF_RT_SAN_LOAD);
			continue;
		}
		for (uint64_t s = lo; s <= hi; s++)
			v[nv++] = s;
	}
	kf_cost_sort(v, nv);
	uint32_t nu = 0;
	for (uint32_t i = 0; i < nv; i++)
		if (!i || v[i] != v[i - 1])
			v[nu++] = v[i];
	if (shared) {
		/* 32 banks of 4-byte words: the most distinct words one bank serves */
		uint32_t per_bank[32] = {0}, most = 0;
		for (uint32_t i = 0; i < nu; i++)
			if (++per_bank[v[i] & 31] > most)
				most = per_bank[v[i] & 31];
		units = most + extra;
		if (!units)
			units = 1;
		R->sh_requests++;
		R->sh_wavefronts += units;
	} else {
		units = nu + extra;
		for (uint32_t i = 0; i < nu; i++)
			kf_cost_l2(v[i], I->op != KF_RT_SAN_STORE, I->op != KF_RT_SAN_LOAD);
		if (I->op == KF_RT_SAN_LOAD) {
			R->gld_requests++;
			R->gld_sectors += units;
			R->gld_bytes += bytes;
		} else if (I->op == KF_RT_SAN_STORE) {
			R->gst_requests++;
			R->gst_sectors += units;
			R->gst_bytes += bytes;
		}
	}
	if (I->op == KF_RT_SAN_ATOMIC) {
		/* lanes on one address serialize */
		uint32_t most = 0;
		for (uint32_t i = 0; i < I->n; i++) {
			uint32_t same = 0;
			for (uint32_t j = 0; j < I->n; j++)
				same += I->l[j].addr == I->l[i].addr;
			if (same > most)
				most = same;
			kf_cost_hot(I->l[i].addr);
		}
		R->atom_requests++;
		R->atom_lanes += I->n;
		R->atom_serial += most;
	}
	kf_cost_site_add(I, units, bytes);
}

/* Flushes the oldest n open instances (all: n = n_inst) and rehashes the rest. */
static void kf_cost_flush(uint32_t n)
{
	if (!kf_cost.run)
		return;
	kf_cost.epoch++;
	for (uint32_t i = 0; i < kf_cost.n_inst; i++)
		kf_cost.inst_hash[kf_cost.inst[i].hslot] = 0;
	for (uint32_t i = 0; i < n && i < kf_cost.n_inst; i++)
		kf_cost_flush_one(&kf_cost.inst[i]);
	if (n >= kf_cost.n_inst) {
		kf_cost.n_inst = 0;
		return;
	}
	memmove(kf_cost.inst, kf_cost.inst + n, (kf_cost.n_inst - n) * sizeof(*kf_cost.inst));
	kf_cost.n_inst -= n;
	for (uint32_t i = 0; i < kf_cost.n_inst; i++) {
		struct kf_cost_inst *I = &kf_cost.inst[i];
		uint64_t h = kf_cost_mix(I->pc ^ ((uint64_t)I->seq << 20) ^ ((uint64_t)I->warp << 52));
		uint32_t s = (uint32_t)(h & (KF_COST_INST_HASH - 1));
		while (kf_cost.inst_hash[s])
			s = (s + 1) & (KF_COST_INST_HASH - 1);
		kf_cost.inst_hash[s] = i + 1;
		I->hslot = s;
	}
}

/* A global or shared access that passed memcheck: a lane of its warp instruction. */
static void kf_cost_record(struct kf_fiber *f, const struct kf_rt_mem_event *ev)
{
	if (ev->region == KF_RT_SAN_GLOBAL && ev->index >= 0 && ev->index < 64)
		kf_cost.touched |= 1ull << ev->index;
	/* A vector access (float2, float4, int4 ...) that the host compiler split into its components is
	 * one access on the GPU (LDG.64/.128): an access adjacent to this thread's previous one (same kind,
	 * either side, at most 16 bytes together, starting at a multiple of the 4, 8 or 16 bytes they would
	 * fill: float4 components load as 4 + 4 + 4 + 4 or 8 + 8) widens that lane instead of
	 * opening an instruction of its own. */
	struct kf_cost_last *L = kf_cost.last ? &kf_cost.last[ev->thread] : 0;
	if (L && L->inst && L->epoch == kf_cost.epoch && L->inst <= kf_cost.n_inst) {
		struct kf_cost_inst *P = &kf_cost.inst[L->inst - 1];
		struct kf_cost_lane *ln = &P->l[L->lane];
		uint64_t size = ln->size + ev->size;
		bool after = ln->addr + ln->size == ev->addr, before = ev->addr + ev->size == ln->addr;
		uint64_t lo = before ? ev->addr : ln->addr, span = size <= 4 ? 4 : size <= 8 ? 8 : 16;
		if ((after || before) && P->op == ev->op && P->region == ev->region &&
		    P->index == ev->index && size <= 16 && (lo & (span - 1)) == 0) {
			ln->addr = lo;
			ln->size = (uint32_t)size;
			return;
		}
	}
	uint32_t warp = ev->thread / 32;
	uint64_t h = kf_cost_mix(ev->pc ^ ((uint64_t)ev->seq << 20) ^ ((uint64_t)warp << 52));
	uint32_t s = (uint32_t)(h & (KF_COST_INST_HASH - 1));
	struct kf_cost_inst *I = 0;
	for (;;) {
		uint32_t k = kf_cost.inst_hash[s];
		if (!k)
			break;
		struct kf_cost_inst *c = &kf_cost.inst[k - 1];
		if (c->pc == ev->pc && c->seq == ev->seq && c->warp == warp && c->op == ev->op &&
		    c->region == ev->region && c->index == ev->index && c->n < 32) {
			I = c;
			break;
		}
		s = (s + 1) & (KF_COST_INST_HASH - 1);
	}
	bool created = !I;
	if (!I) {
		if (kf_cost.n_inst == KF_COST_INST_CAP) {
			kf_cost_flush(KF_COST_INST_CAP / 2);
			s = (uint32_t)(h & (KF_COST_INST_HASH - 1));
			while (kf_cost.inst_hash[s])
				s = (s + 1) & (KF_COST_INST_HASH - 1);
		}
		I = &kf_cost.inst[kf_cost.n_inst++];
		kf_cost.inst_hash[s] = kf_cost.n_inst;
		I->hslot = s;
		I->pc = ev->pc;
		I->seq = ev->seq;
		I->warp = warp;
		I->op = ev->op;
		I->region = ev->region;
		I->index = ev->index;
		I->n = 0;
	}
	I->l[I->n].addr = ev->addr;
	I->l[I->n].size = ev->size;
	if (L && ev->op != KF_RT_SAN_ATOMIC) {
		L->inst = (uint32_t)(I - kf_cost.inst) + 1;
		L->lane = I->n;
		L->epoch = kf_cost.epoch;
	}
	I->n++;
	/* Past half the table, a lane that opens an instance lets the others catch up first (lockstep):
	 * the lanes behind fill the open instances without yielding, so the oldest half is complete when
	 * a full table flushes it. Below that (most intervals) lanes run one after another. */
	if (created && kf_cost.n_inst > KF_COST_INST_CAP / 2)
		kf_to_sched(f, false);
}

/* The end of a barrier interval (barrier, block end): each warp issued its longest lane's blocks. */
static void kf_cost_interval_end(void)
{
	if (!kf_cost.run)
		return;
	kf_cost_flush(kf_cost.n_inst);
	uint32_t n = kf_san.nthreads;
	for (uint32_t w = 0; w * 32 < n; w++) {
		uint32_t most = 0;
		for (uint32_t t = w * 32; t < n && t < w * 32 + 32; t++) {
			kf_cost.res.thread_edges += kf_cost.edges[t];
			if (kf_cost.edges[t] > most)
				most = kf_cost.edges[t];
			kf_cost.edges[t] = 0;
		}
		kf_cost.res.warp_edges += most;
	}
}

extern "C" KF_HIDDEN void __sanitizer_cov_trace_pc_guard(uint32_t *)
{
	if (!kf_cost.run || !kf_san.active)
		return;
	kf_cost.edges[kf_self()->linear]++;
}

extern "C" KF_HIDDEN void __sanitizer_cov_trace_pc_guard_init(uint32_t *, uint32_t *)
{
}

static void kf_cost_collective(void)
{
	if (kf_cost.run)
		kf_cost.res.collectives++;
}

static bool kf_cost_launch_begin(dim3 grid, dim3 block, uint32_t smem)
{
	memset(&kf_cost.res, 0, sizeof(kf_cost.res));
	kf_cost.run = kf_cost.on;
	kf_cost.sampled = false;
	if (!kf_cost.run)
		return true;
	struct kf_rt_cost *R = &kf_cost.res;
	R->grid[0] = grid.x;
	R->grid[1] = grid.y;
	R->grid[2] = grid.z;
	R->block[0] = block.x;
	R->block[1] = block.y;
	R->block[2] = block.z;
	R->smem_bytes = smem;
	uint64_t nb = (uint64_t)grid.x * grid.y * grid.z;
	R->blocks_total = nb;
	uint32_t nt = block.x * block.y * block.z;
	if (kf_cost.n_edges < nt) {
		free(kf_cost.edges);
		free(kf_cost.last);
		kf_cost.last = (struct kf_cost_last *)calloc(nt, sizeof(*kf_cost.last));
		kf_cost.edges = (uint32_t *)calloc(nt, sizeof(uint32_t));
		kf_cost.n_edges = kf_cost.edges ? nt : 0;
		if (!kf_cost.edges)
			return false;
	}
	memset(kf_cost.edges, 0, nt * sizeof(uint32_t));
	kf_cost.n_inst = 0;
	memset(kf_cost.inst_hash, 0, KF_COST_INST_HASH * sizeof(uint32_t));
	memset(kf_cost.sites, 0, KF_COST_SITE_HASH * sizeof(*kf_cost.sites));
	kf_cost.n_sites = 0;
	memset(kf_cost.hot_addr, 0, KF_COST_HOT_HASH * sizeof(uint64_t));
	memset(kf_cost.hot_n, 0, KF_COST_HOT_HASH * sizeof(uint32_t));
	kf_cost.touched = 0;
	kf_cost_l2_reset(); /* every launch starts with a cold L2 */
	if (kf_cost.cfg.access_budget) {
		/* one chunk start per part of the grid, at a seeded offset in it; chunk k may run up to
		 * the next start (the last wraps round to the first), so a grid that fits runs whole */
		kf_cost.sampled = true;
		kf_cost.n_blocks = nb;
		kf_cost.n_chunks = 0;
		for (uint32_t q = 0; q < KF_RT_COST_CHUNKS; q++) {
			uint64_t lo = q * nb / KF_RT_COST_CHUNKS, hi = (q + 1) * nb / KF_RT_COST_CHUNKS;
			if (hi > lo)
				kf_cost.start[kf_cost.n_chunks++] =
				    lo +
				    kf_cost_mix(kf_cost.cfg.sample_seed * 0x9e3779b97f4a7c15ull + q + 1) %
					(hi - lo);
		}
		kf_cost.share = kf_cost.cfg.access_budget / kf_cost.n_chunks;
		kf_cost.chunk = 0;
		kf_cost.pos = kf_cost.start[0];
		kf_cost.left = kf_cost.n_chunks > 1 ? kf_cost.start[1] - kf_cost.start[0] : nb;
		kf_cost.acc0 = 0;
		kf_cost.chunk_first = true;
	}
	return true;
}

/* Sampling: the next block to run (false: the launch is done). */
static bool kf_cost_next_block(uint64_t *i)
{
	for (;;) {
		if (kf_cost.chunk >= kf_cost.n_chunks)
			return false;
		if (kf_cost.left && (kf_cost.chunk_first || kf_san.accesses - kf_cost.acc0 < kf_cost.share)) {
			*i = kf_cost.pos;
			kf_cost.pos = kf_cost.pos + 1 == kf_cost.n_blocks ? 0 : kf_cost.pos + 1;
			kf_cost.left--;
			kf_cost.chunk_first = false;
			return true;
		}
		uint32_t k = ++kf_cost.chunk;
		if (k >= kf_cost.n_chunks)
			return false;
		if (kf_cost.left) {
			/* the sample jumps over blocks: the next chunk starts with a cold L2 (its dirty
			 * sectors written back), so what one chunk reuses never depends on where another
			 * one happened to land (the A/A run draws other positions) */
			kf_cost.res.l2_writebacks += kf_cost.l2_dirty;
			kf_cost_l2_reset();
		}
		kf_cost.pos = kf_cost.start[k];
		kf_cost.left = k + 1 < kf_cost.n_chunks
				   ? kf_cost.start[k + 1] - kf_cost.start[k]
				   : kf_cost.n_blocks - kf_cost.start[k] + kf_cost.start[0];
		kf_cost.acc0 = kf_san.accesses;
		kf_cost.chunk_first = true;
	}
}

static void kf_cost_block_begin(uint32_t nthreads)
{
	if (!kf_cost.run)
		return;
	kf_cost.res.blocks_run++;
	kf_cost.res.warps_run += (nthreads + 31) / 32;
}

static void kf_cost_barrier(void)
{
	if (!kf_cost.run)
		return;
	kf_cost_interval_end();
	kf_cost.res.barriers += (kf_san.nthreads + 31) / 32;
}

static int kf_cost_site_cmp(const void *a, const void *b)
{
	const struct kf_cost_site_acc *x = (const struct kf_cost_site_acc *)a,
				      *y = (const struct kf_cost_site_acc *)b;
	if (x->used != y->used)
		return x->used ? -1 : 1;
	if (x->units != y->units)
		return x->units > y->units ? -1 : 1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void kf_cost_launch_end(void)
{
	if (!kf_cost.run)
		return;
	kf_cost_flush(kf_cost.n_inst); /* a launch stopped by a finding left some open */
	struct kf_rt_cost *R = &kf_cost.res;
	R->l2_writebacks += kf_cost.l2_dirty; /* what is dirty at the end goes to DRAM too */
	kf_cost.l2_dirty = 0;
	for (uint32_t i = 0; i < kf_san.n_buffers && i < 64; i++)
		if (kf_cost.touched >> i & 1)
			R->touched_bytes += kf_san.gbuf[i].dhi - kf_san.gbuf[i].dlo;
	R->accesses = kf_san.accesses;
	qsort(kf_cost.sites, KF_COST_SITE_HASH, sizeof(*kf_cost.sites), kf_cost_site_cmp);
	for (uint32_t i = 0; i < KF_RT_COST_MAX_SITES && kf_cost.sites[i].used; i++) {
		struct kf_rt_cost_site *o = &R->sites[R->n_sites++];
		const struct kf_cost_site_acc *s = &kf_cost.sites[i];
		o->pc = s->pc;
		o->op = s->op;
		o->region = s->region;
		o->index = s->region == KF_RT_SAN_GLOBAL ? s->index : -1;
		o->requests = s->requests;
		o->units = s->units;
		o->bytes = s->bytes;
	}
	kf_cost.run = false;
}

static __attribute__((noinline)) void kf_san_slow(uintptr_t a, uint32_t n, uint32_t op, uintptr_t ret0,
						  void *const *fp, struct kf_fiber *f)
{
	if (kf_san.pend_live && kf_san.pend[f->linear].live)
		kf_san_resolve(f);
	struct kf_san_region *r = kf_san_find(a);
	if (!r) {
		kf_san_outside(f, a, n, op, ret0, fp);
		return;
	}
	if (a < r->dlo || a + n > r->dhi || a + n < a) {
		kf_san_begin_finding(KF_RT_SAN_OOB, r, a);
		struct kf_rt_san_finding *F = &kf_san.finding;
		snprintf(F->detail, sizeof(F->detail), "%s",
			 r->kind == KF_RT_SAN_DSHARED ? "past the launch's dynamic shared memory"
			 : a < r->dlo                 ? "before the start of the buffer"
						      : "past the end of the buffer");
		kf_san_cur(&F->cur, f, op, n, ret0, fp);
		kf_san_stop(f);
		return;
	}
	/* the access as a cost model would take it too (per warp and instruction: thread / 32, pc, seq) */
	struct kf_rt_mem_event ev;
	ev.addr = a;
	ev.size = n;
	ev.op = op;
	ev.region = r->kind;
	ev.index = r->index;
	ev.offset = (int64_t)(a - r->dlo);
	ev.pc = kf_san_off(ret0 - 1);
	ev.block = kf_san.block_linear;
	ev.thread = f->linear;
	ev.seq = kf_san.seq[f->linear];
	if (kf_cost.run) { /* counting: memcheck only */
		if (r->kind == KF_RT_SAN_GLOBAL || r->kind == KF_RT_SAN_SHARED ||
		    r->kind == KF_RT_SAN_DSHARED)
			kf_cost_record(f, &ev);
		return;
	}
	kf_san_check(f, r, &ev, ret0, fp);
}

/* Every load and store of the kernel's code, and the atomics and memcpy/memset of the shim. */
static inline __attribute__((always_inline)) void kf_san_access(uintptr_t a, uint32_t n, uint32_t op,
								uintptr_t ret0, void *const *fp)
{
	if (!kf_san.active)
		return;
	struct kf_fiber *f = kf_self();
	uintptr_t base = (uintptr_t)f & kf_rt_stack_mask;
	if ((a & kf_rt_stack_mask) == base) {
		if (a >= base + 2 * 4096) {
			kf_san.accesses++;
			if (kf_san.pend_live && kf_san.pend[f->linear].live)
				kf_san_resolve(f);
			return; /* the thread's own local variables */
		}
		if (a < base + 4096 && op == KF_RT_SAN_LOAD)
			return; /* its descriptor: threadIdx and friends, read by the shim */
		kf_san_begin_finding(KF_RT_SAN_OOB, 0, a);
		kf_san.finding.region = KF_RT_SAN_LOCAL;
		snprintf(kf_san.finding.detail, sizeof(kf_san.finding.detail), "%s",
			 a < base + 4096 ? "a write to the runtime's record of the thread (threadIdx ...)"
					 : "the thread's stack overflowed (its guard page)");
		kf_san_cur(&kf_san.finding.cur, f, op, n, ret0, fp);
		kf_san_stop(f);
	}
	kf_san.accesses++;
	kf_san.seq[f->linear]++;
	kf_san_slow(a, n, op, ret0, fp, f);
}

#define KF_SAN_HOOK(N, T)                                                                                    \
	extern "C" KF_HIDDEN void __sanitizer_cov_load##N(T *p)                                              \
	{                                                                                                    \
		kf_san_access((uintptr_t)p, N, KF_RT_SAN_LOAD, (uintptr_t)__builtin_return_address(0),       \
			      (void *const *)__builtin_frame_address(0));                                    \
	}                                                                                                    \
	extern "C" KF_HIDDEN void __sanitizer_cov_store##N(T *p)                                             \
	{                                                                                                    \
		kf_san_access((uintptr_t)p, N, KF_RT_SAN_STORE, (uintptr_t)__builtin_return_address(0),      \
			      (void *const *)__builtin_frame_address(0));                                    \
	}
KF_SAN_HOOK(1, uint8_t)
KF_SAN_HOOK(2, uint16_t)
KF_SAN_HOOK(4, uint32_t)
KF_SAN_HOOK(8, uint64_t)
KF_SAN_HOOK(16, __int128)

extern "C" KF_HIDDEN void kf_san_atomic(const void *p, unsigned n)
{
	kf_san_access((uintptr_t)p, n, KF_RT_SAN_ATOMIC, (uintptr_t)__builtin_return_address(0),
		      (void *const *)__builtin_frame_address(0));
}

extern "C" KF_HIDDEN void kf_san_fence(void)
{
	if (!kf_san.active)
		return;
	uint32_t g = kf_san_gtid(kf_self());
	if (kf_san.nfence && g - 1 < kf_san.n_launch_threads)
		kf_san.nfence[g - 1]++;
}

/* The module is built with -fsanitize=address for what it tells the optimiser (no speculative loads, no
 * widened ones: the instrumented accesses are the source's), with AddressSanitizer's own checks turned
 * off; these are the few runtime entry points its code still calls. memcpy/memset/memmove of the kernel
 * come here, so they are checked as the ranges they touch. */
extern "C" KF_HIDDEN void __asan_init(void)
{
}
extern "C" KF_HIDDEN void __asan_version_mismatch_check_v8(void)
{
}
extern "C" KF_HIDDEN void __asan_handle_no_return(void)
{
}
/* Referenced by the outlined checks clang emits even with every check off; never called. */
#define KF_ASAN_REPORT(N)                                                                                    \
	extern "C" KF_HIDDEN void __asan_report_load##N(uintptr_t)                                           \
	{                                                                                                    \
		__builtin_trap();                                                                            \
	}                                                                                                    \
	extern "C" KF_HIDDEN void __asan_report_store##N(uintptr_t)                                          \
	{                                                                                                    \
		__builtin_trap();                                                                            \
	}
KF_ASAN_REPORT(1)
KF_ASAN_REPORT(2)
KF_ASAN_REPORT(4)
KF_ASAN_REPORT(8)
KF_ASAN_REPORT(16)
extern "C" KF_HIDDEN void __asan_report_load_n(uintptr_t, size_t)
{
	__builtin_trap();
}
extern "C" KF_HIDDEN void __asan_report_store_n(uintptr_t, size_t)
{
	__builtin_trap();
}
extern "C" KF_HIDDEN void *__asan_memcpy(void *d, const void *s, size_t n)
{
	if (n) {
		kf_san_access((uintptr_t)s, (uint32_t)n, KF_RT_SAN_LOAD,
			      (uintptr_t)__builtin_return_address(0),
			      (void *const *)__builtin_frame_address(0));
		kf_san_access((uintptr_t)d, (uint32_t)n, KF_RT_SAN_STORE,
			      (uintptr_t)__builtin_return_address(0),
			      (void *const *)__builtin_frame_address(0));
	}
	return memcpy(d, s, n);
}
extern "C" KF_HIDDEN void *__asan_memmove(void *d, const void *s, size_t n)
{
	if (n) {
		kf_san_access((uintptr_t)s, (uint32_t)n, KF_RT_SAN_LOAD,
			      (uintptr_t)__builtin_return_address(0),
			      (void *const *)__builtin_frame_address(0));
		kf_san_access((uintptr_t)d, (uint32_t)n, KF_RT_SAN_STORE,
			      (uintptr_t)__builtin_return_address(0),
			      (void *const *)__builtin_frame_address(0));
	}
	return memmove(d, s, n);
}
extern "C" KF_HIDDEN void *__asan_memset(void *d, int c, size_t n)
{
	if (n)
		kf_san_access((uintptr_t)d, (uint32_t)n, KF_RT_SAN_STORE,
			      (uintptr_t)__builtin_return_address(0),
			      (void *const *)__builtin_frame_address(0));
	return memset(d, c, n);
}

/* kf_rt_shutdown: everything the sanitizer holds goes (the module is about to be unloaded). */
static void kf_san_release(void)
{
	for (int i = 0; i < kf_san.n_fixed; i++)
		if (kf_san.fixed[i].cells)
			munmap(kf_san.fixed[i].cells, kf_san.fixed[i].cells_bytes);
	for (int i = 0; i < KF_RT_SAN_MAX_BUFFERS; i++)
		if (kf_san.gbuf[i].cells)
			munmap(kf_san.gbuf[i].cells, kf_san.gbuf[i].cells_bytes);
	free(kf_san.nfence);
	free(kf_san.pend);
	free(kf_san.seq);
	memset(&kf_san, 0, sizeof(kf_san));
	kf_cost_free_tables();
}

/* ---- what the runtime tells the sanitizer ------------------------------------------------------ */

static bool kf_san_launch_begin(dim3 grid, dim3 block, uint32_t smem)
{
	memset(&kf_san.finding, 0, sizeof(kf_san.finding));
	kf_san.stopped = false;
	kf_san.uninit_live = false;
	kf_san.ub_live = false;
	kf_san.accesses = 0;
	kf_san.grid = grid;
	kf_san.block = block;
	kf_san.smem_bytes = smem;
	kf_san.nthreads = block.x * block.y * block.z;
	kf_san.launch_start = ++kf_san.interval;
	uint64_t total = (uint64_t)grid.x * grid.y * grid.z * kf_san.nthreads;
	kf_san.gtid_ok = total < 0xfffffff0ull;
	free(kf_san.nfence);
	kf_san.nfence = 0;
	kf_san.n_launch_threads = 0;
	if (total <= ((uint64_t)1 << 26)) {
		kf_san.nfence = (uint16_t *)calloc((size_t)total, sizeof(uint16_t));
		if (!kf_san.nfence)
			return false;
		kf_san.n_launch_threads = total;
	}
	if (kf_san.n_pend < kf_san.nthreads) {
		free(kf_san.pend);
		free(kf_san.seq);
		kf_san.pend = (struct kf_san_pending *)calloc(kf_san.nthreads, sizeof(*kf_san.pend));
		kf_san.seq = (uint32_t *)calloc(kf_san.nthreads, sizeof(*kf_san.seq));
		if (!kf_san.pend || !kf_san.seq)
			return false;
		kf_san.n_pend = kf_san.nthreads;
	}
	/* the launch's dynamic shared memory: its smem bytes, not the whole buffer */
	for (int i = 0; i < kf_san.n_reg; i++)
		if (kf_san.reg[i].kind == KF_RT_SAN_DSHARED)
			kf_san.reg[i].dhi = kf_san.reg[i].dlo + smem;
	return kf_cost_launch_begin(grid, block, smem);
}

static void kf_san_block_begin(struct kf_block *b, uint64_t block_linear)
{
	kf_san.blk = b;
	kf_san.block_linear = block_linear;
	kf_san.block_start = ++kf_san.interval;
	memset(kf_san.warps, 0, sizeof(kf_san.warps));
	memset(kf_san.pend, 0, kf_san.nthreads * sizeof(*kf_san.pend));
	memset(kf_san.seq, 0, kf_san.nthreads * sizeof(*kf_san.seq));
	kf_san.pend_live = 0;
	kf_cost_block_begin(kf_san.nthreads);
}

/* The end of a barrier interval or of the block: a pending uninitialised read is the finding now. */
static void kf_san_interval_end(void)
{
	if (kf_san.uninit_live && !kf_san.stopped) {
		kf_san.finding = kf_san.uninit;
		kf_san.uninit_live = false;
		kf_san_stop(0);
	}
}

static void kf_san_barrier_done(void)
{
	kf_san_interval_end();
	++kf_san.interval;
	kf_cost_barrier();
}

static void kf_san_syncwarp_done(unsigned w, uint32_t grp)
{
	struct kf_san_warp *W = &kf_san.warps[w & 31];
	W->seq++;
	W->ring_seq[W->seq % KF_SAN_RING] = W->seq;
	W->ring_mask[W->seq % KF_SAN_RING] = grp;
}

/* Before a fiber switches out (barrier, collective, exit): its pending write is decided now. */
static void kf_san_yield(struct kf_fiber *f)
{
	if (kf_san.active && kf_san.pend_live && kf_san.pend[f->linear].live)
		kf_san_resolve(f);
}

/* A collective's own checks, in the fiber before it waits: the caller must be in its mask. */
static void kf_san_collective(struct kf_fiber *f, int op, unsigned mask, uintptr_t ret)
{
	if (!kf_san.active || op == KF_W_ACTIVE || (mask >> f->lane & 1))
		return;
	kf_san_begin_finding(KF_RT_SAN_WARP_UB, 0, 0);
	struct kf_rt_san_finding *F = &kf_san.finding;
	F->region = KF_RT_SAN_NOWHERE;
	F->mask = mask;
	F->index = (int32_t)f->lane;
	kf_san_cur(&F->cur, f, KF_RT_SAN_COLLECTIVE, 0, ret, (void *const *)__builtin_frame_address(0));
	snprintf(F->detail, sizeof(F->detail),
		 "lane %u calls a warp collective whose mask 0x%08x does not name it", f->lane, mask);
	kf_san_stop(f);
}

/* A shuffle of lane f took its value from lane `src` of the warp, which is not in the group that
 * completed the collective: the value is undefined on the GPU (the run hands out poison instead). Not
 * a finding by itself (a kernel may discard the value): it is noted, the launch goes on, and the
 * loader's caller decides by the outputs (kf_san_take returns the note with the launch's KF_RT_OK). */
static void kf_san_shfl_ub(struct kf_fiber *f, unsigned src, bool exited)
{
	if (kf_san.stopped || kf_san.ub_live)
		return;
	struct kf_rt_san_finding *F = &kf_san.ub;
	memset(F, 0, sizeof(*F));
	F->kind = KF_RT_SAN_WARP_UB;
	F->region = KF_RT_SAN_NOWHERE;
	F->mask = f->wmask;
	F->index = (int32_t)src;
	F->flags = exited ? KF_RT_SAN_F_EXITED : 0;
	F->cur.op = KF_RT_SAN_COLLECTIVE;
	kf_san_ids(kf_san_gtid(f), F->cur.block, F->cur.thread);
	F->cur.pc[0] = kf_san_off((uintptr_t)f->wpc - 1);
	snprintf(F->detail, sizeof(F->detail), "lane %u shuffles from lane %u of its warp, which %s", f->lane,
		 src,
		 exited ? "has exited" : "does not take part (not in the mask, or at another collective)");
	kf_san.ub_live = true;
}

/* The launch ran to its end: a noted shuffle is what kf_san_take reports. */
static void kf_san_launch_end(void)
{
	if (!kf_san.stopped && kf_san.ub_live)
		kf_san.finding = kf_san.ub;
	kf_cost_launch_end();
}

#endif
