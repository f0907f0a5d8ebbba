/* The fiber runtime of the cpu backend, compiled into every kernel .so (included once, after the
 * kernel source and its entry trampolines). Every CUDA thread of a block is a fiber with its own mmap'ed
 * stack and guard page; fibers switch (hand-written x86-64 register switch) only at __syncthreads and
 * warp collectives; blocks run in parallel on a pool of OS threads. Interface: kf_rt_abi.h. */
#ifndef KF_RUNTIME_H
#define KF_RUNTIME_H

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
extern "C" void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
						size_t *size_old);
#endif

#define KF_HIDDEN __attribute__((visibility("hidden")))
/* The runtime's own variables live in one section, so the sanitizer can tell them from the kernel's
 * __device__ globals (an access to them from kernel code is out of bounds). */
#define KF_RT_STATE __attribute__((section("kf_rt_state")))

extern "C" KF_HIDDEN KF_RT_STATE uintptr_t kf_rt_stack_mask = ~(uintptr_t)(65536 - 1);
extern "C" KF_HIDDEN KF_RT_STATE unsigned kf_rt_stack_shift = 16;

/* kf_rt_switch(save, to): saves the callee-saved registers on the current stack, stores the stack
 * pointer in *save, loads `to` and restores the registers saved there. kf_rt_boot is where a fresh
 * fiber's first switch returns to: r12 holds its kf_fiber. */
extern "C" void kf_rt_switch(void **save, void *to) KF_HIDDEN;
extern "C" void kf_rt_boot(void) KF_HIDDEN;
extern "C" void kf_rt_fiber_main(struct kf_fiber *f) KF_HIDDEN __attribute__((used, noreturn));
__asm__(".text\n"
	".p2align 4\n"
	".globl kf_rt_switch\n.hidden kf_rt_switch\n.type kf_rt_switch,@function\n"
	"kf_rt_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size kf_rt_switch, .-kf_rt_switch\n"
	".globl kf_rt_boot\n.hidden kf_rt_boot\n.type kf_rt_boot,@function\n"
	"kf_rt_boot:\n"
	"\tmovq %r12, %rdi\n"
	"\tcall kf_rt_fiber_main\n"
	"\tud2\n"
	".size kf_rt_boot, .-kf_rt_boot\n");

/* Per OS thread: the block it is running and the fibers (stacks) it owns. */
struct kf_block {
	void *sched_sp;
	struct kf_fiber **f;
	unsigned nf;     /* stacks allocated */
	unsigned *order; /* run order of a round */
	unsigned n;      /* threads in the current block */
	kf_rt_entry_fn entry;
	void **args;
	uint64_t rng;
	size_t stack_bytes; /* of the stacks in f */
	char msg[512];
	const void *sched_bottom; /* AddressSanitizer: the OS thread's own stack */
	size_t sched_size;
	void *sched_fake;
	/* This OS thread's static shared memory: the module's thread-local storage but the runtime's own
	 * variables (kf_shared_find), up to three pieces; n_shared < 0 until looked up. */
	int n_shared;
	unsigned char *shared_lo[3], *shared_hi[3];
	unsigned char *tls_lo; /* the module's TLS block on this thread */
	uint32_t smem_bytes;   /* dynamic shared memory of the current launch */
};

static KF_RT_STATE size_t kf_cfg_stack = 65536;
static KF_RT_STATE uint64_t kf_cfg_seed;
static KF_RT_STATE int kf_cfg_threads;
static KF_RT_STATE kf_rt_spawn_fn kf_cfg_spawn;
static KF_RT_STATE void *kf_cfg_spawn_ctx;

static KF_RT_STATE uint32_t kf_cfg_poison; /* 0: shared memory is not poisoned (kf_rt_set_poison) */

/* Dynamic shared memory: one fixed buffer per OS thread, so what the pre-pass makes of
 * `extern __shared__ T s[];` (another name for kf_dsmem at file scope, `T *const s = kf_dyn_smem()` in a
 * function) stays right for every block on that thread. */
extern "C" {
KF_HIDDEN thread_local __attribute__((aligned(256))) unsigned char kf_dsmem[KF_RT_DSMEM_MAX];
}
static thread_local struct kf_block *kf_tls_blk;

extern "C" KF_HIDDEN void *kf_dyn_smem(void)
{
	return kf_dsmem;
}

/* ---- shared memory poison ---------------------------------------------------------------------- */
/* Static __shared__ variables are the module's thread-local variables (the shim makes them
 * thread_local, and the pre-pass leaves no other thread-local variable in the kernel's code); the runtime
 * adds kf_dsmem and kf_tls_blk. So this thread's static shared memory is the module's TLS block minus
 * those two, found once per OS thread from the program headers. */
