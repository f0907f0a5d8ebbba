/* Peak throughputs and the roofline: the speed-of-light time of a kernel from its work (FLOPs) and
 * minimum traffic (bytes). A measured time under that floor means skipped work or a broken timer
 * (docs/spec/verification.md check 10), so the floor must never be above what the hardware can do: it is
 * built from datasheet peaks (dense, boost clock), which are upper bounds on sustained throughput. */
#include "profiler/profiler.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Datasheet peaks, FLOP/s and B/s. Sources: NVIDIA's product datasheets and architecture whitepapers
 * (H100 "Hopper" whitepaper and H100/H200 datasheets, A100 datasheet, L40S datasheet, Ada whitepaper
 * (RTX 4090), A10 datasheet, GA102 whitepaper (RTX 3090), HGX B200 datasheet). Tensor figures are dense
 * (not the 2:4 sparse ones) with FP32 accumulation; GeForce parts run FP16 with FP32 accumulation at
 * half the rate of their workstation twins, hence the lower figures there. SM counts and L2 sizes are the
 * datasheets' too (H100/H200 SXM: 132 SMs, 50 MB L2; read the device's own figures when one is present). */
/* clang-format off */
#define T 1e12
#define TBS 1e12
#define MIB (1024.0 * 1024.0)
static const struct {
	const char *key;
	struct kf_peaks p;
} peak_table[] = {
	/*                                        f64        f32        tf32 tc     f16 tc      DRAM       SMs  L2 */
	{"h100", {"NVIDIA H100 SXM (table)", "sm_90", {34.0 * T, 67.0 * T, 494.7 * T, 989.4 * T}, 3.35 * TBS, 132, 50 * MIB}},
	{"h200", {"NVIDIA H200 SXM (table)", "sm_90", {34.0 * T, 67.0 * T, 494.7 * T, 989.4 * T}, 4.8 * TBS, 132, 50 * MIB}},
	{"a100", {"NVIDIA A100 SXM 80GB (table)", "sm_80", {9.7 * T, 19.5 * T, 156.0 * T, 312.0 * T}, 2.039 * TBS, 108, 40 * MIB}},
	{"l40s", {"NVIDIA L40S (table)", "sm_89", {1.43 * T, 91.6 * T, 183.0 * T, 362.05 * T}, 0.864 * TBS, 142, 96 * MIB}},
	{"rtx4090", {"NVIDIA GeForce RTX 4090 (table)", "sm_89", {1.29 * T, 82.6 * T, 82.6 * T, 165.2 * T}, 1.008 * TBS, 128, 72 * MIB}},
	{"a10", {"NVIDIA A10 (table)", "sm_86", {0.98 * T, 31.2 * T, 62.5 * T, 125.0 * T}, 0.600 * TBS, 72, 6 * MIB}},
	{"rtx3090", {"NVIDIA GeForce RTX 3090 (table)", "sm_86", {0.56 * T, 35.6 * T, 35.6 * T, 71.0 * T}, 0.936 * TBS, 82, 6 * MIB}},
	{"b200", {"NVIDIA B200 (table)", "sm_100", {40.0 * T, 80.0 * T, 1100.0 * T, 2250.0 * T}, 8.0 * TBS, 148, 126 * MIB}},
};
#undef T
#undef TBS
#undef MIB
/* clang-format on */

/* FLOP per clock per SM, the per-SM building block of the peaks above (an FMA is 2 FLOPs):
 *  sm_80: 32 FP64 + 64 FP32 lanes, 3rd-gen tensor cores 1024 dense FP16 FMA/clk/SM;
 *  sm_86/89: 2 FP64 lanes (1/64 rate), 128 FP32 lanes, 512 dense FP16 FMA/clk/SM (workstation parts);
 *  sm_90: 64 FP64 + 128 FP32 lanes, 4th-gen tensor cores 2048 dense FP16 FMA/clk/SM;
 *  sm_100: 64 FP64 + 128 FP32 lanes, 5th-gen tensor cores 4096 dense FP16 FMA/clk/SM.
 * TF32 runs at half the FP16 rate on every one of them. */
/* clang-format off */
static const struct {
	const char *arch;
	double per_clk[KF_PEAK_KIND_COUNT];
	const char *repr; /* table entry used when the device cannot be matched by name */
} per_sm[] = {
	{"sm_80", {64, 128, 1024, 2048}, "a100"},
	{"sm_86", {4, 256, 512, 1024}, "a10"},
	{"sm_89", {4, 256, 512, 1024}, "l40s"},
	{"sm_90", {128, 256, 2048, 4096}, "h100"},
	{"sm_100", {128, 256, 4096, 8192}, "b200"},
};
/* clang-format on */

const struct kf_peaks *kf_peaks_table_find(const char *key)
{
	if (!key)
		return NULL;
	for (size_t i = 0; i < KF_ARRAY_SIZE(peak_table); i++)
		if (strcmp(peak_table[i].key, key) == 0)
			return &peak_table[i].p;
	return NULL;
}

/* The arch without a feature suffix ("sm_90a" -> "sm_90") into buf. */
static void base_arch(const char *arch, char *buf, size_t n)
{
	snprintf(buf, n, "%s", arch ? arch : "");
	size_t len = strlen(buf);
	while (len > 3 && (buf[len - 1] < '0' || buf[len - 1] > '9'))
		buf[--len] = '\0';
}

static int find_per_sm(const char *arch)
{
	char base[16];
	base_arch(arch, base, sizeof(base));
	for (size_t i = 0; i < KF_ARRAY_SIZE(per_sm); i++)
		if (strcmp(per_sm[i].arch, base) == 0)
			return (int)i;
	return -1;
}

