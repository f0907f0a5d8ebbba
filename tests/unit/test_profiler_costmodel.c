/* The GPU cost model on counts written by hand (the instrumented run's own counts are tested in
 * test_cpu_sanitizer.c; whole kernels through the cpu backend in tests/integration/costmodel.sh): each
 * limit binds where its counts say, the arithmetic of each term, extrapolation of sampled blocks, the
 * cap of DRAM traffic by an L2 that holds everything, occupancy in the latency term, and bad counts
 * refused with the launch named. */
#include <math.h>
#include <string.h>

#include "profiler/costmodel.h"
#include "testing.h"

/* A launch of `blocks` blocks of 256 threads (8 warps), all run, touching `touched` bytes. */
static struct kf_rt_cost launch(uint32_t blocks)
{
	struct kf_rt_cost c;
	memset(&c, 0, sizeof(c));
	c.grid[0] = blocks, c.grid[1] = c.grid[2] = 1;
	c.block[0] = 256, c.block[1] = c.block[2] = 1;
	c.blocks_total = c.blocks_run = blocks;
	c.warps_run = (uint64_t)blocks * 8;
	return c;
}

/* y[i] = x[i] for n floats, one element per thread: each warp one load and one store of 4 sectors
 * (coalesced) or `spr` sectors per load; every sector read misses once (no reuse). */
static struct kf_rt_cost copy_counts(uint64_t n, uint64_t spr)
{
	struct kf_rt_cost c = launch((uint32_t)(n / 256));
	uint64_t warps = n / 32;
	c.gld_requests = c.gst_requests = warps;
	c.gld_sectors = warps * spr;
	c.gst_sectors = warps * 4;
	c.gld_bytes = c.gst_bytes = n * 4;
	c.l2_read_misses = c.gld_sectors;
	c.l2_writebacks = c.gst_sectors;
	c.warp_edges = warps * 2;
	c.thread_edges = n * 2;
	c.touched_bytes = spr == 4 ? 8 * n : 4 * n + 32 * n;
	return c;
}

static double predict(const struct kf_rt_cost *c, int regs, int smem, struct kf_cost_pred *p)
{
	struct kf_cost_launch_in in = {.c = c, .regs = regs, .static_smem_bytes = smem, .kernel = "k"};
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st = kf_cost_predict(kf_cost_target_find("h100"), &in, 1, p, &err);
	CHECKF(st == KF_OK, "%s", err.msg);
	return st == KF_OK ? p->total_ns : NAN;
}

static void test_copy_memory_bound(void)
{
	struct kf_cost_pred p;
	uint64_t n = (uint64_t)1 << 24;
	struct kf_rt_cost c = copy_counts(n, 4);
	double t = predict(&c, 16, 0, &p);
	CHECK_STR(kf_cost_limit_name(p.bind), "memory");
	CHECK_EQ_INT(p.version, KF_COST_MODEL_VERSION);
	/* 128 MiB (L2 is 50 MiB: no cap) at 0.9 x 3.35 TB/s = 44.5 us, + 2 us launch */
	CHECK_NEAR(p.launches[0].dram_bytes, 128.0 * 1048576, 1);
	CHECK_NEAR(t, 134217728.0 / (3.35e12 * 0.9) * 1e9 + 2000, 1);
	CHECK_NEAR(p.launches[0].sectors_per_load, 4.0, 1e-12);
	/* 65536 blocks, 8 per SM by warps: 62.06 -> 63 waves */
	CHECK_EQ_INT(p.launches[0].blocks_per_sm, 8);
	CHECK_NEAR(p.launches[0].waves, 63, 0);
	CHECK_NEAR(p.launches[0].occupancy, 1.0, 1e-12);

	/* 32 sectors per load, none reused: 512 MiB read + 64 MiB written */
	struct kf_rt_cost s = copy_counts(n, 32);
	double ts = predict(&s, 16, 0, &p);
	CHECK_STR(kf_cost_limit_name(p.bind), "memory");
	CHECKF(ts >= 4 * t, "strided %.0f ns vs coalesced %.0f ns", ts, t);
	CHECK_NEAR(p.launches[0].sectors_per_load, 32.0, 1e-12);
}

