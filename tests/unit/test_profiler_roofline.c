/* profiler peaks, roofline floor and the compact feedback text. Expected values are computed by hand
 * from the datasheet figures in profiler/roofline.c. */
#include "profiler/profiler.h"
#include "testing.h"

static void test_table(void)
{
	const struct kf_peaks *h100 = kf_peaks_table_find("h100");
	CHECK(h100 != NULL);
	if (!h100)
		return;
	CHECK_STR(h100->arch, "sm_90");
	CHECK_NEAR(h100->dram_bytes_per_s, 3.35e12, 1);
	CHECK_NEAR(h100->flops[KF_PEAK_F16_TC], 989.4e12, 1e6);
	const char *keys[] = {"h100", "h200", "a100", "l40s", "rtx4090", "a10", "rtx3090", "b200"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(keys); i++) {
		const struct kf_peaks *p = kf_peaks_table_find(keys[i]);
		CHECKF(p != NULL, "no entry %s", keys[i]);
		if (!p)
			continue;
		/* tensor >= CUDA-core FP32 >= FP64 on every part; bandwidth between 0.5 and 10 TB/s */
		CHECKF(p->flops[KF_PEAK_F16_TC] >= p->flops[KF_PEAK_F32], "%s", keys[i]);
		CHECKF(p->flops[KF_PEAK_F32] > p->flops[KF_PEAK_F64], "%s", keys[i]);
		CHECKF(p->dram_bytes_per_s > 0.5e12 && p->dram_bytes_per_s < 10e12, "%s", keys[i]);
	}
	CHECK(kf_peaks_table_find("v100") == NULL);
}

static void test_guess(void)
{
	CHECK(kf_peaks_table_guess("NVIDIA H200", "sm_90") == kf_peaks_table_find("h200"));
	CHECK(kf_peaks_table_guess("NVIDIA H100 80GB HBM3", "sm_90") == kf_peaks_table_find("h100"));
	CHECK(kf_peaks_table_guess("NVIDIA A100-SXM4-80GB", "sm_80") == kf_peaks_table_find("a100"));
	CHECK(kf_peaks_table_guess("NVIDIA A10", "sm_86") == kf_peaks_table_find("a10"));
	CHECK(kf_peaks_table_guess("NVIDIA GeForce RTX 4090", "sm_89") == kf_peaks_table_find("rtx4090"));
	CHECK(kf_peaks_table_guess("Some Future Hopper", "sm_90a") == kf_peaks_table_find("h100"));
	CHECK(kf_peaks_table_guess("NVIDIA B200", "sm_100") == kf_peaks_table_find("b200"));
	CHECK(kf_peaks_table_guess("Tesla T4", "sm_75") == NULL);
}

