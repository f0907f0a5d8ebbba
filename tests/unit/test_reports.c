/* Report building blocks: escaping, JUnit structure and counts, SVG charts that stay well-formed with
 * missing and non-finite data. */
#include <math.h>

#include "reports/report.h"
#include "reports/run_report.h"
#include "testing.h"

static void test_escapes(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 16);
	kf_html_escape(&b, "<a href=\"x\">&'</a>");
	CHECK_STR(b.data, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
	kf_buf_reset(&b);
	kf_xml_escape(&b, "a\x01<b>\x1f");
	CHECK_STR(b.data, "a&lt;b&gt;");
	kf_buf_reset(&b);
	kf_md_escape_cell(&b, "a|b\nc");
	CHECK_STR(b.data, "a\\|b c");
	kf_buf_reset(&b);
	kf_csv_field(&b, "plain");
	kf_buf_addch(&b, ',');
	kf_csv_field(&b, "say \"hi\", now");
	CHECK_STR(b.data, "plain,\"say \"\"hi\"\", now\"");
	kf_buf_release(&b);
}

static void test_junit(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 16);
	struct kf_junit_case c[3] = {
	    {"softmax", "verify", 1.5, KF_JUNIT_PASS, NULL, NULL},
	    {"gemm", "verify", 2.0, KF_JUNIT_FAIL, "wrong_output at M=3 <x>", "got 1 want 2"},
	    {"gemm", "timing", 0, KF_JUNIT_SKIP, "no GPU", NULL},
	};
	CHECK(!kf_junit_render(&b, "kforge regress", c, 3));
	CHECK_CONTAINS(b.data, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\"");
	CHECK_CONTAINS(b.data, "<failure message=\"wrong_output at M=3 &lt;x&gt;\" "
			       "type=\"kforge.failure\">got 1 want 2</failure>");
	CHECK_CONTAINS(b.data, "<skipped message=\"no GPU\"/>");
	CHECK_CONTAINS(b.data, "<testcase classname=\"softmax\" name=\"verify\" time=\"1.500\"/>");
	kf_buf_release(&b);
}

static void test_charts(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	double x[4] = {0, 0.5, 1, 2}, y[4] = {0.9, 0.6, NAN, 0.1};
	struct kf_series s = {"fast_p", 4, x, y};
	struct kf_chart_opts o = {.title = "fast_p",
				  .xlabel = "p",
				  .ylabel = "fraction",
				  .ref_line = true,
				  .ref_y = 1.0,
				  .step = true};
	struct kf_bar bars[3] = {
	    {"a<b", 2.0, true, 1.5, 2.5, 1}, {"b", 0.5, false, 0, 0, 2}, {"c", NAN, false, 0, 0, 3}};

	CHECK(!kf_svg_line_chart(&b, &s, 1, &o));
	CHECK_CONTAINS(b.data, "data-chart=\"line\"");
	CHECK_CONTAINS(b.data, "<polyline");
	CHECK(!strstr(b.data, "nan") && !strstr(b.data, "inf"));
	kf_buf_reset(&b);
	o.log_y = true;
	CHECK(!kf_svg_bar_chart(&b, bars, 3, &o));
	CHECK_CONTAINS(b.data, "data-chart=\"bars\"");
	CHECK_CONTAINS(b.data, "a&lt;b");
	CHECK_CONTAINS(b.data, "n/a");
	CHECK(!strstr(b.data, "nan") && !strstr(b.data, "inf"));
	/* no data at all still draws a valid empty chart */
	kf_buf_reset(&b);
	CHECK(!kf_svg_bar_chart(&b, bars, 0, &o));
	CHECK_CONTAINS(b.data, "</svg>");
	/* a bounded buffer reports the limit instead of overflowing */
	struct kf_buf small = KF_BUF_INIT(100);
	CHECK_EQ_INT(kf_svg_line_chart(&small, &s, 1, &o), KF_ERR_LIMIT);
	kf_buf_release(&small);
	kf_buf_release(&b);
}

