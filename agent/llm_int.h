/* Private to agent/llm*.c: the two HTTP dialects (request bodies, reply and error parsing) and the replay
 * source, so llm.c holds only the transport (curl multi, retries, accounting). */
#ifndef KF_AGENT_LLM_INT_H
#define KF_AGENT_LLM_INT_H

#include "agent.h"

/* Request body for the provider, and the request's messages as a JSON array of {role, content} (system
 * first) for the knowledge base. Both malloc'd. */
enum kf_status kf_llm_body_build(enum kf_llm_provider p, const char *model, const char *max_tokens_field,
				 int max_tokens, bool temperature_set, double temperature,
				 const struct kf_llm_request *req, char **body, char **prompt_json,
				 struct kf_err *err);

/* Parses a 2xx body into r (text, finish_reason, tokens). KF_ERR_PARSE with a reason in err when the body
 * is not JSON or has no usable reply (empty choice list, no text); KF_ERR_HTTP when it is an error
 * object sent with a success status. */
enum kf_status kf_llm_reply_parse(enum kf_llm_provider p, const char *body, size_t len,
				  struct kf_llm_result *r, struct kf_err *err);

/* The error message of a non-2xx body ("rate_limit_error: slow down") into out (bounded), and whether it
 * says a spend/quota limit was reached (such a 429 is final). Falls back to the raw body's start. */
void kf_llm_error_describe(const char *body, size_t len, char *out, size_t n, bool *quota);

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