struct kf_tls_query {
	uintptr_t probe; /* an address inside this module's code */
	unsigned char *tls;
	size_t tls_bytes;
};

static int kf_tls_cb(struct dl_phdr_info *info, size_t, void *arg)
{
	struct kf_tls_query *q = (struct kf_tls_query *)arg;
	bool mine = false;
	const ElfW(Phdr) *tls = 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && q->probe >= info->dlpi_addr + ph->p_vaddr &&
		    q->probe < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			mine = true;
		if (ph->p_type == PT_TLS)
			tls = ph;
	}
	if (!mine)
		return 0;
	if (tls && info->dlpi_tls_data) {
		q->tls = (unsigned char *)info->dlpi_tls_data;
		q->tls_bytes = tls->p_memsz;
	}
	return 1;
}

static void kf_shared_find(struct kf_block *b)
{
	struct kf_tls_query q = {(uintptr_t)&kf_rt_switch, 0, 0};
	b->n_shared = 0;
	/* a first access allocates this thread's TLS block of the module (dlpi_tls_data is NULL before) */
	*(volatile unsigned char *)kf_dsmem = *(volatile unsigned char *)kf_dsmem;
	dl_iterate_phdr(kf_tls_cb, &q);
	if (!q.tls)
		return;
	b->tls_lo = q.tls;
	/* the segment minus the runtime's own two variables, in address order */
	unsigned char *cut_lo[2] = {kf_dsmem, (unsigned char *)&kf_tls_blk};
	unsigned char *cut_hi[2] = {kf_dsmem + sizeof(kf_dsmem), (unsigned char *)(&kf_tls_blk + 1)};
	if (cut_lo[1] < cut_lo[0]) {
		unsigned char *t = cut_lo[0];
		cut_lo[0] = cut_lo[1];
		cut_lo[1] = t;
		t = cut_hi[0];
		cut_hi[0] = cut_hi[1];
		cut_hi[1] = t;
	}
	unsigned char *at = q.tls, *end = q.tls + q.tls_bytes;
	for (int i = 0; i <= 2; i++) {
		unsigned char *stop = i < 2 ? cut_lo[i] : end;
		if (stop > end)
			stop = end;
		if (stop > at) {
			b->shared_lo[b->n_shared] = at;
			b->shared_hi[b->n_shared] = stop;
			b->n_shared++;
		}
		if (i < 2 && cut_hi[i] > at)
			at = cut_hi[i];
	}
}

/* Byte k of [lo, hi) gets byte k % 4 (little-endian) of the pattern, counted from base. */
static void kf_fill(unsigned char *lo, unsigned char *hi, const unsigned char *base, uint32_t pat)
{
	for (unsigned char *p = lo; p < hi; p++)
		*p = (unsigned char)(pat >> (8 * ((size_t)(p - base) & 3)));
}

/* What a block finds in its shared memory: the run's poison, as outputs and scratch get it, so a read
 * before any write in the block gives a different result under the two poison patterns. */
static void kf_shared_poison(struct kf_block *b)
{
	if (!kf_cfg_poison)
		return;
	if (b->n_shared < 0)
		kf_shared_find(b);
	for (int i = 0; i < b->n_shared; i++)
		kf_fill(b->shared_lo[i], b->shared_hi[i], b->shared_lo[0], kf_cfg_poison);
	kf_fill(kf_dsmem, kf_dsmem + b->smem_bytes, kf_dsmem, kf_cfg_poison);
}

static inline void kf_to_fiber(struct kf_block *b, struct kf_fiber *f)
{
#ifdef __SANITIZE_ADDRESS__
	uintptr_t base = (uintptr_t)f & ~(uintptr_t)(b->stack_bytes - 1);
	__sanitizer_start_switch_fiber(&b->sched_fake, (char *)base + 2 * 4096, b->stack_bytes - 2 * 4096);
	kf_rt_switch(&b->sched_sp, f->sp);
	__sanitizer_finish_switch_fiber(b->sched_fake, 0, 0);
#else
	kf_rt_switch(&b->sched_sp, f->sp);
#endif
}

static inline void kf_to_sched(struct kf_fiber *f, bool exiting)
{
	struct kf_block *b = f->blk;
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_start_switch_fiber(exiting ? 0 : &f->fake_stack, b->sched_bottom, b->sched_size);
	kf_rt_switch(&f->sp, b->sched_sp);
	__sanitizer_finish_switch_fiber(f->fake_stack, 0, 0);
#else
	(void)exiting;
	kf_rt_switch(&f->sp, b->sched_sp);
#endif
}

