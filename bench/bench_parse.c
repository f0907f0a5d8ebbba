/* make bench: how fast reply parsing is (agent/parse.c), as a ratio to a plain line count over the same
 * bytes measured in the same run (the floor for any line-oriented scanner). Replies: a typical fenced
 * answer, a SEARCH/REPLACE answer against a parent, and a 1.5 MB pathological one (fences only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static volatile size_t sink;

static double per_call_us(void (*fn)(const char *, size_t, const char *), const char *s, size_t n,
			  const char *parent)
{
	int reps = 1;
	double t;
	for (;;) {
		double t0 = kf_now_ms();
		for (int i = 0; i < reps; i++)
			fn(s, n, parent);
		t = kf_now_ms() - t0;
		if (t > 200 || reps > (1 << 20))
			break;
		reps *= 2;
	}
	return t * 1000.0 / reps;
}

static size_t lines_in(const char *s, size_t n)
{
	size_t lines = 0;
	const char *p = s, *end = s + n;
	while ((p = memchr(p, '\n', (size_t)(end - p)))) {
		lines++;
		p++;
	}
	return lines;
}

/* The baseline reads every byte parsing must read: the reply and, for edits, the parent. */
static void count_lines(const char *s, size_t n, const char *parent)
{
	sink += lines_in(s, n) + (parent ? lines_in(parent, strlen(parent)) : 0);
}

static void parse(const char *s, size_t n, const char *parent)
{
	struct kf_parse_result r;
	struct kf_err err = KF_ERR_INIT;
	kf_parse_reply(s, n, "stop", parent, &r, &err);
	sink += r.source_len;
	kf_parse_result_release(&r);
}

static char *build(size_t target, const char *head, const char *unit, const char *tail)
{
	struct kf_buf b = KF_BUF_INIT(target + 65536);
	kf_buf_adds(&b, head);
	while (b.len + strlen(unit) + strlen(tail) < target)
		kf_buf_adds(&b, unit);
	kf_buf_adds(&b, tail);
	return kf_buf_detach(&b, NULL);
}

static void report(const char *name, const char *s, const char *parent)
{
	size_t n = strlen(s);
	double base = per_call_us(count_lines, s, n, parent), us = per_call_us(parse, s, n, parent);
	printf("%-34s %8zu bytes  %10.1f us  %6.1fx a line count (%.1f us)\n", name, n, us,
	       base > 0 ? us / base : 0, base);
}

int main(void)
{
	char *fenced =
	    build(20000,
		  "Here is the kernel.\n\n```cuda\n// kforge:launch k grid=(N) block=(256) args=(x, y, N)\n"
		  "extern \"C\" __global__ void k(const float *x, float *y, int N)\n{\n",
		  "    y[threadIdx.x] = x[threadIdx.x] * 2.0f; // body line\n", "}\n```\nIt is faster.\n");
	char *parent = build(20000,
			     "// kforge:launch k grid=(N) block=(256) args=(x, y, N)\n"
			     "extern \"C\" __global__ void k(const float *x, float *y, int N)\n{\n",
			     "    y[threadIdx.x] = x[threadIdx.x] * 2.0f; // body line\n",
			     "    int marker_line = 0;\n}\n");
	const char *edits =
	    "Change the end.\n<<<<<<< SEARCH\n    int marker_line = 0;\n=======\n    int marker_line = 1;\n"
	    ">>>>>>> REPLACE\n<<<<<<< SEARCH\n      int   marker_line = 1;\n=======\n    int marker_line = "
	    "2;\n"
	    ">>>>>>> REPLACE\n";
	char *patho = build(3u << 19, "", "```cuda\n", "");

	printf("reply parsing (agent/parse.c), time per reply\n");
	report("fenced reply, 20 KB", fenced, NULL);
	report("2 SEARCH/REPLACE edits, 20 KB parent", edits, parent);
	report("1.5 MB of opening fences", patho, NULL);
	free(fenced);
	free(parent);
	free(patho);
	return 0;
}
