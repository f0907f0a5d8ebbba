/* JUnit XML as CI systems read it (Jenkins, GitLab, GitHub annotations): one <testsuite>, one <testcase>
 * per check, <failure>/<error>/<skipped> with a one-line message and the details as text. */
#include "report.h"

enum kf_status kf_junit_render(struct kf_buf *b, const char *suite, const struct kf_junit_case *cases,
			       size_t n)
{
	size_t fails = 0, errors = 0, skips = 0;
	double total = 0;
	enum kf_status st;

	for (size_t i = 0; i < n; i++) {
		fails += cases[i].status == KF_JUNIT_FAIL;
		errors += cases[i].status == KF_JUNIT_ERROR;
		skips += cases[i].status == KF_JUNIT_SKIP;
		total += cases[i].time_s;
	}
	st = kf_buf_adds(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"");
	if (!st)
		st = kf_xml_escape(b, suite);
	if (!st)
		st = kf_buf_addf(
		    b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n", n,
		    fails, errors, skips, total);
	for (size_t i = 0; i < n && !st; i++) {
		const struct kf_junit_case *c = &cases[i];
		static const char *const tag[] = {NULL, "failure", "error", "skipped"};
		st = kf_buf_adds(b, "    <testcase classname=\"");
		if (!st)
			st = kf_xml_escape(b, c->classname);
		if (!st)
			st = kf_buf_adds(b, "\" name=\"");
		if (!st)
			st = kf_xml_escape(b, c->name);
		if (!st)
			st = kf_buf_addf(b, "\" time=\"%.3f\"", c->time_s);
		if (!st && c->status == KF_JUNIT_PASS) {
			st = kf_buf_adds(b, "/>\n");
			continue;
		}
		if (!st)
			st = kf_buf_addf(b, ">\n      <%s message=\"", tag[c->status]);
		if (!st)
			st = kf_xml_escape(b, c->message ? c->message : "");
		if (!st && c->status != KF_JUNIT_SKIP)
			st = kf_buf_addf(b, "\" type=\"%s\"",
					 c->status == KF_JUNIT_FAIL ? "kforge.failure" : "kforge.error");
		else if (!st)
			st = kf_buf_adds(b, "\"");
		if (!st && c->detail && *c->detail) {
			st = kf_buf_adds(b, ">");
			if (!st)
				st = kf_xml_escape(b, c->detail);
			if (!st)
				st = kf_buf_addf(b, "</%s>\n", tag[c->status]);
		} else if (!st) {
			st = kf_buf_adds(b, "/>\n");
		}
		if (!st)
			st = kf_buf_adds(b, "    </testcase>\n");
	}
	return st ? st : kf_buf_adds(b, "  </testsuite>\n</testsuites>\n");
}
