/* Escaping for the report formats: HTML, XML (JUnit), Markdown table cells, CSV fields. */
#include <string.h>

#include "report.h"

/* Markup's entities; the apostrophe only where asked (HTML attributes may be single-quoted). NULL: the
 * character stands for itself. */
static const char *entity(char c, bool apos)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return apos ? "&#39;" : NULL;
	default:
		return NULL;
	}
}

static enum kf_status markup_escape(struct kf_buf *b, const char *s, bool xml)
{
	enum kf_status st = KF_OK;
	for (; s && *s && !st; s++) {
		unsigned char c = (unsigned char)*s;
		const char *e = entity(*s, !xml);
		if (xml && c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			continue; /* not allowed in XML 1.0 */
		st = e ? kf_buf_adds(b, e) : kf_buf_addch(b, *s);
	}
	return st;
}

enum kf_status kf_html_escape(struct kf_buf *b, const char *s)
{
	return markup_escape(b, s, false);
}

enum kf_status kf_xml_escape(struct kf_buf *b, const char *s)
{
	return markup_escape(b, s, true);
}

enum kf_status kf_md_escape_cell(struct kf_buf *b, const char *s)
{
	enum kf_status st = KF_OK;
	for (; s && *s && !st; s++) {
		if (*s == '|')
			st = kf_buf_adds(b, "\\|");
		else if (*s == '\n' || *s == '\r')
			st = kf_buf_addch(b, ' ');
		else
			st = kf_buf_addch(b, *s);
	}
	return st;
}

enum kf_status kf_csv_field(struct kf_buf *b, const char *s)
{
	enum kf_status st;
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\n\r"))
		return kf_buf_adds(b, s);
	st = kf_buf_addch(b, '"');
	for (; *s && !st; s++)
		st = *s == '"' ? kf_buf_adds(b, "\"\"") : kf_buf_addch(b, *s);
	return st ? st : kf_buf_addch(b, '"');
}

enum kf_status kf_html_begin(struct kf_buf *b, const char *title)
{
	enum kf_status st =
	    kf_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	if (!st)
		st = kf_html_escape(b, title);
	if (!st)
		st = kf_buf_adds(
		    b,
		    "</title>\n<style>\n"
		    "body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em "
		    "auto;max-width:1240px;"
		    "color:#1d2330;padding:0 1.2em}\n"
		    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #dde}\n"
		    "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccd;padding:.25em "
		    ".6em;"
		    "text-align:left;vertical-align:top}th{background:#f1f3f8}td.num{text-align:right;"
		    "font-variant-numeric:tabular-nums}\n"
		    "pre{background:#f6f7f9;border:1px solid "
		    "#dde;padding:.8em;overflow:auto;font-size:13px}\n"
		    ".pass{color:#17803d}.fail{color:#b42318}.note{color:#5b6475}.ref{color:#475569;font-"
		    "style:italic}\n"
		    "a{color:#1d4ed8}.chart{margin:.8em 0;overflow-x:auto}.chart "
		    "svg{display:block;background:#fff;"
		    "max-width:100%}.chart.wide svg{max-width:none}\n"
		    "svg text{font-family:system-ui,sans-serif}\n"
		    "details{margin:.3em 0}details.cand{border:1px solid #dde;border-radius:4px;padding:.2em "
		    ".6em}\n"
		    "details.cand>summary{cursor:pointer}details.cand .kind{color:#5b6475}\n"
		    "details.cand:target{outline:2px solid #2563eb}\n"
		    "pre.diff .del{background:#fde8e8;color:#9b1c1c}pre.diff "
		    ".add{background:#e3f7e9;color:#14532d}"
		    "pre.diff .hunk{color:#6b21a8}\n"
		    "</style></head><body>\n");
	return st;
}

enum kf_status kf_html_end(struct kf_buf *b)
{
	return kf_buf_adds(b, "</body></html>\n");
}
