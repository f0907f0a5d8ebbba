/* agent: the LLM side of kforge. An asynchronous LLM client (OpenAI chat completions, Anthropic
 * messages, replay of an exported run) driven by the search loop, the prompt builder (templates in
 * agent/prompts/), and the parser that turns a reply into a candidate kernel source. */
#ifndef KF_AGENT_H
#define KF_AGENT_H

#include "kf.h"
#include "sandbox/sandbox.h"
#include "task.h"

/* ---- LLM client ---------------------------------------------------------------------------- */

enum kf_llm_provider {
	KF_LLM_OPENAI = 0,    /* chat completions: OpenAI, vLLM, llama.cpp server, Ollama, ... */
	KF_LLM_ANTHROPIC = 1, /* Messages API */
	KF_LLM_REPLAY = 2,    /* responses of an exported run (kforge kb export), no network */
};

const char *kf_llm_provider_name(enum kf_llm_provider p); /* "openai", "anthropic", "replay" */
bool kf_llm_provider_parse(const char *s, enum kf_llm_provider *out);

/* One log line from the client (request ids, retries, final errors); never holds the API key. */
typedef void (*kf_llm_log_fn)(void *ctx, const char *line);

/* ---- the model table (agent/data/models.json, extended by $KFORGE_MODELS; agent/models.c) ---- */

enum kf_llm_endpoint {
	KF_LLM_EP_DEFAULT = 0,   /* from the model table; chat completions for unknown OpenAI models */
	KF_LLM_EP_CHAT = 1,      /* POST {base}/chat/completions */
	KF_LLM_EP_RESPONSES = 2, /* POST {base}/responses (models that exist only there) */
	KF_LLM_EP_MESSAGES = 3,  /* Anthropic POST {base}/v1/messages */
};
const char *kf_llm_endpoint_name(enum kf_llm_endpoint e); /* "chat", "responses", "messages" */

enum kf_llm_reasoning {
	KF_LLM_REASONING_UNKNOWN = 0, /* not in the table */
	KF_LLM_REASONING_NONE = 1,
	KF_LLM_REASONING_EFFORT = 2,   /* OpenAI reasoning models: reasoning_effort / reasoning.effort */
	KF_LLM_REASONING_THINKING = 3, /* Anthropic extended thinking with budget_tokens */
	KF_LLM_REASONING_ADAPTIVE = 4, /* Anthropic adaptive thinking (manual budgets rejected) */
};
const char *kf_llm_reasoning_name(enum kf_llm_reasoning r);

/* Reasoning effort levels (--reasoning-effort), in increasing order. */
enum {
	KF_LLM_EFFORT_NONE,
	KF_LLM_EFFORT_MINIMAL,
	KF_LLM_EFFORT_LOW,
	KF_LLM_EFFORT_MEDIUM,
	KF_LLM_EFFORT_HIGH,
	KF_LLM_EFFORT_XHIGH,
	KF_LLM_EFFORT_MAX,
	KF_LLM_EFFORT_COUNT
};
const char *kf_llm_effort_name(int effort); /* "high" */
int kf_llm_effort_parse(const char *s);     /* -1 when not a level */

struct kf_llm_model {
	bool known;   /* found in the table (all else is zero when not) */
	char key[64]; /* the table key that matched, "gpt-5.4*" */
	enum kf_llm_provider provider;
	enum kf_llm_endpoint endpoint;
	char token_field[32]; /* max_completion_tokens | max_output_tokens | max_tokens */
	int max_output;       /* the model's output cap in tokens (reasoning included) */
	enum kf_llm_reasoning reasoning;
	uint32_t efforts; /* bit (1 << KF_LLM_EFFORT_x) per level the model takes */
	bool temperature; /* the API accepts a non-default temperature */
};
/* The entry for model (exact name, else the longest matching prefix key); out->known false when none.
 * Errors only when a table file is broken (KF_ERR_PARSE/INVALID/IO, naming the file and entry). */
enum kf_status kf_llm_model_lookup(const char *model, struct kf_llm_model *out, struct kf_err *err);

/* The provider for a run without --provider: the only one configured in the environment (a key or a base
 * URL), else, both being configured, the one the model name belongs to (the table, then "claude..." =
 * anthropic). why (may be NULL) says which rule decided. KF_ERR_UNAVAILABLE when neither is configured. */
enum kf_status kf_llm_provider_detect(const char *model, enum kf_llm_provider *out, char *why, size_t why_n,
				      struct kf_err *err);

