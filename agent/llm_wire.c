/* The wire formats of the two LLM dialects (docs/field-notes.md "LLM APIs"): OpenAI chat completions and
 * Anthropic messages. Builds request bodies with cJSON and turns reply/error bodies into results. */
#include "llm_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool role_ok(const char *r)
{
	return r && (!strcmp(r, "user") || !strcmp(r, "assistant"));
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n;
	unsigned cp;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A copy of s where every byte that is not part of valid UTF-8 becomes '?': a prompt may carry compiler
 * output or kernel text with stray bytes, and the APIs reject a body that is not UTF-8 JSON. */
static char *utf8_clean(const char *s)
{
	size_t len = strlen(s), i = 0;
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	while (i < len) {
		size_t n = utf8_seq((const unsigned char *)s + i);
		if (n) {
			memcpy(out + i, s + i, n);
			i += n;
		} else {
			out[i++] = '?';
		}
	}
	out[len] = '\0';
	return out;
}

/* A clean copy of s[0..n) (stray bytes replaced, as utf8_clean does) as a cJSON string. */
static cJSON *clean_string(const char *s, size_t n)
{
	char *tmp = kf_strndup(s, n), *clean = tmp ? utf8_clean(tmp) : NULL;
	cJSON *v = clean ? cJSON_CreateString(clean) : NULL;
	free(tmp);
	free(clean);
	return v;
}

/* A text content block, marked for Anthropic's prompt cache when cache is set. */
static cJSON *text_block(const char *s, size_t n, bool cache)
{
	cJSON *b = cJSON_CreateObject(), *t = clean_string(s, n);
	if (!b || !t || !cJSON_AddStringToObject(b, "type", "text") || !cJSON_AddItemToObject(b, "text", t)) {
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(b, "text")))
			cJSON_Delete(t);
		cJSON_Delete(b);
		return NULL;
	}
	if (cache) {
		cJSON *cc = cJSON_AddObjectToObject(b, "cache_control");
		if (!cc || !cJSON_AddStringToObject(cc, "type", "ephemeral")) {
			cJSON_Delete(b);
			return NULL;
		}
	}
	return b;
}

/* {role, content} with content a plain string (the knowledge base's form, chat and responses bodies), or,
 * for Anthropic with a cache prefix, two text blocks: the prefix (marked) and the rest. */
static cJSON *message_new(const char *role, const char *content, size_t cache_prefix, bool blocks)
{
	cJSON *m = cJSON_CreateObject(), *c = NULL;
	size_t n = strlen(content);

	if (!m || !cJSON_AddStringToObject(m, "role", role))
		goto fail;
	if (blocks && cache_prefix > 0 && cache_prefix < n) {
		cJSON *b1 = text_block(content, cache_prefix, true);
		cJSON *b2 = b1 ? text_block(content + cache_prefix, n - cache_prefix, false) : NULL;
		c = cJSON_CreateArray();
		if (!b2 || !c || !cJSON_AddItemToArray(c, b1) || !cJSON_AddItemToArray(c, b2)) {
			cJSON_Delete(b1);
			cJSON_Delete(b2);
			cJSON_Delete(c);
			goto fail;
		}
	} else {
		c = clean_string(content, n);
	}
	if (!c || !cJSON_AddItemToObject(m, "content", c)) {
		cJSON_Delete(c);
		goto fail;
	}
	return m;
fail:
	cJSON_Delete(m);
	return NULL;
}

/* Appends the conversation to arr; with_system puts the system text first as a "system" message. */
static bool add_messages(cJSON *arr, const struct kf_llm_request *req, bool with_system, bool blocks)
{
	if (with_system && req->system && req->system[0]) {
		cJSON *m = message_new("system", req->system, 0, false);
		if (!m || !cJSON_AddItemToArray(arr, m))
			return false;
	}
	for (size_t i = 0; i < req->n_messages; i++) {
		const struct kf_llm_message *x = &req->messages[i];
		cJSON *m = message_new(x->role, x->content ? x->content : "", x->cache_prefix, blocks);
		if (!m || !cJSON_AddItemToArray(arr, m))
			return false;
	}
	return true;
}

