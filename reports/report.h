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
	int width,
	    height;    /* viewBox units; 0: 960 x 380. Up to 960 wide the chart scales to the page's width */
	bool log_y;    /* log scale (speedups: 0.017x stays visible next to 40x) */
	bool ref_line; /* draw a dashed neutral line at y = ref_y */
	double ref_y;
	bool step;      /* draw series as steps: each value holds until the next x (best-so-far, fast_p) */
	bool x_integer; /* a discrete x axis (calls, candidates): integer ticks only */
	bool y_integer; /* a discrete y axis (counts): integer ticks only */
	const char *ref_label; /* the reference line in the legend; NULL: "reference" */
	/* Bar charts: the legend's text per status (kf_bar.status 0..4); NULL entries are left out, a NULL
	 * array means no legend. */
	const char *const *status_names;
	const char
	    *value_suffix; /* bar charts: each bar labelled with its value and this ("x"); NULL: none */
	bool x_range;      /* line charts: the x axis spans at least x_min..x_max (e.g. every call) */
	double x_min, x_max;
};

/* A line chart of one or more series; data-chart="line" on the root element (tests look for it). */
enum kf_status kf_svg_line_chart(struct kf_buf *b, const struct kf_series *s, size_t n_series,
				 const struct kf_chart_opts *o);

enum kf_bar_status {
	KF_BAR_NORMAL = 0,  /* blue: e.g. within noise */
	KF_BAR_GOOD = 1,    /* green: passed, significantly faster */
	KF_BAR_BAD = 2,     /* red: failed, significantly slower */
	KF_BAR_MISSING = 3, /* grey "n/a", value ignored */
	KF_BAR_NEUTRAL = 4, /* slate: the reference, a yardstick rather than a result */
};

struct kf_bar {
	const char *label;
	double value;
	bool has_interval;
	double lo, hi; /* an error bar (e.g. a 95% CI) */
	int status;    /* enum kf_bar_status */
};

/* Vertical bars with optional interval whiskers; data-chart="bars". On a log axis bars grow from the
 * reference line (1x) up or down. */
enum kf_status kf_svg_bar_chart(struct kf_buf *b, const struct kf_bar *bars, size_t n,
				const struct kf_chart_opts *o);

/* Ticks for an axis from lo to hi (lo < hi): "nice" values (1, 2, 5 x 10^k steps; on a log axis 1, 2, 5 x
 * 10^k values, decades only when there are many), integers only when integer is set. Returns how many
 * were written to out (at most max). */
size_t kf_chart_ticks(double lo, double hi, bool log, bool integer, double *out, size_t max);

/* ---- trees (search lineage, MCTS) ---- */

struct kf_tree_node {
	int64_t id, parent; /* parent 0 (or unknown): a root */
	const char *label;  /* short text under the node ("2.41x", "wrong_output") */
	const char *title;  /* tooltip */
	int status;         /* enum kf_bar_status colours */
	bool best;          /* drawn larger, outlined */
};

/* Nodes as a tree: one row per depth, each subtree over its own columns, edges parent to child; every node
 * links to "#cand-ID". data-chart="tree". At most max_nodes are drawn (the rest are counted in a note). */
enum kf_status kf_svg_tree(struct kf_buf *b, const struct kf_tree_node *nodes, size_t n, const char *title,
			   size_t max_nodes);

/* ---- text ---- */

/* A shape as people write it: {"B":16,"N":1024} -> "B=16, N=1024"; text that is not a JSON object of
 * numbers is copied as it is. */
void kf_report_shape_label(const char *json, char *out, size_t n);

/* A line diff of a (old) against b (new) in unified form with ctx lines of context: " line", "-line",
 * "+line" and "@@ -l,n +l,n @@" hunk headers; HTML-escaped spans with classes del/add/hunk when html.
 * Sources of more than 4000 lines (or a 4M-cell comparison) get a one-line note instead. Appends nothing
 * when a and b are equal. */
enum kf_status kf_text_diff(struct kf_buf *out, const char *a, const char *b, int ctx, bool html);

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
