/* Tests for agent/parse.c: the recorded-reply corpus in tests/data/llm/corpus.json (each reply with its
 * expected outcome), SEARCH/REPLACE application, and garbage that must become a parse_error, never a
 * crash or a hang: binary junk, 10 MB of text, pathological fences and markers, random splices. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "agent/agent.h"
#include "testing.h"

#define DATA "tests/data/llm/"

static char *slurp(const char *path, size_t *len)
{
	struct kf_buf b = KF_BUF_INIT(16u << 20);
	struct kf_err err = KF_ERR_INIT;
	if (kf_buf_read_file(&b, path, &err)) {
		fprintf(stderr, "  cannot read %s: %s\n", path, err.msg);
		kf_buf_release(&b);
		return NULL;
	}
	return kf_buf_detach(&b, len);
}

static void check_strings(const char *name, const char *src, const cJSON *list, bool want)
{
	const cJSON *s;
	cJSON_ArrayForEach(s, list)
	{
		bool found = src && strstr(src, s->valuestring);
		CHECKF(found == want, "%s: source %s '%s'", name, want ? "lacks" : "has", s->valuestring);
	}
}

static void test_corpus(void)
{
	size_t len, n = 0;
	char *text = slurp(DATA "corpus.json", &len), *parent = slurp(DATA "parent.cu", NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL;
	const cJSON *c;

	CHECK(root && parent);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
	{
		const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
		const cJSON *fin = cJSON_GetObjectItem(c, "finish_reason"),
			    *edits = cJSON_GetObjectItem(c, "edits");
		const cJSON *reason = cJSON_GetObjectItem(c, "reason"),
			    *fuzzy = cJSON_GetObjectItem(c, "fuzzy");
		bool want_ok = !strcmp(cJSON_GetObjectItem(c, "expect")->valuestring, "ok");
		bool use_parent = cJSON_IsTrue(cJSON_GetObjectItem(c, "parent"));
		char path[256];
		size_t rlen = 0;
		char *reply;
		struct kf_parse_result r;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st;

		snprintf(path, sizeof(path), DATA "replies/%s.txt", name);
		reply = slurp(path, &rlen);
		CHECKF(reply != NULL, "%s", path);
		if (!reply)
			continue;
		n++;
		st = kf_parse_reply(reply, rlen, cJSON_IsString(fin) ? fin->valuestring : "stop",
				    use_parent ? parent : NULL, &r, &err);
		CHECKF(st == (want_ok ? KF_OK : KF_ERR_PARSE), "%s: status %s, reason '%s'", name,
		       kf_status_name(st), r.reason);
		CHECKF(want_ok == (r.source != NULL), "%s: source %s", name, r.source ? "set" : "missing");
		if (!want_ok)
			CHECKF(r.reason[0], "%s: a parse error needs a reason", name);
		if (cJSON_IsString(reason))
			CHECKF(strstr(r.reason, reason->valuestring), "%s: reason '%s' lacks '%s'", name,
			       r.reason, reason->valuestring);
		if (cJSON_IsArray(edits)) {
			CHECKF(r.edits_total == cJSON_GetArrayItem(edits, 0)->valueint, "%s: total %d", name,
			       r.edits_total);
			CHECKF(r.edits_applied == cJSON_GetArrayItem(edits, 1)->valueint, "%s: applied %d",
			       name, r.edits_applied);
			CHECKF(r.edits_unmatched == cJSON_GetArrayItem(edits, 2)->valueint,
			       "%s: unmatched %d", name, r.edits_unmatched);
		}
		if (cJSON_IsNumber(fuzzy))
			CHECKF(r.edits_fuzzy == fuzzy->valueint, "%s: fuzzy %d", name, r.edits_fuzzy);
		CHECKF(r.need_rewrite == cJSON_IsTrue(cJSON_GetObjectItem(c, "need_rewrite")),
		       "%s: need_rewrite %d", name, r.need_rewrite);
		check_strings(name, r.source, cJSON_GetObjectItem(c, "has"), true);
		check_strings(name, r.source, cJSON_GetObjectItem(c, "lacks"), false);
		if (r.source)
			CHECKF(strlen(r.source) == r.source_len, "%s: source_len", name);
		kf_parse_result_release(&r);
		free(reply);
	}
	CHECKF(n >= 20, "only %zu corpus cases ran", n);
	cJSON_Delete(root);
	free(text);
	free(parent);
}

static void test_apply_edits(void)
{
	const char *parent = "a\n  b(1);\nc\n  b(1);\n";
	struct kf_parse_result r;
	struct kf_err err = KF_ERR_INIT;
	const char *e1 = "<<<<<<< SEARCH\n  b(1);\n=======\n  b(2);\n>>>>>>> REPLACE\n";
	const char *e2 = "<<<<<<< SEARCH\nb(1);\nc\n=======\nB\nC\n>>>>>>> REPLACE\n";
	const char *e3 = "<<<<<<< SEARCH\n\n=======\nx\n>>>>>>> REPLACE\n";
	const char *e4 = "<<<<<<< SEARCH\n  b(1);\n=======\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n  "
			 "b(1);\n=======\n>>>>>>> REPLACE\n"
			 "<<<<<<< SEARCH\n  b(1);\n=======\n>>>>>>> REPLACE\n";

	/* exact: the first occurrence only */
	CHECK(kf_parse_apply_edits(e1, strlen(e1), parent, &r, &err) == KF_OK);
	CHECK_STR(r.source, "a\n  b(2);\nc\n  b(1);\n");
	CHECK_EQ_INT(r.edits_applied, 1);
	CHECK_EQ_INT(r.edits_fuzzy, 0);
	kf_parse_result_release(&r);
	/* whitespace-tolerant: indentation differs, so lines match trimmed; the newline is kept */
	CHECK(kf_parse_apply_edits(e2, strlen(e2), "a\n  b(1);\n\tc  \nd\n", &r, &err) == KF_OK);
	CHECK_STR(r.source, "a\nB\nC\nd\n");
	CHECK_EQ_INT(r.edits_fuzzy, 1);
	kf_parse_result_release(&r);
	/* an empty SEARCH matches nothing */
	CHECK(kf_parse_apply_edits(e3, strlen(e3), parent, &r, &err) == KF_OK);
	CHECK_EQ_INT(r.edits_unmatched, 1);
	CHECK(r.need_rewrite);
	CHECK_STR(r.source, parent);
	kf_parse_result_release(&r);
	/* edits apply in order, each to the result of the previous: the third finds nothing left */
	CHECK(kf_parse_apply_edits(e4, strlen(e4), parent, &r, &err) == KF_OK);
	CHECK_EQ_INT(r.edits_total, 3);
	CHECK_EQ_INT(r.edits_applied, 2);
	CHECK_EQ_INT(r.edits_unmatched, 1);
	CHECK_STR(r.source, "a\nc\n");
	kf_parse_result_release(&r);
	/* no edits at all */
	CHECK(kf_parse_apply_edits("hello", 5, parent, &r, &err) == KF_OK);
	CHECK_EQ_INT(r.edits_total, 0);
	CHECK(!r.need_rewrite);
	kf_parse_result_release(&r);
	kf_parse_result_release(NULL);
}

