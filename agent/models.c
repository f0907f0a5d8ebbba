/* The per-model table (agent/data/models.json, extended by $KFORGE_MODELS): which provider and endpoint a
 * model is served by, its output cap, whether and how it reasons, and whether it takes a temperature.
 * The client sizes and shapes requests from it; provider auto-detection reads it too. */
#include "llm_int.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"

#define MODELS_MAX_BYTES (1u << 20)
#define MODELS_MAX 512

static const char *const effort_names[KF_LLM_EFFORT_COUNT] = {"none", "minimal", "low", "medium",
							      "high", "xhigh",   "max"};

const char *kf_llm_effort_name(int effort)
{
	return effort >= 0 && effort < KF_LLM_EFFORT_COUNT ? effort_names[effort] : "?";
}

int kf_llm_effort_parse(const char *s)
{
	for (int i = 0; s && i < KF_LLM_EFFORT_COUNT; i++)
		if (!strcmp(s, effort_names[i]))
			return i;
	return -1;
}

const char *kf_llm_endpoint_name(enum kf_llm_endpoint e)
{
	switch (e) {
	case KF_LLM_EP_CHAT:
		return "chat";
	case KF_LLM_EP_RESPONSES:
		return "responses";
	case KF_LLM_EP_MESSAGES:
		return "messages";
	case KF_LLM_EP_DEFAULT:
		break;
	}
	return "default";
}

static const char *reasoning_name(enum kf_llm_reasoning r)
{
	static const char *const n[] = {"unknown", "none", "effort", "thinking", "adaptive"};
	return (unsigned)r < KF_ARRAY_SIZE(n) ? n[r] : "unknown";
}

const char *kf_llm_reasoning_name(enum kf_llm_reasoning r)
{
	return reasoning_name(r);
}

size_t kf_llm_key_score(const char *key, bool prefix, const char *name)
{
	size_t kl = strlen(key);
	if (!name)
		return 0;
	if (!prefix)
		return strcmp(key, name) ? 0 : SIZE_MAX; /* an exact name beats every prefix */
	return strncmp(key, name, kl) ? 0 : kl + 1;
}

struct entry {
	char key[64];
	bool prefix;
	struct kf_llm_model m;
};

static struct {
	pthread_once_t once;
	struct entry *v;
	size_t n;
	enum kf_status st;
	char err[512];
} table = {PTHREAD_ONCE_INIT, NULL, 0, KF_OK, ""};

static enum kf_status bad(const char *what, const char *key, const char *msg, struct kf_err *err)
{
	return kf_err_set(err, KF_ERR_INVALID, "'%s': models.'%s': %s", what, key, msg);
}

static enum kf_status parse_one(const char *what, const cJSON *m, struct entry *e, struct kf_err *err)
{
	const cJSON *prov = cJSON_GetObjectItemCaseSensitive(m, "provider");
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(m, "endpoint");
	const cJSON *tf = cJSON_GetObjectItemCaseSensitive(m, "token_field");
	const cJSON *mo = cJSON_GetObjectItemCaseSensitive(m, "max_output");
	const cJSON *re = cJSON_GetObjectItemCaseSensitive(m, "reasoning");
	const cJSON *ef = cJSON_GetObjectItemCaseSensitive(m, "efforts");
	const cJSON *te = cJSON_GetObjectItemCaseSensitive(m, "temperature");
	const cJSON *x;
	size_t klen = strlen(m->string);