#define KF_LLM_CONCURRENCY 4 /* requests in flight by default */

/* Client settings. Zero/NULL fields take the documented default, so `struct kf_llm_config c = {0}`
 * plus a provider and a model is a working configuration. Strings are copied by kf_llm_client_new. */
struct kf_llm_config {
	enum kf_llm_provider provider;
	const char *model;    /* required for openai/anthropic; replay: informational */
	const char *base_url; /* NULL: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, then the public endpoint */
	const char *api_key;  /* NULL: $OPENAI_API_KEY / $ANTHROPIC_API_KEY */
	const char *max_tokens_field; /* chat body field: NULL = the table's, else "max_completion_tokens";
					 local servers may need "max_tokens" */
	int max_tokens;               /* per reply, reasoning included; 0: the model's default (32768 for a
					 reasoning model, 8192 otherwise, never above the model's cap) */
	double temperature;           /* sent only when temperature_set */
	bool temperature_set;
	const char *reasoning_effort;  /* "high" ...: OpenAI reasoning effort, Anthropic output_config.effort;
					  NULL: the model's default */
	int thinking_budget;           /* Anthropic extended thinking budget_tokens (>= 1024); 0: off */
	enum kf_llm_endpoint endpoint; /* 0: from the model table */
	bool no_prompt_cache;          /* Anthropic: do not mark the static prefix with cache_control */
	int concurrency;               /* requests in flight at once; 0: KF_LLM_CONCURRENCY */
	int timeout_ms;                /* per attempt, whole exchange; 0: 600000, 1800000 for a reasoning
					  model (long replies take minutes) */
	int connect_timeout_ms;        /* 0: 10000 */
	int max_retries;            /* retries after the first attempt; 0: 2 (the SDKs' default); -1: none */
	size_t max_response_bytes;  /* response body bound; 0: 8 MiB */
	const char *replay_path;    /* replay: the export JSONL */
	const char *replay_run;     /* replay: run_id to serve (NULL: the first run with llm_call lines) */
	const char *prices_path;    /* extra price table; NULL: $KFORGE_PRICES (may be unset) */
	double price_in, price_out; /* USD per 1M tokens for a model the table lacks (both > 0 to apply) */
	uint64_t jitter_seed;       /* backoff jitter; 0: from the clock */
	kf_llm_log_fn log;          /* NULL: no log */
	void *log_ctx;
};

/* What the client will send, resolved from the config and the model table (for the run's record). */
struct kf_llm_settings {
	struct kf_llm_model model; /* the table entry (known false when none) */
	enum kf_llm_endpoint endpoint;
	int max_tokens;
	const char *token_field; /* body field of the limit */
	int effort;              /* -1: not sent */
	int thinking_budget;     /* 0: off */
	bool prompt_cache;       /* Anthropic cache_control on the static prefix */
	bool price_known;        /* the model has a price (table or --price-in/--price-out) */
	char price_source[96];   /* "table 'gpt-5.4*'", "--price-in/--price-out", "" */
};

struct kf_llm_message {
	const char *role; /* "user" or "assistant" */
	const char *content;
	size_t cache_prefix; /* the first bytes of content that are the same in every request of a run (the
				static prefix): Anthropic marks them with cache_control; 0: none */
};

/* One request. The client copies what it needs at submit time. */
struct kf_llm_request {
	const char *system; /* may be NULL */
	size_t n_messages;
	const struct kf_llm_message *messages; /* at least one, the first a "user" message */
	int max_tokens;                        /* 0: the config's */
};

/* Why a call failed (kf_llm_result.failure), decided from the HTTP status and the error's structured
 * type/code, never from words in its message. The fatal ones stop a run at once: they will not get better
 * by asking again. */
#define KF_LLM_FAIL_AUTH "auth"                     /* 401: bad or missing key (fatal) */
#define KF_LLM_FAIL_PERMISSION "permission"         /* 403 (fatal) */
#define KF_LLM_FAIL_NOT_FOUND "not_found"           /* 404: unknown model or wrong endpoint (fatal) */
#define KF_LLM_FAIL_RESPONSES_ONLY "responses_only" /* 404: the model exists only on the Responses API */
#define KF_LLM_FAIL_QUOTA "quota"                   /* insufficient_quota, spend limit, billing (fatal) */
#define KF_LLM_FAIL_CONFIG                                                                                   \
	"config"                                  /* 400 unsupported parameter/value: every call would       \
						     get it (fatal) */
