/* Report building blocks: escaping, JUnit structure and counts, SVG charts that stay well-formed with
 * missing and non-finite data. */
#include <math.h>

#include "reports/report.h"
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
	struct kf_chart_opts o = {"fast_p", "p", "fraction", 0, 0, false, true, 1.0, true};
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

KF_TEST_MAIN(TEST(test_escapes), TEST(test_junit), TEST(test_charts))