static bool add_effort(cJSON *root, const struct kf_llm_body_opts *o)
{
	const char *e = kf_llm_effort_name(o->effort);
	if (o->effort < 0)
		return true;
	if (o->endpoint == KF_LLM_EP_CHAT)
		return cJSON_AddStringToObject(root, "reasoning_effort", e) != NULL;
	cJSON *r =
	    cJSON_AddObjectToObject(root, o->endpoint == KF_LLM_EP_RESPONSES ? "reasoning" : "output_config");
	return r && cJSON_AddStringToObject(r, "effort", e) != NULL;
}

enum kf_status kf_llm_body_build(const struct kf_llm_body_opts *o, const struct kf_llm_request *req,
				 char **body, char **prompt_json, struct kf_err *err)
{
	cJSON *root = NULL, *msgs, *prompt = NULL;
	bool ok;

	*body = *prompt_json = NULL;
	if (!req->n_messages || !req->messages)
		return kf_err_set(err, KF_ERR_INVALID, "a request needs at least one message");
	for (size_t i = 0; i < req->n_messages; i++) {
		if (!role_ok(req->messages[i].role))
			return kf_err_set(err, KF_ERR_INVALID,
					  "messages[%zu]: role '%s' is not 'user' or 'assistant'", i,
					  req->messages[i].role ? req->messages[i].role : "(null)");
		/* Anthropic rejects two consecutive turns of one role; keep every dialect to the stricter
		 * rule. */
		if (i && !strcmp(req->messages[i].role, req->messages[i - 1].role))
			return kf_err_set(err, KF_ERR_INVALID, "messages[%zu]: two '%s' messages in a row", i,
					  req->messages[i].role);
	}
	if (strcmp(req->messages[0].role, "user"))
		return kf_err_set(err, KF_ERR_INVALID, "messages[0]: the first message must be from 'user'");

	prompt = cJSON_CreateArray();
	root = cJSON_CreateObject();
	if (!prompt || !root || !add_messages(prompt, req, true, false))
		goto nomem;
	if (!cJSON_AddStringToObject(root, "model", o->model))
		goto nomem;
	switch (o->endpoint) {
	case KF_LLM_EP_MESSAGES:
		ok = cJSON_AddNumberToObject(root, "max_tokens", o->max_tokens) != NULL;
		if (ok && req->system && req->system[0]) {
			if (o->prompt_cache) {
				/* The system text is the same in every request of a run: the first cache
				 * breakpoint. */
				cJSON *sys = cJSON_AddArrayToObject(root, "system");
				cJSON *b = sys ? text_block(req->system, strlen(req->system), true) : NULL;
				ok = b && cJSON_AddItemToArray(sys, b);
				if (!ok)
					cJSON_Delete(b);
			} else {
				cJSON *t = clean_string(req->system, strlen(req->system));
				ok = t && cJSON_AddItemToObject(root, "system", t);
				if (!ok)
					cJSON_Delete(t);
			}
		}
		msgs = ok ? cJSON_AddArrayToObject(root, "messages") : NULL;
		ok = msgs && add_messages(msgs, req, false, o->prompt_cache);
		if (ok && o->thinking_budget > 0) {
			cJSON *th = cJSON_AddObjectToObject(root, "thinking");
			ok = th && cJSON_AddStringToObject(th, "type", "enabled") &&
			     cJSON_AddNumberToObject(th, "budget_tokens", o->thinking_budget);
		}
		break;
	case KF_LLM_EP_RESPONSES:
		/* Responses: the system text is "instructions", the turns are "input" messages; nothing is
		 * stored on the provider's side (store false), so a run leaves no conversation behind. */
		ok = true;
		if (req->system && req->system[0]) {
			cJSON *t = clean_string(req->system, strlen(req->system));
			ok = t && cJSON_AddItemToObject(root, "instructions", t);
			if (!ok)
				cJSON_Delete(t);
		}
		msgs = ok ? cJSON_AddArrayToObject(root, "input") : NULL;
		ok = msgs && add_messages(msgs, req, false, false) &&
		     cJSON_AddNumberToObject(root, "max_output_tokens", o->max_tokens) &&
		     cJSON_AddFalseToObject(root, "store");
		break;
	default:
		msgs = cJSON_AddArrayToObject(root, "messages");
		ok = msgs && add_messages(msgs, req, true, false) &&
		     cJSON_AddNumberToObject(root, o->token_field ? o->token_field : "max_completion_tokens",
					     o->max_tokens);
		break;
	}
	if (ok)
		ok = add_effort(root, o);
	if (ok && o->temperature_set)
		ok = cJSON_AddNumberToObject(root, "temperature", o->temperature) != NULL;
	if (!ok)
		goto nomem;
	*body = cJSON_PrintUnformatted(root);
	*prompt_json = cJSON_PrintUnformatted(prompt);
	cJSON_Delete(root);
	cJSON_Delete(prompt);
	if (!*body || !*prompt_json) {
		free(*body);
		free(*prompt_json);
		*body = *prompt_json = NULL;
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory building a request");
	}
	return KF_OK;
nomem:
	cJSON_Delete(root);
	cJSON_Delete(prompt);
	return kf_err_set(err, KF_ERR_NOMEM, "out of memory building a request");
}