#define KF_LLM_FAIL_BAD_REQUEST "bad_request"     /* another 400 (this request only) */
#define KF_LLM_FAIL_RATE_LIMIT "rate_limit"       /* 429 after the retries */
#define KF_LLM_FAIL_SERVER "server"               /* 5xx/529/408/409 after the retries */
#define KF_LLM_FAIL_NETWORK "network"             /* connection errors after the retries */
#define KF_LLM_FAIL_TIMEOUT "timeout"             /* no complete reply within timeout_ms */
#define KF_LLM_FAIL_TOO_LARGE "too_large"         /* 413, or a body over max_response_bytes */
#define KF_LLM_FAIL_REFUSAL "refusal"             /* the model declined (a 2xx with a refusal) */
#define KF_LLM_FAIL_LENGTH "length"               /* cut at the token limit before any text */
#define KF_LLM_FAIL_INVALID_REPLY "invalid_reply" /* a 2xx body that is not a usable reply */
#define KF_LLM_FAIL_HTTP "http"                   /* another status */
/* True for the kinds that stop a run at once (auth, permission, not_found, quota, config). */
bool kf_llm_failure_fatal(const char *kind);

/* One finished request (success or final error). Owned by the caller: kf_llm_result_free. */
struct kf_llm_result {
	uint64_t tag;          /* as given to kf_llm_submit */
	enum kf_status status; /* KF_OK; KF_ERR_HTTP (error status), KF_ERR_NETWORK, KF_ERR_TIMEOUT,
				  KF_ERR_PARSE (unusable body), KF_ERR_LIMIT (body too large, or replay
				  exhausted: see exhausted) */
	bool exhausted;        /* replay: no recorded response left (treat as budget exhausted) */
	char failure[24];      /* KF_LLM_FAIL_* when status != KF_OK, else "" */
	bool fatal;            /* kf_llm_failure_fatal(failure) */
	char *text;            /* reply text; never NULL ("" on error) */
	size_t text_len;
	char finish_reason[32]; /* normalized: "stop", "length" (anthropic max_tokens, responses
				   max_output_tokens), "refusal", or as sent */
	int64_t tokens_in;      /* every input token, cached ones included */
	int64_t tokens_cached;  /* of which read from the prompt cache (OpenAI cached_tokens, Anthropic
				   cache_read_input_tokens) */
	int64_t
	    tokens_cache_write;   /* of which written to the cache (Anthropic cache_creation_input_tokens) */
	int64_t tokens_out;       /* every output token, reasoning included */
	int64_t tokens_reasoning; /* of which reasoning (OpenAI reasoning_tokens; 0 when not reported) */
	double cost_usd;          /* from the price table; 0 when unknown */
	bool cost_known;
	double latency_ms;    /* submit to completion, retries included */
	int attempts;         /* HTTP attempts made (replay: 1) */
	int http_status;      /* of the last attempt; 0 when no response */
	char endpoint[16];    /* "chat", "responses", "messages", "replay" */
	char request_id[128]; /* x-request-id / request-id of the last attempt, or "" */
	char error[512];      /* final error, "" on success; never holds the API key */
	char provider[16];
	char model[128];
	char *prompt_json; /* the request as a JSON array of {role, content} (system first), for the
			      knowledge base; never NULL */
};

/* Retry rules (those of the official OpenAI and Anthropic SDKs, docs/field-notes.md):
 *  - retried: 408, 409, 429, every 5xx (529 overloaded included), connection errors (refused, reset, a
 *    body cut short), and attempts past timeout_ms;
 *  - final: 400, 401, 403, 404 and other 4xx; a 429 whose error code/type says a spend or quota limit
 *    was reached (OpenAI code insufficient_quota, Anthropic error_code enforced_spend_limit_reached or a
 *    billing_error);
 *    a complete 2xx body that is not JSON or has no usable reply (empty choice list, no text block): the
 *    SDKs do not retry a body that fails to parse, and a retry would be billed again; a body over
 *    max_response_bytes; a malformed URL or a TLS verification failure;
 *  - an x-should-retry: true|false reply header overrides the above, as in the SDKs;
 *  - the wait: retry-after-ms, else retry-after (seconds or an HTTP date) when 0 < wait <= 60 s, else
 *    exponential backoff 0.5 s, 1 s, 2 s ... capped at 8 s, minus up to 25% jitter. A request waiting to
 *    retry keeps its concurrency slot (so retries do not pile onto a rate limit) but never blocks the
 *    others: poll() keeps driving them. */
