/* The wire formats of the two LLM dialects (FIELD-NOTES.md "LLM APIs"): OpenAI chat completions and
 * Anthropic messages. Builds request bodies with cJSON and turns reply/error bodies into results. */
#include "llm_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
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

static cJSON *message_new(const char *role, const char *content)
{
	cJSON *m = cJSON_CreateObject();
	char *clean = utf8_clean(content);
	if (!m || !clean || !cJSON_AddStringToObject(m, "role", role) ||
	    !cJSON_AddStringToObject(m, "content", clean)) {
		free(clean);
		cJSON_Delete(m);
		return NULL;
	}
	free(clean);
	return m;
}

/* Appends the conversation to arr; with_system puts the system text first as a "system" message. */
static bool add_messages(cJSON *arr, const struct kf_llm_request *req, bool with_system)
{
	if (with_system && req->system && req->system[0]) {
		cJSON *m = message_new("system", req->system);
		if (!m || !cJSON_AddItemToArray(arr, m))
			return false;
	}
	for (size_t i = 0; i < req->n_messages; i++) {
		cJSON *m = message_new(req->messages[i].role,
				       req->messages[i].content ? req->messages[i].content : "");
		if (!m || !cJSON_AddItemToArray(arr, m))
			return false;
	}
	return true;
}

enum kf_status kf_llm_body_build(enum kf_llm_provider p, const char *model, const char *max_tokens_field,
				 int max_tokens, bool temperature_set, double temperature,
				 const struct kf_llm_request *req, char **body, char **prompt_json,
				 struct kf_err *err)
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
		/* Anthropic rejects two consecutive turns of one role; keep both dialects to the stricter
		 * rule. */
		if (i && !strcmp(req->messages[i].role, req->messages[i - 1].role))
			return kf_err_set(err, KF_ERR_INVALID, "messages[%zu]: two '%s' messages in a row", i,
					  req->messages[i].role);
	}
	if (strcmp(req->messages[0].role, "user"))
		return kf_err_set(err, KF_ERR_INVALID, "messages[0]: the first message must be from 'user'");

	prompt = cJSON_CreateArray();
	root = cJSON_CreateObject();
	if (!prompt || !root || !add_messages(prompt, req, true))
		goto nomem;
	if (!cJSON_AddStringToObject(root, "model", model))
		goto nomem;
	if (p == KF_LLM_ANTHROPIC) {
		ok = cJSON_AddNumberToObject(root, "max_tokens", max_tokens) != NULL;
		if (ok && req->system && req->system[0]) {
			char *clean = utf8_clean(req->system);
			ok = clean && cJSON_AddStringToObject(root, "system", clean) != NULL;
			free(clean);
		}
		msgs = ok ? cJSON_AddArrayToObject(root, "messages") : NULL;
		ok = msgs && add_messages(msgs, req, false);
	} else {
		msgs = cJSON_AddArrayToObject(root, "messages");
		ok = msgs && add_messages(msgs, req, true);
		if (ok)
			ok = cJSON_AddNumberToObject(root, max_tokens_field, max_tokens) != NULL;
	}
	if (ok && temperature_set)
		ok = cJSON_AddNumberToObject(root, "temperature", temperature) != NULL;
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

