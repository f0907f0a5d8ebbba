/* Inline SVG charts: a line/step chart (fast_p curves, search progress) and a bar chart with interval
 * whiskers (per-task speedups). Plain SVG 1.1, no scripts, no external fonts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

static const char *const palette[] = {"#2563eb", "#dc2626", "#16a34a", "#9333ea",
				      "#ea580c", "#0891b2", "#4b5563"};

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

static void fmt_tick(char *buf, size_t n, double v)
{
	if (v != 0 && (fabs(v) >= 1e5 || fabs(v) < 1e-2))
		snprintf(buf, n, "%.1e", v);
	else
		snprintf(buf, n, "%.3g", v);
}

static enum kf_status axes(struct kf_buf *b, const struct frame *f, const struct kf_chart_opts *o,
			   bool x_ticks)
{
	enum kf_status st = KF_OK;
	char t[32];
	/* frame */
	st = kf_buf_addf(
	    b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#99a\"/>\n",
	    f->left, f->top, f->w - f->left - f->right, f->h - f->top - f->bottom);
	/* y ticks */
	for (int i = 0; i <= 4 && !st; i++) {
		double v;
		if (f->log_y)
			v = pow(10, log10(f->y0) + (log10(f->y1) - log10(f->y0)) * i / 4.0);
		else
			v = f->y0 + (f->y1 - f->y0) * i / 4.0;
		fmt_tick(t, sizeof(t), v);
		st = kf_buf_addf(b,
				 "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e7eb\"/>"
				 "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">%s</text>\n",
				 f->left, f->w - f->right, ty(f, v), ty(f, v), f->left - 6, ty(f, v) + 4, t);
	}
	for (int i = 0; x_ticks && i <= 4 && !st; i++) {
		double v = f->x0 + (f->x1 - f->x0) * i / 4.0;
		fmt_tick(t, sizeof(t), v);
		st = kf_buf_addf(b,
				 "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
				 tx(f, v), f->h - f->bottom + 16, t);
	}
	if (!st && o->ref_line && o->ref_y >= f->y0 && o->ref_y <= f->y1)
		st = kf_buf_addf(b,
				 "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#6b7280\" "
				 "stroke-dasharray=\"5,4\"/>\n",
				 f->left, f->w - f->right, ty(f, o->ref_y), ty(f, o->ref_y));
	if (!st && o->title) {
		st = kf_buf_addf(b, "<text x=\"%d\" y=\"18\" font-weight=\"bold\" fill=\"#111\">", f->left);
		if (!st)
			st = kf_html_escape(b, o->title);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	if (!st && o->xlabel) {
		st = kf_buf_addf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#333\">",
				 (f->left + f->w - f->right) / 2.0, f->h - 6);
		if (!st)
			st = kf_html_escape(b, o->xlabel);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	if (!st && o->ylabel) {
		st = kf_buf_addf(b,
				 "<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\" "
				 "fill=\"#333\">",
				 (f->top + f->h - f->bottom) / 2.0);
		if (!st)
			st = kf_html_escape(b, o->ylabel);
		if (!st)
			st = kf_buf_adds(b, "</text>\n");
	}
	return st;
}

static void frame_init(struct frame *f, const struct kf_chart_opts *o, int bottom)
{
	f->w = o->width > 0 ? o->width : 640;
	f->h = o->height > 0 ? o->height : 320;
	f->left = 64;
	f->right = 150;
	f->top = 30;
	f->bottom = bottom;
	f->log_y = o->log_y;
}

enum kf_status kf_svg_line_chart(struct kf_buf *b, const struct kf_series *s, size_t n_series,
				 const struct kf_chart_opts *o)
{
	struct frame f;
	enum kf_status st;
	bool any = false;

	frame_init(&f, o, 44);
	f.x0 = f.y0 = INFINITY;
	f.x1 = f.y1 = -INFINITY;
	for (size_t i = 0; i < n_series; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!isfinite(x) || !isfinite(y) || (o->log_y && y <= 0))
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
	if (o->ref_line) {
		f.y0 = fmin(f.y0, o->ref_y);
		f.y1 = fmax(f.y1, o->ref_y);
	}
	if (f.y1 <= f.y0)
		f.y1 = f.y0 + (o->log_y ? f.y0 : 1);
	if (!o->log_y && f.y0 > 0 && f.y0 < 0.5 * f.y1)
		f.y0 = 0;
	if (o->log_y) {
		f.y0 /= 1.15;
		f.y1 *= 1.15;
	} else {
		f.y1 += (f.y1 - f.y0) * 0.05;
	}
	st = kf_buf_addf(
	    b,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" data-chart=\"line\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" role=\"img\">\n",
	    f.w, f.h, f.w, f.h);
	if (!st)
		st = axes(b, &f, o, true);
	for (size_t i = 0; i < n_series && !st; i++) {
		const char *col = palette[i % KF_ARRAY_SIZE(palette)];
		double px = 0, py = 0;
		bool first = true;
		st =
		    kf_buf_addf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", col);
		for (size_t k = 0; k < s[i].n && !st; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!isfinite(x) || !isfinite(y) || (o->log_y && y <= 0))
				continue;
			if (o->step && !first)
				st = kf_buf_addf(b, "%.1f,%.1f ", tx(&f, x), ty(&f, py));
			if (!st)
				st = kf_buf_addf(b, "%.1f,%.1f ", tx(&f, x), ty(&f, y));
			px = x;
			py = y;
			first = false;
		}
		(void)px;
		if (!st)
			st = kf_buf_adds(b, "\"/>\n");
		for (size_t k = 0; k < s[i].n && !st && s[i].n <= 60; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (!isfinite(x) || !isfinite(y) || (o->log_y && y <= 0))
				continue;
			st = kf_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
					 tx(&f, x), ty(&f, y), col);
		}
		if (!st) {
			st = kf_buf_addf(b,
					 "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
					 "<text x=\"%d\" y=\"%d\" fill=\"#222\">",
					 f.w - f.right + 12, f.top + 10 + (int)i * 18, col,
					 f.w - f.right + 30, f.top + 14 + (int)i * 18);
			if (!st)
				st = kf_html_escape(b, s[i].name ? s[i].name : "");
			if (!st)
				st = kf_buf_adds(b, "</text>\n");
		}
	}
	return st ? st : kf_buf_adds(b, "</svg>\n");
}

