/* kforge-config/1 files (agent/config.h, docs/config.md): each key of "optimize" is checked here for its
 * type and range, so an error names the file and the key rather than a flag the user never typed; the
 * values are kept spelt as the flags take them, and the command line's own parsing then applies them. */
#include "agent/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "suggest.h"

enum kind { K_STRING, K_CHOICE, K_INT, K_NUMBER, K_BOOL };

/* Each key: its type and range (integers and numbers: lo..hi, lo excluded when lo_open; choices: the
 * words a flag takes, comma-separated). The ranges are those of the flags (cli/cmd_optimize.c). */
static const struct key_def {
	const char *name;
	enum kind kind;
	double lo, hi;
	bool lo_open;
	const char *choices;
} keys[KF_CONFIG_N_KEYS] = {
    [KF_CONFIG_STRATEGY] = {"strategy", K_CHOICE, 0, 0, false, "schedule,evo,mcts"},
    [KF_CONFIG_PROVIDER] = {"provider", K_CHOICE, 0, 0, false, "openai,anthropic,replay"},
    [KF_CONFIG_MODEL] = {"model", K_STRING, 0, 0, false, NULL},
    [KF_CONFIG_BASE_URL] = {"base_url", K_STRING, 0, 0, false, NULL},
    [KF_CONFIG_MAX_TOKENS] = {"max_tokens", K_INT, 1, 1000000, false, NULL},
    [KF_CONFIG_REASONING_EFFORT] = {"reasoning_effort", K_CHOICE, 0, 0, false,
				    "none,minimal,low,medium,high,xhigh,max"},
    [KF_CONFIG_THINKING_BUDGET] = {"thinking_budget", K_INT, 1024, 1000000, false, NULL},
    [KF_CONFIG_TEMPERATURE] = {"temperature", K_NUMBER, 0, 2, false, NULL},
    [KF_CONFIG_TIMEOUT_MS] = {"timeout_ms", K_INT, 100, 86400000, false, NULL},
    [KF_CONFIG_BUDGET_CALLS] = {"budget_calls", K_INT, 1, 1000000, false, NULL},
    [KF_CONFIG_BUDGET_USD] = {"budget_usd", K_NUMBER, 0, HUGE_VAL, true, NULL},
    [KF_CONFIG_TIME_LIMIT_S] = {"time_limit_s", K_NUMBER, 0, HUGE_VAL, true, NULL},
    [KF_CONFIG_CONCURRENCY] = {"concurrency", K_INT, 1, 64, false, NULL},
    [KF_CONFIG_BACKEND] = {"backend", K_CHOICE, 0, 0, false, "auto,cpu,cuda"},
    [KF_CONFIG_SEED] = {"seed", K_INT, 1, 9007199254740992.0 /* 2^53: a JSON number holds it exactly */,
			false, NULL},
    [KF_CONFIG_KEEP_BEST] = {"keep_best", K_BOOL, 0, 0, false, NULL},
    [KF_CONFIG_PROMPTS] = {"prompts", K_STRING, 0, 0, false, NULL},
};

const char *kf_config_key_name(enum kf_config_key k)
{
	return (unsigned)k < KF_CONFIG_N_KEYS ? keys[k].name : NULL;
}

const char *kf_config_source_name(enum kf_config_source s)
{
	switch (s) {
	case KF_CONFIG_FROM_ENV:
		return "env";
	case KF_CONFIG_FROM_FILE:
		return "file";
	case KF_CONFIG_FROM_FLAG:
		return "flag";
	default:
		return "default";
	}
}

void kf_config_init(struct kf_config *c)
{
	memset(c, 0, sizeof(*c));
	c->search = kf_search_params_default();
}

void kf_config_release(struct kf_config *c)
{
	free(c->path);
	for (size_t i = 0; i < KF_CONFIG_N_KEYS; i++)
		free(c->value[i]);
	kf_config_init(c);
}

/* "unknown key 'x'; did you mean 'y'?" among names (n of them) and extra (may be NULL). */
static enum kf_status unknown_key(struct kf_jpath *p, const char *key, const char *const *names, size_t n,
				  const char *extra, struct kf_err *err)
{
	struct kf_suggest g;
	kf_suggest_init(&g);
	for (size_t i = 0; i < n; i++)
		kf_suggest_try(&g, key, names[i]);
	if (extra)
		kf_suggest_try(&g, key, extra);
	if (g.best)
		return kf_jpath_err(p, err, KF_ERR_INVALID, "unknown key '%s'; did you mean '%s'?", key,
				    g.best);
	return kf_jpath_err(p, err, KF_ERR_INVALID, "unknown key '%s'", key);
}