static int64_t num_field(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9e15 ? (int64_t)v->valuedouble
										 : 0;
}

/* Copies printable text only, so an error body cannot put control bytes into logs. */
static void copy_clean(char *dst, size_t n, const char *src, size_t len)
{
	size_t j = 0;
	if (!n)
		return;
	for (size_t i = 0; i < len && src[i] && j + 1 < n; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	dst[j] = '\0';
}

static void copy_str(char *dst, size_t n, const cJSON *v)
{
	if (cJSON_IsString(v))
		copy_clean(dst, n, v->valuestring, strlen(v->valuestring));
	else
		dst[0] = '\0';
}

/* Fills e from an {"error": ...} value (an object in both dialects; some servers send a string). */
static void error_from(const cJSON *ev, struct kf_llm_api_error *e)
{
	memset(e, 0, sizeof(*e));
	e->structured = true;
	if (cJSON_IsString(ev)) {
		copy_str(e->message, sizeof(e->message), ev);
		return;
	}
	copy_str(e->type, sizeof(e->type), cJSON_GetObjectItemCaseSensitive(ev, "type"));
	copy_str(e->code, sizeof(e->code), cJSON_GetObjectItemCaseSensitive(ev, "code"));
	copy_str(e->message, sizeof(e->message), cJSON_GetObjectItemCaseSensitive(ev, "message"));
	/* Anthropic puts the precise cause of some errors in details.error_code */
	copy_str(
	    e->detail, sizeof(e->detail),
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "details"), "error_code"));
}

void kf_llm_error_parse(const char *body, size_t len, struct kf_llm_api_error *out)
{
	cJSON *root = len ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *e = root ? cJSON_GetObjectItemCaseSensitive(root, "error") : NULL;

	if (e && (cJSON_IsObject(e) || cJSON_IsString(e))) {
		error_from(e, out);
	} else {
		/* Not the API's error format (a proxy's HTML page, a local server's text): keep its start. */
		memset(out, 0, sizeof(*out));
		copy_clean(out->message, sizeof(out->message), body ? body : "", len > 200 ? 200 : len);
	}
	cJSON_Delete(root);
}

void kf_llm_error_text(const struct kf_llm_api_error *e, char *out, size_t n)
{
	const char *t = e->type[0] ? e->type : e->code;
	snprintf(out, n, "%s%s%s", t, t[0] ? ": " : "", e->message);
}

static bool eq(const char *a, const char *b)
{
	return !strcmp(a, b);
}

/* Codes and types, as the APIs document them (docs/field-notes.md): never words in the message, except to
 * tell the Responses-only 404 apart, which has no code of its own. */
