/* The compact text form of a candidate's performance, for the LLM's feedback and terminal output: a few
 * short lines (time, speedup with its interval, roofline fraction, occupancy and resources) that cost
 * few tokens and carry the numbers the model can act on. */
#include "profiler/profiler.h"

#include <math.h>
#include <stdio.h>

void kf_format_ns(double ns, char *buf, size_t n)
{
	if (!isfinite(ns))
		snprintf(buf, n, "?");
	else if (ns < 1e3)
		snprintf(buf, n, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, n, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, n, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, n, "%.3g s", ns / 1e9);
}

/* "3.12 TB/s", "850 GB/s" */
static void format_rate(double v, const char *unit, char *buf, size_t n)
{
	if (v >= 1e12)
		snprintf(buf, n, "%.3g T%s", v / 1e12, unit);
	else if (v >= 1e9)
		snprintf(buf, n, "%.3g G%s", v / 1e9, unit);
	else
		snprintf(buf, n, "%.3g M%s", v / 1e6, unit);
}

enum kf_status kf_perf_text(const struct kf_perf_summary *s, struct kf_buf *out)
{
	char t[32], iqr[32], r[32];
	enum kf_status st;
	bool cpu = s->timing_source && s->timing_source[0] == 'c' && s->timing_source[1] == 'p';

	kf_format_ns(s->time_ns, t, sizeof(t));
	kf_format_ns(s->iqr_ns, iqr, sizeof(iqr));
	st = kf_buf_addf(out, "time %s (median of %zu, IQR %s, %s%s)", t, s->n_samples, iqr,
			 s->timing_source ? s->timing_source : "unknown timer",
			 cpu ? ": CPU time, not GPU speed" : "");
	if (st == KF_OK && s->has_ref) {
		kf_format_ns(s->ref_time_ns, r, sizeof(r));
		st = kf_buf_addf(out, "; reference %s", r);
	}
	if (st == KF_OK)
		st = kf_buf_addch(out, '\n');

	if (st == KF_OK && s->has_speedup) {
		char band[48] = "";
		if (s->speedup.band > 0)
			snprintf(band, sizeof(band), "; A/A noise band +-%.1f%%", s->speedup.band * 100.0);
		st = kf_buf_addf(out, "speedup %.3gx (%.0f%% CI %.3g-%.3g, %s%s)\n", s->speedup.point,
				 s->speedup.level * 100.0, s->speedup.lo, s->speedup.hi,
				 kf_ci_significant(&s->speedup)          ? "significant"
				 : s->speedup.hi < 1.0 - s->speedup.band ? "significantly slower"
									 : "not significant",
				 band);
	}

	if (st == KF_OK && s->has_roofline) {
		char bw[32], fl[32];
		format_rate(s->roof.achieved_bytes_per_s, "B/s", bw, sizeof(bw));
		format_rate(s->roof.achieved_flops, "FLOP/s", fl, sizeof(fl));
		st = kf_buf_addf(out, "roofline: %.0f%% of the %s-bound floor; %s, %s achieved%s\n",
				 s->roof.fraction * 100.0, s->roof.bound, bw, fl,
				 s->roof.fraction > 1.0 ? " (faster than the hardware allows: suspect)" : "");
	}

	if (st == KF_OK &&
	    (s->has_occupancy || s->registers >= 0 || s->spill_bytes >= 0 || s->smem_bytes >= 0)) {
		const char *sep = "";
		if (s->has_occupancy) {
			st = kf_buf_addf(out, "occupancy %.0f%% (%d blocks/SM, limited by %s)",
					 s->occ.occupancy * 100.0, s->occ.active_blocks, s->occ.limiter);
			sep = "; ";
		}
		if (st == KF_OK && s->registers >= 0) {
			st = kf_buf_addf(out, "%s%d regs/thread", sep, s->registers);
			sep = ", ";
		}
		if (st == KF_OK && s->spill_bytes >= 0) {
			st = kf_buf_addf(out, "%s%d B spilled", sep, s->spill_bytes);
			sep = ", ";
		}
		if (st == KF_OK && s->smem_bytes >= 0)
			st = kf_buf_addf(out, "%s%.1f KiB smem/block", sep, s->smem_bytes / 1024.0);
		if (st == KF_OK)
			st = kf_buf_addch(out, '\n');
	}
	return st;
}