enum kf_status kf_svg_bar_chart(struct kf_buf *b, const struct kf_bar *bars, size_t n,
				const struct kf_chart_opts *o)
{
	struct frame f;
	enum kf_status st;
	double slot;
	bool rotate = n > 8;

	frame_init(&f, o, rotate ? 110 : 44);
	f.right = 20;
	if (!o->width)
		f.w = n * 28 + f.left + f.right > 640 ? (int)(n * 28) + f.left + f.right : 640;
	f.x0 = 0;
	f.x1 = (double)(n ? n : 1);
	f.y0 = INFINITY;
	f.y1 = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double lo = bars[i].has_interval ? bars[i].lo : bars[i].value,
		       hi = bars[i].has_interval ? bars[i].hi : bars[i].value;
		if (bars[i].status == 3 || !isfinite(bars[i].value) || (o->log_y && lo <= 0))
			continue;
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
		f.y0 /= 1.25;
		f.y1 *= 1.25;
	} else {
		if (f.y0 > 0)
			f.y0 = 0;
		f.y1 += (f.y1 - f.y0) * 0.08 + (f.y1 == f.y0);
	}
	slot = (f.w - f.left - f.right) / (double)(n ? n : 1);
	st = kf_buf_addf(
	    b,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" data-chart=\"bars\" width=\"%d\" height=\"%d\" "
	    "viewBox=\"0 0 %d %d\" role=\"img\">\n",
	    f.w, f.h, f.w, f.h);
	if (!st)
		st = axes(b, &f, o, false);
	for (size_t i = 0; i < n && !st; i++) {
		const struct kf_bar *bar = &bars[i];
		double x = f.left + slot * (double)i + slot * 0.15, w = slot * 0.7;
		double base = o->log_y ? (o->ref_line ? o->ref_y : f.y0) : 0;
		const char *col = bar->status == 1 ? "#16a34a" : bar->status == 2 ? "#dc2626" : "#2563eb";
		char val[32];
		if (bar->status != 3 && isfinite(bar->value) && !(o->log_y && bar->value <= 0)) {
			double y1 = ty(&f, bar->value), y0 = ty(&f, base);
			st = kf_buf_addf(b,
					 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					 "fill=\"%s\" opacity=\"0.85\">",
					 x, fmin(y0, y1), w, fabs(y0 - y1) < 1 ? 1 : fabs(y0 - y1), col);
			fmt_tick(val, sizeof(val), bar->value);
			if (!st) {
				st = kf_buf_adds(b, "<title>");
				if (!st)
					st = kf_html_escape(b, bar->label);
				if (!st)
					st = kf_buf_addf(b, ": %s</title></rect>\n", val);
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
		} else {
			st = kf_buf_addf(
			    b,
			    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#999\">n/a</text>\n",
			    x + w / 2, ty(&f, o->log_y ? (o->ref_line ? o->ref_y : f.y0) : 0) - 4);
		}
		if (!st) {
			double lx = x + w / 2, ly = f.h - f.bottom + 14;
			if (rotate)
				st = kf_buf_addf(b,
						 "<text transform=\"translate(%.1f,%.1f) rotate(-50)\" "
						 "text-anchor=\"end\" fill=\"#333\">",
						 lx, ly);
			else
				st = kf_buf_addf(
				    b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">",
				    lx, ly);
			if (!st)
				st = kf_html_escape(b, bar->label);
			if (!st)
				st = kf_buf_adds(b, "</text>\n");
		}
	}
	return st ? st : kf_buf_adds(b, "</svg>\n");
}
