/* libFuzzer target: an LLM reply's text through kf_parse_reply (code blocks, SEARCH/REPLACE edits on a
 * parent kernel), kf_parse_rationale and kf_parse_strategies (agent/agent.h). The first byte picks the
 * finish reason and whether there is a parent (tests/data/llm/parent.cu, the corpus's edits apply to it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/agent.h"

static struct kf_buf parent = KF_BUF_INIT(1u << 20);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kf_err err = KF_ERR_INIT;
	if (kf_buf_read_file(&parent, KF_TOP "/tests/data/llm/parent.cu", &err)) {
		fprintf(stderr, "fuzz_reply: %s\n", err.msg);
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const finish[] = {"stop", "length", NULL, "refusal"};
	struct kf_parse_result r = {0};
	struct kf_parse_strategy strat[8];
	struct kf_err err = KF_ERR_INIT;
	char rationale[200];
	unsigned mode;
	const char *reply;

	if (!size)
		return 0;
	mode = data[0];
	reply = (const char *)data + 1;
	size--;
	kf_parse_reply(reply, size, finish[mode & 3], mode & 4 ? NULL : parent.data, &r, &err);
	kf_parse_result_release(&r);
	kf_parse_rationale(reply, size, rationale, sizeof(rationale));
	kf_parse_strategies(reply, size, strat, 8);
	return 0;
}