struct kf_llm_client;

/* Validates cfg and prepares the client. Errors: KF_ERR_INVALID (bad setting, bad base URL),
 * KF_ERR_UNAVAILABLE (no API key for the public endpoint), KF_ERR_NOTFOUND/IO/PARSE (replay file or
 * price table). Messages never include the key. */
enum kf_status kf_llm_client_new(const struct kf_llm_config *cfg, struct kf_llm_client **out,
				 struct kf_err *err);
/* Aborts whatever is in flight. NULL ok. */
void kf_llm_client_free(struct kf_llm_client *c);

/* What the client sends (resolved endpoint, limit, reasoning settings, price). */
void kf_llm_client_settings(const struct kf_llm_client *c, struct kf_llm_settings *out);

/* The pre-flight check before a run's first request: GET {base}/models/{model} (both APIs document it),
 * falling back to the model list GET {base}/models on servers without the single-model route. Returns
 * KF_OK when the model is there or the server cannot tell (note says so), KF_ERR_UNAVAILABLE with the
 * API's message for a bad key, a missing permission, an unknown model (on the public endpoints, or any
 * server whose listing lacks it and answers in the API's error format) or an exhausted quota; transient
 * trouble is retried like a request and then reported as KF_OK with a note (the run's own calls will
 * tell). An Anthropic answer's max_tokens lowers the client's output cap when smaller. Replay: KF_OK. */
enum kf_status kf_llm_preflight(struct kf_llm_client *c, char *note, size_t note_n, struct kf_err *err);

/* Queues a request; it starts when a slot is free (poll drives it). */
enum kf_status kf_llm_submit(struct kf_llm_client *c, const struct kf_llm_request *req, uint64_t tag,
			     struct kf_err *err);
/* Makes progress on every request for up to timeout_ms (0: do not wait) and returns at most one finished
 * request in *done (NULL when none finished in time or nothing is pending). Retries wait by time without
 * holding up the others. Returns an error only when the client itself fails (NOMEM, curl). */
enum kf_status kf_llm_poll(struct kf_llm_client *c, int timeout_ms, struct kf_llm_result **done,
			   struct kf_err *err);
/* Requests submitted and not yet returned by poll. */
size_t kf_llm_pending(const struct kf_llm_client *c);
void kf_llm_result_free(struct kf_llm_result *r);

/* ---- prices --------------------------------------------------------------------------------- */

/* Price table: USD per 1M tokens per model (exact name, or a prefix for keys ending in '*'; exact beats
 * prefix, longer prefix beats shorter): input, output, and where the provider bills them differently,
 * cached input (OpenAI cached tokens, Anthropic cache reads) and cache writes (Anthropic). Built in from
 * agent/data/prices.json (which names its sources and date); a user file in the same format overrides
 * and extends it. */
struct kf_prices;
enum kf_status kf_prices_load(const char *user_path, struct kf_prices **out, struct kf_err *err);
void kf_prices_free(struct kf_prices *p);

/* The tokens of one call, as the client counts them (struct kf_llm_result). */
struct kf_llm_usage {
	int64_t tokens_in, tokens_cached, tokens_cache_write, tokens_out;
};
/* Cost of a call; false (cost 0) when the model is not in the table. key (may be NULL, n bytes) gets the
 * matching table key. */
bool kf_prices_cost(const struct kf_prices *p, const char *model, const struct kf_llm_usage *u, double *usd,
		    char *key, size_t n);
/* The price of a call at explicit rates (USD per 1M; cached and cache-write tokens at the input rate). */
double kf_prices_cost_at(double in_per_mtok, double out_per_mtok, const struct kf_llm_usage *u);
/* The table's date and source note ("2026-12-01", "..."), for reports and --help. */
const char *kf_prices_as_of(const struct kf_prices *p);

/* ---- prompts -------------------------------------------------------------------------------- */

enum kf_edit_mode {
	KF_EDIT_FULL = 0, /* the reply is a whole kernel file */
	KF_EDIT_DIFF = 1, /* the reply is SEARCH/REPLACE edits against the parent */
};

/* A knowledge-base example (the KB fills these from kf_kb_examples_for). Borrowed strings. */
struct kf_prompt_example {
	const char *task_name; /* may be NULL */
	const char *source;    /* the kernel file */
	double speedup;        /* over the reference; 0: unknown */
	const char *tags;      /* "tiling,shared-memory" or NULL */
	const char *change;    /* what changed against its parent, or NULL */
};