static bool says_quota(const char *s)
{
	static const char *const words[] = {"insufficient_quota", "quota",       "spend limit",
					    "spending limit",     "usage limit", "billing",
					    "credit balance"};
	char low[512];
	size_t i;
	if (!s)
		return false;
	for (i = 0; s[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	for (i = 0; i < KF_ARRAY_SIZE(words); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* Describes an {"error": {...}} object (both dialects use one). */
static void describe_error_obj(const cJSON *e, char *out, size_t n, bool *quota)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
	const char *t = cJSON_IsString(type)   ? type->valuestring
			: cJSON_IsString(code) ? code->valuestring
					       : NULL;
	const char *m = cJSON_IsString(msg) ? msg->valuestring : cJSON_IsString(e) ? e->valuestring : "";
	char tmp[600];

	snprintf(tmp, sizeof(tmp), "%s%s%s", t ? t : "", t ? ": " : "", m);
	copy_clean(out, n, tmp, strlen(tmp));
	if (quota)
		*quota = (cJSON_IsString(code) && says_quota(code->valuestring)) ||
			 (cJSON_IsString(type) && says_quota(type->valuestring)) || says_quota(m);
}

void kf_llm_error_describe(const char *body, size_t len, char *out, size_t n, bool *quota)
{
	cJSON *root = len ? cJSON_ParseWithLength(body, len) : NULL;
	const cJSON *e = root ? cJSON_GetObjectItemCaseSensitive(root, "error") : NULL;

	if (quota)
		*quota = false;
	if (e && (cJSON_IsObject(e) || cJSON_IsString(e))) {
		describe_error_obj(e, out, n, quota);
	} else {
		/* Not the API's error format (a proxy's HTML page, a local server's text): show its start. */
		copy_clean(out, n, body ? body : "", len > 200 ? 200 : len);
		if (quota)
			*quota = says_quota(out);
	}
	cJSON_Delete(root);
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

static void set_finish(struct kf_llm_result *r, const cJSON *v)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : "";
	/* Anthropic's names mapped onto OpenAI's so the parser has one word for "cut off". */
	if (!strcmp(s, "max_tokens"))
		s = "length";
	else if (!strcmp(s, "end_turn") || !strcmp(s, "stop_sequence"))
		s = "stop";
	copy_clean(r->finish_reason, sizeof(r->finish_reason), s, strlen(s));
}

static enum kf_status parse_openai(const cJSON *root, struct kf_llm_result *r, struct kf_err *err)
{
	const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
	const cJSON *c0, *msg, *content, *usage;

	/* Usage first: a reply without a usable choice was still billed. */
	usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	r->tokens_in = num_field(usage, "prompt_tokens");
	r->tokens_out = num_field(usage, "completion_tokens");
	if (!cJSON_IsArray(choices))
		return kf_err_set(err, KF_ERR_PARSE, "reply has no 'choices' list");
	c0 = cJSON_GetArrayItem(choices, 0);
	if (!c0)
		return kf_err_set(err, KF_ERR_PARSE, "reply has an empty choice list");
	msg = cJSON_GetObjectItemCaseSensitive(c0, "message");
	content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	set_finish(r, cJSON_GetObjectItemCaseSensitive(c0, "finish_reason"));
	if (!cJSON_IsString(content)) {
		const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(msg, "refusal");
		if (cJSON_IsString(refusal))
			return kf_err_set(err, KF_ERR_PARSE, "the model refused: %.300s",
					  refusal->valuestring);
		return kf_err_set(err, KF_ERR_PARSE, "choices[0].message.content is not text");
	}
	return set_text(r, content->valuestring, strlen(content->valuestring), err);
}

static enum kf_status parse_anthropic(const cJSON *root, struct kf_llm_result *r, struct kf_err *err)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(root, "content");
	const cJSON *usage, *blk;
	struct kf_buf text = KF_BUF_INIT(SIZE_MAX / 2);
	bool any = false;
	enum kf_status st;

	usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
	/* Cached prompt tokens are input tokens too (billed differently; see prices.json's note). */
	r->tokens_in = num_field(usage, "input_tokens") + num_field(usage, "cache_creation_input_tokens") +
		       num_field(usage, "cache_read_input_tokens");
	r->tokens_out = num_field(usage, "output_tokens");
	if (!cJSON_IsArray(content))
		return kf_err_set(err, KF_ERR_PARSE, "reply has no 'content' list");
	set_finish(r, cJSON_GetObjectItemCaseSensitive(root, "stop_reason"));
	cJSON_ArrayForEach(blk, content)
	{
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(blk, "type");
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(blk, "text");
		if (cJSON_IsString(type) && !strcmp(type->valuestring, "text") && cJSON_IsString(t)) {
			if (kf_buf_adds(&text, t->valuestring)) {
				kf_buf_release(&text);
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			}
			any = true;
		}
	}
	if (!any) {
		kf_buf_release(&text);
		return kf_err_set(err, KF_ERR_PARSE, "reply has no text block");
	}
	st = set_text(r, text.data, text.len, err);
	kf_buf_release(&text);
	return st;
}

enum kf_status kf_llm_reply_parse(enum kf_llm_provider p, const char *body, size_t len,
				  struct kf_llm_result *r, struct kf_err *err)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *e;
	enum kf_status st;

	if (!root)
		return kf_err_set(err, KF_ERR_PARSE, "reply is not valid JSON (%zu bytes)", len);
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return kf_err_set(err, KF_ERR_PARSE, "reply is not a JSON object");
	}
	e = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (e && !cJSON_IsNull(e)) {
		char msg[512];
		describe_error_obj(e, msg, sizeof(msg), NULL);
		cJSON_Delete(root);
		return kf_err_set(err, KF_ERR_HTTP, "error in a success reply: %s", msg);
	}
	st = p == KF_LLM_ANTHROPIC ? parse_anthropic(root, r, err) : parse_openai(root, r, err);
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
