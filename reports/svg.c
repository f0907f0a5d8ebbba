/* Inline SVG charts: a line/step chart (fast_p curves, search progress), a bar chart with interval
 * whiskers (per-task and per-shape speedups, verdict counts) and a tree (search lineage). Plain SVG 1.1,
 * no scripts, no external fonts. Axes get "nice" ticks (integers only on discrete axes), speedups a log
 * axis; the reference is a neutral dashed line, never a failure's red; every colour has a legend entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *const palette[] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea",
				      "#0891b2", "#db2777", "#4b5563", "#ca8a04"};
static const char *const status_fill[] = {"#3b82f6", "#16a34a", "#dc2626", "#9ca3af", "#64748b"};
#define REF_STROKE "#475569"

#define DEFAULT_W 960
#define DEFAULT_H 380

struct frame {
	int w, h, left, right, top, bottom;
	double x0, x1, y0, y1;
	bool log_y;
};

static double ty(const struct frame *f, double y)
{
	double a = f->y0, b = f->y1, v = y;
	if (f->log_y) {
		a = log10(a);
		b = log10(b);
		v = log10(v > 0 ? v : f->y0);
	}
	if (b <= a)
		b = a + 1;
	return f->h - f->bottom - (v - a) / (b - a) * (f->h - f->top - f->bottom);
}

static double tx(const struct frame *f, double x)
{
	double a = f->x0, b = f->x1;
	if (b <= a)
		b = a + 1;
	return f->left + (x - a) / (b - a) * (f->w - f->left - f->right);
}

static void fmt_num(char *buf, size_t n, double v)
{
	if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3))
		snprintf(buf, n, "%.1e", v);
	else if (fabs(v - nearbyint(v)) < 1e-9 * fmax(1, fabs(v)))
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.3g", v);
}

/* The step for about want ticks over span: 1, 2, 2.5 or 5 times a power of ten. */
static double nice_step(double span, int want, bool integer)
{
	double raw = span / (want > 1 ? want : 1), mag, norm, step;
	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	norm = raw / mag;
	step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
	if (integer) {
		step = ceil(step);
		if (step < 1)
			step = 1;
		if (step == 3 || step == 4)
			step = 5; /* 1, 2, 5, 10, 20, ... */
	}
	return step;
}

size_t kf_chart_ticks(double lo, double hi, bool log, bool integer, double *out, size_t max)
{
	size_t n = 0;
	if (!(hi > lo) || !isfinite(lo) || !isfinite(hi) || !max)
		return 0;
	if (log && lo > 0) {
		static const double mult[3] = {1, 2, 5};
		int k0 = (int)floor(log10(lo)), k1 = (int)ceil(log10(hi)), decades = k1 - k0;
		for (int k = k0; k <= k1 && n < max; k++)
			for (int m = 0; m < 3 && n < max; m++) {
				double v = mult[m] * pow(10, k);
				if (decades > 4 && m)
					continue; /* many decades: 1, 10, 100 only */
				if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
					out[n++] = v;
			}
		if (n >= 2)
			return n;
		/* less than a decade between two ticks: fall back to linear ticks of the range */
		n = 0;
	}
	{
		double step = nice_step(hi - lo, integer ? 8 : 5, integer), v = ceil(lo / step - 1e-9) * step;
		for (; v <= hi + step * 1e-9 && n < max; v += step)
			if (!(log && v <= 0))
				out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	}
	return n;
}

static enum kf_status text_esc(struct kf_buf *b, const char *s)
{
	return kf_html_escape(b, s ? s : "");
}