static void test_l2_cap(void)
{
	/* 1 MiB of floats read 8 times over by a sloppy kernel: misses say 8 MiB, but everything the launch
	 * touches (2 MiB) fits the L2, so DRAM sees each byte once */
	struct kf_cost_pred p;
	struct kf_rt_cost c = copy_counts((uint64_t)1 << 18, 4);
	c.l2_read_misses *= 8;
	c.touched_bytes = 2u << 20;
	predict(&c, 16, 0, &p);
	CHECK_NEAR(p.launches[0].dram_bytes, 2.0 * 1048576, 1);
	/* the same counts with a footprint past the L2: the misses stand */
	c.touched_bytes = (uint64_t)64 << 20;
	predict(&c, 16, 0, &p);
	CHECK_NEAR(p.launches[0].dram_bytes, 32.0 * (double)(c.l2_read_misses + c.l2_writebacks), 1);
}

static void test_sampled_extrapolation(void)
{
	/* a quarter of the blocks ran: every count is taken 4 times, the per-warp chain is not */
	struct kf_cost_pred full, part;
	struct kf_rt_cost c = copy_counts((uint64_t)1 << 24, 4);
	double tf = predict(&c, 16, 0, &full);
	struct kf_rt_cost q = c;
	q.blocks_run /= 4, q.warps_run /= 4;
	q.gld_requests /= 4, q.gst_requests /= 4, q.gld_sectors /= 4, q.gst_sectors /= 4;
	q.l2_read_misses /= 4, q.l2_writebacks /= 4, q.warp_edges /= 4, q.thread_edges /= 4;
	double tq = predict(&q, 16, 0, &part);
	CHECK_NEAR(part.launches[0].scale, 4.0, 1e-12);
	CHECK(part.sampled && !full.sampled);
	CHECK_NEAR(tq, tf, 1e-6 * tf);
	CHECK_NEAR(part.launches[0].cp_clk, full.launches[0].cp_clk, 1e-9);
}

static void test_bank_conflicts(void)
{
	/* a 4096^2 transpose through a 32x32 tile: per warp one coalesced load and store, one shared store
	 * (1 wavefront) and one shared load of 32 wavefronts (column reads of float[32][32]) or 1 (padded) */
	uint64_t n = (uint64_t)4096 * 4096, warps = n / 32;
	struct kf_rt_cost c = copy_counts(n, 4);
	c.sh_requests = 2 * warps;
	c.barriers = warps;
	struct kf_rt_cost pad = c;
	c.sh_wavefronts = warps * (1 + 32);
	pad.sh_wavefronts = warps * 2;
	struct kf_cost_pred pc, pp;
	double tc = predict(&c, 32, 4096, &pc), tp = predict(&pad, 32, 4224, &pp);
	CHECK_STR(kf_cost_limit_name(pc.bind), "shared");
	CHECK_STR(kf_cost_limit_name(pp.bind), "memory");
	CHECK_NEAR(pc.launches[0].wavefronts_per_shared, 16.5, 1e-12);
	/* 33 x 512 Ki wavefronts over 132 SMs at 1.98 GHz */
	CHECK_NEAR(pc.launches[0].ns[KF_COST_SHARED], 33.0 * 524288 / (132 * 1.98e9) * 1e9, 1e-6);
	CHECKF(tp < tc, "padded %.0f ns vs conflicted %.0f ns", tp, tc);
}

static void test_occupancy_latency(void)
{
	/* pointer chasing, each warp's lanes on one 128-byte row of the table: 128 dependent coalesced
	 * loads per warp, L2 hits (the table is small), 1056 blocks */
	struct kf_rt_cost c = launch(132 * 8);
	c.gld_requests = c.warps_run * 128;
	c.gld_sectors = c.gld_requests * 4;
	c.warp_edges = c.warps_run * 130;
	c.touched_bytes = 1 << 20;
	struct kf_rt_cost big = c;
	big.smem_bytes = 200 * 1024; /* 1 block per SM: 8 warps of 64 */
	struct kf_cost_pred pf, ps;
	double tf = predict(&c, 32, 0, &pf), ts = predict(&big, 32, 0, &ps);
	CHECK_STR(kf_cost_limit_name(ps.bind), "latency");
	CHECK_NEAR(ps.launches[0].occupancy, 0.125, 1e-12);
	CHECK_NEAR(pf.launches[0].occupancy, 1.0, 1e-12);
	CHECK_NEAR(ps.launches[0].waves, 8, 0);
	CHECK_NEAR(pf.launches[0].waves, 1, 0);
	/* chain: 128 x 260 + 130 x 8 clocks */
	CHECK_NEAR(ps.launches[0].cp_clk, 128 * 260.0 + 130 * 8.0, 1e-9);
	CHECKF(tf * 4 < ts, "100%% occupancy %.0f ns vs 12.5%% %.0f ns", tf, ts);
}