	memset(e, 0, sizeof(*e));
	if (!klen || klen >= sizeof(e->key))
		return bad(what, m->string, "a model name of 1 to 63 characters", err);
	e->prefix = m->string[klen - 1] == '*';
	snprintf(e->key, sizeof(e->key), "%.*s", (int)(e->prefix ? klen - 1 : klen), m->string);
	if (!cJSON_IsObject(m))
		return bad(what, m->string, "expected an object", err);
	e->m.known = true;
	snprintf(e->m.key, sizeof(e->m.key), "%s", m->string);
	if (!cJSON_IsString(prov) || !kf_llm_provider_parse(prov->valuestring, &e->m.provider) ||
	    e->m.provider == KF_LLM_REPLAY)
		return bad(what, m->string, "provider: 'openai' or 'anthropic'", err);
	if (!cJSON_IsString(ep))
		return bad(what, m->string, "endpoint: 'chat', 'responses' or 'messages'", err);
	if (!strcmp(ep->valuestring, "chat"))
		e->m.endpoint = KF_LLM_EP_CHAT;
	else if (!strcmp(ep->valuestring, "responses"))
		e->m.endpoint = KF_LLM_EP_RESPONSES;
	else if (!strcmp(ep->valuestring, "messages"))
		e->m.endpoint = KF_LLM_EP_MESSAGES;
	else
		return bad(what, m->string, "endpoint: 'chat', 'responses' or 'messages'", err);
	if ((e->m.endpoint == KF_LLM_EP_MESSAGES) != (e->m.provider == KF_LLM_ANTHROPIC))
		return bad(what, m->string, "endpoint 'messages' is Anthropic's, 'chat'/'responses' OpenAI's",
			   err);
	static const char *const want_field[] = {"", "max_completion_tokens", "max_output_tokens",
						 "max_tokens"};
	if (!cJSON_IsString(tf) ||
	    (strcmp(tf->valuestring, want_field[e->m.endpoint]) &&
	     !(e->m.endpoint == KF_LLM_EP_CHAT && !strcmp(tf->valuestring, "max_tokens"))))
		return bad(what, m->string, "token_field does not fit the endpoint", err);
	snprintf(e->m.token_field, sizeof(e->m.token_field), "%s", tf->valuestring);
	if (!cJSON_IsNumber(mo) || mo->valuedouble < 1 || mo->valuedouble > 10000000)
		return bad(what, m->string, "max_output: tokens, 1 to 10000000", err);
	e->m.max_output = (int)mo->valuedouble;
	e->m.reasoning = KF_LLM_REASONING_UNKNOWN;
	for (int r = KF_LLM_REASONING_NONE; cJSON_IsString(re) && r <= KF_LLM_REASONING_ADAPTIVE; r++)
		if (!strcmp(re->valuestring, reasoning_name((enum kf_llm_reasoning)r)))
			e->m.reasoning = (enum kf_llm_reasoning)r;
	if (e->m.reasoning == KF_LLM_REASONING_UNKNOWN)
		return bad(what, m->string, "reasoning: none, effort, thinking or adaptive", err);
	if ((e->m.reasoning == KF_LLM_REASONING_EFFORT) == (e->m.provider == KF_LLM_ANTHROPIC) &&
	    e->m.reasoning != KF_LLM_REASONING_NONE)
		return bad(
		    what, m->string,
		    "reasoning 'effort' is OpenAI's; Anthropic models reason by 'thinking' or 'adaptive'",
		    err);
	if (!cJSON_IsArray(ef))
		return bad(what, m->string, "efforts: a list of levels (none ... max)", err);
	cJSON_ArrayForEach(x, ef)
	{
		int i = cJSON_IsString(x) ? kf_llm_effort_parse(x->valuestring) : -1;
		if (i < 0)
			return bad(what, m->string,
				   "efforts: levels are none, minimal, low, medium, high, "
				   "xhigh, max",
				   err);
		e->m.efforts |= 1u << i;
	}
	if (!cJSON_IsBool(te))
		return bad(what, m->string, "temperature: true or false", err);
	e->m.temperature = cJSON_IsTrue(te);
	return KF_OK;
}

static enum kf_status parse_table(const char *what, const char *text, size_t len, struct kf_err *err)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *models, *m;
	enum kf_status st = KF_OK;

	if (!root)
		return kf_err_set(err, KF_ERR_PARSE, "'%s': not valid JSON", what);
	models = cJSON_GetObjectItemCaseSensitive(root, "models");
	if (!cJSON_IsObject(models)) {
		cJSON_Delete(root);
		return kf_err_set(err, KF_ERR_INVALID, "'%s': models: expected an object of model names",
				  what);
	}
	cJSON_ArrayForEach(m, models)
	{
		struct entry e;
		size_t i;
		if ((st = parse_one(what, m, &e, err)))
			break;
		for (i = 0; i < table.n; i++) /* a later file replaces an entry of the same key and kind */
			if (table.v[i].prefix == e.prefix && !strcmp(table.v[i].key, e.key))
				break;
		if (i == table.n) {
			if (table.n == MODELS_MAX) {
				st = kf_err_set(err, KF_ERR_LIMIT, "'%s': more than %d models", what,
						MODELS_MAX);
				break;
			}
			table.n++;
		}
		table.v[i] = e;
	}
	cJSON_Delete(root);
	return st;
}