const char *kf_llm_failure_classify(int status, const struct kf_llm_api_error *e)
{
	bool quota = eq(e->code, "insufficient_quota") || eq(e->type, "insufficient_quota") ||
		     eq(e->detail, "enforced_spend_limit_reached") || eq(e->type, "billing_error");
	if (quota && (status == 429 || status == 402 || status == 403 || status == 400))
		return KF_LLM_FAIL_QUOTA;
	switch (status) {
	case 401:
		return KF_LLM_FAIL_AUTH;
	case 402:
		return KF_LLM_FAIL_QUOTA; /* Anthropic's billing_error status */
	case 403:
		return KF_LLM_FAIL_PERMISSION;
	case 404:
		if (strstr(e->message, "v1/responses") || strstr(e->message, "not a chat model"))
			return KF_LLM_FAIL_RESPONSES_ONLY;
		return KF_LLM_FAIL_NOT_FOUND;
	case 413:
		return KF_LLM_FAIL_TOO_LARGE;
	case 429:
		return KF_LLM_FAIL_RATE_LIMIT;
	case 400:
	case 422:
		if (eq(e->code, "unsupported_parameter") || eq(e->code, "unsupported_value") ||
		    eq(e->code, "model_not_found"))
			return eq(e->code, "model_not_found") ? KF_LLM_FAIL_NOT_FOUND : KF_LLM_FAIL_CONFIG;
		return KF_LLM_FAIL_BAD_REQUEST;
	case 408:
	case 409:
		return KF_LLM_FAIL_SERVER;
	default:
		return status >= 500 ? KF_LLM_FAIL_SERVER : KF_LLM_FAIL_HTTP;
	}
}

bool kf_llm_failure_fatal(const char *kind)
{
	static const char *const fatal[] = {KF_LLM_FAIL_AUTH, KF_LLM_FAIL_PERMISSION, KF_LLM_FAIL_NOT_FOUND,
					    KF_LLM_FAIL_QUOTA, KF_LLM_FAIL_CONFIG};
	for (size_t i = 0; kind && i < KF_ARRAY_SIZE(fatal); i++)
		if (!strcmp(kind, fatal[i]))
			return true;
	return false;
}

static enum kf_status set_text(struct kf_llm_result *r, const char *s, size_t len, struct kf_err *err)
{
	char *t = malloc(len + 1);
	if (!t)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	memcpy(t, s, len);
	t[len] = '\0';
	free(r->text);
	r->text = t;
	r->text_len = len;
	return KF_OK;
}

static void set_finish_str(struct kf_llm_result *r, const char *s)
{
	/* Anthropic's and the Responses API's names mapped onto OpenAI's, so the parser has one word for
	 * "cut off" */
	if (!strcmp(s, "max_tokens") || !strcmp(s, "max_output_tokens"))
		s = "length";
	else if (!strcmp(s, "end_turn") || !strcmp(s, "stop_sequence") || !strcmp(s, "completed"))
		s = "stop";
	copy_clean(r->finish_reason, sizeof(r->finish_reason), s, strlen(s));
}

static void set_finish(struct kf_llm_result *r, const cJSON *v)
{
	set_finish_str(r, cJSON_IsString(v) ? v->valuestring : "");
}

static enum kf_status unusable(struct kf_llm_result *r, const char *kind, struct kf_err *err, const char *fmt,
			       ...) __attribute__((format(printf, 4, 5)));
static enum kf_status unusable(struct kf_llm_result *r, const char *kind, struct kf_err *err, const char *fmt,
			       ...)
{
	va_list ap;
	snprintf(r->failure, sizeof(r->failure), "%s", kind);
	va_start(ap, fmt);
	kf_err_vset(err, KF_ERR_PARSE, fmt, ap);
	va_end(ap);
	return KF_ERR_PARSE;
}

static enum kf_status parse_chat(const cJSON *root, struct kf_llm_result *r, struct kf_err *err)
{
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
	const cJSON *c0, *msg, *content, *usage;

	/* Usage first: a reply without a usable choice was still billed. */
	usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	r->tokens_in = num_field(usage, "prompt_tokens");
	r->tokens_out = num_field(usage, "completion_tokens");
	r->tokens_cached =
	    num_field(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens_details"), "cached_tokens");
	r->tokens_reasoning = num_field(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens_details"),
					"reasoning_tokens");
	if (!cJSON_IsArray(choices))
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has no 'choices' list");
	c0 = cJSON_GetArrayItem(choices, 0);
	if (!c0)
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has an empty choice list");
	msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
	content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	set_finish(r, cJSON_GetObjectItemCaseSensitive(c0, "finish_reason"));
	{
		const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
		if (cJSON_IsString(refusal) && refusal->valuestring[0]) {
			set_finish_str(r, "refusal");
			return unusable(r, KF_LLM_FAIL_REFUSAL, err, "the model refused: %.300s",
					refusal->valuestring);
		}
	}
	if (!cJSON_IsString(content) || (!content->valuestring[0] && !strcmp(r->finish_reason, "length"))) {
		if (!strcmp(r->finish_reason, "length"))
			return unusable(r, KF_LLM_FAIL_LENGTH, err,
					"the reply was cut at the token limit before any text (%s): raise "
					"--max-tokens or lower --reasoning-effort",
					r->tokens_reasoning ? "the reasoning used it up" : "no text");
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "choices[0].message.content is not text");
	}
	return set_text(r, content->valuestring, strlen(content->valuestring), err);
}

