/* The price table behind the client's cost accounting: built in from agent/data/prices.json (which names
 * its sources and date), extended or overridden by a user file ($KFORGE_PRICES) in the same format. Prices
 * are USD per 1M tokens: input, output, and cached input / cache writes where they are billed apart. */
#include "llm_int.h"
#include "embed.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRICES_MAX_BYTES (1u << 20)

struct price {
	char *key;   /* without the trailing '*' */
	bool prefix; /* the key ended in '*' */
	double in_per_mtok, out_per_mtok;
	double cached_per_mtok, write_per_mtok; /* < 0: billed at the input rate */
};

struct kf_prices {
	size_t n, cap;
	struct price *v;
	char as_of[64];
};

void kf_prices_free(struct kf_prices *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].key);
	free(p->v);
	free(p);
}

static enum kf_status prices_put(struct kf_prices *p, const char *name, double in, double out, double cached,
				 double write)
{
	size_t klen = strlen(name);
	bool prefix = klen && name[klen - 1] == '*';
	char *key = kf_strndup(name, prefix ? klen - 1 : klen);

	if (!key)
		return KF_ERR_NOMEM;
	/* A later table (the user's) replaces an entry of the same key and kind. */
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].prefix == prefix && !strcmp(p->v[i].key, key)) {
			free(key);
			p->v[i].in_per_mtok = in;
			p->v[i].out_per_mtok = out;
			p->v[i].cached_per_mtok = cached;
			p->v[i].write_per_mtok = write;
			return KF_OK;
		}
	struct price *nv = kf_grow(p->v, p->n, &p->cap, sizeof(*p->v), 32);
	if (!nv) {
		free(key);
		return KF_ERR_NOMEM;
	}
	p->v = nv;
	p->v[p->n++] = (struct price){key, prefix, in, out, cached, write};
	return KF_OK;
}

static enum kf_status prices_parse(struct kf_prices *p, const char *what, const char *text, size_t len,
				   struct kf_err *err)
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
	{
		const cJSON *asof = cJSON_GetObjectItemCaseSensitive(root, "as_of");
		if (cJSON_IsString(asof))
			snprintf(p->as_of, sizeof(p->as_of), "%s", asof->valuestring);
	}
	cJSON_ArrayForEach(m, models)
	{
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(m, "input");
		const cJSON *out = cJSON_GetObjectItemCaseSensitive(m, "output");
		const cJSON *ca = cJSON_GetObjectItemCaseSensitive(m, "cached_input");
		const cJSON *wr = cJSON_GetObjectItemCaseSensitive(m, "cache_write");
		if (!m->string || !m->string[0] || !cJSON_IsNumber(in) || !cJSON_IsNumber(out) ||
		    in->valuedouble < 0 || out->valuedouble < 0 || (ca && !cJSON_IsNumber(ca)) ||
		    (wr && !cJSON_IsNumber(wr)) || (ca && ca->valuedouble < 0) ||
		    (wr && wr->valuedouble < 0)) {
			st = kf_err_set(err, KF_ERR_INVALID,
					"'%s': models.'%s': expected {\"input\": USD, \"output\": USD} and "
					"optionally \"cached_input\", \"cache_write\" (per 1M tokens, >= 0)",
					what, m->string ? m->string : "");
			break;
		}
		st = prices_put(p, m->string, in->valuedouble, out->valuedouble, ca ? ca->valuedouble : -1,
				wr ? wr->valuedouble : -1);
		if (st) {
			kf_err_set(err, st, "out of memory loading prices");
			break;
		}
	}
	cJSON_Delete(root);
	return st;
}

enum kf_status kf_prices_load(const char *user_path, struct kf_prices **out, struct kf_err *err)
{
	struct kf_prices *p = calloc(1, sizeof(*p));
	const char *builtin;
	size_t blen = 0;
	enum kf_status st;

	*out = NULL;
	if (!p)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	builtin = kf_embed_find("agent/data/prices.json", &blen);
	if (builtin) {
		st = prices_parse(p, "agent/data/prices.json", builtin, blen, err);
		if (st)
			goto fail;
	}
	if (!user_path) {
		user_path = getenv("KFORGE_PRICES");
		if (user_path && !user_path[0])
			user_path = NULL;
	}
	if (user_path) {
		struct kf_buf b = KF_BUF_INIT(PRICES_MAX_BYTES);
		st = kf_buf_read_file(&b, user_path, err);
		if (!st)
			st = prices_parse(p, user_path, b.data, b.len, err);
		kf_buf_release(&b);
		if (st)
			goto fail;
	}
	*out = p;
	return KF_OK;
fail:
	kf_prices_free(p);
	return st;
}

const char *kf_prices_as_of(const struct kf_prices *p)
{
	return p && p->as_of[0] ? p->as_of : "";
}

static double nonneg(int64_t v)
{
	return v > 0 ? (double)v : 0;
}

/* Input tokens split into fresh, cache reads and cache writes; the counts are the client's (tokens_in
 * includes the other two), clamped so a server's odd numbers never give a negative cost. */
static double cost(double in, double out, double cached, double write, const struct kf_llm_usage *u)
{
	double cr = nonneg(u->tokens_cached), cw = nonneg(u->tokens_cache_write), all = nonneg(u->tokens_in);
	double fresh = all - cr - cw;
	if (fresh < 0)
		fresh = 0;
	return (fresh * in + cr * (cached >= 0 ? cached : in) + cw * (write >= 0 ? write : in) +
		nonneg(u->tokens_out) * out) /
	       1e6;
}

double kf_prices_cost_at(double in_per_mtok, double out_per_mtok, const struct kf_llm_usage *u)
{
	return cost(in_per_mtok, out_per_mtok, -1, -1, u);
}

bool kf_prices_cost(const struct kf_prices *p, const char *model, const struct kf_llm_usage *u, double *usd,
		    char *key, size_t n)
{
	const struct price *best = NULL;
	size_t best_score = 0;

	*usd = 0;
	if (key && n)
		key[0] = '\0';
	if (!p || !model)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		size_t s = kf_llm_key_score(p->v[i].key, p->v[i].prefix, model);
		if (s > best_score) {
			best_score = s;
			best = &p->v[i];
		}
	}
	if (!best)
		return false;
	*usd = cost(best->in_per_mtok, best->out_per_mtok, best->cached_per_mtok, best->write_per_mtok, u);
	if (key && n)
		snprintf(key, n, "%s%s", best->key, best->prefix ? "*" : "");
	return true;
}