/* What happened to the parent (all optional). Correctness first: the profiler text is shown only when
 * the parent is correct. */
struct kf_prompt_feedback {
	bool correct;                         /* the parent passed verification */
	const char *verdict;                  /* "compile_error", "wrong_result", ... or NULL */
	const char *compile_log;              /* shown as a bounded excerpt */
	const char *failing_check;            /* "max abs error 0.51 at y[3,7] (atol 1e-5)" */
	const struct kf_shape *failing_shape; /* shown only when it is not a hidden shape */
	double max_error;                     /* < 0: unknown */
	const char *profile_text; /* the profiler's compact text: time, speedup with interval, bound
				     fraction, occupancy, registers, spills */
	int edits_unmatched;      /* last reply's SEARCH/REPLACE blocks that did not match */
	int edits_total;
};

/* One earlier attempt of the parent's lineage (the run's memory): what the model said it changed, and
 * what became of it. Borrowed strings. */
struct kf_prompt_attempt {
	int64_t id;            /* candidate id; 0: the reply never became a candidate */
	int64_t parent_id;     /* the kernel it was made from (0: the reference) */
	const char *rationale; /* the model's one line, or NULL */
	const char *verdict;   /* "pass", "wrong_output", ..., "unusable" */
	double speedup;        /* correct ones; 0 otherwise */
	const char *note;      /* one line: why it failed, what did not apply; may be NULL */
};

/* A lesson of an earlier run (kf_kb_lessons_for). Borrowed strings. */
struct kf_prompt_lesson {
	const char *task_name; /* NULL: the same task */
	const char *verdict, *tried, *outcome;
};

/* The reference at the first timing shape, and the speed of light there (both optional). */
struct kf_prompt_baseline {
	const char *shape; /* "N=16777216" */
	double ref_ns;     /* measured median of the reference; 0: not measured */
	const char *clock; /* "gpu" or "cpu": what ref_ns was measured with */
	double floor_ns;   /* roofline floor on the target (its peaks); 0: unknown */
	const char *bound; /* "memory" or "compute" */
	const char *peaks; /* the peaks' source, "NVIDIA H100 SXM (table)" */
	/* The task's baselines (a tuned kernel, a library call), timed once at the same shape and clock
	 * beside the reference: part of the target ("cuBLAS takes X us here"). Borrowed strings. */
	size_t n_baselines;
	struct kf_prompt_vs {
		const char *name;   /* "cublas.gemm", "baseline.cu" */
		bool library;       /* a library call, else a kernel file shipped with the task */
		double median_ns;   /* its median at the shape; 0: not timed (see status) */
		double ratio;       /* its time / the reference's, from the same session; 0: not timed */
		const char *status; /* "timed", "unavailable", "rejected", "failed", "skipped" */
	} baselines[8];
};

struct kf_prompt_input {
	const struct kf_task *task;          /* required */
	const char *reference_source;        /* the reference kernel file text (required) */
	const struct kf_device_info *device; /* target; NULL: use arch */
	const char *arch;                    /* "sm_90" when no device; NULL: "sm_90" */
	const char *clock;                   /* "gpu" or "cpu": how this run times kernels; NULL: "gpu" */
	size_t n_examples;
	const struct kf_prompt_example *examples;
	const struct kf_prompt_baseline *baseline; /* NULL: no "where the time goes" section */
	const char *strategy;                      /* "NAME: what and why" the prompt follows, or NULL */
	size_t n_history;                          /* the lineage's earlier attempts, oldest first */
	const struct kf_prompt_attempt *history;
	size_t n_best; /* the run's best kernels besides the parent (the first with its source) */
	const struct kf_prompt_example *best;
	const struct kf_prompt_example *inspiration; /* one kernel of another approach, or NULL */
	size_t n_lessons;
	const struct kf_prompt_lesson *lessons;
	const char *variant;       /* a line that tells this prompt from one in flight, or NULL */
	const char *parent_source; /* NULL: first attempt */
	const struct kf_prompt_feedback *feedback; /* about the parent; may be NULL */
	enum kf_edit_mode mode;                    /* DIFF needs a parent, else FULL is used */
};

