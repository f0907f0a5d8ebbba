/* kforge optimize --resume RUN: what the run recorded fills in every option the command line leaves out
 * (docs/spec/cli.md): the task, provider, model, base URL, strategy, backend, budgets, concurrency and out
 * folder. An explicit flag (or a config file's value) overrides and is said so; one that cannot continue
 * the run (another strategy, other search parameters, another task) is an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cmd_optimize.h"
#include "json.h"
#include "kb/kb.h"

struct recorded {
	bool found;
	char strategy[32], provider[32], model[256], backend[16];
	int64_t budget_calls;
	double budget_usd, budget_time_s;
	char *config;
};

static int run_cb(void *ctx, const struct kf_kb_run *r)
{
	struct recorded *x = ctx;
	x->found = true;
	snprintf(x->strategy, sizeof(x->strategy), "%s", r->strategy ? r->strategy : "");
	snprintf(x->provider, sizeof(x->provider), "%s", r->provider ? r->provider : "");
	snprintf(x->model, sizeof(x->model), "%s", r->model ? r->model : "");
	snprintf(x->backend, sizeof(x->backend), "%s", r->backend ? r->backend : "");
	x->budget_calls = r->budget_calls;
	x->budget_usd = r->budget_usd;
	x->budget_time_s = r->budget_time_s;
	x->config = r->config ? kf_strdup(r->config) : NULL;
	return 1;
}

static const char *cfg_str(const cJSON *c, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, name);
	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* Keeps a value the run recorded for as long as the command runs (the options point into it). */
static const char *keep(struct kf_cli_resumed *r, const char *s)
{
	if (!s || r->n_kept >= KF_ARRAY_SIZE(r->kept))
		return NULL;
	snprintf(r->kept[r->n_kept], sizeof(r->kept[0]), "%s", s);
	return r->kept[r->n_kept++];
}

/* "--model X (the run had Y)", or "model X from FILE (the run had Y)" for a config file's value. */
static void note(struct kf_buf *b, const struct kf_cli_optimize_args *a, enum kf_config_key key,
		 const char *flag, const char *from_run, const char *given)
{
	if (!given || !from_run || !strcmp(given, from_run))
		return;
	if (a->from_file >> key & 1u && a->cfg && a->cfg->path)
		kf_buf_addf(b, "%s%s %s from %s (the run had %s)", b->len ? ", " : "",
			    kf_config_key_name(key), given, a->cfg->path, from_run);
	else
		kf_buf_addf(b, "%s%s %s (the run had %s)", b->len ? ", " : "", flag, given, from_run);
}

/* The run searches on with the parameters it recorded: a config file that sets one otherwise cannot
 * continue it (as another --strategy cannot). 0 or the exit code. */
static int search_conflict(int64_t run_id, const cJSON *cfg, const struct kf_cli_optimize_args *a)
{
	struct kf_search_params rec = kf_search_params_default();
	struct kf_err err = KF_ERR_INIT;
	struct kf_jpath path;
	char name[64];
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(cfg, "search");
	snprintf(name, sizeof(name), "run %lld's configuration", (long long)run_id);
	kf_jpath_init(&path, name);
	kf_jpath_push_key(&path, "search");
	if (s && kf_search_params_parse(s, &rec, NULL, &path, &err)) {
		kf_cli_error("--resume %lld: %s", (long long)run_id, err.msg);
		return KF_EXIT_USAGE;
	}
	for (size_t i = 0; a->cfg && i < KF_SEARCH_N_PARAMS; i++) {
		double want = kf_search_param_get(&a->cfg->search, i), had = kf_search_param_get(&rec, i);
		if (a->cfg->search_set >> i & 1u && want != had) {
			kf_cli_error(
			    "--resume %lld: the run searched with search.%s %g; %s's %g cannot continue it",
			    (long long)run_id, kf_search_param_name(i), had, a->cfg->path, want);
			return KF_EXIT_USAGE;
		}
	}
	return 0;
}

int kf_cli_optimize_resume(const char *db_path, int64_t run_id, struct kf_cli_optimize_args *a,
			   struct kf_cli_resumed *r)
{
	struct kf_kb *kb = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct recorded x = {0};
	struct kf_buf over = KF_BUF_INIT(4096);
	cJSON *cfg = NULL;
	char num[3][64];
	int rc = 0;