/* What a value must be, for messages: "an integer 1..1000000", "a number > 0", "one of evo, mcts". */
static void expected(const struct key_def *d, char *buf, size_t n)
{
	switch (d->kind) {
	case K_STRING:
		snprintf(buf, n, "a non-empty string");
		break;
	case K_BOOL:
		snprintf(buf, n, "true or false");
		break;
	case K_INT:
		snprintf(buf, n, "an integer %.0f..%.0f", d->lo, d->hi);
		break;
	case K_NUMBER:
		if (isinf(d->hi))
			snprintf(buf, n, "a number > %g", d->lo);
		else
			snprintf(buf, n, "a number %g..%g", d->lo, d->hi);
		break;
	case K_CHOICE: {
		size_t len = (size_t)snprintf(buf, n, "one of ");
		for (const char *s = d->choices; *s && len + 2 < n; s++)
			len += (size_t)snprintf(buf + len, n - len, *s == ',' ? ", " : "%c", *s);
		break;
	}
	}
}

static bool is_choice(const char *choices, const char *s)
{
	size_t n = strlen(s);
	for (const char *w = choices; *w;) {
		const char *e = strchr(w, ',');
		size_t wl = e ? (size_t)(e - w) : strlen(w);
		if (wl == n && !strncmp(w, s, n))
			return true;
		if (!e)
			break;
		w = e + 1;
	}
	return false;
}

/* The value of key d as its flag spells it (malloc'd), or NULL with err set ("expected ..., got ..."). */
static char *key_value(const struct key_def *d, const cJSON *v, struct kf_jpath *p, struct kf_err *err)
{
	char buf[64];
	bool ok = false;
	switch (d->kind) {
	case K_STRING:
		ok = cJSON_IsString(v) && v->valuestring[0];
		break;
	case K_CHOICE:
		ok = cJSON_IsString(v) && is_choice(d->choices, v->valuestring);
		break;
	case K_BOOL:
		ok = cJSON_IsBool(v);
		break;
	case K_INT:
	case K_NUMBER: {
		double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
		ok = isfinite(x) && (d->kind == K_NUMBER || x == floor(x)) &&
		     (d->lo_open ? x > d->lo : x >= d->lo) && x <= d->hi;
		break;
	}
	}
	if (!ok) {
		char want[96], got[64];
		char *text = cJSON_PrintUnformatted(v);
		snprintf(got, sizeof(got), "%s", text ? text : kf_json_type_name(v));
		free(text);
		expected(d, want, sizeof(want));
		kf_jpath_err(p, err, KF_ERR_INVALID, "expected %s, got %s", want, got);
		return NULL;
	}
	char *out;
	if (d->kind == K_STRING || d->kind == K_CHOICE) {
		out = kf_strdup(v->valuestring);
	} else {
		if (d->kind == K_BOOL)
			snprintf(buf, sizeof(buf), "%s", cJSON_IsTrue(v) ? "true" : "false");
		else if (d->kind == K_INT)
			snprintf(buf, sizeof(buf), "%lld", (long long)v->valuedouble);
		else
			snprintf(buf, sizeof(buf), "%.17g",
				 v->valuedouble); /* strtod reads back the same double */
		out = kf_strdup(buf);
	}
	if (!out)
		kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	return out;
}

/* A relative prompts folder is relative to the file's folder, not to where kforge runs. */
static char *resolve_dir(const char *file, const char *dir)
{
	const char *slash = strrchr(file, '/');
	if (dir[0] == '/' || !slash)
		return kf_strdup(dir);
	size_t n = (size_t)(slash - file) + 1 + strlen(dir) + 1;
	char *out = malloc(n);
	if (out)
		snprintf(out, n, "%.*s/%s", (int)(slash - file), file, dir);
	return out;
}