/* Discrete axes get integer ticks; speedup axes log ticks that keep 0.017x apart from 1x and 40x. */
static void test_ticks(void)
{
	double t[40];
	size_t n = kf_chart_ticks(1, 8, false, true, t, 40);
	CHECK_EQ_INT(n, 8);
	for (size_t i = 0; i < n; i++)
		CHECKF(t[i] == floor(t[i]), "tick %g is not an integer", t[i]);
	n = kf_chart_ticks(0, 1.62, false, true, t, 40); /* a count axis of 0..1.62: 0 and 1 only */
	CHECK_EQ_INT(n, 2);
	CHECK(t[0] == 0 && t[1] == 1);
	n = kf_chart_ticks(3, 4.25, false, true, t, 40);
	CHECK(n == 2 && t[0] == 3 && t[1] == 4);
	n = kf_chart_ticks(0.012, 60, true, false, t, 40);
	CHECK(n >= 4);
	bool has_001 = false, has_1 = false, has_10 = false;
	for (size_t i = 0; i < n; i++) {
		has_001 |= fabs(t[i] - 0.02) < 1e-12 || fabs(t[i] - 0.05) < 1e-12;
		has_1 |= t[i] == 1;
		has_10 |= t[i] == 10;
		CHECK(t[i] >= 0.012 && t[i] <= 60);
	}
	CHECK(has_001 && has_1 && has_10);
	/* less than a decade: linear values, still within the range */
	n = kf_chart_ticks(0.9, 1.4, true, false, t, 40);
	CHECK(n >= 2);
	CHECK_EQ_INT(kf_chart_ticks(1, 1, false, false, t, 40), 0);
	CHECK_EQ_INT(kf_chart_ticks(NAN, 1, false, false, t, 40), 0);
}

/* A speedup of 0.017x on a log axis is drawn as a bar below the reference line, not flattened to zero;
 * the reference line and the legend are there; a step series holds its value to the axis end. */
static void test_log_bars_and_steps(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	static const char *const names[5] = {"not significant", "faster", "slower", NULL, NULL};
	struct kf_bar bars[2] = {{"B=16, N=1024", 0.017, true, 0.015, 0.019, KF_BAR_BAD},
				 {"B=1, N=7", 40, true, 35, 45, KF_BAR_GOOD}};
	struct kf_chart_opts o = {.log_y = true,
				  .ref_line = true,
				  .ref_y = 1,
				  .status_names = names,
				  .value_suffix = "x",
				  .ref_label = "reference (1x)"};
	CHECK(!kf_svg_bar_chart(&b, bars, 2, &o));
	CHECK_CONTAINS(b.data, ">0.017x</text>");
	CHECK_CONTAINS(b.data, ">0.01x</text>"); /* a log tick below the small bar */
	CHECK_CONTAINS(b.data, "data-ref=\"1\"");
	CHECK_CONTAINS(b.data, ">reference (1x)</text>");
	CHECK_CONTAINS(b.data, ">faster</text>");
	CHECK_CONTAINS(b.data, ">slower</text>");
	CHECK(!strstr(b.data, ">not significant</text>")); /* no bar of that status: no legend entry */
	/* the small bar has a real height: from 1x down to 0.017x */
	const char *r = strstr(b.data, "<rect data-status=\"2\"");
	double h = 0;
	CHECK(r && sscanf(strstr(r, "height=\"") + 8, "%lf", &h) == 1 && h > 50);
	kf_buf_reset(&b);
	double x[2] = {2, 5}, y[2] = {1.5, 3};
	struct kf_series s = {"best", 2, x, y};
	struct kf_chart_opts lo = {
	    .step = true, .x_integer = true, .x_range = true, .x_min = 1, .x_max = 9, .log_y = true};
	CHECK(!kf_svg_line_chart(&b, &s, 1, &lo));
	/* x ticks 1..9 as integers, and the step reaches the axis end at x = 9 */
	CHECK_CONTAINS(b.data, ">1</text>");
	CHECK_CONTAINS(b.data, ">9</text>");
	CHECK(!strstr(b.data, ".5</text>"));
	CHECK_CONTAINS(b.data, "data-legend");
	kf_buf_release(&b);
}

static void test_shape_label(void)
{
	char out[64];
	kf_report_shape_label("{\"B\":16,\"N\":1024}", out, sizeof(out));
	CHECK_STR(out, "B=16, N=1024");
	kf_report_shape_label("{\"N\": 1048576}", out, sizeof(out));
	CHECK_STR(out, "N=1048576");
	kf_report_shape_label("not json", out, sizeof(out));
	CHECK_STR(out, "not json");
	kf_report_shape_label("{\"N\":\"x\"}", out, sizeof(out));
	CHECK_STR(out, "{\"N\":\"x\"}");
	kf_report_shape_label("{\"A\":1,\"B\":2,\"C\":3}", out, 10); /* cut, never overflowed */
	CHECK(strlen(out) < 10);
}

