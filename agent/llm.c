/* The asynchronous LLM client: requests run concurrently on one curl multi handle (up to `concurrency` at
 * once), retried by the official SDKs' rules (FIELD-NOTES.md) with waits scheduled by time so one request's
 * backoff never stalls the others; results carry tokens, cost, latency, attempts and the request id.
 * The API key lives only in the request headers: it is never logged, printed or put in an error. */
#include "llm_int.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MAX_TOKENS 8192
#define DEFAULT_CONCURRENCY 4
#define DEFAULT_TIMEOUT_MS 600000
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
	struct kf_llm_result *res;
	uint64_t submit_ns, retry_at_ns;
	CURL *easy;
	struct kf_buf resp;
	bool overflow; /* the body went past max_response_bytes */
};

struct kf_llm_client {
	enum kf_llm_provider provider;
	char *model, *url, *key, *max_tokens_field;
	int max_tokens, concurrency, timeout_ms, connect_timeout_ms, max_retries;
	bool temperature_set;
	double temperature;
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
	free(c->url);
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
	/* OpenAI's base ends in /v1 (the SDKs' convention); Anthropic's does not. */
	if (kf_buf_add(&url, base, blen) || kf_buf_adds(&url, anth ? "/v1/messages" : "/chat/completions"))
		return kf_err_set(err, KF_ERR_INVALID, "base URL is too long");
	c->url = kf_buf_detach(&url, NULL);
	if (!c->url)
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
	    cfg->max_tokens < 0 || cfg->max_retries < -1)
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

enum kf_status kf_llm_submit(struct kf_llm_client *c, const struct kf_llm_request *req, uint64_t tag,
			     struct kf_err *err)
{
	struct llm_req *q, **tail;
	char *body = NULL, *prompt = NULL;
	enum kf_status st;

	st = kf_llm_body_build(c->provider, c->model, c->max_tokens_field,
			       req->max_tokens > 0 ? req->max_tokens : c->max_tokens, c->temperature_set,
			       c->temperature, req, &body, &prompt, err);
	if (st)
		return st;
	q = calloc(1, sizeof(*q));
	if (q)
		q->res = result_new(c, tag);
	if (!q || !q->res) {
		free(q);
		free(body);
		free(prompt);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	q->res->prompt_json = prompt;
	q->body = body;
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

static enum kf_status attempt_start(struct kf_llm_client *c, struct llm_req *q)
{
	CURL *e = curl_easy_init();
	if (!e)
		return KF_ERR_NOMEM;
	kf_buf_reset(&q->resp);
	q->overflow = false;
	curl_easy_setopt(e, CURLOPT_URL, c->url);
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

static void finish(struct kf_llm_client *c, struct llm_req *q)
{
	struct kf_llm_result *r = q->res;
	struct llm_req **pp;

	r->latency_ms = (double)(kf_now_ns() - q->submit_ns) / 1e6;
	/* A failed reply may still have been billed (an empty choice list comes with usage). */
	r->cost_known = kf_prices_cost(c->prices, c->model, r->tokens_in, r->tokens_out, &r->cost_usd);
	if (!r->status) {
		logf_(c,
		      "llm: %s tag=%llu ok in %.0f ms, %d attempt(s), %lld+%lld tokens, $%.6f%s, request id "
		      "'%s'",
		      r->provider, (unsigned long long)r->tag, r->latency_ms, r->attempts,
		      (long long)r->tokens_in, (long long)r->tokens_out, r->cost_usd,
		      r->cost_known ? "" : " (price unknown)", r->request_id);
	} else {
		logf_(c, "llm: %s tag=%llu failed after %d attempt(s): %s, request id '%s'", r->provider,
		      (unsigned long long)r->tag, r->attempts, r->error, r->request_id);
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

/* Classifies one finished attempt: success, final error, or a retry scheduled in the future. */
static void attempt_done(struct kf_llm_client *c, struct llm_req *q, CURLcode cc)
{
	struct kf_llm_result *r = q->res;
	CURL *e = q->easy;
	long status = 0;
	bool retry = false, quota = false;
	double wait_ms = -1;
	const char *rid, *should;
	char msg[512] = "";

	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	r->http_status = (int)status;
	rid = header_value(e, "x-request-id");
	if (!rid)
		rid = header_value(e, "request-id");
	snprintf(r->request_id, sizeof(r->request_id), "%s", rid ? rid : "");

	if (cc == CURLE_WRITE_ERROR && q->overflow) {
		r->status = KF_ERR_LIMIT;
		snprintf(msg, sizeof(msg), "response body larger than %zu bytes", c->max_body);
	} else if (cc == CURLE_OPERATION_TIMEDOUT) {
		r->status = KF_ERR_TIMEOUT;
		snprintf(msg, sizeof(msg), "no complete reply within %d ms", c->timeout_ms);
		retry = true;
	} else if (cc != CURLE_OK) {
		r->status = KF_ERR_NETWORK;
		snprintf(msg, sizeof(msg), "%s", curl_easy_strerror(cc));
		/* Connection errors (refused, reset, a body cut short) are retried like the SDKs do; a
		 * malformed URL or a TLS verification failure will not get better. */
		retry = !(cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL ||
			  cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE);
	} else if (status >= 200 && status < 300) {
		struct kf_err perr = KF_ERR_INIT;
		enum kf_status st = kf_llm_reply_parse(c->provider, q->resp.data, q->resp.len, r, &perr);
		r->status = st;
		if (st)
			snprintf(msg, sizeof(msg), "%.500s", perr.msg);
		/* An unusable 2xx body is final: the SDKs do not retry a body that fails to parse. */
	} else {
		char desc[400];
		kf_llm_error_describe(q->resp.data, q->resp.len, desc, sizeof(desc), &quota);
		r->status = KF_ERR_HTTP;
		snprintf(msg, sizeof(msg), "http %ld: %s", status, desc);
		retry = status == 408 || status == 409 || status == 429 || status >= 500;
		if (status == 429 && quota)
			retry = false; /* a spend limit does not lift by waiting */
		wait_ms = retry_after_ms(e);
	}
	/* The SDKs obey an explicit x-should-retry from the server either way. */
	should = status ? header_value(e, "x-should-retry") : NULL;
	if (should && !strcmp(should, "true") && r->status != KF_ERR_LIMIT)
		retry = true;
	else if (should && !strcmp(should, "false"))
		retry = false;

	curl_multi_remove_handle(c->multi, e);
	curl_easy_cleanup(e);
	q->easy = NULL;
	kf_llm_scrub(r->error, sizeof(r->error), msg, c->key);

	if (r->status && retry && r->attempts <= c->max_retries) {
		if (wait_ms < 0)
			wait_ms = backoff_ms(c, r->attempts - 1);
		logf_(c, "llm: %s tag=%llu attempt %d: %s, request id '%s'; retry in %.0f ms", r->provider,
		      (unsigned long long)r->tag, r->attempts, r->error, r->request_id, wait_ms);
		r->status = KF_OK;
		r->error[0] = '\0';
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
		mc = curl_multi_poll(c->multi, NULL, 0, wait_ms, NULL);
		if (mc)
			return kf_err_set(err, KF_ERR_INTERNAL, "curl_multi_poll: %s",
					  curl_multi_strerror(mc));
	}
}
