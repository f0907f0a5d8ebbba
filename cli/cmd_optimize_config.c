/* kforge optimize --print-config: the configuration a run would start with, as JSON on stdout
 * (docs/config.md): for each key of a config file's "optimize" object its value in force and where it came
 * from, "flag", "file", "env" or "default"; null where the built-in default is decided at run time (the
 * model's token limit, a random seed, no USD budget). Nothing is run, no API key is needed. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmd_optimize.h"
#include "json.h"

/* {"value": V, "source": S} under key in obj; v NULL: null. Takes v. */
static void put(cJSON *obj, const char *key, cJSON *v, enum kf_config_source src)
{
	cJSON *e = cJSON_AddObjectToObject(obj, key);
	if (!e) {
		cJSON_Delete(v);
		return;
	}
	cJSON_AddItemToObject(e, "value", v ? v : cJSON_CreateNull());
	cJSON_AddStringToObject(e, "source", kf_config_source_name(src));
}

static cJSON *str_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : NULL;
}

static cJSON *num_or_null(double v)
{
	return v > 0 ? cJSON_CreateNumber(v) : NULL;
}

int kf_cli_optimize_print_config(const struct kf_optimize_opts *o, const struct kf_config *cfg,
				 const enum kf_config_source *src, bool have_provider, const char *backend,
				 const char *prompts)
{
	const struct kf_llm_config *l = &o->llm;
	struct kf_err err = KF_ERR_INIT;
	enum kf_config_source base_src = src[KF_CONFIG_BASE_URL];
	const char *base_url = l->base_url;
	if (!base_url && have_provider && l->provider != KF_LLM_REPLAY) {
		/* what the client takes when neither the flag nor the file says */
		const char *env =
		    getenv(l->provider == KF_LLM_ANTHROPIC ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
		if (env && env[0]) {
			base_url = env;
			base_src = KF_CONFIG_FROM_ENV;
		}
	}
	cJSON *j = cJSON_CreateObject(), *op, *se;
	cJSON_AddStringToObject(j, "format", KF_CONFIG_FORMAT);
	cJSON_AddItemToObject(j, "file", cfg->path ? cJSON_CreateString(cfg->path) : cJSON_CreateNull());
	op = cJSON_AddObjectToObject(j, "optimize");
	put(op, "strategy", cJSON_CreateString(kf_strategy_name(o->strategy)), src[KF_CONFIG_STRATEGY]);
	put(op, "provider", have_provider ? cJSON_CreateString(kf_llm_provider_name(l->provider)) : NULL,
	    src[KF_CONFIG_PROVIDER]);
	put(op, "model", str_or_null(l->model), src[KF_CONFIG_MODEL]);
	put(op, "base_url", str_or_null(base_url), base_src);
	put(op, "max_tokens", num_or_null(l->max_tokens), src[KF_CONFIG_MAX_TOKENS]);
	put(op, "reasoning_effort", str_or_null(l->reasoning_effort), src[KF_CONFIG_REASONING_EFFORT]);
	put(op, "thinking_budget", num_or_null(l->thinking_budget), src[KF_CONFIG_THINKING_BUDGET]);
	put(op, "temperature", l->temperature_set ? cJSON_CreateNumber(l->temperature) : NULL,
	    src[KF_CONFIG_TEMPERATURE]);
	put(op, "timeout_ms", num_or_null(l->timeout_ms), src[KF_CONFIG_TIMEOUT_MS]);
	put(op, "budget_calls",
	    cJSON_CreateNumber(o->budget_calls > 0 ? (double)o->budget_calls : KF_OPTIMIZE_BUDGET_CALLS),
	    src[KF_CONFIG_BUDGET_CALLS]);
	put(op, "budget_usd", num_or_null(o->budget_usd), src[KF_CONFIG_BUDGET_USD]);
	put(op, "time_limit_s", num_or_null(o->time_limit_s), src[KF_CONFIG_TIME_LIMIT_S]);
	put(op, "concurrency", cJSON_CreateNumber(l->concurrency > 0 ? l->concurrency : KF_LLM_CONCURRENCY),
	    src[KF_CONFIG_CONCURRENCY]);
	put(op, "backend", cJSON_CreateString(backend ? backend : "auto"), src[KF_CONFIG_BACKEND]);
	put(op, "seed", o->seed ? cJSON_CreateNumber((double)o->seed) : NULL, src[KF_CONFIG_SEED]);
	put(op, "keep_best", cJSON_CreateBool(o->keep_best), src[KF_CONFIG_KEEP_BEST]);
	put(op, "prompts", str_or_null(prompts), src[KF_CONFIG_PROMPTS]);
	se = cJSON_AddObjectToObject(op, "search");
	for (size_t i = 0; i < KF_SEARCH_N_PARAMS; i++)
		put(se, kf_search_param_name(i), cJSON_CreateNumber(kf_search_param_get(&cfg->search, i)),
		    cfg->search_set >> i & 1u ? KF_CONFIG_FROM_FILE : KF_CONFIG_FROM_DEFAULT);
	enum kf_status st = kf_json_fput(j, true, stdout, &err);
	cJSON_Delete(j);
	if (st) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_INTERNAL;
	}
	return KF_EXIT_OK;
}
