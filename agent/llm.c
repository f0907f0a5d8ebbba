/* The asynchronous LLM client: requests run concurrently on one curl multi handle (up to `concurrency` at
 * once), retried by the official SDKs' rules (docs/field-notes.md) with waits scheduled by time so one
 * request's backoff never stalls the others; results carry tokens, cost, latency, attempts and the request
 * id. The API key lives only in the request headers: it is never logged, printed or put in an error. */
#include "llm_int.h"
#include "cancel.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MAX_TOKENS 8192
/* A reasoning model spends output tokens on thinking before the answer; a kernel file with its reasoning
 * fits in this many, 8192 do not (a billed, empty reply). Lower only where the model's cap is lower. */
#define REASONING_MAX_TOKENS 32768
/* Room for the answer on top of an Anthropic thinking budget (budget_tokens must stay below max_tokens). */
#define THINKING_ANSWER_TOKENS 8192
#define THINKING_MIN_BUDGET 1024
#define DEFAULT_CONCURRENCY KF_LLM_CONCURRENCY
#define DEFAULT_TIMEOUT_MS 600000
#define REASONING_TIMEOUT_MS 1800000
#define DEFAULT_CONNECT_TIMEOUT_MS 10000
/* The SDKs' default; the search loop treats a failed call as one lost candidate, so more is rarely worth
 * the minutes, and users who want more set it. */
#define DEFAULT_MAX_RETRIES 2
#define DEFAULT_MAX_BODY (8u << 20)
#define BACKOFF_INITIAL_MS 500.0
#define BACKOFF_MAX_MS 8000.0
#define RETRY_AFTER_MAX_MS 60000.0

#define OPENAI_PUBLIC "https://api.openai.com/v1"
#define ANTHROPIC_PUBLIC "https://api.anthropic.com"
#define ANTHROPIC_VERSION "2023-06-01"

enum req_state {
	REQ_QUEUED,  /* not started; holds no slot */
	REQ_RUNNING, /* an attempt is in the multi handle */
	REQ_BACKOFF, /* waiting to retry; keeps its slot so retries do not pile onto a rate limit */
};

struct llm_req {
	struct llm_req *next;
	enum req_state state;
	char *body;
	enum kf_llm_endpoint endpoint; /* the body's */
	struct kf_llm_request copy;    /* the request, kept to rebuild the body for another endpoint */
	struct kf_llm_message *msgs;
	char *strings;
	struct kf_llm_result *res;
	uint64_t submit_ns, retry_at_ns;
	CURL *easy;
	struct kf_buf resp;
	bool overflow; /* the body went past max_response_bytes */
};

struct kf_llm_client {
	enum kf_llm_provider provider;
	char *model, *base, *key, *max_tokens_field;
	bool is_public; /* the provider's own endpoint (an unknown model there is certainly unknown) */
	int max_tokens, concurrency, timeout_ms, connect_timeout_ms, max_retries;
	bool temperature_set;
	double temperature;
	struct kf_llm_settings set; /* endpoint, effort, thinking, cache, price */
	double price_in, price_out; /* --price-in/--price-out, 0: none */
	size_t max_body;
	kf_llm_log_fn log;
	void *log_ctx;
	uint64_t rng;

	CURLM *multi;
	struct curl_slist *headers;
	struct kf_prices *prices;
	struct kf_llm_replay *replay;

	struct llm_req *reqs; /* unfinished, in submit order */
	struct kf_llm_result **done;
	size_t n_done, cap_done, head_done;
};

const char *kf_llm_provider_name(enum kf_llm_provider p)
{
	switch (p) {
	case KF_LLM_OPENAI:
		return "openai";
	case KF_LLM_ANTHROPIC:
		return "anthropic";
	case KF_LLM_REPLAY:
		return "replay";
	}
	return "unknown";
}