static enum kf_status axes(struct kf_buf *b, const struct frame *f, const struct kf_chart_opts *o,
			   bool x_ticks)
{
	enum kf_status st;
	char t[32];
	double ticks[40];
	size_t n;

	st = kf_buf_addf(
	    b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#9ca3af\"/>\n",
	    f->left, f->top, f->w - f->left - f->right, f->h - f->top - f->bottom);
	n = kf_chart_ticks(f->y0, f->y1, f->log_y, o->y_integer, ticks, KF_ARRAY_SIZE(ticks));
	for (size_t i = 0; i < n && !st; i++) {
		double y = ty(f, ticks[i]);
		fmt_num(t, sizeof(t), ticks[i]);
		st = kf_buf_addf(
		    b,
		    "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e7eb\"/>"
		    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#374151\">%s%s</text>\n",
		    f->left, f->w - f->right, y, y, f->left - 8, y + 4, t,
		    o->value_suffix && f->log_y ? o->value_suffix : "");
	}
	if (x_ticks) {
		n = kf_chart_ticks(f->x0, f->x1, false, o->x_integer, ticks, KF_ARRAY_SIZE(ticks));
		for (size_t i = 0; i < n && !st; i++) {
			fmt_num(t, sizeof(t), ticks[i]);
			st = kf_buf_addf(
			    b,
			    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#9ca3af\"/>"
			    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#374151\">%s</text>\n",
			    tx(f, ticks[i]), tx(f, ticks[i]), f->h - f->bottom, f->h - f->bottom + 5,
			    tx(f, ticks[i]), f->h - f->bottom + 20, t);
		}
	}
	if (!st && o->ref_line && o->ref_y >= f->y0 && o->ref_y <= f->y1)
		st = kf_buf_addf(
		    b,
		    "<line data-ref=\"1\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"" REF_STROKE
		    "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n",
		    f->left, f->w - f->right, ty(f, o->ref_y), ty(f, o->ref_y));
	if (!st && o->title) {
		st = kf_buf_addf(
		    b, "<text x=\"%d\" y=\"22\" font-weight=\"bold\" font-size=\"15\" fill=\"#111827\">",
		    f->left);
		if (!st)
			st = text_esc(b, o->title);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	if (!st && o->xlabel) {
		st = kf_buf_addf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#1f2937\">",
				 (f->left + f->w - f->right) / 2.0, f->h - 8);
		if (!st)
			st = text_esc(b, o->xlabel);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	if (!st && o->ylabel) {
		st = kf_buf_addf(b,
				 "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\" "
				 "fill=\"#1f2937\">",
				 (f->top + f->h - f->bottom) / 2.0);
		if (!st)
			st = text_esc(b, o->ylabel);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	return st;
}

static void frame_init(struct frame *f, const struct kf_chart_opts *o, int bottom, int right)
{
	f->w = o->width > 0 ? o->width : DEFAULT_W;
	f->h = o->height > 0 ? o->height : DEFAULT_H;
	f->left = 72;
	f->right = right;
	f->top = 40;
	f->bottom = bottom;
	f->log_y = o->log_y;
}

/* Up to the default width the chart fills its column (scaled); a wider one keeps its size and scrolls. */
static enum kf_status svg_open(struct kf_buf *b, const char *kind, const struct frame *f, const char *title)
{
	enum kf_status st;
	if (f->w <= DEFAULT_W)
		st = kf_buf_addf(
		    b,
		    "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" data-chart=\"%s\" "
		    "width=\"100%%\" viewBox=\"0 0 %d %d\" role=\"img\" font-size=\"13\">",
		    kind, f->w, f->h);
	else
		st = kf_buf_addf(
		    b,
		    "<div class=\"chart wide\"><svg xmlns=\"http://www.w3.org/2000/svg\" data-chart=\"%s\" "
		    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" font-size=\"13\">",
		    kind, f->w, f->h, f->w, f->h);
	if (!st)
		st = kf_buf_adds(b, "<title>");
	if (!st)
		st = text_esc(b, title ? title : kind);
	return st ? st : kf_buf_adds(b, "</title>\n");
}

static enum kf_status svg_close(struct kf_buf *b)
{
	return kf_buf_adds(b, "</svg></div>\n");
}

/* One legend entry at row i of the right-hand column: a swatch (line, dashed line or box) and a name. */
static enum kf_status legend_entry(struct kf_buf *b, const struct frame *f, int i, const char *colour,
				   int kind, const char *name)
{
	int x = f->w - f->right + 14, y = f->top + 12 + i * 20;
	enum kf_status st;
	if (kind == 0)
		st = kf_buf_addf(
		    b,
		    "<g data-legend=\"1\"><line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
		    "stroke-width=\"3\"/>",
		    x, x + 18, y - 4, y - 4, colour);
	else if (kind == 1)
		st = kf_buf_addf(
		    b,
		    "<g data-legend=\"1\"><line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
		    "stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>",
		    x, x + 18, y - 4, y - 4, colour);
	else
		st = kf_buf_addf(
		    b,
		    "<g data-legend=\"1\"><rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>",
		    x, y - 11, colour);
	if (!st)
		st = kf_buf_addf(b, "<text x=\"%d\" y=\"%d\" fill=\"#111827\">", x + 24, y);
	if (!st)
		st = text_esc(b, name);
	return st ? st : kf_buf_adds(b, "</text></g>\n");
}

static bool point_ok(const struct kf_chart_opts *o, double x, double y)
{
	return isfinite(x) && isfinite(y) && !(o->log_y && y <= 0);
}

enum kf_status kf_svg_line_chart(struct kf_buf *b, const struct kf_series *s, size_t n_series,
				 const struct kf_chart_opts *o)
{
	struct frame f;
	enum kf_status st;
	bool any = false;
	int row = 0;

	frame_init(&f, o, 52, 190);
	f.x0 = f.y0 = INFINITY;
	f.x1 = f.y1 = -INFINITY;
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!point_ok(o, x, y))
				continue;
			any = true;
			f.x0 = fmin(f.x0, x);
			f.x1 = fmax(f.x1, x);
			f.y0 = fmin(f.y0, y);
			f.y1 = fmax(f.y1, y);
		}
	if (!any) {
		f.x0 = 0, f.x1 = 1, f.y0 = o->log_y ? 0.5 : 0, f.y1 = o->log_y ? 2 : 1;
	}
	if (o->x_range && isfinite(o->x_min) && isfinite(o->x_max)) {
		f.x0 = any ? fmin(f.x0, o->x_min) : o->x_min;
		f.x1 = any ? fmax(f.x1, o->x_max) : o->x_max;
	}
	if (o->x_integer) {
		f.x0 = floor(f.x0);
		f.x1 = ceil(f.x1);
		if (f.x1 < f.x0 + 1)
			f.x1 = f.x0 + 1;
	}
	if (o->ref_line) {
		f.y0 = fmin(f.y0, o->ref_y);
		f.y1 = fmax(f.y1, o->ref_y);
	}
	if (f.y1 <= f.y0)
		f.y1 = f.y0 + (o->log_y ? f.y0 : 1);
	if (!o->log_y && f.y0 > 0 && f.y0 < 0.5 * f.y1)
		f.y0 = 0;
	if (o->log_y) {
		f.y0 /= 1.3;
		f.y1 *= 1.3;
	} else {
		f.y1 += (f.y1 - f.y0) * 0.06;
	}
	st = svg_open(b, "line", &f, o->title);
	if (!st)
		st = axes(b, &f, o, true);
	for (size_t i = 0; i < n_series && !st; i++) {
		const char *col = palette[i % KF_ARRAY_SIZE(palette)];
		double px = 0, py = 0;
		bool first = true;
		size_t shown = 0;
		/* earlier series wider, so a later one drawn over the same points leaves them visible */
		double width = 2.5 + 1.5 * (double)(n_series - 1 - i);
		st = kf_buf_addf(
		    b,
		    "<polyline data-series=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
		    "stroke-linejoin=\"round\" points=\"",
		    i, col, width > 6.0 ? 6.0 : width);
		for (size_t k = 0; k < s[i].n && !st; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!point_ok(o, x, y))
				continue;
			/* a step holds the previous value until this x, then moves */
			if (o->step && !first)
				st = kf_buf_addf(b, "%.1f,%.1f ", tx(&f, x), ty(&f, py));
			if (!st)
				st = kf_buf_addf(b, "%.1f,%.1f ", tx(&f, x), ty(&f, y));
			px = x;
			py = y;
			first = false;
			shown++;
		}
		/* a step curve runs on to the end of the axis: the value holds */
		if (!st && o->step && !first && px < f.x1)
			st = kf_buf_addf(b, "%.1f,%.1f ", tx(&f, f.x1), ty(&f, py));
		if (!st)
			st = kf_buf_adds(b, "\"/>\n");
		for (size_t k = 0; k < s[i].n && !st && shown <= 80; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			char vx[32], vy[32];
			if (!point_ok(o, x, y))
				continue;
			fmt_num(vx, sizeof(vx), x);
			fmt_num(vy, sizeof(vy), y);
			st = kf_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>",
					 tx(&f, x), ty(&f, y), col);
			if (!st)
				st = text_esc(b, s[i].name);
			if (!st)
				st = kf_buf_addf(b, ": %s at %s</title></circle>\n", vy, vx);
		}
		if (!st && row < 14)
			st = legend_entry(b, &f, row++, col, 0, s[i].name);
	}
	if (!st && o->ref_line && o->ref_y >= f.y0 && o->ref_y <= f.y1)
		st = legend_entry(b, &f, row++, REF_STROKE, 1, o->ref_label ? o->ref_label : "reference");
	return st ? st : svg_close(b);
}

