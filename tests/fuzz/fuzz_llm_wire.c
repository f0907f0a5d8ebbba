/* libFuzzer target: an HTTP response body through kf_llm_reply_parse for each endpoint kind (chat
 * completions, Responses, Anthropic messages) and through kf_llm_error_parse and the failure classifier, as
 * agent/llm.c reads a 2xx and an error status. */
#include <stdint.h>
#include <stdlib.h>

#include "agent/llm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum kf_llm_endpoint eps[] = {KF_LLM_EP_CHAT, KF_LLM_EP_RESPONSES, KF_LLM_EP_MESSAGES};
	const char *body = (const char *)data;
	struct kf_llm_api_error ae;
	char text[600];

	for (size_t i = 0; i < sizeof(eps) / sizeof(eps[0]); i++) {
		struct kf_llm_result r = {0};
		struct kf_err err = KF_ERR_INIT;
		kf_llm_reply_parse(eps[i], body, size, &r, &err);
		free(r.text);
		free(r.prompt_json);
	}
	kf_llm_error_parse(body, size, &ae);
	kf_llm_error_text(&ae, text, sizeof(text));
	kf_llm_failure_classify(429, &ae);
	kf_llm_failure_classify(400, &ae);
	return 0;
}