#ifdef KF_SANITIZE
#include "kf_san.h"
#define KF_SAN(x) x
#else
#define KF_SAN(x) ((void)0)
#endif

extern "C" void kf_rt_fiber_main(struct kf_fiber *f)
{
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_finish_switch_fiber(0, &f->blk->sched_bottom, &f->blk->sched_size);
#endif
	f->blk->entry(f->blk->args);
	KF_SAN(kf_san_yield(f));
	f->state = KF_F_EXIT;
	kf_to_sched(f, true);
	__builtin_trap(); /* an exited fiber is never resumed: the next block re-initializes its stack */
}

extern "C" int kf_rt_barrier(int pred)
{
	struct kf_fiber *f = kf_self();
	KF_SAN(kf_san_yield(f));
	f->bar_pred = pred;
	f->state = KF_F_BAR;
	kf_to_sched(f, false);
	return f->bar_pred;
}

extern "C" uint64_t kf_rt_warp(int op, unsigned mask, uint64_t val, int arg, int width)
{
	struct kf_fiber *f = kf_self();
	f->wpc = __builtin_return_address(0);
	KF_SAN(kf_san_yield(f));
	KF_SAN(kf_san_collective(f, op, mask, (uintptr_t)f->wpc));
	f->wop = op;
	f->wmask = mask;
	f->wval = val;
	f->warg = arg;
	f->wwidth = (width <= 0 || width > 32 || (width & (width - 1))) ? 32 : width;
	f->state = KF_F_WARP;
	kf_to_sched(f, false);
	return f->wres;
}

