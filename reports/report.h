/* reports: self-contained HTML (inline SVG charts, no external assets), Markdown, CSV and JUnit XML.
 * These are the building blocks; the run report (reports/run_report.c) and the bench and regress
 * commands put them together. Every writer appends to a bounded kf_buf. */
#ifndef KF_REPORT_H
#define KF_REPORT_H

#include "kf.h"

/* ---- escaping ---- */
enum kf_status kf_html_escape(struct kf_buf *b, const char *s); /* & < > " ' */
enum kf_status kf_xml_escape(struct kf_buf *b, const char *s); /* also drops control characters XML forbids */
enum kf_status kf_md_escape_cell(struct kf_buf *b, const char *s); /* | and newlines in a table cell */
enum kf_status kf_csv_field(struct kf_buf *b, const char *s);      /* RFC 4180 quoting when needed */

/* ---- HTML page ---- */
/* Appending under a running status st, the renderers' idiom: nothing happens once st is set, so a long
 * sequence of appends checks once at its end. */
#define KF_BUF_ADDF(st, b, ...)                                                                              \
	do {                                                                                                 \
		if (!(st))                                                                                   \
			(st) = kf_buf_addf((b), __VA_ARGS__);                                                \
	} while (0)
#define KF_BUF_APPLY(st, fn, b, s)                                                                           \
	do {                                                                                                 \
		if (!(st))                                                                                   \
			(st) = fn((b), (s));                                                                 \
	} while (0)

/* Starts a self-contained page with an inline stylesheet; title is escaped. */
enum kf_status kf_html_begin(struct kf_buf *b, const char *title);
enum kf_status kf_html_end(struct kf_buf *b);

/* ---- SVG charts (inline in HTML) ---- */

struct kf_series {
	const char *name;
	size_t n;
	const double *x, *y;
};

struct kf_chart_opts {
	const char *title, *xlabel, *ylabel;
	int width, height; /* pixels; 0: 640 x 320 */
	bool log_y;        /* log scale for speedups */
	bool ref_line;     /* draw a dashed line at y = ref_y */
	double ref_y;
	bool step; /* draw series as steps (best-so-far curves) */
};

/* A line chart of one or more series; data-chart="line" on the root element (tests look for it). */
enum kf_status kf_svg_line_chart(struct kf_buf *b, const struct kf_series *s, size_t n_series,
				 const struct kf_chart_opts *o);

struct kf_bar {
	const char *label;
	double value;
	bool has_interval;
	double lo, hi; /* an error bar (e.g. a 95% CI) */
	int status;    /* 0 normal, 1 good (green), 2 bad (red), 3 missing (grey, value ignored) */
};

/* Vertical bars with optional interval whiskers; data-chart="bars". */
enum kf_status kf_svg_bar_chart(struct kf_buf *b, const struct kf_bar *bars, size_t n,
				const struct kf_chart_opts *o);

/* ---- JUnit XML ---- */

enum kf_junit_status { KF_JUNIT_PASS, KF_JUNIT_FAIL, KF_JUNIT_ERROR, KF_JUNIT_SKIP };

struct kf_junit_case {
	const char *classname; /* e.g. the task */
	const char *name;      /* e.g. "verify public+hidden" */
	double time_s;
	enum kf_junit_status status;
	const char *message; /* one line: the verdict and numbers, or the skip reason */
	const char *detail;  /* body text (may be NULL) */
};

/* Writes a <testsuites> document with one <testsuite name=suite> to b. */
enum kf_status kf_junit_render(struct kf_buf *b, const char *suite, const struct kf_junit_case *cases,
			       size_t n);

#endif
