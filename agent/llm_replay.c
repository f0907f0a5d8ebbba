/* Provider "replay": serves the LLM responses of an exported run (kforge kb export JSONL, format in
 * shared-decisions) in seq order, with their recorded tokens, cost and errors, and no network. */
#include "llm_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An export holds every prompt and reply of a run; a long run is tens of MiB. */
#define REPLAY_MAX_BYTES (1024u << 20)

struct replay_call {
	int64_t seq;
	char *response;
	char *error;
	char *request_id;
	char *model;
	char finish_reason[32];
	char failure[24];
	int64_t tokens_in, tokens_out, tokens_cached, tokens_cache_write, tokens_reasoning;
	double cost_usd;
	bool cost_known;
	double latency_ms;
};

struct kf_llm_replay {
	size_t n, next;
	struct replay_call *v;
};

void kf_llm_replay_free(struct kf_llm_replay *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->n; i++) {
		free(rp->v[i].response);
		free(rp->v[i].error);
		free(rp->v[i].request_id);
		free(rp->v[i].model);
	}
	free(rp->v);
	free(rp);
}

/* run_id may be written as a number or a string; compare its text. */
static void id_text(const cJSON *v, char *out, size_t n)
{
	if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(out, n, "%.0f", v->valuedouble);
	else
		snprintf(out, n, "%s", "");
}

static char *str_or_null(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? kf_strdup(v->valuestring) : NULL;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct replay_call *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static enum kf_status add_call(struct kf_llm_replay *rp, size_t *cap, const cJSON *o, const char *path,
			       size_t line, struct kf_err *err)
{
	const cJSON *seq = cJSON_GetObjectItemCaseSensitive(o, "seq");
	const cJSON *resp = cJSON_GetObjectItemCaseSensitive(o, "response");
	const cJSON *errv = cJSON_GetObjectItemCaseSensitive(o, "error");
	const cJSON *v;
	struct replay_call c = {0};

	if (!cJSON_IsNumber(seq) || seq->valuedouble < 0)
		return kf_err_set(err, KF_ERR_INVALID, "%s:%zu: llm_call: 'seq' must be a number >= 0", path,
				  line);
	if (!cJSON_IsString(resp) && !cJSON_IsNull(resp) && resp)
		return kf_err_set(err, KF_ERR_INVALID, "%s:%zu: llm_call: 'response' must be text or null",
				  path, line);
	c.seq = (int64_t)seq->valuedouble;
	c.response = kf_strdup(resp && cJSON_IsString(resp) ? resp->valuestring : "");
	c.error = cJSON_IsString(errv) ? kf_strdup(errv->valuestring) : NULL;
	c.request_id = str_or_null(o, "request_id");
	c.model = str_or_null(o, "model");
	v = cJSON_GetObjectItemCaseSensitive(o, "finish_reason");
	snprintf(c.finish_reason, sizeof(c.finish_reason), "%s", cJSON_IsString(v) ? v->valuestring : "");
	v = cJSON_GetObjectItemCaseSensitive(o, "tokens_in");
	c.tokens_in = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "tokens_out");
	c.tokens_out = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "tokens_cached");
	c.tokens_cached = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "tokens_cache_write");
	c.tokens_cache_write = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "tokens_reasoning");
	c.tokens_reasoning = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
	/* the failure kind decides whether a replayed error stops the run, as it did the recorded one */
	v = cJSON_GetObjectItemCaseSensitive(o, "failure");
	snprintf(c.failure, sizeof(c.failure), "%s", cJSON_IsString(v) ? v->valuestring : "");
	v = cJSON_GetObjectItemCaseSensitive(o, "cost_usd");
	c.cost_known = cJSON_IsNumber(v);
	c.cost_usd = c.cost_known ? v->valuedouble : 0;
	v = cJSON_GetObjectItemCaseSensitive(o, "latency_ms");
	c.latency_ms = cJSON_IsNumber(v) ? v->valuedouble : 0;
	if (!c.response || (cJSON_IsString(errv) && !c.error)) {
		free(c.response);
		free(c.error);
		free(c.request_id);
		free(c.model);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory reading '%s'", path);
	}
	struct replay_call *nv = kf_grow(rp->v, rp->n, cap, sizeof(*rp->v), 64);
	if (!nv) {
		free(c.response);
		free(c.error);
		free(c.request_id);
		free(c.model);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory reading '%s'", path);
	}
	rp->v = nv;
	rp->v[rp->n++] = c;
	return KF_OK;
}

enum kf_status kf_llm_replay_load(const char *path, const char *run, struct kf_llm_replay **out,
				  struct kf_err *err)
{
	struct kf_buf b = KF_BUF_INIT(REPLAY_MAX_BYTES);
	struct kf_llm_replay *rp;
	char want[128] = "", id[128];
	size_t cap = 0, line = 0;
	enum kf_status st;
	char *p, *nl;
	bool header = false;