/* Responses API: output is a list of items; the text is in "message" items' "output_text" parts. */
static enum kf_status parse_responses(const cJSON *root, struct kf_llm_result *r, struct kf_err *err)
{
	const cJSON *output = cJSON_GetObjectItemCaseSensitive(root, "output");
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
	const cJSON *item;
	struct kf_buf text = KF_BUF_INIT(SIZE_MAX / 2);
	char refusal[320] = "";
	bool any = false;
	enum kf_status st;

	r->tokens_in = num_field(usage, "input_tokens");
	r->tokens_out = num_field(usage, "output_tokens");
	r->tokens_cached =
	    num_field(cJSON_GetObjectItemCaseSensitive(usage, "input_tokens_details"), "cached_tokens");
	r->tokens_reasoning =
	    num_field(cJSON_GetObjectItemCaseSensitive(usage, "output_tokens_details"), "reasoning_tokens");
	if (cJSON_IsString(status) && !strcmp(status->valuestring, "incomplete")) {
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(root, "incomplete_details"), "reason");
		set_finish_str(r, cJSON_IsString(why) ? why->valuestring : "incomplete");
	} else {
		set_finish_str(r, cJSON_IsString(status) ? status->valuestring : "");
	}
	if (!cJSON_IsArray(output))
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has no 'output' list");
	cJSON_ArrayForEach(item, output)
	{
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(item, "type"), *part;
		if (!cJSON_IsString(type) || strcmp(type->valuestring, "message"))
			continue; /* reasoning items and the like */
		cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(item, "content"))
		{
			const cJSON *pt = cJSON_GetObjectItemCaseSensitive(part, "type");
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
			const cJSON *rf = cJSON_GetObjectItemCaseSensitive(part, "refusal");
			if (cJSON_IsString(pt) && !strcmp(pt->valuestring, "output_text") &&
			    cJSON_IsString(t)) {
				if (kf_buf_adds(&text, t->valuestring)) {
					kf_buf_release(&text);
					return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
				}
				any = true;
			} else if (cJSON_IsString(pt) && !strcmp(pt->valuestring, "refusal") &&
				   cJSON_IsString(rf)) {
				snprintf(refusal, sizeof(refusal), "%s", rf->valuestring);
			}
		}
	}
	if (!any || !text.len) {
		kf_buf_release(&text);
		if (refusal[0]) {
			set_finish_str(r, "refusal");
			return unusable(r, KF_LLM_FAIL_REFUSAL, err, "the model refused: %.300s", refusal);
		}
		if (!strcmp(r->finish_reason, "length"))
			return unusable(r, KF_LLM_FAIL_LENGTH, err,
					"the reply was cut at the token limit (max_output_tokens) before any "
					"text (%s): raise "
					"--max-tokens or lower --reasoning-effort",
					r->tokens_reasoning ? "the reasoning used it up" : "no text");
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has no output_text");
	}
	st = set_text(r, text.data, text.len, err);
	kf_buf_release(&text);
	return st;
}