static void test_from_device(void)
{
	struct kf_peaks p;
	struct kf_err err = KF_ERR_INIT;
	/* H100 SXM: 132 SMs at 1980 MHz; HBM3 2619 MHz on a 5120-bit bus */
	CHECK_EQ_INT(kf_peaks_from_device("NVIDIA H100", "sm_90", 132, 1980000, 2619000, 5120, &p, &err),
		     KF_OK);
	CHECK_NEAR(p.flops[KF_PEAK_F32], 132.0 * 1.98e9 * 256.0, 1.0); /* 66.9 TFLOP/s */
	CHECK_NEAR(p.flops[KF_PEAK_F64], 132.0 * 1.98e9 * 128.0, 1.0);
	CHECK_NEAR(p.dram_bytes_per_s, 2.0 * 2.619e9 * 640.0, 1.0); /* 3.35 TB/s */
	CHECK_CONTAINS(p.name, "device facts");
	CHECK_EQ_INT(kf_peaks_from_device("x", "sm_75", 40, 1590000, 5001000, 256, &p, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_peaks_from_device("x", "sm_90", 132, 0, 2619000, 5120, &p, &err), KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "incomplete");
}

static void test_floor_and_eval(void)
{
	const struct kf_peaks *h100 = kf_peaks_table_find("h100");
	/* 1 GB of f32 traffic: 1e9 / 3.35e12 s = 298.507 us; 1 GFLOP would take 14.9 us: memory-bound */
	double f = kf_roofline_floor_ns(1e9, 1e9, KF_DTYPE_F32, h100);
	CHECK_NEAR(f, 1e9 / 3.35e12 * 1e9, 1e-6);
	/* 2*4096^3 FLOP of bf16 GEMM, 3 * 4096^2 * 2 B: compute-bound at 989.4 TFLOP/s */
	double fl = 2.0 * 4096.0 * 4096.0 * 4096.0, by = 3.0 * 4096.0 * 4096.0 * 2.0;
	CHECK_NEAR(kf_roofline_floor_ns(fl, by, KF_DTYPE_BF16, h100), fl / 989.4e12 * 1e9, 1e-6);
	/* the same work in f64 is bound by the FP64 peak */
	CHECK_NEAR(kf_roofline_floor_ns(fl, by, KF_DTYPE_F64, h100), fl / 34e12 * 1e9, 1e-3);
	CHECK_NEAR(kf_roofline_floor_ns(0, 0, KF_DTYPE_F32, h100), 0, 0);
	CHECK_EQ_INT(kf_peak_kind_for_dtype(KF_DTYPE_F16), KF_PEAK_F16_TC);
	CHECK_EQ_INT(kf_peak_kind_for_dtype(KF_DTYPE_I32), KF_PEAK_F32);

	struct kf_roofline r;
	struct kf_err err = KF_ERR_INIT;
	/* 1 GB moved in 400 us: 2.5 TB/s, 74.6% of the floor */
	CHECK_EQ_INT(kf_roofline_eval(1e8, 1e9, KF_DTYPE_F32, h100, 400e3, &r, &err), KF_OK);
	CHECK_STR(r.bound, "memory");
	CHECK_NEAR(r.achieved_bytes_per_s, 2.5e12, 1.0);
	CHECK_NEAR(r.achieved_flops, 2.5e11, 1.0);
	CHECK_NEAR(r.fraction, (1e9 / 3.35e12 * 1e9) / 400e3, 1e-12);
	/* faster than the floor: fraction above 1 */
	CHECK_EQ_INT(kf_roofline_eval(0, 1e9, KF_DTYPE_F32, h100, 100e3, &r, &err), KF_OK);
	CHECK(r.fraction > 2.9);
	CHECK_EQ_INT(kf_roofline_eval(0, 1e9, KF_DTYPE_F32, h100, 0, &r, &err), KF_ERR_INVALID);
	CHECK_EQ_INT(kf_roofline_eval(-1, 1e9, KF_DTYPE_F32, h100, 10, &r, &err), KF_ERR_INVALID);
}

static void test_text(void)
{
	struct kf_perf_summary s = {
	    .time_ns = 41700,
	    .iqr_ns = 800,
	    .n_samples = 200,
	    .timing_source = "cupti",
	    .has_ref = true,
	    .ref_time_ns = 95200,
	    .has_speedup = true,
	    .speedup = {.point = 2.28, .lo = 2.25, .hi = 2.31, .level = 0.95},
	    .registers = 64,
	    .spill_bytes = 0,
	    .smem_bytes = 12288,
	};
	const struct kf_peaks *h100 = kf_peaks_table_find("h100");
	s.has_roofline = kf_roofline_eval(1e7, 1e8, KF_DTYPE_F32, h100, s.time_ns, &s.roof, NULL) == KF_OK;
	s.has_occupancy = kf_occupancy("sm_90", 256, 64, 12288, &s.occ, NULL) == KF_OK;
	struct kf_buf b = KF_BUF_INIT(4096);
	CHECK_EQ_INT(kf_perf_text(&s, &b), KF_OK);
	fprintf(stderr, "%s", b.data);
	CHECK_CONTAINS(b.data, "time 41.7 us (median of 200, IQR 800 ns, cupti); reference 95.2 us\n");
	CHECK_CONTAINS(b.data, "speedup 2.28x (95% CI 2.25-2.31, significant)\n");
	CHECK_CONTAINS(b.data, "roofline: 72% of the memory-bound floor; 2.4 TB/s");
	CHECK_CONTAINS(b.data, "occupancy 50% (4 blocks/SM, limited by registers); 64 regs/thread, 0 B "
			       "spilled, 12.0 KiB smem/block\n");
	int lines = 0;
	for (const char *p = b.data; *p; p++)
		lines += *p == '\n';
	CHECK_EQ_INT(lines, 4);

	/* a slower candidate on the cpu backend: labelled, and the interval called what it is */
	kf_buf_reset(&b);
	struct kf_perf_summary c = {.time_ns = 2.5e6,
				    .iqr_ns = 1e5,
				    .n_samples = 10,
				    .timing_source = "cpu-wall",
				    .has_speedup = true,
				    .speedup = {.point = 0.8, .lo = 0.7, .hi = 0.9, .level = 0.95},
				    .registers = -1,
				    .spill_bytes = -1,
				    .smem_bytes = -1};
	CHECK_EQ_INT(kf_perf_text(&c, &b), KF_OK);
	CHECK_CONTAINS(b.data, "2.5 ms");
	CHECK_CONTAINS(b.data, "CPU time, not GPU speed");
	CHECK_CONTAINS(b.data, "significantly slower");
	CHECK(strstr(b.data, "occupancy") == NULL);

	/* bounded output */
	struct kf_buf small = KF_BUF_INIT(16);
	CHECK_EQ_INT(kf_perf_text(&s, &small), KF_ERR_LIMIT);
	kf_buf_release(&small);
	kf_buf_release(&b);

	char t_buf[32], *t = t_buf;
	kf_format_ns(850, t, sizeof(t_buf));
	CHECK_STR(t, "850 ns");
	kf_format_ns(1.234e6, t, sizeof(t_buf));
	CHECK_STR(t, "1.23 ms");
}

KF_TEST_MAIN(TEST(test_table), TEST(test_guess), TEST(test_from_device), TEST(test_floor_and_eval),
	     TEST(test_text))