static void test_diff(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	const char *a = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n";
	const char *c = "l1\nl2\nL3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\n";
	CHECK(!kf_text_diff(&b, a, c, 1, false));
	CHECK_STR(b.data, "@@ -2,3 +2,3 @@\n l2\n-l3\n+L3\n l4\n@@ -10,1 +10,2 @@\n l10\n+l11\n");
	kf_buf_reset(&b);
	CHECK(!kf_text_diff(&b, a, a, 3, false));
	CHECK_EQ_INT(b.len, 0);
	/* html: escaped, classed */
	CHECK(!kf_text_diff(&b, "x < 1\n", "x <= 1\n", 3, true));
	CHECK_CONTAINS(b.data, "<span class=\"del\">-x &lt; 1</span>");
	CHECK_CONTAINS(b.data, "<span class=\"add\">+x &lt;= 1</span>");
	kf_buf_reset(&b);
	/* from nothing */
	CHECK(!kf_text_diff(&b, "", "a\nb\n", 3, false));
	CHECK_STR(b.data, "@@ -0,0 +1,2 @@\n+a\n+b\n");
	kf_buf_reset(&b);
	/* too long to compare cell by cell: a note, not minutes of work */
	struct kf_buf big = KF_BUF_INIT(1 << 20);
	for (int i = 0; i < 5000; i++)
		kf_buf_addf(&big, "line %d\n", i);
	CHECK(!kf_text_diff(&b, big.data, "x\n", 3, false));
	CHECK_CONTAINS(b.data, "too long to diff");
	kf_buf_release(&big);
	kf_buf_release(&b);
}

static void test_tree(void)
{
	struct kf_buf b = KF_BUF_INIT(1 << 20);
	struct kf_tree_node n[5] = {{1, 0, "reference", NULL, KF_BAR_NEUTRAL, false},
				    {2, 1, "2.0x", NULL, KF_BAR_GOOD, true},
				    {3, 1, "wrong_output", NULL, KF_BAR_BAD, false},
				    {4, 5, "a<b", NULL, KF_BAR_GOOD, false},
				    {5, 4, "cycle", NULL, KF_BAR_GOOD, false}};
	CHECK(!kf_svg_tree(&b, n, 5, "tree", 100));
	CHECK_CONTAINS(b.data, "data-chart=\"tree\"");
	size_t nodes = 0, edges = 0;
	for (const char *p = b.data; (p = strstr(p, "data-node=")); p++)
		nodes++;
	for (const char *p = b.data; (p = strstr(p, "<line ")); p++)
		edges++;
	CHECK_EQ_INT(nodes, 5);
	CHECK_EQ_INT(edges, 3); /* 2 and 3 under 1; of the cycle 4 <-> 5 one edge stays, one node is a root */
	CHECK_CONTAINS(b.data, "href=\"#cand-2\"");
	CHECK_CONTAINS(b.data, "a&lt;b");
	CHECK_CONTAINS(b.data, "stroke-width=\"3\""); /* the best is outlined */
	kf_buf_reset(&b);
	CHECK(!kf_svg_tree(&b, n, 5, NULL, 2));
	CHECK_CONTAINS(b.data, "2 of 5 nodes drawn");
	kf_buf_release(&b);
}

static void test_progress(void)
{
	struct kf_progress_point p[4] = {{1, false, 0}, {3, true, 2.0}, {3, true, 1.5}, {5, true, 1.2}};
	double x[6], y[6];
	size_t n = kf_report_progress(p, 4, 6, x, y);
	CHECK_EQ_INT(n, 4); /* calls 3..6 */
	CHECK(x[0] == 3 && y[0] == 2.0 && x[3] == 6 && y[3] == 2.0);
	CHECK_EQ_INT(kf_report_progress(p, 1, 6, x, y), 0);
}

KF_TEST_MAIN(TEST(test_escapes), TEST(test_junit), TEST(test_charts), TEST(test_ticks),
	     TEST(test_log_bars_and_steps), TEST(test_shape_label), TEST(test_diff), TEST(test_tree),
	     TEST(test_progress))