/* Case-insensitive substring test on a product name. */
static bool name_has(const char *name, const char *what)
{
	size_t n = strlen(what);
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, what, n) == 0)
			return true;
	return false;
}

const struct kf_peaks *kf_peaks_table_guess(const char *device_name, const char *arch)
{
	/* clang-format off */
	static const struct {
		const char *needle, *key;
	} by_name[] = {
		{"H200", "h200"}, {"H100", "h100"}, {"GH200", "h200"}, {"A100", "a100"}, {"L40S", "l40s"},
		{"4090", "rtx4090"}, {"A10", "a10"}, {"3090", "rtx3090"}, {"B200", "b200"},
	};
	/* clang-format on */
	if (device_name) {
		for (size_t i = 0; i < KF_ARRAY_SIZE(by_name); i++) {
			/* "A10" is a prefix of "A100" and "H200" part of "GH200": the table order resolves
			 * both, and GH200's HBM3e peaks are the H200's. A mismatched arch falls through to
			 * the arch. */
			if (!name_has(device_name, by_name[i].needle))
				continue;
			const struct kf_peaks *p = kf_peaks_table_find(by_name[i].key);
			char base[16];
			base_arch(arch, base, sizeof(base));
			if (p && (!arch || !*arch || strcmp(p->arch, base) == 0))
				return p;
		}
	}
	int i = find_per_sm(arch);
	return i < 0 ? NULL : kf_peaks_table_find(per_sm[i].repr);
}

enum kf_status kf_peaks_from_device(const char *name, const char *arch, int sm_count, int sm_clock_khz,
				    int mem_clock_khz, int mem_bus_width_bits, struct kf_peaks *out,
				    struct kf_err *err)
{
	memset(out, 0, sizeof(*out));
	int i = find_per_sm(arch);
	if (i < 0)
		return kf_err_set(err, KF_ERR_INVALID, "no per-SM peak figures for arch '%s'",
				  arch ? arch : "(null)");
	if (sm_count <= 0 || sm_clock_khz <= 0 || mem_clock_khz <= 0 || mem_bus_width_bits <= 0)
		return kf_err_set(
		    err, KF_ERR_INVALID,
		    "device facts incomplete (SMs %d, SM clock %d kHz, memory clock %d kHz, bus %d bits)",
		    sm_count, sm_clock_khz, mem_clock_khz, mem_bus_width_bits);
	snprintf(out->name, sizeof(out->name), "%s (device facts)", name && *name ? name : arch);
	snprintf(out->arch, sizeof(out->arch), "%s", per_sm[i].arch);
	double clk_hz = (double)sm_clock_khz * 1e3;
	for (int k = 0; k < KF_PEAK_KIND_COUNT; k++)
		out->flops[k] = (double)sm_count * clk_hz * per_sm[i].per_clk[k];
	/* DDR/HBM move data on both clock edges: 2 transfers per memory clock, bus width in bits / 8 bytes.
	 */
	out->dram_bytes_per_s = 2.0 * (double)mem_clock_khz * 1e3 * (double)mem_bus_width_bits / 8.0;
	return KF_OK;
}

enum kf_peak_kind kf_peak_kind_for_dtype(enum kf_dtype dt)
{
	switch (dt) {
	case KF_DTYPE_F64:
		return KF_PEAK_F64;
	case KF_DTYPE_F16:
	case KF_DTYPE_BF16:
		/* The floor must stay below any legitimate time, so half precision gets the tensor peak. */
		return KF_PEAK_F16_TC;
	default:
		/* f32 uses the CUDA-core peak: TF32 tensor cores change the numerics, and the verifier's f32
		 * tolerance is what decides whether that is allowed. Integers run on the CUDA cores too. */
		return KF_PEAK_F32;
	}
}

double kf_roofline_floor_ns(double flops, double bytes, enum kf_dtype dtype, const struct kf_peaks *peaks)
{
	double pf = peaks->flops[kf_peak_kind_for_dtype(dtype)];
	double c = flops > 0 && pf > 0 ? flops / pf * 1e9 : 0.0;
	double m = bytes > 0 && peaks->dram_bytes_per_s > 0 ? bytes / peaks->dram_bytes_per_s * 1e9 : 0.0;
	return c > m ? c : m;
}

enum kf_status kf_roofline_eval(double flops, double bytes, enum kf_dtype dtype, const struct kf_peaks *peaks,
				double time_ns, struct kf_roofline *out, struct kf_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!(time_ns > 0) || !isfinite(time_ns))
		return kf_err_set(err, KF_ERR_INVALID, "time %g ns is not positive", time_ns);
	if (flops < 0 || bytes < 0 || !isfinite(flops) || !isfinite(bytes))
		return kf_err_set(err, KF_ERR_INVALID, "work must be finite and non-negative (%g FLOP, %g B)",
				  flops, bytes);
	double pf = peaks->flops[kf_peak_kind_for_dtype(dtype)];
	out->compute_ns = flops > 0 && pf > 0 ? flops / pf * 1e9 : 0.0;
	out->memory_ns =
	    bytes > 0 && peaks->dram_bytes_per_s > 0 ? bytes / peaks->dram_bytes_per_s * 1e9 : 0.0;
	out->floor_ns = out->compute_ns > out->memory_ns ? out->compute_ns : out->memory_ns;
	out->bound = out->compute_ns > out->memory_ns ? "compute" : "memory";
	out->achieved_flops = flops / (time_ns * 1e-9);
	out->achieved_bytes_per_s = bytes / (time_ns * 1e-9);
	out->fraction = out->floor_ns / time_ns;
	return KF_OK;
}