/* ---- stacks ------------------------------------------------------------------------------------ */
/* Layout of one fiber region (stack_bytes, aligned to stack_bytes): [kf_fiber page][guard page][stack]. */
static struct kf_fiber *kf_fiber_new(size_t sz)
{
	size_t span = 2 * sz;
	char *p =
	    (char *)mmap(0, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	uintptr_t a = ((uintptr_t)p + sz - 1) & ~(uintptr_t)(sz - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	if ((uintptr_t)p + span > a + sz)
		munmap((void *)(a + sz), (uintptr_t)p + span - (a + sz));
	if (mprotect((char *)a + 4096, 4096, PROT_NONE) != 0) {
		munmap((void *)a, sz);
		return 0;
	}
	return (struct kf_fiber *)(a + kf_color(a));
}

static void kf_block_release(struct kf_block *b)
{
	for (unsigned i = 0; i < b->nf; i++)
		munmap((void *)((uintptr_t)b->f[i] & ~(uintptr_t)(b->stack_bytes - 1)), b->stack_bytes);
	free(b->f);
	free(b->order);
	b->f = 0;
	b->order = 0;
	b->nf = 0;
}

static bool kf_block_reserve(struct kf_block *b, unsigned n)
{
	if (b->nf && b->stack_bytes != kf_cfg_stack)
		kf_block_release(b);
	if (n <= b->nf)
		return true;
	struct kf_fiber **nfv = (struct kf_fiber **)realloc(b->f, n * sizeof(*nfv));
	if (!nfv)
		return false;
	b->f = nfv;
	unsigned *no = (unsigned *)realloc(b->order, n * sizeof(*no));
	if (!no)
		return false;
	b->order = no;
	b->stack_bytes = kf_cfg_stack;
	while (b->nf < n) {
		struct kf_fiber *f = kf_fiber_new(b->stack_bytes);
		if (!f)
			return false;
		b->f[b->nf++] = f;
	}
	return true;
}

static void kf_fiber_prepare(struct kf_block *b, struct kf_fiber *f)
{
	/* A fresh frame for kf_rt_switch: six saved registers (r12 = f) and the return address kf_rt_boot,
	 * placed so that kf_rt_boot starts with a 16-byte aligned stack. */
	uintptr_t base = (uintptr_t)f & ~(uintptr_t)(b->stack_bytes - 1);
	uintptr_t top = (base + b->stack_bytes - kf_color(base)) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)(top - 72);
	sp[0] = sp[1] = sp[2] = 0;
	sp[3] = (uint64_t)(uintptr_t)f;
	sp[4] = sp[5] = 0;
	sp[6] = (uint64_t)(uintptr_t)&kf_rt_boot;
	sp[7] = 0;
	f->sp = sp;
	f->blk = b;
	f->state = KF_F_RUN;
	f->fake_stack = 0;
}

static uint64_t kf_rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ---- warp collectives ---------------------------------------------------------------------------- */
static unsigned kf_src_lane(const struct kf_fiber *f)
{
	unsigned lane = f->lane, w = (unsigned)f->wwidth, base = lane & ~(w - 1);
	int s;
	switch (f->wop) {
	case KF_W_SHFL:
		return base + ((unsigned)f->warg & (w - 1));
	case KF_W_UP:
		s = (int)(lane - base) - f->warg;
		return s < 0 ? lane : base + (unsigned)s;
	case KF_W_DOWN:
		s = (int)(lane - base) + f->warg;
		return s >= (int)w ? lane : base + (unsigned)s;
	case KF_W_XOR:
		s = (int)(lane ^ (unsigned)f->warg);
		return ((unsigned)s & ~(w - 1)) != base ? lane : (unsigned)s;
	}
	return lane;
}

/* Completes the collective of the lanes in `grp` (bit = lane) of warp w (fibers wf[0..nl)). */
static void kf_warp_complete(struct kf_fiber **wf, unsigned nl, unsigned grp)
{
	struct kf_fiber *first = 0;
	uint64_t acc = 0;
	unsigned bal = 0;
	int64_t smin = INT64_MAX, smax = INT64_MIN;
	uint64_t umin = UINT64_MAX, umax = 0, uand = ~0ull, uor = 0, uxor = 0;
	for (unsigned l = 0; l < 32; l++) {
		if (!(grp >> l & 1))
			continue;
		struct kf_fiber *f = wf[l];
		if (!first)
			first = f;
		if (f->wval & 1)
			bal |= 1u << l;
		acc += f->wval;
		if ((int64_t)f->wval < smin)
			smin = (int64_t)f->wval;
		if ((int64_t)f->wval > smax)
			smax = (int64_t)f->wval;
		if (f->wval < umin)
			umin = f->wval;
		if (f->wval > umax)
			umax = f->wval;
		uand &= f->wval;
		uor |= f->wval;
		uxor ^= f->wval;
	}
	for (unsigned l = 0; l < 32; l++) {
		if (!(grp >> l & 1))
			continue;
		struct kf_fiber *f = wf[l];
		unsigned s;
		switch (f->wop) {
		case KF_W_SHFL:
		case KF_W_UP:
		case KF_W_DOWN:
		case KF_W_XOR:
			s = kf_src_lane(f);
			/* A source lane past the segment gives the caller's own value (as on the GPU); one
			 * inside it that is not in the group (exited, or not taking part) gives an undefined
			 * value on the GPU: here the run's poison, so a kernel that uses it fails the
			 * determinism check (and the sanitizer notes where it came from). */
			if (s < 32 && (grp >> s & 1))
				f->wres = wf[s]->wval;
			else if (s == f->lane || !kf_cfg_poison)
				f->wres = f->wval;
			else
				f->wres = (uint64_t)kf_cfg_poison << 32 | kf_cfg_poison;
			KF_SAN(if (s != f->lane && !(s < 32 && (grp >> s & 1)))
				   kf_san_shfl_ub(f, s, s >= nl || wf[s]->state == KF_F_EXIT));
			break;
		case KF_W_BALLOT:
			f->wres = bal;
			break;
		case KF_W_ANY:
			f->wres = bal != 0;
			break;
		case KF_W_ALL:
			f->wres = bal == grp;
			break;
		case KF_W_ACTIVE:
			f->wres = grp;
			break;
		case KF_W_RADD:
			f->wres = (uint32_t)acc;
			break;
		case KF_W_RMIN:
			f->wres = f->warg ? (uint64_t)smin : umin;
			break;
		case KF_W_RMAX:
			f->wres = f->warg ? (uint64_t)smax : umax;
			break;
		case KF_W_RAND:
			f->wres = uand;
			break;
		case KF_W_ROR:
			f->wres = uor;
			break;
		case KF_W_RXOR:
			f->wres = uxor;
			break;
		case KF_W_MATCH_ANY:
		case KF_W_MATCH_ALL: {
			unsigned m = 0;
			for (unsigned k = 0; k < 32; k++)
				if ((grp >> k & 1) && wf[k]->wval == f->wval)
					m |= 1u << k;
			f->wres = f->wop == KF_W_MATCH_ANY ? m : (m == grp ? grp : 0);
			break;
		}
		default:
			f->wres = 0;
			break;
		}
		f->state = KF_F_RUN;
	}
	(void)nl;
	KF_SAN(if (first && first->wop == KF_W_SYNC) kf_san_syncwarp_done(first->warp, grp));
	KF_SAN(kf_cost_collective());
	(void)first;
}

/* Resolves what can be resolved in one warp; returns true on progress. A collective with mask M
 * completes when every lane of M that still runs (has not exited) waits at a collective with the same
 * mask and kind; __activemask groups the lanes waiting at the same source line. */
static bool kf_warp_resolve(struct kf_fiber **wf, unsigned nl)
{
	unsigned live = 0, waiting = 0;
	for (unsigned l = 0; l < nl; l++) {
		if (wf[l]->state != KF_F_EXIT)
			live |= 1u << l;
		if (wf[l]->state == KF_F_WARP)
			waiting |= 1u << l;
	}
	bool progress = false;
	while (waiting) {
		unsigned l0 = (unsigned)__builtin_ctz(waiting);
		struct kf_fiber *f0 = wf[l0];
		unsigned grp = 0, need;
		if (f0->wop == KF_W_ACTIVE) {
			for (unsigned l = 0; l < nl; l++)
				if ((waiting >> l & 1) && wf[l]->wop == KF_W_ACTIVE &&
				    wf[l]->warg == f0->warg)
					grp |= 1u << l;
			need = grp;
		} else {
			for (unsigned l = 0; l < nl; l++)
				if ((waiting >> l & 1) && wf[l]->wop != KF_W_ACTIVE &&
				    wf[l]->wmask == f0->wmask)
					grp |= 1u << l;
			need = f0->wmask & live;
			/* a lane may only take part if its own mask names it; kinds must agree */
			bool same = (grp & ~f0->wmask) == 0;
			for (unsigned l = 0; l < nl && same; l++)
				if ((grp >> l & 1) && wf[l]->wop != f0->wop)
					same = false;
			if (!same || grp != need) {
				waiting &= ~grp;
				if (!grp)
					waiting &= ~(1u << l0);
				continue;
			}
		}
		kf_warp_complete(wf, nl, grp);
		waiting &= ~grp;
		progress = true;
	}
	return progress;
}

/* ---- one block ----------------------------------------------------------------------------------- */
static int kf_block_run(struct kf_block *b, uint3 bid, dim3 bdim, dim3 gdim, uint64_t block_linear)
{
	unsigned n = b->n;
	for (unsigned i = 0; i < n; i++) {
		struct kf_fiber *f = b->f[i];
		kf_fiber_prepare(b, f);
		f->tid.x = i % bdim.x;
		f->tid.y = (i / bdim.x) % bdim.y;
		f->tid.z = i / (bdim.x * bdim.y);
		f->bid = bid;
		f->bdim = bdim;
		f->gdim = gdim;
		f->linear = i;
		f->lane = i & 31;
		f->warp = i >> 5;
		b->order[i] = i;
	}
	if (kf_cfg_seed)
		b->rng = (kf_cfg_seed ^ (block_linear + 1) * 0x9e3779b97f4a7c15ull) | 1;
	kf_shared_poison(b);
	KF_SAN(kf_san_block_begin(b, block_linear));
	for (;;) {
		if (kf_cfg_seed) {
			for (unsigned i = n; i > 1; i--) {
				unsigned j = (unsigned)(kf_rng_next(&b->rng) % i);
				unsigned t = b->order[i - 1];
				b->order[i - 1] = b->order[j];
				b->order[j] = t;
			}
		}
		unsigned n_exit = 0, n_bar = 0, n_warp = 0, n_run = 0;
		for (unsigned k = 0; k < n; k++) {
			struct kf_fiber *f = b->f[b->order[k]];
			if (f->state == KF_F_RUN) {
				KF_SAN(kf_san.active = true);
				kf_to_fiber(b, f);
				KF_SAN(kf_san.active = false);
#ifdef KF_SANITIZE
				if (kf_san.stopped) {
					snprintf(b->msg, sizeof(b->msg), "sanitizer: %s",
						 kf_san.finding.detail);
					return KF_RT_SANITIZER;
				}
#endif
			}
			int s = f->state;
			n_exit += s == KF_F_EXIT;
			n_bar += s == KF_F_BAR;
			n_warp += s == KF_F_WARP;
			n_run += s == KF_F_RUN; /* counting: a lane yielded after an access */
		}
		if (n_exit == n) {
#ifdef KF_SANITIZE
			kf_san_interval_end();
			kf_cost_interval_end();
			if (kf_san.stopped) {
				snprintf(b->msg, sizeof(b->msg), "sanitizer: %s", kf_san.finding.detail);
				return KF_RT_SANITIZER;
			}
#endif
			return KF_RT_OK;
		}
		bool progress = false;
		if (n_warp)
			for (unsigned w = 0; w * 32 < n; w++) {
				unsigned nl = n - w * 32 < 32 ? n - w * 32 : 32;
				progress |= kf_warp_resolve(&b->f[w * 32], nl);
			}
#ifdef KF_SANITIZE
		if (kf_san.stopped) {
			snprintf(b->msg, sizeof(b->msg), "sanitizer: %s", kf_san.finding.detail);
			return KF_RT_SANITIZER;
		}
#endif
		if (progress || n_run)
			continue;
		/* As on the GPU (PTX bar.sync, sm_70 and later), a barrier waits only for threads that have
		 * not exited: `if (i >= n) return; ... __syncthreads();` in a tail block completes there, so
		 * it completes here. */
		if (n_bar > 0 && n_bar + n_exit == n) {
			int cnt = 0;
			for (unsigned i = 0; i < n; i++)
				if (b->f[i]->state == KF_F_BAR)
					cnt += b->f[i]->bar_pred;
			for (unsigned i = 0; i < n; i++) {
				if (b->f[i]->state != KF_F_BAR)
					continue;
				b->f[i]->bar_pred = cnt;
				b->f[i]->state = KF_F_RUN;
			}
			KF_SAN(kf_san_barrier_done());
#ifdef KF_SANITIZE
			if (kf_san.stopped) {
				snprintf(b->msg, sizeof(b->msg), "sanitizer: %s", kf_san.finding.detail);
				return KF_RT_SANITIZER;
			}
#endif
			continue;
		}
		if (n_bar > 0)
			snprintf(b->msg, sizeof(b->msg),
				 "deadlock: divergent __syncthreads in block (%u,%u,%u): %u of %u threads "
				 "wait at a barrier, "
				 "%u wait at a warp collective, %u exited",
				 bid.x, bid.y, bid.z, n_bar, n, n_warp, n_exit);
		else
			snprintf(b->msg, sizeof(b->msg),
				 "deadlock: divergent warp collective in block (%u,%u,%u): %u threads wait "
				 "at __shfl/__ballot/"
				 "__syncwarp whose mask names lanes that exited or wait at another "
				 "collective (%u exited)",
				 bid.x, bid.y, bid.z, n_warp, n_exit);
		return KF_RT_RUNTIME;
	}
}

/* ---- the launch: blocks spread over OS threads --------------------------------------------------- */
struct kf_launch_state {
	kf_rt_entry_fn entry;
	void **args;
	dim3 grid, block;
	uint32_t smem_bytes;
	uint64_t n_blocks;
	uint64_t next; /* atomic: next block index */
	int failed;    /* atomic */
	int status;
	char msg[512];
	pthread_mutex_t mu;
};

static void kf_launch_work(struct kf_launch_state *L)
{
	struct kf_block *b = kf_tls_blk;
	if (!b) {
		b = (struct kf_block *)calloc(1, sizeof(*b));
		if (!b)
			goto nomem;
		b->n_shared = -1;
		kf_tls_blk = b;
	}
	b->smem_bytes = L->smem_bytes;
	b->n = L->block.x * L->block.y * L->block.z;
	if (!kf_block_reserve(b, b->n))
		goto nomem;
	b->entry = L->entry;
	b->args = L->args;
	for (;;) {
		if (__atomic_load_n(&L->failed, __ATOMIC_RELAXED))
			return;
		uint64_t i;
#ifdef KF_SANITIZE
		if (kf_cost.sampled) { /* blocks run one at a time here: the sampler picks them */
			if (!kf_cost_next_block(&i))
				return;
		} else
#endif
		{
			i = __atomic_fetch_add(&L->next, 1, __ATOMIC_RELAXED);
			if (i >= L->n_blocks)
				return;
		}
		uint3 bid;
		bid.x = (unsigned)(i % L->grid.x);
		bid.y = (unsigned)((i / L->grid.x) % L->grid.y);
		bid.z = (unsigned)(i / ((uint64_t)L->grid.x * L->grid.y));
		int rc = kf_block_run(b, bid, L->block, L->grid, i);
		if (rc != KF_RT_OK) {
			pthread_mutex_lock(&L->mu);
			if (!L->failed) {
				L->status = rc;
				memcpy(L->msg, b->msg, sizeof(L->msg));
				__atomic_store_n(&L->failed, 1, __ATOMIC_RELAXED);
			}
			pthread_mutex_unlock(&L->mu);
			return;
		}
	}
nomem:
	pthread_mutex_lock(&L->mu);
	if (!L->failed) {
		L->status = KF_RT_NOMEM;
		snprintf(L->msg, sizeof(L->msg), "cannot allocate fiber stacks: %s", strerror(errno));
		__atomic_store_n(&L->failed, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&L->mu);
}

/* The pool: helpers wait for a launch generation, work it, and report done. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	pthread_t *tid;
	int n; /* helper threads (the launching thread works too) */
	uint64_t gen;
	int busy;
	bool stop;
	struct kf_launch_state *cur;
	bool lent; /* the threads came from kf_cfg_spawn: they go back to the loader instead of a join */
	int alive; /* lent helpers still in kf_pool_main */
} kf_pool KF_RT_STATE = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
			 PTHREAD_COND_INITIALIZER}; /* rest 0 */