static void test_garbage(void)
{
	struct kf_parse_result r;
	struct kf_err err = KF_ERR_INIT;
	size_t big = 10u << 20;
	char *buf = malloc(big + 1);
	const char *kernel = "```cuda\n// kforge:launch k grid=(1) block=(1) args=(x)\n"
			     "extern \"C\" __global__ void k(float *x) {}\n```\n";
	double t0;
	uint64_t s = 12345;

	CHECK(buf != NULL);
	if (!buf)
		return;
	/* binary junk, with a valid block inside so only the junk check can reject it */
	for (size_t i = 0; i < 4096; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (char)(s >> 56);
	}
	memcpy(buf + 100, kernel, strlen(kernel));
	CHECK(kf_parse_reply(buf, 4096, "stop", NULL, &r, &err) == KF_ERR_PARSE);
	CHECK_CONTAINS(r.reason, "not text");
	CHECK(r.source == NULL);
	kf_parse_result_release(&r);

	/* 10 MB of text */
	memset(buf, 'a', big);
	memcpy(buf, kernel, strlen(kernel));
	buf[big] = '\0';
	CHECK(kf_parse_reply(buf, big, "stop", NULL, &r, &err) == KF_ERR_PARSE);
	CHECK_CONTAINS(r.reason, "over the");
	kf_parse_result_release(&r);
	CHECK(kf_parse_reply(NULL, 0, NULL, NULL, &r, &err) == KF_ERR_PARSE);
	kf_parse_result_release(&r);

	/* 1.5 MB of opening fences with no body: must finish quickly, either way */
	{
		size_t n = 0;
		while (n + 8 < (3u << 19)) {
			memcpy(buf + n, "```cuda\n", 8);
			n += 8;
		}
		t0 = kf_now_ms();
		CHECK(kf_parse_reply(buf, n, "length", NULL, &r, &err) == KF_ERR_PARSE);
		CHECKF(kf_now_ms() - t0 < 20000, "took %.0f ms", kf_now_ms() - t0);
		CHECK(r.reason[0]);
		kf_parse_result_release(&r);
	}
	/* 1.5 MB of SEARCH markers that never close */
	{
		size_t n = 0;
		static const char m[] = "<<<<<<< SEARCH\nx\n=======\n";
		while (n + sizeof(m) < (3u << 19)) {
			memcpy(buf + n, m, sizeof(m) - 1);
			n += sizeof(m) - 1;
		}
		t0 = kf_now_ms();
		CHECK(kf_parse_reply(buf, n, "length", "x\n", &r, &err) == KF_ERR_PARSE);
		CHECKF(kf_now_ms() - t0 < 20000, "took %.0f ms", kf_now_ms() - t0);
		CHECK(r.need_rewrite || r.reason[0]);
		kf_parse_result_release(&r);
	}
	free(buf);
}