	*out = NULL;
	if (!path || !path[0])
		return kf_err_set(err, KF_ERR_INVALID, "provider 'replay' needs a file (--replay FILE)");
	st = kf_buf_read_file(&b, path, err);
	if (st) {
		kf_buf_release(&b);
		return st;
	}
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		kf_buf_release(&b);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	if (run)
		snprintf(want, sizeof(want), "%s", run);
	for (p = b.data; p < b.data + b.len; p = nl + 1) {
		cJSON *o;
		const cJSON *type;
		nl = memchr(p, '\n', (size_t)(b.data + b.len - p));
		if (!nl)
			nl = b.data + b.len;
		line++;
		if (nl == p || (nl == p + 1 && *p == '\r'))
			continue;
		o = cJSON_ParseWithLength(p, (size_t)(nl - p));
		if (!o || !cJSON_IsObject(o)) {
			cJSON_Delete(o);
			st = kf_err_set(err, KF_ERR_PARSE, "%s:%zu: not a JSON object", path, line);
			goto fail;
		}
		type = cJSON_GetObjectItemCaseSensitive(o, "type");
		if (!cJSON_IsString(type)) {
			cJSON_Delete(o);
			st = kf_err_set(err, KF_ERR_INVALID, "%s:%zu: line has no 'type'", path, line);
			goto fail;
		}
		if (!header) {
			const cJSON *ver = cJSON_GetObjectItemCaseSensitive(o, "version");
			if (strcmp(type->valuestring, "kforge-export") || !cJSON_IsNumber(ver)) {
				cJSON_Delete(o);
				st = kf_err_set(err, KF_ERR_INVALID,
						"%s:%zu: not a kforge export (the first line must be "
						"{\"type\":\"kforge-export\",...})",
						path, line);
				goto fail;
			}
			if (ver->valuedouble != 1) {
				cJSON_Delete(o);
				st = kf_err_set(err, KF_ERR_INVALID,
						"%s: export version %g is not supported (want 1)", path,
						ver->valuedouble);
				goto fail;
			}
			header = true;
		} else if (!strcmp(type->valuestring, "llm_call")) {
			id_text(cJSON_GetObjectItemCaseSensitive(o, "run_id"), id, sizeof(id));
			/* Without --run, serve the first run that has calls; an export may hold several runs.
			 */
			if (!want[0])
				snprintf(want, sizeof(want), "%s", id);
			if (!strcmp(id, want)) {
				st = add_call(rp, &cap, o, path, line, err);
				if (st) {
					cJSON_Delete(o);
					goto fail;
				}
			}
		}
		cJSON_Delete(o);
	}
	if (!header) {
		st = kf_err_set(err, KF_ERR_INVALID, "%s: empty file, not a kforge export", path);
		goto fail;
	}
	if (!rp->n) {
		st = kf_err_set(err, KF_ERR_INVALID, "%s: no llm_call lines%s%s%s", path,
				run ? " for run '" : "", run ? run : "", run ? "'" : "");
		goto fail;
	}
	qsort(rp->v, rp->n, sizeof(*rp->v), cmp_seq);
	for (size_t i = 1; i < rp->n; i++)
		if (rp->v[i].seq == rp->v[i - 1].seq) {
			st = kf_err_set(err, KF_ERR_INVALID,
					"%s: run '%s' has two llm_call lines with seq %lld", path, want,
					(long long)rp->v[i].seq);
			goto fail;
		}
	kf_buf_release(&b);
	*out = rp;
	return KF_OK;
fail:
	kf_buf_release(&b);
	kf_llm_replay_free(rp);
	return st;
}

bool kf_llm_replay_next(struct kf_llm_replay *rp, struct kf_llm_result *r)
{
	struct replay_call *c;

	if (rp->next >= rp->n)
		return false;
	c = &rp->v[rp->next++];
	/* Hand the strings over: each recorded call is served once. */
	free(r->text);
	r->text = c->response;
	r->text_len = strlen(c->response);
	c->response = NULL;
	snprintf(r->finish_reason, sizeof(r->finish_reason), "%s", c->finish_reason);
	r->tokens_in = c->tokens_in;
	r->tokens_out = c->tokens_out;
	r->tokens_cached = c->tokens_cached;
	r->tokens_cache_write = c->tokens_cache_write;
	r->tokens_reasoning = c->tokens_reasoning;
	r->cost_usd = c->cost_usd;
	r->cost_known = c->cost_known;
	r->latency_ms = c->latency_ms;
	r->attempts = 1;
	r->http_status = 0;
	snprintf(r->request_id, sizeof(r->request_id), "%s", c->request_id ? c->request_id : "");
	snprintf(r->model, sizeof(r->model), "%s", c->model ? c->model : "");
	if (c->error) {
		r->status = KF_ERR_HTTP;
		snprintf(r->error, sizeof(r->error), "replayed error: %s", c->error);
		snprintf(r->failure, sizeof(r->failure), "%s", c->failure[0] ? c->failure : KF_LLM_FAIL_HTTP);
		r->fatal = kf_llm_failure_fatal(r->failure);
	}
	return true;
}