static enum kf_status parse_messages(const cJSON *root, struct kf_llm_result *r, struct kf_err *err)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(root, "content");
	const cJSON *usage, *blk;
	struct kf_buf text = KF_BUF_INIT(SIZE_MAX / 2);
	bool any = false;
	enum kf_status st;

	usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	/* Anthropic's input_tokens leaves the cached prompt out; kforge's tokens_in holds all of it, with the
	 * cache reads and writes as parts of it (billed at their own rates, prices.json). */
	r->tokens_cached = num_field(usage, "cache_read_input_tokens");
	r->tokens_cache_write = num_field(usage, "cache_creation_input_tokens");
	r->tokens_in = num_field(usage, "input_tokens") + r->tokens_cached + r->tokens_cache_write;
	r->tokens_out = num_field(usage, "output_tokens"); /* thinking included */
	if (!cJSON_IsArray(content))
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has no 'content' list");
	set_finish(r, cJSON_GetObjectItemCaseSensitive(root, "stop_reason"));
	cJSON_ArrayForEach(blk, content)
	{
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(blk, "type");
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
		/* thinking and redacted_thinking blocks are the model's scratchpad, not the answer */
		if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(t)) {
			if (kf_buf_adds(&text, t->valuestring)) {
				kf_buf_release(&text);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			any = true;
		}
	}
	if (!strcmp(r->finish_reason, "refusal")) {
		char excerpt[320], msg[400];
		copy_clean(excerpt, sizeof(excerpt), text.data, text.len);
		kf_buf_release(&text);
		snprintf(msg, sizeof(msg), "stop_reason refusal%s%s", excerpt[0] ? ": " : "", excerpt);
		return unusable(r, KF_LLM_FAIL_REFUSAL, err, "the model refused (%s)", msg);
	}
	if (!any || !text.len) {
		kf_buf_release(&text);
		if (!strcmp(r->finish_reason, "length"))
			return unusable(r, KF_LLM_FAIL_LENGTH, err,
					"the reply was cut at the token limit (max_tokens) before any text "
					"(%s): raise --max-tokens "
					"or lower --thinking-budget",
					"thinking or nothing came first");
		return unusable(r, KF_LLM_FAIL_INVALID_REPLY, err, "reply has no text block");
	}
	st = set_text(r, text.data, text.len, err);
	kf_buf_release(&text);
	return st;
}

enum kf_status kf_llm_reply_parse(enum kf_llm_endpoint ep, const char *body, size_t len,
				  struct kf_llm_result *r, struct kf_err *err)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *e;
	enum kf_status st;

	if (!root) {
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_INVALID_REPLY);
		return kf_err_set(err, KF_ERR_PARSE, "reply is not valid JSON (%zu bytes)", len);
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_INVALID_REPLY);
		return kf_err_set(err, KF_ERR_PARSE, "reply is not a JSON object");
	}
	e = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (e && !cJSON_IsNull(e)) {
		struct kf_llm_api_error ae;
		char msg[512];
		error_from(e, &ae);
		kf_llm_error_text(&ae, msg, sizeof(msg));
		/* an error in a 200 (some proxies, a failed Responses run): its code/type decides whether it
		 * is one of the fatal kinds; otherwise this reply alone is unusable */
		{
			const char *kind = kf_llm_failure_classify(400, &ae);
			snprintf(r->failure, sizeof(r->failure), "%s",
				 kf_llm_failure_fatal(kind) ? kind : KF_LLM_FAIL_INVALID_REPLY);
		}
		cJSON_Delete(root);
		return kf_err_set(err, KF_ERR_HTTP, "error in a success reply: %s", msg);
	}
	st = ep == KF_LLM_EP_MESSAGES    ? parse_messages(root, r, err)
	     : ep == KF_LLM_EP_RESPONSES ? parse_responses(root, r, err)
					 : parse_chat(root, r, err);
	cJSON_Delete(root);
	return st;
}

void kf_llm_scrub(char *dst, size_t n, const char *src, const char *secret)
{
	static const char red[] = "[redacted]";
	size_t slen = secret ? strlen(secret) : 0, j = 0;

	if (!n)
		return;
	while (*src && j + 1 < n) {
		size_t rest = strlen(src);
		/* A key cut off at the end of a bounded message is still most of the key. */
		if (slen && (!strncmp(src, secret, slen) ||
			     (rest < slen && rest >= 4 && !strncmp(src, secret, rest)))) {
			for (size_t k = 0; red[k] && j + 1 < n; k++)
				dst[j++] = red[k];
			src += rest < slen ? rest : slen;
		} else {
			dst[j++] = *src++;
		}
	}
	dst[j] = '\0';
}
