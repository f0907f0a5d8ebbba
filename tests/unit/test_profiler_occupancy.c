/* profiler occupancy calculator: cases worked out by hand from the CUDA Occupancy Calculator's formulas
 * (each comment shows the arithmetic), covering every limiter on several archs. */
#include "profiler/profiler.h"
#include "testing.h"

struct occ_case {
	const char *arch;
	int threads, regs, smem;
	int blocks, warps;
	double occ;
	const char *limiter;
};

static const struct occ_case occ_cases[] = {
    /* 8 warps/block; 64/8 = 8 by warps; 32 regs -> 1024/warp -> 64 warps -> 8 blocks; tie -> "warps" */
    {"sm_80", 256, 32, 0, 8, 64, 1.0, "warps"},
    /* 64 regs -> 2048/warp -> 32 warps -> 4 blocks of 8 warps = 50% */
    {"sm_80", 256, 64, 0, 4, 32, 0.5, "registers"},
    /* 40 regs -> 1280/warp -> 51 warps, down to granularity 4 -> 48 -> 12 blocks of 4 warps = 75% */
    {"sm_90", 128, 40, 0, 12, 48, 0.75, "registers"},
    /* 48 KiB + 1 KiB reserve = 50176 B/block; 233472 / 50176 = 4 blocks of 8 warps = 50% */
    {"sm_90", 256, 32, 49152, 4, 32, 0.5, "shared memory"},
    /* sm_86 has 48 warps: 48/8 = 6 blocks -> 48 warps = 100% of 48 */
    {"sm_86", 256, 32, 0, 6, 48, 1.0, "warps"},
    /* 2 warps/block: 24 by warps, but only 16 resident blocks -> 32 of 48 warps */
    {"sm_86", 64, 16, 0, 16, 32, 32.0 / 48.0, "blocks"},
    /* one-warp blocks on sm_89: 24 block slots -> 24 of 48 warps */
    {"sm_89", 32, 0, 0, 24, 24, 0.5, "blocks"},
    /* 1024 threads = 32 warps, 64 regs -> 32 warps by registers -> 1 block = 50% */
    {"sm_100", 1024, 64, 0, 1, 32, 0.5, "registers"},
    /* 3 warps/block: floor(64/3) = 21 blocks -> 63 warps */
    {"sm_80", 96, 0, 0, 21, 63, 63.0 / 64.0, "warps"},
    /* 100 KiB + 1 KiB = 103424 B; 233472 / 103424 = 2 blocks of 4 warps = 12.5% */
    {"sm_90", 128, 32, 102400, 2, 8, 0.125, "shared memory"},
    /* 255 regs -> 8160 -> 8192/warp -> 8 warps -> 1 block of 8 warps = 12.5% */
    {"sm_90a", 256, 255, 0, 1, 8, 0.125, "registers"},
    /* 128 regs x 1024 threads needs 131072 registers: no block fits */
    {"sm_90", 1024, 128, 0, 0, 0, 0.0, "registers"},
    /* more shared memory than a block may opt into on sm_86 (99 KiB) */
    {"sm_86", 128, 32, 101377, 0, 0, 0.0, "shared memory"},
    /* 33 threads round up to 2 warps; 16 KiB -> 17408 B; 167936/17408 = 9 blocks; by warps 32 -> smem */
    {"sm_80", 33, 24, 16384, 9, 18, 18.0 / 64.0, "shared memory"},
};

static void test_occupancy_cases(void)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(occ_cases); i++) {
		const struct occ_case *c = &occ_cases[i];
		struct kf_occupancy o;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st = kf_occupancy(c->arch, c->threads, c->regs, c->smem, &o, &err);
		CHECKF(st == KF_OK, "case %zu: %s", i, err.msg);
		CHECKF(o.active_blocks == c->blocks,
		       "case %zu (%s %d thr %d regs %d smem): blocks %d, want %d", i, c->arch, c->threads,
		       c->regs, c->smem, o.active_blocks, c->blocks);
		CHECKF(o.active_warps == c->warps, "case %zu: warps %d, want %d", i, o.active_warps,
		       c->warps);
		CHECKF(fabs(o.occupancy - c->occ) < 1e-12, "case %zu: occupancy %g, want %g", i, o.occupancy,
		       c->occ);
		CHECKF(o.limiter && strcmp(o.limiter, c->limiter) == 0, "case %zu: limiter '%s', want '%s'",
		       i, o.limiter ? o.limiter : "(null)", c->limiter);
	}
}

static void test_occupancy_errors(void)
{
	struct kf_occupancy o;
	struct kf_err err = KF_ERR_INIT;
	CHECK_EQ_INT(kf_occupancy("sm_75", 128, 32, 0, &o, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "sm_75");
	CHECK_EQ_INT(kf_occupancy("sm_90", 1025, 32, 0, &o, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_occupancy("sm_90", 0, 32, 0, &o, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_occupancy("sm_90", 128, 256, 0, &o, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_occupancy("sm_90", 128, 32, -1, &o, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_occupancy(NULL, 128, 32, 0, &o, &err), KF_ERR_INVALID);
}

static void test_arch_table(void)
{
	const char *archs[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(archs); i++) {
		const struct kf_arch_limits *L = kf_arch_limits_find(archs[i]);
		CHECKF(L != NULL, "no limits for %s", archs[i]);
		if (!L)
			continue;
		CHECK_EQ_INT(L->regs_per_sm, 65536);
		CHECK_EQ_INT(L->max_regs_per_thread, 255);
		CHECK_EQ_INT(L->reg_alloc_unit, 256);
		CHECK_EQ_INT(L->smem_alloc_unit_bytes, 128);
		CHECK_EQ_INT(L->reserved_smem_per_block_bytes, 1024);
		CHECK(L->max_smem_per_block_bytes == L->smem_per_sm_bytes - 1024);
	}
	CHECK_EQ_INT(kf_arch_limits_find("sm_80")->max_warps_per_sm, 64);
	CHECK_EQ_INT(kf_arch_limits_find("sm_86")->max_warps_per_sm, 48);
	CHECK_EQ_INT(kf_arch_limits_find("sm_90")->max_blocks_per_sm, 32);
	CHECK_EQ_INT(kf_arch_limits_find("sm_86")->max_blocks_per_sm, 16);
	CHECK(kf_arch_limits_find("sm_90a") == kf_arch_limits_find("sm_90"));
	CHECK(kf_arch_limits_find("sm_100f") == kf_arch_limits_find("sm_100"));
	CHECK(kf_arch_limits_find("sm_9") == NULL);
	CHECK(kf_arch_limits_find("") == NULL);
}

KF_TEST_MAIN(TEST(test_occupancy_cases), TEST(test_occupancy_errors), TEST(test_arch_table))