enum kf_status kf_svg_bar_chart(struct kf_buf *b, const struct kf_bar *bars, size_t n,
				const struct kf_chart_opts *o)
{
	struct frame f;
	enum kf_status st;
	double slot;
	size_t longest = 0;
	bool rotate, used[5] = {false};
	int row = 0, legend_w = o->status_names || o->ref_line ? 190 : 24;

	for (size_t i = 0; i < n; i++)
		if (bars[i].label && strlen(bars[i].label) > longest)
			longest = strlen(bars[i].label);
	rotate = n > 8 || longest * 7.5 * (double)n > 700;
	frame_init(&f, o, rotate ? 40 + (int)fmin(150, longest * 6.5) : 52, legend_w);
	if (!o->width) {
		int need = (int)(n * 44) + f.left + f.right;
		f.w = need > DEFAULT_W ? need : DEFAULT_W;
	}
	f.x0 = 0;
	f.x1 = (double)(n ? n : 1);
	f.y0 = INFINITY;
	f.y1 = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double lo = bars[i].has_interval ? bars[i].lo : bars[i].value,
		       hi = bars[i].has_interval ? bars[i].hi : bars[i].value;
		if (bars[i].status == KF_BAR_MISSING || !isfinite(bars[i].value) ||
		    (o->log_y && bars[i].value <= 0))
			continue;
		if (!(isfinite(lo) && (!o->log_y || lo > 0)))
			lo = bars[i].value;
		if (!isfinite(hi))
			hi = bars[i].value;
		f.y0 = fmin(f.y0, fmin(lo, bars[i].value));
		f.y1 = fmax(f.y1, fmax(hi, bars[i].value));
	}
	if (!isfinite(f.y0)) {
		f.y0 = o->log_y ? 0.5 : 0;
		f.y1 = o->log_y ? 2 : 1;
	}
	if (o->ref_line) {
		f.y0 = fmin(f.y0, o->ref_y);
		f.y1 = fmax(f.y1, o->ref_y);
	}
	if (o->log_y) {
		f.y0 /= 1.5;
		f.y1 *= 1.5;
	} else {
		if (f.y0 > 0)
			f.y0 = 0;
		f.y1 += (f.y1 - f.y0) * 0.12 + (f.y1 == f.y0);
		if (o->y_integer)
			f.y1 = ceil(f.y1);
	}
	slot = (f.w - f.left - f.right) / (double)(n ? n : 1);
	st = svg_open(b, "bars", &f, o->title);
	if (!st)
		st = axes(b, &f, o, false);
	for (size_t i = 0; i < n && !st; i++) {
		const struct kf_bar *bar = &bars[i];
		double x = f.left + slot * (double)i + slot * 0.15, w = slot * 0.7;
		double base = o->log_y ? (o->ref_line ? o->ref_y : f.y0) : 0;
		int stt = bar->status >= 0 && bar->status <= 4 ? bar->status : 0;
		char val[40];
		if (stt != KF_BAR_MISSING && isfinite(bar->value) && !(o->log_y && bar->value <= 0)) {
			double y1 = ty(&f, bar->value), y0 = ty(&f, base);
			used[stt] = true;
			st = kf_buf_addf(
			    b,
			    "<rect data-status=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			    "fill=\"%s\">",
			    stt, x, fmin(y0, y1), w, fabs(y0 - y1) < 2 ? 2 : fabs(y0 - y1), status_fill[stt]);
			fmt_num(val, sizeof(val), bar->value);
			if (!st) {
				st = kf_buf_adds(b, "<title>");
				if (!st)
					st = text_esc(b, bar->label);
				if (!st)
					st = kf_buf_addf(b, ": %s%s</title></rect>\n", val,
							 o->value_suffix ? o->value_suffix : "");
			}
			if (!st && bar->has_interval && isfinite(bar->lo) && isfinite(bar->hi) &&
			    !(o->log_y && bar->lo <= 0))
				st = kf_buf_addf(
				    b,
				    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#111\"/>"
				    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#111\"/>"
				    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
				    "stroke=\"#111\"/>\n",
				    x + w / 2, x + w / 2, ty(&f, bar->lo), ty(&f, bar->hi), x + w / 4,
				    x + 3 * w / 4, ty(&f, bar->lo), ty(&f, bar->lo), x + w / 4, x + 3 * w / 4,
				    ty(&f, bar->hi), ty(&f, bar->hi));
			if (!st && o->value_suffix && n <= 30) {
				/* the value beside the bar's end, away from the base */
				double yv = bar->value >= base
						? fmin(y1, bar->has_interval ? ty(&f, bar->hi) : y1) - 6
						: fmax(y1, bar->has_interval ? ty(&f, bar->lo) : y1) + 15;
				st = kf_buf_addf(
				    b,
				    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#111827\" "
				    "font-size=\"12\">%s%s</text>\n",
				    x + w / 2, yv, val, o->value_suffix);
			}
		} else {
			used[KF_BAR_MISSING] = true;
			st = kf_buf_addf(b,
					 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
					 "fill=\"#6b7280\">n/a</text>\n",
					 x + w / 2, ty(&f, base) - 4);
		}
		if (!st) {
			double lx = x + w / 2, ly = f.h - f.bottom + 16;
			if (rotate)
				st = kf_buf_addf(b,
						 "<text transform=\"translate(%.1f,%.1f) rotate(-40)\" "
						 "text-anchor=\"end\" fill=\"#1f2937\">",
						 lx, ly);
			else
				st = kf_buf_addf(
				    b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#1f2937\">",
				    lx, ly);
			if (!st)
				st = text_esc(b, bar->label);
			if (!st)
				st = kf_buf_adds(b, "</text>\n");
		}
	}
	for (int k = 0; o->status_names && k < 5 && !st; k++)
		if (used[k] && o->status_names[k])
			st = legend_entry(b, &f, row++, k == KF_BAR_MISSING ? "#e5e7eb" : status_fill[k], 2,
					  o->status_names[k]);
	if (!st && o->ref_line && o->ref_y >= f.y0 && o->ref_y <= f.y1)
		st = legend_entry(b, &f, row++, REF_STROKE, 1, o->ref_label ? o->ref_label : "reference");
	return st ? st : svg_close(b);
}