/* Renders the system and user messages from the templates (embedded agent/prompts/NAME.txt; the folder
 * kf_prompt_dir() overrides single files). Hidden shapes never appear. Appends to system and user;
 * *user_static (may be NULL) gets the length of the user message's prefix that is the same in every
 * request of a run (task, target facts, playbook, reference: the part a prompt cache can keep). */
enum kf_status kf_prompt_build(const struct kf_prompt_input *in, struct kf_buf *system, struct kf_buf *user,
			       size_t *user_static, struct kf_err *err);

/* The strategy call's messages: the same system and static task text, then the request for k distinct
 * strategies (agent/prompts/strategies.txt). */
enum kf_status kf_prompt_build_strategies(const struct kf_prompt_input *in, int k, struct kf_buf *system,
					  struct kf_buf *user, size_t *user_static, struct kf_err *err);

/* The playbook template for a task category ("gemm_fused" -> "playbook_gemm.txt"). */
const char *kf_prompt_playbook(const char *category);

/* The template renderer, exposed for tests: {{name}} is replaced by the value (verbatim, never
 * re-expanded), {{#name}}...{{/name}} is kept when the value is non-empty, {{^name}}...{{/name}} when it
 * is empty. An unknown name or an unbalanced section is KF_ERR_INVALID. */
struct kf_tmpl_var {
	const char *name;
	const char *value; /* NULL counts as empty */
};
enum kf_status kf_tmpl_render(const char *tmpl, size_t len, const struct kf_tmpl_var *vars, size_t n_vars,
			      struct kf_buf *out, struct kf_err *err);
/* The text of a template (embedded or overridden); NULL with err set when missing. Lives until exit
 * or the next call for the same name. */
const char *kf_prompt_template(const char *name, size_t *len, struct kf_err *err);
/* The folder whose files override the built-in templates: dir (NULL or "": back to $KFORGE_PROMPTS).
 * Set it before the first template is read (a config file's optimize.prompts, docs/config.md). */
void kf_prompt_set_dir(const char *dir);
/* The folder in force (kf_prompt_set_dir's, else $KFORGE_PROMPTS), NULL when none: the built-in ones. */
const char *kf_prompt_dir(void);

/* ---- reply parsing -------------------------------------------------------------------------- */

#define KF_PARSE_MAX_REPLY (2u << 20) /* longer replies are a parse_error (no kernel is 2 MiB) */

struct kf_parse_result {
	char *source; /* the candidate kernel file (malloc'd), or NULL on a parse error */
	size_t source_len;
	bool used_edits;   /* source came from SEARCH/REPLACE edits on the parent */
	int edits_total;   /* SEARCH/REPLACE blocks found */
	int edits_applied; /* of which matched the parent (exactly or by whitespace-tolerant lines) */
	int edits_fuzzy;   /* of the applied, matched only by the whitespace-tolerant line match */
	int edits_unmatched;
	bool need_rewrite; /* edits were given and none applied: ask for a full rewrite */
	char reason[256];  /* why it is a parse_error ("" when ok); notes on partial edits otherwise */
};

/* Turns a reply into a kernel source. parent may be NULL (edits then cannot apply). Returns KF_OK with
 * out->source set, or KF_ERR_PARSE with out->reason (the candidate is recorded as parse_error); other
 * errors only for NOMEM/internal failures. Never crashes on any input. */
enum kf_status kf_parse_reply(const char *reply, size_t len, const char *finish_reason, const char *parent,
			      struct kf_parse_result *out, struct kf_err *err);
void kf_parse_result_release(struct kf_parse_result *r);

/* The model's one-line rationale: a "Change:" (or "Rationale:", "Idea:") line outside code blocks, else
 * the first sentence of prose before the code; "" when there is none. Bounded by n, control bytes
 * dropped. */
void kf_parse_rationale(const char *reply, size_t len, char *out, size_t n);

/* A proposed strategy: "NAME: what and why" (one line, bounded). */
struct kf_parse_strategy {
	char name[64];
	char text[320];
};
/* The numbered "1. NAME: text" lines of a strategy reply, up to max, duplicates (by name) dropped;
 * returns how many were found. */
int kf_parse_strategies(const char *reply, size_t len, struct kf_parse_strategy *out, int max);

/* Applies SEARCH/REPLACE blocks found in text to parent; counts in out, new source in out->source
 * (a copy of parent when nothing applied). Exposed for tests and for the search's own use. */
enum kf_status kf_parse_apply_edits(const char *text, size_t len, const char *parent,
				    struct kf_parse_result *out, struct kf_err *err);

#endif
