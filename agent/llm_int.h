/* Private to agent/llm*.c: the two HTTP dialects (request bodies, reply and error parsing) and the replay
 * source, so llm.c holds only the transport (curl multi, retries, accounting). */
#ifndef KF_AGENT_LLM_INT_H
#define KF_AGENT_LLM_INT_H

#include "agent.h"

/* How to build one request body (resolved by the client from its config and the model table). */
struct kf_llm_body_opts {
	enum kf_llm_provider provider;
	enum kf_llm_endpoint endpoint; /* CHAT, RESPONSES or MESSAGES (never DEFAULT here) */
	const char *model;
	const char *token_field; /* chat: "max_completion_tokens" or "max_tokens" */
	int max_tokens;
	bool temperature_set;
	double temperature;
	int effort;          /* KF_LLM_EFFORT_*; -1: not sent */
	int thinking_budget; /* Anthropic budget_tokens; 0: no thinking block */
	bool prompt_cache;   /* Anthropic: cache_control on the system text and on each message's prefix */
};

/* Request body for the endpoint, and the request's messages as a JSON array of {role, content} (system
 * first) for the knowledge base. Both malloc'd. */
enum kf_status kf_llm_body_build(const struct kf_llm_body_opts *o, const struct kf_llm_request *req,
				 char **body, char **prompt_json, struct kf_err *err);

/* Parses a 2xx body into r (text, finish_reason, token counts). KF_ERR_PARSE with a reason in err when the
 * body is not JSON or has no usable reply (empty choice list, no text, a refusal: r->failure says which);
 * KF_ERR_HTTP when it is an error object sent with a success status. */
enum kf_status kf_llm_reply_parse(enum kf_llm_endpoint ep, const char *body, size_t len,
				  struct kf_llm_result *r, struct kf_err *err);

/* The structured parts of an API error body ({"error": {"type", "code", "message"}} in both dialects,
 * Anthropic's error.details.error_code too); text copied clean and bounded. structured is false for a body
 * that is not in the API's format (a proxy's page, a local server's text): message then holds its start. */
struct kf_llm_api_error {
	bool structured;
	char type[64], code[64], detail[64];
	char message[400];
};
void kf_llm_error_parse(const char *body, size_t len, struct kf_llm_api_error *out);
/* "type: message" (or the raw text) into out. */
void kf_llm_error_text(const struct kf_llm_api_error *e, char *out, size_t n);
/* The failure kind (KF_LLM_FAIL_*) of an error status with its parsed body. */
const char *kf_llm_failure_classify(int http_status, const struct kf_llm_api_error *e);

/* How well a table key (prefix: it ended in '*') matches a model name: 0 no match, SIZE_MAX exact, else
 * the prefix length + 1 (the longest prefix wins). Shared by the model and price tables. */
size_t kf_llm_key_score(const char *key, bool prefix, const char *name);

/* Replay: the llm_call lines of one run of an export, in seq order. */
struct kf_llm_replay;
enum kf_status kf_llm_replay_load(const char *path, const char *run, struct kf_llm_replay **out,
				  struct kf_err *err);
/* Fills r with the next recorded response; false when none is left. */
bool kf_llm_replay_next(struct kf_llm_replay *rp, struct kf_llm_result *r);
void kf_llm_replay_free(struct kf_llm_replay *rp);

/* Copies src into dst (size n) with every occurrence of secret replaced by "[redacted]". */
void kf_llm_scrub(char *dst, size_t n, const char *src, const char *secret);

#endif