/* ---- trees ---- */

struct tnode {
	size_t parent;      /* index, or SIZE_MAX for a root */
	size_t first, next; /* first child, next sibling (SIZE_MAX: none) */
	int depth;
	double x;
};

/* Leaf columns left to right in depth-first order; a parent sits over the middle of its children. */
static double layout(struct tnode *t, size_t i, int depth, double *col)
{
	double lo = INFINITY, hi = -INFINITY;
	t[i].depth = depth;
	if (t[i].first == SIZE_MAX || depth > 200) {
		t[i].x = (*col)++;
		return t[i].x;
	}
	for (size_t c = t[i].first; c != SIZE_MAX; c = t[c].next) {
		double x = layout(t, c, depth + 1, col);
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	t[i].x = (lo + hi) / 2;
	return t[i].x;
}

enum kf_status kf_svg_tree(struct kf_buf *b, const struct kf_tree_node *nodes, size_t n, const char *title,
			   size_t max_nodes)
{
	struct tnode *t;
	size_t m = n < max_nodes ? n : max_nodes, *last;
	double cols = 0;
	int depth_max = 0, w, h;
	struct frame f = {0};
	enum kf_status st = KF_OK;

	if (!m)
		return kf_buf_adds(b, "<p class=\"note\">No nodes to draw.</p>\n");
	t = calloc(m, sizeof(*t));
	last = calloc(m, sizeof(*last));
	if (!t || !last) {
		free(t);
		free(last);
		return KF_ERR_NOMEM;
	}
	for (size_t i = 0; i < m; i++) {
		t[i].parent = t[i].first = t[i].next = last[i] = SIZE_MAX;
		for (size_t j = 0; j < m && nodes[i].parent; j++)
			if (j != i && nodes[j].id == nodes[i].parent) {
				t[i].parent = j;
				break;
			}
	}
	/* children in input order; a parent that is its own descendant (a bad file) is cut to a root */
	for (size_t i = 0; i < m; i++) {
		size_t p = t[i].parent, guard = 0;
		for (size_t a = p; a != SIZE_MAX && guard <= m; a = t[a].parent, guard++)
			if (a == i) {
				p = t[i].parent = SIZE_MAX;
				break;
			}
		if (p == SIZE_MAX)
			continue;
		if (last[p] == SIZE_MAX)
			t[p].first = i;
		else
			t[last[p]].next = i;
		last[p] = i;
	}
	for (size_t i = 0; i < m; i++)
		if (t[i].parent == SIZE_MAX)
			layout(t, i, 0, &cols);
	for (size_t i = 0; i < m; i++)
		if (t[i].depth > depth_max)
			depth_max = t[i].depth;
	w = (int)fmax(DEFAULT_W, cols * 56 + 80);
	h = 70 + (depth_max + 1) * 78;
	f.w = w;
	f.h = h;
	st = svg_open(b, "tree", &f, title);
	if (!st && title) {
		st = kf_buf_adds(
		    b, "<text x=\"20\" y=\"22\" font-weight=\"bold\" font-size=\"15\" fill=\"#111827\">");
		if (!st)
			st = text_esc(b, title);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	double spacing = cols > 1 ? (w - 80) / (cols - 1) : 0;
#define NX(i) (cols > 1 ? 40 + t[i].x * spacing : w / 2.0)
#define NY(i) (60.0 + t[i].depth * 78.0)
	for (size_t i = 0; i < m && !st; i++)
		if (t[i].parent != SIZE_MAX)
			st = kf_buf_addf(
			    b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9ca3af\"/>\n",
			    NX(t[i].parent), NY(t[i].parent) + 12, NX(i), NY(i) - 12);
	for (size_t i = 0; i < m && !st; i++) {
		const struct kf_tree_node *nd = &nodes[i];
		int s = nd->status >= 0 && nd->status <= 4 ? nd->status : 0;
		st = kf_buf_addf(
		    b,
		    "<a href=\"#cand-%lld\"><g data-node=\"%lld\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" "
		    "fill=\"%s\"%s/><title>",
		    (long long)nd->id, (long long)nd->id, NX(i), NY(i), nd->best ? 14 : 11,
		    s == KF_BAR_MISSING ? "#d1d5db" : status_fill[s],
		    nd->best ? " stroke=\"#111827\" stroke-width=\"3\"" : "");
		if (!st)
			st = text_esc(b, nd->title ? nd->title : nd->label);
		if (!st)
			st = kf_buf_addf(b,
					 "</title></circle><text x=\"%.1f\" y=\"%.1f\" "
					 "text-anchor=\"middle\" fill=\"#fff\" "
					 "font-size=\"10\" font-weight=\"bold\">%lld</text>",
					 NX(i), NY(i) + 3.5, (long long)nd->id);
		if (!st)
			st =
			    kf_buf_addf(b,
					"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#374151\" "
					"font-size=\"11\">",
					NX(i), NY(i) + 27);
		if (!st)
			st = text_esc(b, nd->label);
		if (!st)
			st = kf_buf_adds(b, "</text></g></a>\n");
	}
#undef NX
#undef NY
	if (!st)
		st = svg_close(b);
	if (!st && m < n)
		st = kf_buf_addf(b, "<p class=\"note\">%zu of %zu nodes drawn.</p>\n", m, n);
	free(t);
	free(last);
	return st;
}