bool kf_llm_provider_parse(const char *s, enum kf_llm_provider *out)
{
	for (int p = KF_LLM_OPENAI; p <= KF_LLM_REPLAY; p++)
		if (s && !strcmp(s, kf_llm_provider_name((enum kf_llm_provider)p))) {
			*out = (enum kf_llm_provider)p;
			return true;
		}
	return false;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void logf_(struct kf_llm_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct kf_llm_client *c, const char *fmt, ...)
{
	char raw[1024], clean[1100];
	va_list ap;
	if (!c->log)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	kf_llm_scrub(clean, sizeof(clean), raw, c->key);
	c->log(c->log_ctx, clean);
}

/* splitmix64: jitter only needs to decorrelate clients, not be unpredictable. */
static double rand01(struct kf_llm_client *c)
{
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

void kf_llm_result_free(struct kf_llm_result *r)
{
	if (!r)
		return;
	free(r->text);
	free(r->prompt_json);
	free(r);
}

static void req_free(struct llm_req *q)
{
	if (!q)
		return;
	if (q->easy)
		curl_easy_cleanup(q->easy);
	kf_buf_release(&q->resp);
	free(q->body);
	free(q->msgs);
	free(q->strings);
	kf_llm_result_free(q->res);
	free(q);
}

void kf_llm_client_free(struct kf_llm_client *c)
{
	if (!c)
		return;
	while (c->reqs) {
		struct llm_req *q = c->reqs;
		c->reqs = q->next;
		if (q->easy && c->multi)
			curl_multi_remove_handle(c->multi, q->easy);
		req_free(q);
	}
	for (size_t i = c->head_done; i < c->n_done; i++)
		kf_llm_result_free(c->done[i]);
	free(c->done);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	curl_slist_free_all(c->headers);
	kf_prices_free(c->prices);
	kf_llm_replay_free(c->replay);
	if (c->key) {
		/* Do not leave the key in freed heap memory. */
		volatile char *k = c->key;
		while (*k)
			*k++ = 0;
		free(c->key);
	}
	free(c->model);
	free(c->base);
	free(c->max_tokens_field);
	free(c);
}

static bool header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static enum kf_status add_header(struct kf_llm_client *c, const char *name, const char *value)
{
	struct kf_buf h = KF_BUF_INIT(8192);
	struct curl_slist *n;
	/* "Name:" with nothing after the colon makes curl drop a header it would add itself. */
	if (kf_buf_addf(&h, "%s:%s%s", name, value[0] ? " " : "", value))
		return KF_ERR_LIMIT;
	n = curl_slist_append(c->headers, h.data);
	/* The buffer may hold the key: wipe before freeing. */
	memset(h.data, 0, h.len);
	kf_buf_release(&h);
	if (!n)
		return KF_ERR_NOMEM;
	c->headers = n;
	return KF_OK;
}

/* Resolves the endpoint and key; the public endpoint needs a key, a local server may not. */
static enum kf_status setup_http(struct kf_llm_client *c, const struct kf_llm_config *cfg, struct kf_err *err)
{
	bool anth = c->provider == KF_LLM_ANTHROPIC;
	const char *env_url = anth ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL";
	const char *env_key = anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
	const char *base = cfg->base_url, *key = cfg->api_key;
	char *scheme = NULL, *host = NULL;
	bool is_public;
	struct kf_buf url = KF_BUF_INIT(4096);
	size_t blen;
	CURLU *u;
	CURLUcode uc;

	if (!base || !base[0])
		base = getenv(env_url);
	if (!base || !base[0])
		base = anth ? ANTHROPIC_PUBLIC : OPENAI_PUBLIC;
	if (!key || !key[0])
		key = getenv(env_key);
	if (key && !key[0])
		key = NULL;

	u = curl_url();
	if (!u)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	uc = curl_url_set(u, CURLUPART_URL, base, 0);
	if (!uc)
		uc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	if (!uc)
		uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_cleanup(u);
	if (uc || (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		curl_free(scheme);
		curl_free(host);
		return kf_err_set(err, KF_ERR_INVALID, "base URL '%.200s' is not an http(s) URL", base);
	}
	is_public = !strcmp(host, anth ? "api.anthropic.com" : "api.openai.com");
	curl_free(scheme);
	curl_free(host);
	if (!key && is_public)
		return kf_err_set(err, KF_ERR_UNAVAILABLE,
				  "no API key: set %s (or --base-url for a local server)", env_key);
	if (key && !header_safe(key))
		return kf_err_set(err, KF_ERR_INVALID, "%s holds control characters", env_key);

	blen = strlen(base);
	while (blen && base[blen - 1] == '/')
		blen--;
	/* OpenAI's base ends in /v1 (the SDKs' convention); Anthropic's does not. Paths are added per
	 * request (the endpoint may change: a Responses-only model). */
	if (kf_buf_add(&url, base, blen) || url.len > 3000)
		return kf_err_set(err, KF_ERR_INVALID, "base URL is too long");
	c->base = kf_buf_detach(&url, NULL);
	c->is_public = is_public;
	if (!c->base)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (key && !(c->key = kf_strdup(key)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");

	if (add_header(c, "Content-Type", "application/json") ||
	    add_header(c, "Accept", "application/json") || add_header(c, "Expect", "") ||
	    add_header(c, "User-Agent", "kforge/1"))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (anth) {
		if (add_header(c, "anthropic-version", ANTHROPIC_VERSION) ||
		    (c->key && add_header(c, "x-api-key", c->key)))
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	} else if (c->key) {
		char *bearer = malloc(strlen(c->key) + 8);
		enum kf_status st;
		if (!bearer)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		snprintf(bearer, strlen(c->key) + 8, "Bearer %s", c->key);
		st = add_header(c, "Authorization", bearer);
		memset(bearer, 0, strlen(bearer));
		free(bearer);
		if (st)
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	c->multi = curl_multi_init();
	if (!c->multi)
		return kf_err_set(err, KF_ERR_NOMEM, "cannot create a curl multi handle");
	return KF_OK;
}

/* The endpoint, output limit, reasoning settings and price of the client's requests, from the config and
 * the model table. A setting the model's API would reject every time is refused here, naming the option and
 * the reason, instead of being sent 20 times. */
static enum kf_status resolve_settings(struct kf_llm_client *c, const struct kf_llm_config *cfg,
				       struct kf_err *err)
{
	struct kf_llm_settings *s = &c->set;
	struct kf_llm_model m;
	const char *model = c->model;
	bool anth = c->provider == KF_LLM_ANTHROPIC, reasons;
	enum kf_status st;
	int cap;

	memset(s, 0, sizeof(*s));
	s->effort = -1;
	if ((st = kf_llm_model_lookup(model, &m, err)))
		return st;
	if (m.known && m.provider != c->provider) {
		/* a proxy that serves another vendor's model under its own API: the table does not apply */
		logf_(c,
		      "llm: '%s' is an %s model in the table, but the provider is %s: its entry is not used",
		      model, kf_llm_provider_name(m.provider), kf_llm_provider_name(c->provider));
		memset(&m, 0, sizeof(m));
	}
	s->model = m;
	if (cfg->endpoint == KF_LLM_EP_MESSAGES && !anth)
		return kf_err_set(err, KF_ERR_INVALID, "the messages endpoint is Anthropic's");
	if (anth && cfg->endpoint && cfg->endpoint != KF_LLM_EP_MESSAGES)
		return kf_err_set(err, KF_ERR_INVALID, "Anthropic has only the messages endpoint");
	s->endpoint = anth            ? KF_LLM_EP_MESSAGES
		      : cfg->endpoint ? cfg->endpoint
		      : m.known       ? m.endpoint
				      : KF_LLM_EP_CHAT;
	s->token_field = s->endpoint == KF_LLM_EP_MESSAGES    ? "max_tokens"
			 : s->endpoint == KF_LLM_EP_RESPONSES ? "max_output_tokens"
			 : cfg->max_tokens_field              ? c->max_tokens_field
			 : m.known                            ? m.token_field
							      : "max_completion_tokens";
	if (s->endpoint == KF_LLM_EP_CHAT && strcmp(s->token_field, c->max_tokens_field)) {
		free(c->max_tokens_field);
		if (!(c->max_tokens_field = kf_strdup(s->token_field)))
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	if (s->endpoint == KF_LLM_EP_CHAT)
		s->token_field = c->max_tokens_field;

	if (cfg->reasoning_effort) {
		s->effort = kf_llm_effort_parse(cfg->reasoning_effort);
		if (s->effort < 0)
			return kf_err_set(
			    err, KF_ERR_INVALID,
			    "--reasoning-effort '%.32s' is not one of none, minimal, low, medium, "
			    "high, xhigh, max",
			    cfg->reasoning_effort);
		if (m.known && (m.reasoning == KF_LLM_REASONING_NONE || !(m.efforts >> s->effort & 1u))) {
			char levels[96] = "";
			for (int i = 0; i < KF_LLM_EFFORT_COUNT; i++)
				if (m.efforts >> i & 1u)
					snprintf(levels + strlen(levels), sizeof(levels) - strlen(levels),
						 "%s%s", levels[0] ? ", " : "", kf_llm_effort_name(i));
			return kf_err_set(
			    err, KF_ERR_INVALID, "model '%s' (table entry '%s') %s%s%s", model, m.key,
			    levels[0] ? "takes --reasoning-effort " : "takes no --reasoning-effort", levels,
			    anth && !levels[0] ? " (give --thinking-budget N instead)" : "");
		}
	}
	if (cfg->thinking_budget) {
		if (!anth)
			return kf_err_set(
			    err, KF_ERR_INVALID,
			    "--thinking-budget is Anthropic's extended thinking; an OpenAI model "
			    "takes --reasoning-effort");
		if (cfg->thinking_budget < THINKING_MIN_BUDGET)
			return kf_err_set(err, KF_ERR_INVALID, "--thinking-budget must be at least %d tokens",
					  THINKING_MIN_BUDGET);
		if (m.known && m.reasoning == KF_LLM_REASONING_ADAPTIVE)
			return kf_err_set(
			    err, KF_ERR_INVALID,
			    "model '%s' thinks adaptively and rejects a manual thinking budget; give "
			    "--reasoning-effort instead",
			    model);
		if (m.known && m.reasoning == KF_LLM_REASONING_NONE)
			return kf_err_set(err, KF_ERR_INVALID, "model '%s' has no extended thinking", model);
		if (cfg->temperature_set)
			return kf_err_set(
			    err, KF_ERR_INVALID,
			    "extended thinking does not take a temperature: drop --temperature or "
			    "--thinking-budget");
		s->thinking_budget = cfg->thinking_budget;
	}
	if (cfg->temperature_set && m.known && !m.temperature)
		return kf_err_set(
		    err, KF_ERR_INVALID,
		    "model '%s' (table entry '%s') does not take a temperature (a reasoning model "
		    "samples at its default)",
		    model, m.key);

	reasons = s->thinking_budget > 0 || s->effort > KF_LLM_EFFORT_NONE ||
		  (m.known &&
		   (m.reasoning == KF_LLM_REASONING_EFFORT || m.reasoning == KF_LLM_REASONING_ADAPTIVE) &&
		   s->effort != KF_LLM_EFFORT_NONE);
	cap = m.known ? m.max_output : 0;
	if (cfg->max_tokens) {
		c->max_tokens = cfg->max_tokens;
		if (cap && c->max_tokens > cap) {
			logf_(c, "llm: --max-tokens %d is above %s's output cap of %d tokens: using %d",
			      c->max_tokens, model, cap, cap);
			c->max_tokens = cap;
		}
	} else {
		c->max_tokens = reasons ? REASONING_MAX_TOKENS : DEFAULT_MAX_TOKENS;
		if (s->thinking_budget && c->max_tokens < s->thinking_budget + THINKING_ANSWER_TOKENS)
			c->max_tokens = s->thinking_budget + THINKING_ANSWER_TOKENS;
		if (cap && c->max_tokens > cap)
			c->max_tokens = cap;
	}
	if (s->thinking_budget && s->thinking_budget >= c->max_tokens)
		return kf_err_set(err, KF_ERR_INVALID,
				  "--thinking-budget %d must be below the reply limit of %d tokens (%s)",
				  s->thinking_budget, c->max_tokens,
				  cfg->max_tokens ? "--max-tokens" : "the model's output cap");
	s->max_tokens = c->max_tokens;
	if (!cfg->timeout_ms && reasons)
		c->timeout_ms = REASONING_TIMEOUT_MS;
	s->prompt_cache = anth && !cfg->no_prompt_cache;

	{
		struct kf_llm_usage u = {0, 0, 0, 0};
		double usd;
		char key[80];
		if (kf_prices_cost(c->prices, model, &u, &usd, key, sizeof(key))) {
			s->price_known = true;
			snprintf(s->price_source, sizeof(s->price_source), "table '%s' (%s)", key,
				 kf_prices_as_of(c->prices));
		} else if (cfg->price_in > 0 && cfg->price_out > 0) {
			s->price_known = true;
			c->price_in = cfg->price_in;
			c->price_out = cfg->price_out;
			snprintf(s->price_source, sizeof(s->price_source), "--price-in %g --price-out %g",
				 cfg->price_in, cfg->price_out);
		}
	}
	return KF_OK;
}

void kf_llm_client_settings(const struct kf_llm_client *c, struct kf_llm_settings *out)
{
	*out = c->set;
}

enum kf_status kf_llm_client_new(const struct kf_llm_config *cfg, struct kf_llm_client **out,
				 struct kf_err *err)
{
	struct kf_llm_client *c;
	enum kf_status st;

	*out = NULL;
	if (cfg->provider != KF_LLM_OPENAI && cfg->provider != KF_LLM_ANTHROPIC &&
	    cfg->provider != KF_LLM_REPLAY)
		return kf_err_set(err, KF_ERR_INVALID, "unknown LLM provider %d", (int)cfg->provider);
	if (cfg->provider != KF_LLM_REPLAY && (!cfg->model || !cfg->model[0]))
		return kf_err_set(err, KF_ERR_INVALID,
				  "provider '%s' needs a model (--model or KFORGE_MODEL)",
				  kf_llm_provider_name(cfg->provider));
	if (cfg->concurrency < 0 || cfg->timeout_ms < 0 || cfg->connect_timeout_ms < 0 ||
	    cfg->max_tokens < 0 || cfg->max_retries < -1 || cfg->thinking_budget < 0 || cfg->price_in < 0 ||
	    cfg->price_out < 0)
		return kf_err_set(err, KF_ERR_INVALID, "negative LLM client setting");
	if (cfg->max_tokens_field && strcmp(cfg->max_tokens_field, "max_completion_tokens") &&
	    strcmp(cfg->max_tokens_field, "max_tokens"))
		return kf_err_set(err, KF_ERR_INVALID,
				  "token-limit field '%.64s' is not 'max_completion_tokens' or 'max_tokens'",
				  cfg->max_tokens_field);
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc)
		return kf_err_set(err, KF_ERR_INTERNAL, "curl_global_init: %s",
				  curl_easy_strerror(curl_init_rc));

	c = calloc(1, sizeof(*c));
	if (!c)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	c->provider = cfg->provider;
	c->model = kf_strdup(cfg->model ? cfg->model : "");
	c->max_tokens_field =
	    kf_strdup(cfg->max_tokens_field ? cfg->max_tokens_field : "max_completion_tokens");
	c->max_tokens = cfg->max_tokens ? cfg->max_tokens : DEFAULT_MAX_TOKENS;
	c->concurrency = cfg->concurrency ? cfg->concurrency : DEFAULT_CONCURRENCY;
	c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->connect_timeout_ms =
	    cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
	c->max_retries = cfg->max_retries == 0  ? DEFAULT_MAX_RETRIES
			 : cfg->max_retries < 0 ? 0
						: cfg->max_retries;
	c->temperature_set = cfg->temperature_set;
	c->temperature = cfg->temperature;
	c->max_body = cfg->max_response_bytes ? cfg->max_response_bytes : DEFAULT_MAX_BODY;
	c->log = cfg->log;
	c->log_ctx = cfg->log_ctx;
	c->rng = cfg->jitter_seed ? cfg->jitter_seed : kf_now_ns() ^ ((uint64_t)time(NULL) << 20);
	c->set.effort = -1;
	if (!c->model || !c->max_tokens_field) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (cfg->provider == KF_LLM_REPLAY) {
		st = kf_llm_replay_load(cfg->replay_path, cfg->replay_run, &c->replay, err);
		if (st)
			goto fail;
	} else {
		st = kf_prices_load(cfg->prices_path, &c->prices, err);
		if (!st)
			st = resolve_settings(c, cfg, err);
		if (!st)
			st = setup_http(c, cfg, err);
		if (st)
			goto fail;
	}
	*out = c;
	return KF_OK;
fail:
	kf_llm_client_free(c);
	return st;
}

static enum kf_status push_done(struct kf_llm_client *c, struct kf_llm_result *r)
{
	if (c->head_done == c->n_done)
		c->head_done = c->n_done = 0;
	if (c->n_done == c->cap_done) {
		size_t ncap = c->cap_done ? c->cap_done * 2 : 16;
		struct kf_llm_result **nd = realloc(c->done, ncap * sizeof(struct kf_llm_result *));
		if (!nd)
			return KF_ERR_NOMEM;
		c->done = nd;
		c->cap_done = ncap;
	}
	c->done[c->n_done++] = r;
	return KF_OK;
}

size_t kf_llm_pending(const struct kf_llm_client *c)
{
	size_t n = c->n_done - c->head_done;
	for (const struct llm_req *q = c->reqs; q; q = q->next)
		n++;
	return n;
}

static struct kf_llm_result *result_new(struct kf_llm_client *c, uint64_t tag)
{
	struct kf_llm_result *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->text = calloc(1, 1);
	if (!r->text) {
		free(r);
		return NULL;
	}
	r->tag = tag;
	snprintf(r->provider, sizeof(r->provider), "%s", kf_llm_provider_name(c->provider));
	snprintf(r->model, sizeof(r->model), "%s", c->model);
	return r;
}

static enum kf_status build_body(const struct kf_llm_client *c, enum kf_llm_endpoint ep,
				 const struct kf_llm_request *req, char **body, char **prompt,
				 struct kf_err *err)
{
	struct kf_llm_body_opts o;
	memset(&o, 0, sizeof(o));
	o.provider = c->provider;
	o.endpoint = ep;
	o.model = c->model;
	o.token_field = c->max_tokens_field;
	o.max_tokens = req->max_tokens > 0 ? req->max_tokens : c->max_tokens;
	o.temperature_set = c->temperature_set;
	o.temperature = c->temperature;
	o.effort = c->set.effort;
	o.thinking_budget = c->set.thinking_budget;
	o.prompt_cache = c->set.prompt_cache;
	return kf_llm_body_build(&o, req, body, prompt, err);
}

/* Copies a string of known length into the request's block at *off; returns where it went. */
static const char *put(char *block, size_t *off, const char *s, size_t n)
{
	char *at = block + *off;
	memcpy(at, s, n);
	at[n] = '\0';
	*off += n + 1;
	return at;
}

/* A private copy of the request (its strings in one block), to rebuild the body for another endpoint. */
static bool keep_request(struct llm_req *q, const struct kf_llm_request *req)
{
	size_t n = req->system ? strlen(req->system) + 1 : 0, off = 0;
	for (size_t i = 0; i < req->n_messages; i++)
		n += strlen(req->messages[i].role) +
		     strlen(req->messages[i].content ? req->messages[i].content : "") + 2;
	q->strings = malloc(n ? n : 1);
	q->msgs = calloc(req->n_messages ? req->n_messages : 1, sizeof(*q->msgs));
	if (!q->strings || !q->msgs)
		return false;
	q->copy = *req;
	if (req->system)
		q->copy.system = put(q->strings, &off, req->system, strlen(req->system));
	for (size_t i = 0; i < req->n_messages; i++) {
		const char *ct = req->messages[i].content ? req->messages[i].content : "";
		q->msgs[i] = req->messages[i];
		q->msgs[i].role = put(q->strings, &off, req->messages[i].role, strlen(req->messages[i].role));
		q->msgs[i].content = put(q->strings, &off, ct, strlen(ct));
	}
	q->copy.messages = q->msgs;
	return true;
}

enum kf_status kf_llm_submit(struct kf_llm_client *c, const struct kf_llm_request *req, uint64_t tag,
			     struct kf_err *err)
{
	struct llm_req *q, **tail;
	char *body = NULL, *prompt = NULL;
	enum kf_status st;

	st = build_body(c, c->set.endpoint ? c->set.endpoint : KF_LLM_EP_CHAT, req, &body, &prompt, err);
	if (st)
		return st;
	q = calloc(1, sizeof(*q));
	if (q)
		q->res = result_new(c, tag);
	if (!q || !q->res || (c->provider != KF_LLM_REPLAY && !keep_request(q, req))) {
		req_free(q);
		free(body);
		free(prompt);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	q->res->prompt_json = prompt;
	q->body = body;
	q->endpoint = c->set.endpoint;
	snprintf(q->res->endpoint, sizeof(q->res->endpoint), "%s",
		 c->provider == KF_LLM_REPLAY ? "replay" : kf_llm_endpoint_name(q->endpoint));
	q->submit_ns = kf_now_ns();
	kf_buf_init(&q->resp, c->max_body);

	if (c->provider == KF_LLM_REPLAY) {
		struct kf_llm_result *r = q->res;
		q->res = NULL;
		if (!kf_llm_replay_next(c->replay, r)) {
			r->status = KF_ERR_LIMIT;
			r->exhausted = true;
			snprintf(r->error, sizeof(r->error), "replay exhausted: no recorded response left");
		}
		logf_(c, "llm: replay tag=%llu: %s", (unsigned long long)tag,
		      r->exhausted ? "exhausted"
		      : r->status  ? r->error
				   : "served");
		req_free(q);
		if (push_done(c, r)) {
			kf_llm_result_free(r);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		return KF_OK;
	}
	for (tail = &c->reqs; *tail; tail = &(*tail)->next)
		;
	*tail = q;
	return KF_OK;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct llm_req *q = userdata;
	size_t n = size * nmemb;
	if (kf_buf_add(&q->resp, ptr, n)) {
		q->overflow = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	return n;
}

static const char *endpoint_path(enum kf_llm_endpoint ep)
{
	return ep == KF_LLM_EP_MESSAGES    ? "/v1/messages"
	       : ep == KF_LLM_EP_RESPONSES ? "/responses"
					   : "/chat/completions";
}

/* A transfer stops (CURLE_ABORTED_BY_CALLBACK) once the cancellation token is set. */
static int on_progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	return kf_cancelled() ? 1 : 0;
}

static void set_cancellable(CURL *e)
{
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
}

static enum kf_status attempt_start(struct kf_llm_client *c, struct llm_req *q)
{
	char url[4096];
	CURL *e = curl_easy_init();
	if (!e)
		return KF_ERR_NOMEM;
	kf_buf_reset(&q->resp);
	q->overflow = false;
	snprintf(url, sizeof(url), "%s%s", c->base, endpoint_path(q->endpoint));
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, q->body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(q->body));
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* a redirect would carry the key elsewhere */
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_PRIVATE, q);
	set_cancellable(e);
	if (curl_multi_add_handle(c->multi, e)) {
		curl_easy_cleanup(e);
		return KF_ERR_INTERNAL;
	}
	q->easy = e;
	q->state = REQ_RUNNING;
	q->res->attempts++;
	return KF_OK;
}

static const char *header_value(CURL *e, const char *name)
{
	struct curl_header *h = NULL;
	if (curl_easy_header(e, name, 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h && h->value)
		return h->value;
	return NULL;
}

/* The server's requested wait in ms (retry-after-ms, then retry-after as seconds or an HTTP date), or
 * -1 when absent or outside (0, 60 s]: then we back off exponentially, as the SDKs do. */
static double retry_after_ms(CURL *e)
{
	const char *v = header_value(e, "retry-after-ms");
	char *end;
	double ms = -1;

	if (v) {
		double x = strtod(v, &end);
		if (end != v)
			ms = x;
	}
	if (ms < 0 && (v = header_value(e, "retry-after"))) {
		double x = strtod(v, &end);
		if (end != v && (*end == '\0' || *end == ' '))
			ms = x * 1000.0;
		else {
			time_t t = curl_getdate(v, NULL);
			if (t != -1)
				ms = difftime(t, time(NULL)) * 1000.0;
		}
	}
	return (ms > 0 && ms <= RETRY_AFTER_MAX_MS) ? ms : -1;
}

static double backoff_ms(struct kf_llm_client *c, int retries_done)
{
	double d = BACKOFF_INITIAL_MS * pow(2.0, retries_done);
	if (d > BACKOFF_MAX_MS)
		d = BACKOFF_MAX_MS;
	/* Jitter down by up to 25% (openai-python / anthropic-sdk-python). */
	return d * (1.0 - 0.25 * rand01(c));
}

static void call_cost(const struct kf_llm_client *c, struct kf_llm_result *r)
{
	struct kf_llm_usage u = {r->tokens_in, r->tokens_cached, r->tokens_cache_write, r->tokens_out};
	r->cost_known = kf_prices_cost(c->prices, c->model, &u, &r->cost_usd, NULL, 0);
	if (!r->cost_known && c->price_in > 0 && c->price_out > 0) {
		r->cost_usd = kf_prices_cost_at(c->price_in, c->price_out, &u);
		r->cost_known = true;
	}
}

static void finish(struct kf_llm_client *c, struct llm_req *q)
{
	struct kf_llm_result *r = q->res;
	struct llm_req **pp;

	r->latency_ms = (double)(kf_now_ns() - q->submit_ns) / 1e6;
	/* A failed reply may still have been billed (an empty choice list comes with usage). */
	call_cost(c, r);
	if (r->status && !r->failure[0])
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_HTTP);
	if (!r->status)
		r->failure[0] = '\0';
	r->fatal = r->status && kf_llm_failure_fatal(r->failure);
	snprintf(r->endpoint, sizeof(r->endpoint), "%s", kf_llm_endpoint_name(q->endpoint));
	if (!r->status) {
		logf_(c,
		      "llm: %s tag=%llu ok in %.0f ms, %d attempt(s), %lld+%lld tokens (%lld cached, %lld "
		      "reasoning), $%.6f%s, request id '%s'",
		      r->provider, (unsigned long long)r->tag, r->latency_ms, r->attempts,
		      (long long)r->tokens_in, (long long)r->tokens_out, (long long)r->tokens_cached,
		      (long long)r->tokens_reasoning, r->cost_usd, r->cost_known ? "" : " (price unknown)",
		      r->request_id);
	} else {
		logf_(c, "llm: %s tag=%llu failed (%s%s) after %d attempt(s): %s, request id '%s'",
		      r->provider, (unsigned long long)r->tag, r->failure,
		      r->fatal ? ", final for the run" : "", r->attempts, r->error, r->request_id);
	}
	q->res = NULL;
	for (pp = &c->reqs; *pp && *pp != q; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = q->next;
	req_free(q);
	if (push_done(c, r)) {
		/* Cannot report it; drop rather than leak. The caller sees a pending count that fell. */
		kf_llm_result_free(r);
	}
}

/* A model that chat completions does not serve (404 "only supported in v1/responses"): every later
 * request goes to the Responses API, and this one is sent there again at once. */
static bool switch_to_responses(struct kf_llm_client *c, struct llm_req *q)
{
	char *body = NULL, *prompt = NULL;
	struct kf_err e2 = KF_ERR_INIT;
	if (c->provider != KF_LLM_OPENAI || q->endpoint != KF_LLM_EP_CHAT || !q->copy.messages)
		return false;
	if (build_body(c, KF_LLM_EP_RESPONSES, &q->copy, &body, &prompt, &e2))
		return false;
	free(prompt);
	free(q->body);
	q->body = body;
	q->endpoint = KF_LLM_EP_RESPONSES;
	if (c->set.endpoint != KF_LLM_EP_RESPONSES) {
		c->set.endpoint = KF_LLM_EP_RESPONSES;
		c->set.token_field = "max_output_tokens";
		logf_(c, "llm: '%s' is served by the Responses API only: switching to %s/responses", c->model,
		      c->base);
	}
	return true;
}

/* Classifies one finished attempt: success, final error, or a retry scheduled in the future. */
static void attempt_done(struct kf_llm_client *c, struct llm_req *q, CURLcode cc)
{
	struct kf_llm_result *r = q->res;
	CURL *e = q->easy;
	long status = 0;
	bool retry = false, now = false;
	double wait_ms = -1;
	const char *rid, *should;
	char msg[512] = "";

	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	r->http_status = (int)status;
	r->failure[0] = '\0';
	rid = header_value(e, "x-request-id");
	if (!rid)
		rid = header_value(e, "request-id");
	snprintf(r->request_id, sizeof(r->request_id), "%s", rid ? rid : "");

	if (cc == CURLE_ABORTED_BY_CALLBACK) {
		r->status = KF_ERR_INTERRUPTED; /* the cancellation token: final, never retried */
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_NETWORK);
		snprintf(msg, sizeof(msg), "interrupted");
	} else if (cc == CURLE_WRITE_ERROR && q->overflow) {
		r->status = KF_ERR_LIMIT;
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_TOO_LARGE);
		snprintf(msg, sizeof(msg), "response body larger than %zu bytes", c->max_body);
	} else if (cc == CURLE_OPERATION_TIMEDOUT) {
		r->status = KF_ERR_TIMEOUT;
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_TIMEOUT);
		snprintf(msg, sizeof(msg), "no complete reply within %d ms", c->timeout_ms);
		retry = true;
	} else if (cc != CURLE_OK) {
		r->status = KF_ERR_NETWORK;
		snprintf(r->failure, sizeof(r->failure), "%s", KF_LLM_FAIL_NETWORK);
		snprintf(msg, sizeof(msg), "%s", curl_easy_strerror(cc));
		/* Connection errors (refused, reset, a body cut short) are retried like the SDKs do; a
		 * malformed URL or a TLS verification failure will not get better. */
		retry = !(cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ||
			  cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE);
	} else if (status >= 200 && status < 300) {
		struct kf_err perr = KF_ERR_INIT;
		enum kf_status st = kf_llm_reply_parse(q->endpoint, q->resp.data, q->resp.len, r, &perr);
		r->status = st;
		if (st)
			snprintf(msg, sizeof(msg), "%.500s", perr.msg);
		/* An unusable 2xx body is final: the SDKs do not retry a body that fails to parse. */
	} else {
		struct kf_llm_api_error ae;
		char desc[460];
		kf_llm_error_parse(q->resp.data, q->resp.len, &ae);
		kf_llm_error_text(&ae, desc, sizeof(desc));
		r->status = KF_ERR_HTTP;
		snprintf(r->failure, sizeof(r->failure), "%s", kf_llm_failure_classify((int)status, &ae));
		snprintf(msg, sizeof(msg), "http %ld: %s", status, desc);
		/* A spend limit does not lift by waiting: a 429 is retried only when it is a rate limit. */
		retry = status == 408 || status == 409 ||
			(status == 429 && !strcmp(r->failure, KF_LLM_FAIL_RATE_LIMIT)) || status >= 500;
		wait_ms = retry_after_ms(e);
		if (!strcmp(r->failure, KF_LLM_FAIL_RESPONSES_ONLY) && switch_to_responses(c, q))
			retry = now = true;
	}
	/* The SDKs obey an explicit x-should-retry from the server either way. */
	should = status && !now ? header_value(e, "x-should-retry") : NULL;
	if (should && !strcmp(should, "true") && r->status != KF_ERR_LIMIT)
		retry = true;
	else if (should && !strcmp(should, "false"))
		retry = false;

	curl_multi_remove_handle(c->multi, e);
	curl_easy_cleanup(e);
	q->easy = NULL;
	kf_llm_scrub(r->error, sizeof(r->error), msg, c->key);

	if (r->status && retry && (now || r->attempts <= c->max_retries)) {
		if (now)
			wait_ms = 0;
		else if (wait_ms < 0)
			wait_ms = backoff_ms(c, r->attempts - 1);
		logf_(c, "llm: %s tag=%llu attempt %d: %s, request id '%s'; retry in %.0f ms", r->provider,
		      (unsigned long long)r->tag, r->attempts, r->error, r->request_id, wait_ms);
		r->status = KF_OK;
		r->error[0] = '\0';
		r->failure[0] = '\0';
		q->state = REQ_BACKOFF;
		q->retry_at_ns = kf_now_ns() + (uint64_t)(wait_ms * 1e6);
		return;
	}
	if (r->status) {
		/* A failed call returns no text, even if an earlier attempt's parse filled some. */
		free(r->text);
		r->text = calloc(1, 1);
		r->text_len = 0;
		if (!r->text) {
			/* keep the invariant "never NULL" by failing loudly to the caller later */
			r->status = KF_ERR_NOMEM;
		}
	}
	finish(c, q);
}

/* Starts what may start now; returns the earliest future retry time (0: none). */
static enum kf_status start_ready(struct kf_llm_client *c, uint64_t *next_retry_ns)
{
	int slots = 0;
	uint64_t now = kf_now_ns();
	struct llm_req *q, *nq;

	*next_retry_ns = 0;
	for (q = c->reqs; q; q = q->next)
		if (q->state != REQ_QUEUED)
			slots++;
	for (q = c->reqs; q; q = nq) {
		nq = q->next;
		if (q->state == REQ_BACKOFF) {
			if (q->retry_at_ns <= now) {
				if (attempt_start(c, q))
					return KF_ERR_INTERNAL;
			} else if (!*next_retry_ns || q->retry_at_ns < *next_retry_ns) {
				*next_retry_ns = q->retry_at_ns;
			}
		} else if (q->state == REQ_QUEUED && slots < c->concurrency) {
			/* queued before the client learnt that the model is Responses-only */
			if (q->endpoint != c->set.endpoint && c->set.endpoint == KF_LLM_EP_RESPONSES)
				switch_to_responses(c, q);
			if (attempt_start(c, q))
				return KF_ERR_INTERNAL;
			slots++;
		}
	}
	return KF_OK;
}

enum kf_status kf_llm_poll(struct kf_llm_client *c, int timeout_ms, struct kf_llm_result **done,
			   struct kf_err *err)
{
	uint64_t deadline = kf_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;

	*done = NULL;
	for (;;) {
		uint64_t next_retry, now;
		int running = 0, wait_ms;
		CURLMsg *m;
		CURLMcode mc;

		if (kf_cancelled())
			return kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted");
		if (c->head_done < c->n_done) {
			*done = c->done[c->head_done++];
			return KF_OK;
		}
		if (!c->reqs)
			return KF_OK;
		if (start_ready(c, &next_retry))
			return kf_err_set(err, KF_ERR_INTERNAL, "cannot start an HTTP request");
		mc = curl_multi_perform(c->multi, &running);
		if (mc)
			return kf_err_set(err, KF_ERR_INTERNAL, "curl_multi_perform: %s",
					  curl_multi_strerror(mc));
		while ((m = curl_multi_info_read(c->multi, &(int){0}))) {
			struct llm_req *q = NULL;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&q);
			if (q)
				attempt_done(c, q, m->data.result);
		}
		if (c->head_done < c->n_done)
			continue;
		/* Attempts that just failed may have scheduled retries. */
		next_retry = 0;
		for (const struct llm_req *q = c->reqs; q; q = q->next)
			if (q->state == REQ_BACKOFF && (!next_retry || q->retry_at_ns < next_retry))
				next_retry = q->retry_at_ns;
		now = kf_now_ns();
		if (now >= deadline)
			return KF_OK;
		/* A retry that came due while we were working starts on the next pass without waiting. */
		if (next_retry && next_retry <= now)
			continue;
		wait_ms = (int)((deadline - now + 999999) / 1000000);
		if (next_retry && (int)((next_retry - now + 999999) / 1000000) < wait_ms)
			wait_ms = (int)((next_retry - now + 999999) / 1000000);
		{
			/* the cancellation token's pipe wakes the wait at once */
			struct curl_waitfd cw = {kf_cancel_fd(), CURL_WAIT_POLLIN, 0};
			mc = curl_multi_poll(c->multi, &cw, cw.fd >= 0 ? 1 : 0, wait_ms, NULL);
		}
		if (mc)
			return kf_err_set(err, KF_ERR_INTERNAL, "curl_multi_poll: %s",
					  curl_multi_strerror(mc));
	}
}

/* ---- the pre-flight check ---------------------------------------------------------------------- */

struct get_result {
	long status;
	CURLcode cc;
	struct kf_buf body;
};

static size_t on_get_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kf_buf *b = userdata;
	return kf_buf_add(b, ptr, size * nmemb) ? 0 : size * nmemb;
}

/* One GET of base+path with the client's headers, retried by the request rules (408/409/429 rate limits,
 * 5xx, connection errors) with the SDKs' backoff; blocking (it runs before any request is in flight). */
static void get_json(struct kf_llm_client *c, const char *path, struct get_result *g)
{
	char url[4200];
	snprintf(url, sizeof(url), "%s%s", c->base, path);
	for (int attempt = 0;; attempt++) {
		CURL *e = curl_easy_init();
		kf_buf_reset(&g->body);
		g->status = 0;
		g->cc = CURLE_FAILED_INIT;
		if (!e)
			return;
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_get_body);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, &g->body);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
		set_cancellable(e);
		g->cc = curl_easy_perform(e);
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &g->status);
		double wait = -1;
		bool transient = g->cc != CURLE_OK
				     ? g->cc != CURLE_URL_MALFORMAT && g->cc != CURLE_PEER_FAILED_VERIFICATION
				     : g->status == 408 || g->status == 409 || g->status >= 500;
		if (g->cc == CURLE_OK && g->status == 429) {
			struct kf_llm_api_error ae;
			kf_llm_error_parse(g->body.data, g->body.len, &ae);
			transient = !strcmp(kf_llm_failure_classify(429, &ae), KF_LLM_FAIL_RATE_LIMIT);
		}
		if (g->cc == CURLE_ABORTED_BY_CALLBACK)
			transient = false; /* the cancellation token */
		if (g->cc == CURLE_OK)
			wait = retry_after_ms(e);
		curl_easy_cleanup(e);
		if (!transient || attempt >= c->max_retries || kf_cancelled())
			return;
		if (wait < 0)
			wait = backoff_ms(c, attempt);
		logf_(c, "llm: pre-flight %s: %s; retry in %.0f ms", path,
		      g->cc != CURLE_OK ? curl_easy_strerror(g->cc) : "server busy", wait);
		struct timespec ts = {(time_t)(wait / 1000), (long)((long long)wait % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
}

static enum kf_status refused(struct kf_llm_client *c, const struct get_result *g, const char *kind,
			      struct kf_err *err)
{
	struct kf_llm_api_error ae;
	char desc[460], clean[600];
	kf_llm_error_parse(g->body.data, g->body.len, &ae);
	kf_llm_error_text(&ae, desc, sizeof(desc));
	kf_llm_scrub(clean, sizeof(clean), desc, c->key);
	if (!strcmp(kind, KF_LLM_FAIL_NOT_FOUND))
		return kf_err_set(err, KF_ERR_UNAVAILABLE, "%s does not serve model '%s' (http %ld: %s)",
				  c->base, c->model, g->status, clean);
	return kf_err_set(err, KF_ERR_UNAVAILABLE,
			  "%s refused the pre-flight check for '%s' (%s, http %ld): %s", c->base, c->model,
			  kind, g->status, clean);
}

/* Does a {"data": [{"id": ...}]} list name the model? -1: not a model list. */
static int list_has(const struct get_result *g, const char *model, char *some, size_t n)
{
	cJSON *root = cJSON_ParseWithLength(g->body.data, g->body.len);
	const cJSON *data = root ? cJSON_GetObjectItemCaseSensitive(root, "data") : NULL, *m;
	int found = cJSON_IsArray(data) ? 0 : -1;
	size_t k = 0;
	if (n)
		some[0] = '\0';
	cJSON_ArrayForEach(m, data)
	{
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		if (!cJSON_IsString(id))
			continue;
		if (!strcmp(id->valuestring, model))
			found = 1;
		if (k++ < 4 && strlen(some) + strlen(id->valuestring) + 3 < n)
			snprintf(some + strlen(some), n - strlen(some), "%s%s", some[0] ? ", " : "",
				 id->valuestring);
	}
	cJSON_Delete(root);
	return found;
}

enum kf_status kf_llm_preflight(struct kf_llm_client *c, char *note, size_t note_n, struct kf_err *err)
{
	struct get_result g = {0, CURLE_OK, KF_BUF_INIT(1u << 20)};
	enum kf_status st = KF_OK;
	char path[600], some[200];
	char *esc;

	if (note && note_n)
		note[0] = '\0';
	if (c->provider == KF_LLM_REPLAY)
		return KF_OK;
	esc = curl_easy_escape(NULL, c->model, 0);
	if (!esc)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	snprintf(path, sizeof(path), "%s/%s", c->provider == KF_LLM_ANTHROPIC ? "/v1/models" : "/models",
		 esc);
	curl_free(esc);
	get_json(c, path, &g);
	if (g.cc == CURLE_ABORTED_BY_CALLBACK) {
		st = kf_err_set(err, KF_ERR_INTERRUPTED, "interrupted during the pre-flight check");
		goto out;
	}
	if (g.cc != CURLE_OK) {
		if (g.cc == CURLE_COULDNT_CONNECT || g.cc == CURLE_COULDNT_RESOLVE_HOST ||
		    g.cc == CURLE_URL_MALFORMAT || g.cc == CURLE_PEER_FAILED_VERIFICATION)
			st = kf_err_set(err, KF_ERR_UNAVAILABLE, "cannot reach %s: %s", c->base,
					curl_easy_strerror(g.cc));
		else if (note)
			snprintf(note, note_n, "pre-flight check inconclusive: %s", curl_easy_strerror(g.cc));
		goto out;
	}
	if (g.status >= 200 && g.status < 300) {
		cJSON *root = cJSON_ParseWithLength(g.body.data, g.body.len);
		const cJSON *mt = root ? cJSON_GetObjectItemCaseSensitive(root, "max_tokens") : NULL;
		/* Anthropic's model record states the output cap (0 when it does not say) */
		if (mt && cJSON_IsNumber(mt) && mt->valuedouble >= 1 && mt->valuedouble < c->max_tokens) {
			logf_(c, "llm: %s's output cap is %d tokens: lowering the reply limit from %d",
			      c->model, (int)mt->valuedouble, c->max_tokens);
			c->max_tokens = c->set.max_tokens = (int)mt->valuedouble;
			if (c->set.thinking_budget >= c->max_tokens)
				st = kf_err_set(
				    err, KF_ERR_INVALID,
				    "--thinking-budget %d is not below %s's output cap of %d tokens",
				    c->set.thinking_budget, c->model, c->max_tokens);
		}
		cJSON_Delete(root);
		if (note && !st)
			snprintf(note, note_n, "model '%s' is available at %s", c->model, c->base);
		goto out;
	}
	{
		struct kf_llm_api_error ae;
		const char *kind;
		kf_llm_error_parse(g.body.data, g.body.len, &ae);
		kind = kf_llm_failure_classify((int)g.status, &ae);
		if (kf_llm_failure_fatal(kind) &&
		    (strcmp(kind, KF_LLM_FAIL_NOT_FOUND) || c->is_public ||
		     !strcmp(ae.code, "model_not_found") || !strcmp(ae.type, "not_found_error"))) {
			st = refused(c, &g, kind, err);
			goto out;
		}
		if (strcmp(kind, KF_LLM_FAIL_NOT_FOUND)) {
			if (note)
				snprintf(note, note_n, "pre-flight check inconclusive (http %ld)", g.status);
			goto out;
		}
	}
	/* A 404 not in the API's format: a server without the single-model route. Its list, then. */
	get_json(c, c->provider == KF_LLM_ANTHROPIC ? "/v1/models" : "/models", &g);
	if (g.cc == CURLE_OK && (g.status == 401 || g.status == 403)) {
		st = refused(c, &g, g.status == 401 ? KF_LLM_FAIL_AUTH : KF_LLM_FAIL_PERMISSION, err);
	} else if (g.cc == CURLE_OK && g.status == 200) {
		int has = list_has(&g, c->model, some, sizeof(some));
		if (has == 0 && c->is_public)
			st = kf_err_set(err, KF_ERR_UNAVAILABLE, "%s does not list model '%s'", c->base,
					c->model);
		else if (note && has > 0)
			snprintf(note, note_n, "model '%s' is listed by %s", c->model, c->base);
		else if (note && has == 0)
			snprintf(note, note_n,
				 "the model list of %s does not name '%s' (it has %s); trying anyway",
				 c->base, c->model, some);
		else if (note)
			snprintf(note, note_n, "%s has no model listing: pre-flight check skipped", c->base);
	} else if (note) {
		snprintf(note, note_n, "%s has no model listing: pre-flight check skipped", c->base);
	}
out:
	if (note && note[0])
		logf_(c, "llm: %s", note);
	kf_buf_release(&g.body);
	return st;
}