static void *kf_pool_main(void *)
{
	uint64_t seen = 0;
	pthread_mutex_lock(&kf_pool.mu);
	for (;;) {
		while (!kf_pool.stop && kf_pool.gen == seen)
			pthread_cond_wait(&kf_pool.go, &kf_pool.mu);
		if (kf_pool.stop)
			break;
		seen = kf_pool.gen;
		struct kf_launch_state *L = kf_pool.cur;
		pthread_mutex_unlock(&kf_pool.mu);
		kf_launch_work(L);
		pthread_mutex_lock(&kf_pool.mu);
		if (--kf_pool.busy == 0)
			pthread_cond_broadcast(&kf_pool.done);
	}
	pthread_mutex_unlock(&kf_pool.mu);
	if (kf_tls_blk) {
		kf_block_release(kf_tls_blk);
		free(kf_tls_blk);
		kf_tls_blk = 0;
	}
	if (kf_pool.lent) {
		pthread_mutex_lock(&kf_pool.mu);
		if (--kf_pool.alive == 0)
			pthread_cond_broadcast(&kf_pool.done);
		pthread_mutex_unlock(&kf_pool.mu);
	}
	return 0;
}

static void kf_pool_start(void)
{
	if (kf_pool.tid)
		return;
	if (kf_cfg_spawn) {
		/* Threads lent by the loader; as many as it has free, up to n_threads - 1. */
		int want = kf_cfg_threads > 1 ? kf_cfg_threads : 1;
		if (want > 256)
			want = 256;
		kf_pool.tid = (pthread_t *)calloc(1, sizeof(pthread_t));
		if (!kf_pool.tid)
			return;
		kf_pool.n = 0;
		kf_pool.stop = false;
		kf_pool.lent = true;
		for (int i = 0; i < want - 1; i++) {
			pthread_mutex_lock(&kf_pool.mu);
			kf_pool.alive++;
			pthread_mutex_unlock(&kf_pool.mu);
			if (kf_cfg_spawn(kf_pool_main, 0, kf_cfg_spawn_ctx) != 0) {
				pthread_mutex_lock(&kf_pool.mu);
				kf_pool.alive--;
				pthread_mutex_unlock(&kf_pool.mu);
				break;
			}
			kf_pool.n++;
		}
		return;
	}
	int want = kf_cfg_threads > 0 ? kf_cfg_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (want < 1)
		want = 1;
	if (want > 256)
		want = 256;
	kf_pool.tid = (pthread_t *)calloc((size_t)want, sizeof(pthread_t));
	if (!kf_pool.tid)
		return;
	kf_pool.n = 0;
	kf_pool.stop = false;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1 << 20);
	for (int i = 0; i < want - 1; i++) {
		if (pthread_create(&kf_pool.tid[kf_pool.n], &at, kf_pool_main, 0) != 0)
			break;
		kf_pool.n++;
	}
	pthread_attr_destroy(&at);
}