static void test_compute_and_atomics(void)
{
	struct kf_cost_pred p;
	/* no memory, many basic blocks: compute */
	struct kf_rt_cost c = launch(132 * 8);
	c.warp_edges = c.warps_run * 100000;
	predict(&c, 32, 0, &p);
	CHECK_STR(kf_cost_limit_name(p.bind), "compute");
	CHECK_NEAR(p.launches[0].warp_instrs, 4.0 * (double)c.warp_edges, 1);
	/* one hot address taking a million atomics */
	struct kf_rt_cost a = launch(4096);
	a.atom_requests = a.warps_run;
	a.atom_lanes = a.atom_serial = a.atom_hot = a.warps_run * 32;
	predict(&a, 32, 0, &p);
	CHECK_STR(kf_cost_limit_name(p.bind), "atomic");
	CHECK_NEAR(p.launches[0].ns[KF_COST_ATOMIC],
		   (double)a.atom_hot * 1.0 + 1048576.0 / (64 * 1.98e9) * 1e9, 1e-3);
}

static void test_plan_and_errors(void)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_cost_pred p;
	struct kf_rt_cost a = copy_counts(1 << 20, 4), b = copy_counts(1 << 22, 4);
	struct kf_cost_launch_in in[2] = {{.c = &a, .regs = 16}, {.c = &b, .regs = 16, .kernel = "second"}};
	const struct kf_cost_target *t = kf_cost_target_find("h200");
	CHECK(t && t->dram_bytes_per_s == 4.8e12);
	CHECK_EQ_INT(kf_cost_predict(t, in, 2, &p, &err), KF_OK);
	CHECK_NEAR(p.total_ns, p.launches[0].total_ns + p.launches[1].total_ns, 1e-9);
	CHECK_EQ_INT(p.n, 2);

	b.blocks_run = b.blocks_total + 1;
	CHECK_EQ_INT(kf_cost_predict(t, in, 2, &p, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "launch 2 ('second')");
	b = copy_counts(1 << 22, 4);
	b.blocks_run = 0;
	CHECK_EQ_INT(kf_cost_predict(t, in, 2, &p, &err), KF_ERR_INVALID);
	b = copy_counts(1 << 22, 4);
	b.grid[0] = 7; /* the grid and the counts disagree */
	CHECK_EQ_INT(kf_cost_predict(t, in, 2, &p, &err), KF_ERR_INVALID);
	b = copy_counts(1 << 22, 4);
	b.smem_bytes = 300 * 1024; /* no SM holds that */
	CHECK_EQ_INT(kf_cost_predict(t, in, 2, &p, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "does not fit");
	CHECK_EQ_INT(kf_cost_predict(t, in, 0, &p, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_cost_predict(NULL, in, 1, &p, &err), KF_ERR_INVALID);

	/* unknown registers are assumed (and said to be) */
	in[0].regs = 0;
	CHECK_EQ_INT(kf_cost_predict(t, in, 1, &p, &err), KF_OK);
	CHECK(p.launches[0].regs_assumed && p.launches[0].regs == 32);
}

static void test_targets(void)
{
	const char *keys[] = {"h100", "h200", "a100", "l40s", "rtx4090", "a10", "rtx3090", "b200"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(keys); i++) {
		const struct kf_cost_target *t = kf_cost_target_find(keys[i]);
		CHECKF(t && kf_arch_limits_find(t->arch), "%s", keys[i]);
		const struct kf_peaks *pk = kf_peaks_table_find(keys[i]);
		/* the same datasheet figures as the roofline's table */
		CHECKF(pk && pk->sm_count == t->sm_count && pk->dram_bytes_per_s == t->dram_bytes_per_s &&
			   pk->l2_bytes == t->l2_bytes,
		       "%s disagrees with the roofline table", keys[i]);
		CHECK(strstr(kf_cost_target_keys(), keys[i]) != NULL);
	}
	CHECK(kf_cost_target_find("h900") == NULL);
	CHECK(kf_cost_target_for_arch("sm_90a") == kf_cost_target_find("h100"));
	CHECK(kf_cost_target_for_arch("sm_900") == NULL);
	CHECK(kf_cost_target_default() == kf_cost_target_find("h100"));
	CHECK_STR(kf_cost_limit_name(KF_COST_ISSUE), "compute");
}

KF_TEST_MAIN(TEST(test_copy_memory_bound), TEST(test_l2_cap), TEST(test_sampled_extrapolation),
	     TEST(test_bank_conflicts), TEST(test_occupancy_latency), TEST(test_compute_and_atomics),
	     TEST(test_plan_and_errors), TEST(test_targets))