	if (kf_kb_open(db_path, KF_KB_READONLY, &kb, &err) || kf_kb_run_get(kb, run_id, run_cb, &x, &err)) {
		kf_kb_close(kb);
		kf_cli_error("--resume %lld: %s", (long long)run_id, err.msg);
		return KF_EXIT_USAGE;
	}
	kf_kb_close(kb);
	if (!x.found) {
		kf_cli_error("--resume %lld: no such run in '%s'", (long long)run_id, db_path);
		return KF_EXIT_USAGE;
	}
	cfg = x.config ? cJSON_Parse(x.config) : NULL;
	if (!cfg || strcmp(cfg_str(cfg, "command") ? cfg_str(cfg, "command") : "", "optimize")) {
		kf_cli_error("--resume %lld: run %lld is not an optimize run", (long long)run_id,
			     (long long)run_id);
		rc = KF_EXIT_USAGE;
		goto out;
	}
	if (a->strategy && strcmp(a->strategy, x.strategy)) {
		if (a->from_file >> KF_CONFIG_STRATEGY & 1u && a->cfg && a->cfg->path)
			kf_cli_error(
			    "--resume %lld: the run searched with strategy %s; %s's strategy %s cannot "
			    "continue it",
			    (long long)run_id, x.strategy, a->cfg->path, a->strategy);
		else
			kf_cli_error(
			    "--resume %lld: the run searched with --strategy %s; --strategy %s cannot "
			    "continue it",
			    (long long)run_id, x.strategy, a->strategy);
		rc = KF_EXIT_USAGE;
		goto out;
	}
	if ((rc = search_conflict(run_id, cfg, a)))
		goto out;
	if (!a->task) {
		a->task = keep(r, cfg_str(cfg, "task_path"));
		if (!a->task) {
			kf_cli_error("--resume %lld: the run recorded no task file: give TASK",
				     (long long)run_id);
			rc = KF_EXIT_USAGE;
			goto out;
		}
	}
	snprintf(num[0], sizeof(num[0]), "%lld", (long long)x.budget_calls);
	snprintf(num[1], sizeof(num[1]), "%.17g", x.budget_usd);
	snprintf(num[2], sizeof(num[2]), "%.17g", x.budget_time_s);
	note(&over, a, KF_CONFIG_PROVIDER, "--provider", x.provider, a->provider);
	note(&over, a, KF_CONFIG_MODEL, "--model", x.model, a->model);
	note(&over, a, KF_CONFIG_BACKEND, "--backend", x.backend, a->backend);
	note(&over, a, KF_CONFIG_BASE_URL, "--base-url", cfg_str(cfg, "base_url"), a->base_url);
	if (a->budget_calls && x.budget_calls > 0)
		note(&over, a, KF_CONFIG_BUDGET_CALLS, "--budget-calls", num[0], a->budget_calls);
	if (!a->strategy)
		a->strategy = keep(r, x.strategy);
	/* a replayed run is continued only from its transcript, which the command line must name again */
	if (!a->provider && strcmp(x.provider, "replay"))
		a->provider = keep(r, x.provider);
	if (!a->model && x.model[0] && strcmp(x.provider, "replay"))
		a->model = keep(r, x.model);
	if (!a->base_url)
		a->base_url = keep(r, cfg_str(cfg, "base_url"));
	if (!a->backend && x.backend[0])
		a->backend = keep(r, x.backend);
	if (!a->budget_calls && x.budget_calls > 0)
		a->budget_calls = keep(r, num[0]);
	if (!a->budget_usd && x.budget_usd > 0)
		a->budget_usd = keep(r, num[1]);
	if (!a->time_limit && x.budget_time_s > 0)
		a->time_limit = keep(r, num[2]);
	if (!a->out)
		a->out = keep(r, cfg_str(cfg, "out_dir"));
	if (!a->concurrency) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(cfg, "concurrency");
		char n[32];
		if (cJSON_IsNumber(c) && c->valuedouble >= 1) {
			snprintf(n, sizeof(n), "%d", (int)c->valuedouble);
			a->concurrency = keep(r, n);
		}
	}
	fprintf(stderr, "resuming run %lld: task %s, %s %s, strategy %s, backend %s, budget %s calls%s%s\n",
		(long long)run_id, a->task, a->provider ? a->provider : "replay", a->model ? a->model : "",
		a->strategy ? a->strategy : "?", a->backend ? a->backend : "auto",
		a->budget_calls ? a->budget_calls : "default", over.len ? "; overridden: " : "",
		over.len ? over.data : "");
out:
	cJSON_Delete(cfg);
	free(x.config);
	kf_buf_release(&over);
	return rc;
}