/* Random splices of reply fragments: every outcome is OK with a source or PARSE with a reason. */
static void test_random_splices(void)
{
	static const char *const frag[] = {
	    "```cuda\n",
	    "```\n",
	    "````\n",
	    "// kforge:launch k grid=(N) block=(32) args=(x, N)\n",
	    "extern \"C\" __global__ void k(float *x, int N) { }\n",
	    "<<<<<<< SEARCH\n",
	    "=======\n",
	    ">>>>>>> REPLACE\n",
	    "    m = red[0];\n",
	    "text ",
	    "\n",
	    "\r\n",
	    "`",
	    "<<<<<<<",
	    "  sum = red[0];\n",
	    "",
	};
	char *parent = slurp(DATA "parent.cu", NULL);
	uint64_t s = 99;
	for (int it = 0; it < 3000; it++) {
		struct kf_buf b = KF_BUF_INIT(1 << 16);
		struct kf_parse_result r;
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st;
		int n;
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		n = (int)(s >> 59);
		for (int k = 0; k < n; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			kf_buf_adds(&b, frag[(s >> 33) % KF_ARRAY_SIZE(frag)]);
		}
		st = kf_parse_reply(b.data, b.len, (s >> 40) & 1 ? "length" : "stop",
				    (s >> 41) & 1 ? parent : NULL, &r, &err);
		CHECKF(st == KF_OK || st == KF_ERR_PARSE, "iteration %d: %s", it, kf_status_name(st));
		if (st == KF_OK)
			CHECKF(r.source && strstr(r.source, "kforge:launch"), "iteration %d", it);
		else
			CHECKF(!r.source && r.reason[0], "iteration %d: no reason", it);
		kf_parse_result_release(&r);
		kf_buf_release(&b);
	}
	free(parent);
}

static void test_rationale(void)
{
	static const struct {
		const char *reply, *want;
	} cases[] = {
	    {"Change: vectorize the loads with float4\n\n```cuda\nx\n```\n",
	     "vectorize the loads with float4"},
	    {"**Change:** one warp per row, shuffles for the sum\n```cuda\n// Change: not this\n```",
	     "one warp per row, shuffles for the sum"},
	    {"The kernel is memory-bound. Loading four floats at a time halves the "
	     "instructions:\n```cuda\nx\n```",
	     "The kernel is memory-bound."},
	    {"Correct and memory-bound: fewer, busier threads cut the overhead. Sixteen per "
	     "thread:\n```cuda\nx\n```",
	     "Correct and memory-bound: fewer, busier threads cut the overhead."},
	    {"Each thread does four elements with one float4 load per input:\n\n```cuda\nx\n```",
	     "Each thread does four elements with one float4 load per input"},
	    {"```cuda\n// only code\n```\n", ""},
	    {"<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", ""},
	    {"- Rationale - fuse the two passes\x01 into one\n", "fuse the two passes into one"},
	};
	char out[200];
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		kf_parse_rationale(cases[i].reply, strlen(cases[i].reply), out, sizeof(out));
		CHECKF(!strcmp(out, cases[i].want), "case %zu: '%s'", i, out);
	}
	/* bounded */
	char big[600];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "Change: ", 8);
	kf_parse_rationale(big, strlen(big), out, 20);
	CHECK_EQ_INT(strlen(out), 19);
}

static void test_strategies(void)
{
	const char *reply = "Here are four approaches.\n\n"
			    "1. **Warp per row**: one warp per row, shuffles for max and sum (memory bound)\n"
			    "2) Block per row: a block per row with a shared-memory stage for long rows\n"
			    "3. Online softmax: one pass for max and sum, then one write\n"
			    "3. Online softmax: the same again\n"
			    "4. x: short\n"
			    "```\n5. In code: not a strategy line at all\n```\n"
			    "5. Vectorized: float4 loads with a scalar tail and a grid-stride loop\n";
	struct kf_parse_strategy st[8];
	int n = kf_parse_strategies(reply, strlen(reply), st, 8);
	CHECK_EQ_INT(n, 4);
	CHECK_STR(st[0].name, "Warp per row");
	CHECK_STR(st[0].text, "one warp per row, shuffles for max and sum (memory bound)");
	CHECK_STR(st[2].name, "Online softmax");
	CHECK_STR(st[3].name, "Vectorized");
	CHECK_EQ_INT(kf_parse_strategies(reply, strlen(reply), st, 2), 2);
	CHECK_EQ_INT(kf_parse_strategies("no list here", 12, st, 8), 0);
}

KF_TEST_MAIN(TEST(test_rationale), TEST(test_strategies), TEST(test_corpus), TEST(test_apply_edits),
	     TEST(test_garbage), TEST(test_random_splices))