KF_EXPORT void kf_rt_shutdown(void)
{
	pthread_mutex_lock(&kf_pool.mu);
	kf_pool.stop = true;
	pthread_cond_broadcast(&kf_pool.go);
	if (kf_pool.lent)
		while (kf_pool.alive > 0)
			pthread_cond_wait(&kf_pool.done, &kf_pool.mu);
	pthread_mutex_unlock(&kf_pool.mu);
	if (!kf_pool.lent)
		for (int i = 0; i < kf_pool.n; i++)
			pthread_join(kf_pool.tid[i], 0);
	kf_pool.lent = false;
	free(kf_pool.tid);
	kf_pool.tid = 0;
	kf_pool.n = 0;
	kf_pool.stop = false;
	if (kf_tls_blk) {
		kf_block_release(kf_tls_blk);
		free(kf_tls_blk);
		kf_tls_blk = 0;
	}
	KF_SAN(kf_san_release());
}

KF_EXPORT void kf_rt_set_poison(uint32_t pattern)
{
	kf_cfg_poison = pattern;
}

KF_EXPORT int kf_rt_abi_version(void)
{
	return KF_RT_ABI_VERSION;
}

KF_EXPORT int kf_rt_configure(const struct kf_rt_config *c)
{
	size_t st = c->stack_bytes ? c->stack_bytes : 65536;
	if (st < 16384 || (st & (st - 1)) || st > ((size_t)1 << 26))
		return KF_RT_INVALID;
	int threads = c->n_threads;
#ifdef KF_SANITIZE
	threads = 1; /* blocks one at a time on the launching thread: the shadow state needs no locks */
#endif
	if (kf_pool.tid && (threads != kf_cfg_threads || c->spawn != kf_cfg_spawn))
		kf_rt_shutdown();
	kf_cfg_threads = threads;
	kf_cfg_spawn = c->spawn;
	kf_cfg_spawn_ctx = c->spawn_ctx;
	kf_cfg_seed = c->shuffle_seed;
	kf_cfg_stack = st;
	kf_rt_stack_mask = ~(uintptr_t)(st - 1);
	kf_rt_stack_shift = (unsigned)__builtin_ctzll((unsigned long long)st);
	return KF_RT_OK;
}