static void table_load(void)
{
	struct kf_err err = KF_ERR_INIT;
	size_t blen = 0;
	const char *builtin = kf_embed_find("agent/data/models.json", &blen);
	const char *user = getenv("KFORGE_MODELS");

	table.v = calloc(MODELS_MAX, sizeof(*table.v));
	if (!table.v) {
		table.st = kf_err_set(&err, KF_ERR_NOMEM, "out of memory loading the model table");
	} else if (builtin) {
		table.st = parse_table("agent/data/models.json", builtin, blen, &err);
	}
	if (!table.st && user && user[0]) {
		struct kf_buf b = KF_BUF_INIT(MODELS_MAX_BYTES);
		table.st = kf_buf_read_file(&b, user, &err);
		if (!table.st)
			table.st = parse_table(user, b.data, b.len, &err);
		kf_buf_release(&b);
	}
	snprintf(table.err, sizeof(table.err), "%s", err.msg);
}

enum kf_status kf_llm_model_lookup(const char *model, struct kf_llm_model *out, struct kf_err *err)
{
	const struct entry *best = NULL;
	size_t best_score = 0;

	memset(out, 0, sizeof(*out));
	pthread_once(&table.once, table_load);
	if (table.st)
		return kf_err_set(err, table.st, "%s", table.err);
	for (size_t i = 0; i < table.n; i++) {
		size_t s = kf_llm_key_score(table.v[i].key, table.v[i].prefix, model);
		if (s > best_score) {
			best_score = s;
			best = &table.v[i];
		}
	}
	if (best)
		*out = best->m;
	return KF_OK;
}

/* Which environment a provider has: a key or a base URL (a local server may need no key). */
static bool env_has(const char *a, const char *b)
{
	const char *x = getenv(a), *y = getenv(b);
	return (x && x[0]) || (y && y[0]);
}

enum kf_status kf_llm_provider_detect(const char *model, enum kf_llm_provider *out, char *why, size_t why_n,
				      struct kf_err *err)
{
	bool oa = env_has("OPENAI_API_KEY", "OPENAI_BASE_URL");
	bool an = env_has("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL");
	struct kf_llm_model m;

	if (why && why_n)
		why[0] = '\0';
	if (!oa && !an)
		return kf_err_set(
		    err, KF_ERR_UNAVAILABLE,
		    "no LLM provider: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) "
		    "or ANTHROPIC_API_KEY, or use --provider replay --replay FILE");
	if (oa != an) {
		*out = oa ? KF_LLM_OPENAI : KF_LLM_ANTHROPIC;
		if (why && why_n)
			snprintf(why, why_n, "only %s is configured", oa ? "OpenAI" : "Anthropic");
		return KF_OK;
	}
	/* Both are configured: the model name decides (the table first, then the naming convention). */
	if (model && !kf_llm_model_lookup(model, &m, NULL) && m.known) {
		*out = m.provider;
		if (why && why_n)
			snprintf(why, why_n, "both keys are set; '%s' is an %s model (table entry '%s')",
				 model, m.provider == KF_LLM_ANTHROPIC ? "Anthropic" : "OpenAI", m.key);
		return KF_OK;
	}
	*out = model && !strncmp(model, "claude", 6) ? KF_LLM_ANTHROPIC : KF_LLM_OPENAI;
	if (why && why_n)
		snprintf(why, why_n, "both keys are set; '%s' is not in the model table, taken as %s",
			 model ? model : "",
			 *out == KF_LLM_ANTHROPIC ? "Anthropic (a claude name)" : "OpenAI");
	return KF_OK;
}