static enum kf_status read_optimize(const cJSON *o, struct kf_config *c, struct kf_jpath *p,
				    struct kf_err *err)
{
	const char *names[KF_CONFIG_N_KEYS];
	for (size_t i = 0; i < KF_CONFIG_N_KEYS; i++)
		names[i] = keys[i].name;
	for (const cJSON *v = o->child; v; v = v->next) {
		const char *key = v->string ? v->string : "";
		enum kf_status st = KF_OK;
		size_t i = 0, mark;
		if (!strcmp(key, "search")) {
			mark = kf_jpath_push_key(p, "search");
			st = kf_search_params_parse(v, &c->search, &c->search_set, p, err);
			kf_jpath_pop(p, mark);
			if (st)
				return st;
			continue;
		}
		while (i < KF_CONFIG_N_KEYS && strcmp(key, keys[i].name))
			i++;
		if (i == KF_CONFIG_N_KEYS)
			return unknown_key(p, key, names, KF_CONFIG_N_KEYS, "search", err);
		mark = kf_jpath_push_key(p, key);
		c->value[i] = key_value(&keys[i], v, p, err);
		kf_jpath_pop(p, mark);
		if (!c->value[i])
			return err->code;
		if (i == KF_CONFIG_PROMPTS) {
			char *dir = resolve_dir(c->path, c->value[i]);
			free(c->value[i]);
			if (!(c->value[i] = dir))
				return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
	}
	return KF_OK;
}

enum kf_status kf_config_read(const char *path, struct kf_config *c, struct kf_err *err)
{
	static const char *const top[] = {"format", "optimize"};
	cJSON *root = NULL;
	struct kf_jpath p;
	const char *fmt = NULL;
	const cJSON *o = NULL;
	enum kf_status st;

	kf_config_release(c);
	if ((st = kf_json_read_file(path, 0, &root, NULL, err)))
		return st;
	if (!(c->path = kf_strdup(path))) {
		cJSON_Delete(root);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	kf_jpath_init(&p, c->path);
	if (!cJSON_IsObject(root)) {
		st = kf_jpath_err(&p, err, KF_ERR_INVALID, "expected an object, got %s",
				  kf_json_type_name(root));
		goto out;
	}
	for (const cJSON *v = root->child; v && !st; v = v->next)
		if (strcmp(v->string, "format") && strcmp(v->string, "optimize"))
			st = unknown_key(&p, v->string, top, KF_ARRAY_SIZE(top), NULL, err);
	if (st || (st = kf_json_get_string(root, "format", true, &fmt, NULL, &p, err)))
		goto out;
	if (strcmp(fmt, KF_CONFIG_FORMAT)) {
		size_t mark = kf_jpath_push_key(&p, "format");
		st = kf_jpath_err(&p, err, KF_ERR_INVALID, "expected \"%s\", got \"%s\"", KF_CONFIG_FORMAT,
				  fmt);
		kf_jpath_pop(&p, mark);
		goto out;
	}
	if ((st = kf_json_get_object(root, "optimize", false, &o, &p, err)) || !o)
		goto out;
	size_t mark = kf_jpath_push_key(&p, "optimize");
	st = read_optimize(o, c, &p, err);
	kf_jpath_pop(&p, mark);
out:
	cJSON_Delete(root);
	if (st)
		kf_config_release(c);
	return st;
}

enum kf_status kf_config_load(const char *flag, struct kf_config *c, struct kf_err *err)
{
	kf_config_release(c);
	if (flag && !strcmp(flag, "none"))
		return KF_OK;
	if (!flag && access(KF_CONFIG_DEFAULT_FILE, F_OK))
		return KF_OK;
	return kf_config_read(flag ? flag : KF_CONFIG_DEFAULT_FILE, c, err);
}

const char *kf_config_resolve(const struct kf_config *c, enum kf_config_key k, const char *flag,
			      const char *env_var, enum kf_config_source *src)
{
	enum kf_config_source from = KF_CONFIG_FROM_DEFAULT;
	const char *v = NULL, *env = env_var ? getenv(env_var) : NULL;
	if (flag) {
		v = flag;
		from = KF_CONFIG_FROM_FLAG;
	} else if ((unsigned)k < KF_CONFIG_N_KEYS && c && c->value[k]) {
		v = c->value[k];
		from = KF_CONFIG_FROM_FILE;
	} else if (env && env[0]) {
		v = env;
		from = KF_CONFIG_FROM_ENV;
	}
	if (src)
		*src = from;
	return v;
}