KF_EXPORT int kf_rt_launch(kf_rt_entry_fn entry, const uint32_t grid[3], const uint32_t block[3],
			   uint32_t smem_bytes, void **args, char *msg, size_t msg_len)
{
	uint64_t nt = (uint64_t)block[0] * block[1] * block[2];
	uint64_t nb = (uint64_t)grid[0] * grid[1] * grid[2];
	if (!entry || nt == 0 || nt > 1024 || nb == 0) {
		snprintf(msg, msg_len, "invalid launch: %llu threads per block, %llu blocks",
			 (unsigned long long)nt, (unsigned long long)nb);
		return KF_RT_INVALID;
	}
	if (smem_bytes > KF_RT_DSMEM_MAX) {
		snprintf(msg, msg_len, "invalid launch: %u bytes of dynamic shared memory (at most %u)",
			 smem_bytes, (unsigned)KF_RT_DSMEM_MAX);
		return KF_RT_INVALID;
	}
	struct kf_launch_state L;
	memset(&L, 0, sizeof(L));
	pthread_mutex_init(&L.mu, 0);
	L.entry = entry;
	L.args = args;
	L.grid = dim3(grid[0], grid[1], grid[2]);
	L.block = dim3(block[0], block[1], block[2]);
	L.smem_bytes = smem_bytes;
	L.n_blocks = nb;
#ifdef KF_SANITIZE
	if (!kf_san.ready) {
		snprintf(msg, msg_len, "sanitizer: kf_san_configure was not called before the launch");
		return KF_RT_INVALID;
	}
	if (!kf_san_launch_begin(L.grid, L.block, smem_bytes)) {
		snprintf(msg, msg_len, "sanitizer: out of memory for %llu threads",
			 (unsigned long long)(nt * nb));
		return KF_RT_NOMEM;
	}
#endif
	kf_pool_start();
	int helpers = kf_pool.n;
	if ((uint64_t)helpers > nb - 1)
		helpers = (int)(nb - 1);
	if (helpers > 0) {
		pthread_mutex_lock(&kf_pool.mu);
		kf_pool.cur = &L;
		kf_pool.busy = kf_pool.n;
		kf_pool.gen++;
		pthread_cond_broadcast(&kf_pool.go);
		pthread_mutex_unlock(&kf_pool.mu);
	}
	kf_launch_work(&L);
	if (helpers > 0) {
		pthread_mutex_lock(&kf_pool.mu);
		while (kf_pool.busy > 0)
			pthread_cond_wait(&kf_pool.done, &kf_pool.mu);
		kf_pool.cur = 0;
		pthread_mutex_unlock(&kf_pool.mu);
	}
	pthread_mutex_destroy(&L.mu);
	KF_SAN(kf_san_launch_end());
	if (L.status != KF_RT_OK)
		snprintf(msg, msg_len, "%s", L.msg);
	return L.status;
}

/* A ping-pong between the scheduler and one fiber that yields at a barrier in a loop. */
static void kf_switch_probe(void **)
{
	for (int i = 0; i < 100000; i++)
		__syncthreads();
}

KF_EXPORT double kf_rt_switch_ns(void)
{
	uint32_t g[3] = {1, 1, 1}, bl[3] = {1, 1, 1};
	char msg[256];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (kf_rt_launch(kf_switch_probe, g, bl, 0, 0, msg, sizeof(msg)) != KF_RT_OK)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	return ns / (2.0 * 100000); /* two switches per barrier: to the scheduler and back */
}

#endif
