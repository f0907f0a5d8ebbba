/* The price table behind the client's cost accounting: built in from agent/data/prices.json, extended or
 * overridden by a user file ($KFORGE_PRICES) in the same format. Prices are USD per 1M tokens. */
#include "agent.h"
#include "embed.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#define PRICES_MAX_BYTES (1u << 20)

struct price {
	char *key;   /* without the trailing '*' */
	bool prefix; /* the key ended in '*' */
	double in_per_mtok, out_per_mtok;
};

struct kf_prices {
	size_t n, cap;
	struct price *v;
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

static enum kf_status prices_put(struct kf_prices *p, const char *name, double in, double out)
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
			return KF_OK;
		}
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 32;
		struct price *nv = realloc(p->v, ncap * sizeof(*nv));
		if (!nv) {
			free(key);
			return KF_ERR_NOMEM;
		}
		p->v = nv;
		p->cap = ncap;
	}
	p->v[p->n++] = (struct price){key, prefix, in, out};
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
	cJSON_ArrayForEach(m, models)
	{
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(m, "input");
		const cJSON *out = cJSON_GetObjectItemCaseSensitive(m, "output");
		if (!m->string || !m->string[0] || !cJSON_IsNumber(in) || !cJSON_IsNumber(out) ||
		    in->valuedouble < 0 || out->valuedouble < 0) {
			st = kf_err_set(err, KF_ERR_INVALID,
					"'%s': models.'%s': expected {\"input\": USD, \"output\": USD} (per "
					"1M tokens, >= 0)",
					what, m->string ? m->string : "");
			break;
		}
		st = prices_put(p, m->string, in->valuedouble, out->valuedouble);
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

bool kf_prices_cost(const struct kf_prices *p, const char *model, int64_t tokens_in, int64_t tokens_out,
		    double *usd)
{
	const struct price *best = NULL;
	size_t best_len = 0;

	*usd = 0;
	if (!p || !model)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		const struct price *e = &p->v[i];
		size_t kl = strlen(e->key);
		if (!e->prefix) {
			if (!strcmp(e->key, model)) {
				best = e;
				break; /* exact beats any prefix */
			}
		} else if (!strncmp(e->key, model, kl) && (!best || kl > best_len)) {
			best = e;
			best_len = kl;
		}
	}
	if (!best)
		return false;
	*usd = ((double)(tokens_in > 0 ? tokens_in : 0) * best->in_per_mtok +
		(double)(tokens_out > 0 ? tokens_out : 0) * best->out_per_mtok) /
	       1e6;
	return true;
}
