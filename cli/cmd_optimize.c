/* kforge optimize TASK: the LLM search (agent/optimize.h) from the command line: options, a config file
 * (agent/config.h: a flag beats the file, the file the environment), provider defaults from the
 * environment, a live status line on a terminal, the final summary (text or --json), and the exit codes of
 * docs/spec/cli.md (0 completed, improved or not; 130 interrupted and resumable). */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "profiler/costmodel.h"
#include "agent/config.h"
#include "agent/optimize.h"
#include "cli.h"
#include "cmd_optimize.h"
#include "reports/run_report.h"

static const char help[] =
    "Searches for a faster kernel for TASK: an LLM proposes candidates (whole files or SEARCH/REPLACE\n"
    "edits of a parent), each is verified and, when correct, timed against the reference; everything\n"
    "is recorded in the knowledge base. Writes DIR/best.cu (when a verified candidate beats the\n"
    "reference), DIR/report.md and DIR/report.html.\n\n"
    "options:\n"
    "  --strategy S          schedule (default: seeds for a fifth of the calls, repairs of promising\n"
    "                        failures, serial refinement of the top kernels), evo (islands, MAP-Elites\n"
    "                        cells, migration) or mcts (UCT over strategies and kernels)\n"
    "  --provider P          openai, anthropic or replay (default: the one configured in the\n"
    "                        environment, OPENAI_API_KEY/OPENAI_BASE_URL or ANTHROPIC_API_KEY/\n"
    "                        ANTHROPIC_BASE_URL; with both, the one the model name belongs to)\n"
    "  --model NAME          model (default $KFORGE_MODEL)\n"
    "  --base-url URL        API endpoint (default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else public)\n"
    "  --max-tokens N        reply limit per request, reasoning included (default: 32768 for a\n"
    "                        reasoning model, 8192 otherwise, never above the model's cap)\n"
    "  --max-tokens-field F  openai chat field for it: max_completion_tokens (default) or max_tokens\n"
    "  --reasoning-effort L  none, minimal, low, medium, high, xhigh or max: OpenAI reasoning effort,\n"
    "                        Anthropic output_config.effort (levels the model takes: "
    "agent/data/models.json)\n"
    "  --thinking-budget N   Anthropic extended thinking with N >= 1024 budget tokens\n"
    "  --temperature T       sampling temperature (models that take one)\n"
    "  --timeout-ms MS       per HTTP attempt (default 600000, 1800000 for a reasoning model;\n"
    "                        --timeout SEC says the same)\n"
    "  --budget-calls N      LLM requests at most (default 20; from 8 on, the first asks for 4\n"
    "                        strategies that the seeds then implement)\n"
    "  --budget-usd X        stop submitting once this much was spent (the model needs a price)\n"
    "  --price-in X, --price-out Y   USD per 1M input/output tokens for a model the price table lacks\n"
    "  --time-limit SEC      stop submitting after this long\n"
    "  --concurrency N       LLM requests in flight (default 4); replay reproduces a run with the same\n"
    "                        --seed and --concurrency\n"
    "  --backend B           auto (default), cpu or cuda\n"
    "  --db FILE             knowledge base (default $KFORGE_DB, else kforge.db)\n"
    "  --out DIR             output folder (default kforge-out/<task>)\n"
    "  --seed N              seed of every search choice (default: random, recorded in the run)\n"
    "  --resume RUN          continue an interrupted (or finished) run from the knowledge base: its\n"
    "                        task, provider, model, strategy and budgets unless given (TASK too)\n"
    "  --replay FILE         with --provider replay: an export of a run (kforge kb export --run ID)\n"
    "  --json                print only a JSON summary\n"
    "  --fitness F           cpu backend: model (default: the GPU cost model's predicted speedup, when\n"
    "                        this machine can make the instrumented build) or cpu (the CPU clock)\n"
    "  --target GPU          the cost model's GPU: h100 (default), h200, a100, l40s, rtx4090, a10,\n"
    "                        rtx3090, b200\n"
    "  --keep-best           write best.cu for the best verified candidate even when it is not\n"
    "                        significantly faster (default: only a significant win is written)\n"
    "  --prompts DIR         prompt templates that override the built-in ones (default $KFORGE_PROMPTS)\n"
    "  --config FILE         settings and search parameters (format: docs/config.md; default\n"
    "                        ./kforge.json when there is one; --config none: no file); a flag\n"
    "                        overrides the file, the file the environment\n"
    "  --print-config        print the configuration in force as JSON, each value with its source\n"
    "                        (flag, file, env or default), and exit; TASK is optional\n"
    "The search stops submitting at a budget, or after max(8, 30% of the budget) attempts in a row\n"
    "without a significant improvement. It stops at once, exit 4, on an error that asking again cannot\n"
    "fix (bad key, unknown model, no quota: checked before the first request too), and after 3 failed\n"
    "calls or 3 refusals in a row. On the cpu backend speedups are CPU-clock ratios, labelled (cpu);\n"
    "they are not GPU speed.\n"
    "exit: 0 run completed (improved or not), 2 bad input, 3 internal, 4 unavailable (no API key,\n"
    "no GPU, the API refused), 130 interrupted (resumable with --resume)\n";

static bool parse_pos_double(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (!*s || *end || !isfinite(v) || v <= 0)
		return false;
	*out = v;
	return true;
}

/* The flags' values from the file where the command line gives none (agent/config.h's precedence; the
 * environment and the defaults come later, where they always did), each key's source in src. */
static void apply_config(const struct kf_config *cfg, const char **vars[KF_CONFIG_N_KEYS],
			 enum kf_config_source src[KF_CONFIG_N_KEYS])
{
	for (int k = 0; k < KF_CONFIG_N_KEYS; k++)
		*vars[k] = kf_config_resolve(cfg, (enum kf_config_key)k, *vars[k],
					     k == KF_CONFIG_PROMPTS ? "KFORGE_PROMPTS" : NULL, &src[k]);
}

static int optimize(int argc, char **argv, struct kf_config *cfg)
{
	const char *strategy = NULL, *provider = NULL, *model = NULL, *base_url = NULL, *bcalls = NULL,
		   *busd = NULL, *tlimit = NULL, *conc = NULL, *backend = NULL, *db = NULL, *out = NULL,
		   *seed_s = NULL, *resume = NULL, *replay = NULL, *mtf = NULL, *mt = NULL, *tmo = NULL,
		   *tmo_ms = NULL, *effort = NULL, *thinking = NULL, *temp = NULL, *pin = NULL, *pout = NULL,
		   *config = NULL, *prompts = NULL, *keep_s = NULL, *fitness = NULL, *target = NULL, *pos[1];
	bool json = false, keep_best = false, print_config = false;
	const struct kf_opt opts[] = {
	    {"strategy", true, &strategy, NULL},
	    {"provider", true, &provider, NULL},
	    {"model", true, &model, NULL},
	    {"base-url", true, &base_url, NULL},
	    {"budget-calls", true, &bcalls, NULL},
	    {"budget-usd", true, &busd, NULL},
	    {"time-limit", true, &tlimit, NULL},
	    {"concurrency", true, &conc, NULL},
	    {"backend", true, &backend, NULL},
	    {"db", true, &db, NULL},
	    {"out", true, &out, NULL},
	    {"seed", true, &seed_s, NULL},
	    {"resume", true, &resume, NULL},
	    {"replay", true, &replay, NULL},
	    {"max-tokens-field", true, &mtf, NULL},
	    {"max-tokens", true, &mt, NULL},
	    {"timeout", true, &tmo, NULL},
	    {"timeout-ms", true, &tmo_ms, NULL},
	    {"reasoning-effort", true, &effort, NULL},
	    {"thinking-budget", true, &thinking, NULL},
	    {"temperature", true, &temp, NULL},
	    {"price-in", true, &pin, NULL},
	    {"price-out", true, &pout, NULL},
	    {"config", true, &config, NULL},
	    {"prompts", true, &prompts, NULL},
	    {"fitness", true, &fitness, NULL},
	    {"target", true, &target, NULL},
	    {"json", false, NULL, &json},
	    {"keep-best", false, NULL, &keep_best},
	    {"print-config", false, NULL, &print_config},
	};
	/* the flag of each config key, in enum kf_config_key's order */
	const char **vars[KF_CONFIG_N_KEYS] = {
	    &strategy, &provider, &model,  &base_url, &mt,      &effort, &thinking, &temp,    &tmo_ms,
	    &bcalls,   &busd,     &tlimit, &conc,     &backend, &seed_s, &keep_s,   &prompts,
	};
	enum kf_config_source src[KF_CONFIG_N_KEYS];
	size_t n_pos;
	int rc;
	uint64_t u;
	struct kf_optimize_opts o;
	struct kf_optimize_result res;
	struct kf_device_info dev;
	struct kf_err err = KF_ERR_INIT;
	char outbuf[PATH_MAX];

	if (kf_cli_start("optimize", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 0, 1, &n_pos, NULL,
			 &rc))
		return rc;
	if (!n_pos && !resume && !print_config)
		return kf_cli_usage_error("optimize", "expected TASK (or --resume RUN)");
	if (print_config && resume)
		return kf_cli_usage_error("optimize", "--print-config shows a new run's configuration: "
						      "drop --resume");
	if (kf_config_load(config, cfg, &err)) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_USAGE;
	}
	keep_s = keep_best ? "true" : NULL;
	const char *tmo_ms_flag = tmo_ms;
	apply_config(cfg, vars, src);
	if (tmo) { /* --timeout SEC given: the file's timeout_ms does not apply (the flag wins) */
		tmo_ms = tmo_ms_flag;
		src[KF_CONFIG_TIMEOUT_MS] = KF_CONFIG_FROM_FLAG;
	}
	keep_best = keep_s && !strcmp(keep_s, "true");
	if (prompts && src[KF_CONFIG_PROMPTS] != KF_CONFIG_FROM_ENV) {
		/* (a $KFORGE_PROMPTS that is not a folder still means the built-in templates, as it did) */
		struct stat sb;
		if (stat(prompts, &sb) || !S_ISDIR(sb.st_mode)) {
			if (src[KF_CONFIG_PROMPTS] == KF_CONFIG_FROM_FILE)
				kf_cli_error("%s: optimize.prompts: '%s' is not a folder", cfg->path,
					     prompts);
			else
				kf_cli_error("--prompts: '%s' is not a folder", prompts);
			return KF_EXIT_USAGE;
		}
		kf_prompt_set_dir(prompts);
	}
	if (resume) {
		/* what the run recorded fills in what the command line leaves out */
		static struct kf_cli_resumed rz;
		struct kf_cli_optimize_args a = {n_pos ? pos[0] : NULL,
						 strategy,
						 provider,
						 model,
						 base_url,
						 backend,
						 bcalls,
						 busd,
						 tlimit,
						 conc,
						 out,
						 cfg,
						 0};
		for (int k = 0; k < KF_CONFIG_N_KEYS; k++)
			if (src[k] == KF_CONFIG_FROM_FILE)
				a.from_file |= 1u << k;
		if (!kf_parse_u64(resume, &u) || !u || u > INT64_MAX)
			return kf_cli_usage_error("optimize", "--resume needs a run id, not '%s'", resume);
		if ((rc = kf_cli_optimize_resume(kf_cli_db_path(db), (int64_t)u, &a, &rz)))
			return rc;
		pos[0] = a.task;
		strategy = a.strategy;
		provider = a.provider;
		model = a.model;
		base_url = a.base_url;
		backend = a.backend;
		bcalls = a.budget_calls;
		busd = a.budget_usd;
		tlimit = a.time_limit;
		conc = a.concurrency;
		out = a.out;
	}
	memset(&o, 0, sizeof(o));
	o.task_path = pos[0];
	o.keep_best = keep_best;
	if (fitness && strcmp(fitness, "model") && strcmp(fitness, "cpu"))
		return kf_cli_usage_error("optimize", "--fitness is model or cpu, not '%s'", fitness);
	o.cpu_fitness = fitness && !strcmp(fitness, "cpu");
	if (target && !(o.model_target = kf_cost_target_find(target)))
		return kf_cli_usage_error("optimize", "--target: unknown GPU '%s' (%s)", target,
					  kf_cost_target_keys());
	o.strategy = KF_STRATEGY_SCHEDULE;
	if (strategy && !kf_strategy_parse(strategy, &o.strategy))
		return kf_cli_usage_error("optimize", "unknown strategy '%s' (schedule, evo or mcts)",
					  strategy);
	o.search = &cfg->search;
	const char *model_name = model ? model : getenv("KFORGE_MODEL");
	if (!model && model_name)
		src[KF_CONFIG_MODEL] = KF_CONFIG_FROM_ENV;
	bool have_provider = true;
	if (provider) {
		if (!kf_llm_provider_parse(provider, &o.llm.provider))
			return kf_cli_usage_error(
			    "optimize", "unknown provider '%s' (openai, anthropic or replay)", provider);
	} else if (replay) {
		o.llm.provider = KF_LLM_REPLAY;
		src[KF_CONFIG_PROVIDER] = KF_CONFIG_FROM_FLAG; /* --replay says replay */
	} else if (kf_llm_provider_detect(model_name, &o.llm.provider, NULL, 0, &err)) {
		if (!print_config) {
			kf_cli_error("%s", err.msg);
			return KF_EXIT_UNAVAILABLE;
		}
		have_provider = false; /* shown as none: --print-config needs no key */
	} else {
		src[KF_CONFIG_PROVIDER] = KF_CONFIG_FROM_ENV;
	}
	if (o.llm.provider == KF_LLM_REPLAY && !replay)
		return kf_cli_usage_error("optimize", "--provider replay needs --replay FILE");
	if (replay && o.llm.provider != KF_LLM_REPLAY)
		return kf_cli_usage_error("optimize", "--replay goes with --provider replay");
	o.llm.replay_path = replay;
	o.llm.model = model_name;
	if (!o.llm.model && o.llm.provider == KF_LLM_REPLAY)
		o.llm.model = "replay";
	if (!o.llm.model && !print_config)
		return kf_cli_usage_error("optimize", "no model: give --model NAME or set KFORGE_MODEL");
	o.llm.base_url = base_url;
	o.llm.max_tokens_field = mtf;
	if (mtf && strcmp(mtf, "max_tokens") && strcmp(mtf, "max_completion_tokens"))
		return kf_cli_usage_error("optimize",
					  "--max-tokens-field is max_tokens or max_completion_tokens");
	if (mt) {
		if (!kf_parse_u64(mt, &u) || !u || u > 1000000)
			return kf_cli_usage_error("optimize",
						  "--max-tokens needs a positive integer, not '%s'", mt);
		o.llm.max_tokens = (int)u;
	}
	if ((rc = kf_cli_timeout_ms("optimize", tmo_ms, tmo, 86400000, &o.llm.timeout_ms)))
		return rc;
	if (effort) {
		if (kf_llm_effort_parse(effort) < 0)
			return kf_cli_usage_error(
			    "optimize",
			    "--reasoning-effort is none, minimal, low, medium, high, xhigh or max, "
			    "not '%s'",
			    effort);
		o.llm.reasoning_effort = effort;
	}
	if (thinking) {
		if (!kf_parse_u64(thinking, &u) || u < 1024 || u > 1000000)
			return kf_cli_usage_error(
			    "optimize", "--thinking-budget needs 1024 to 1000000 tokens, not '%s'", thinking);
		o.llm.thinking_budget = (int)u;
	}
	if (temp) {
		char *end;
		double t = strtod(temp, &end);
		if (!*temp || *end || !isfinite(t) || t < 0 || t > 2)
			return kf_cli_usage_error("optimize", "--temperature needs 0 to 2, not '%s'", temp);
		o.llm.temperature = t;
		o.llm.temperature_set = true;
	}
	if ((pin != NULL) != (pout != NULL))
		return kf_cli_usage_error("optimize", "--price-in and --price-out go together");
	if (pin && (!parse_pos_double(pin, &o.llm.price_in) || !parse_pos_double(pout, &o.llm.price_out)))
		return kf_cli_usage_error("optimize",
					  "--price-in/--price-out need positive USD per 1M tokens");
	if (bcalls) {
		if (!kf_parse_u64(bcalls, &u) || !u || u > 1000000)
			return kf_cli_usage_error(
			    "optimize", "--budget-calls needs a positive integer, not '%s'", bcalls);
		o.budget_calls = (int64_t)u;
	}
	if (busd && !parse_pos_double(busd, &o.budget_usd))
		return kf_cli_usage_error("optimize", "--budget-usd needs a positive amount, not '%s'", busd);
	if (tlimit && !parse_pos_double(tlimit, &o.time_limit_s))
		return kf_cli_usage_error("optimize", "--time-limit needs positive seconds, not '%s'",
					  tlimit);
	if (conc) {
		if (!kf_parse_u64(conc, &u) || !u || u > 64)
			return kf_cli_usage_error("optimize", "--concurrency needs 1 to 64, not '%s'", conc);
		o.llm.concurrency = (int)u;
	}
	if (seed_s && (!kf_parse_u64(seed_s, &o.seed) || !o.seed || o.seed > INT64_MAX))
		return kf_cli_usage_error("optimize", "--seed needs a positive integer, not '%s'", seed_s);
	if (resume) {
		if (!kf_parse_u64(resume, &u) || !u || u > INT64_MAX)
			return kf_cli_usage_error("optimize", "--resume needs a run id, not '%s'", resume);
		o.resume_run = (int64_t)u;
	}
	if (print_config)
		return kf_cli_optimize_print_config(&o, cfg, src, have_provider, backend, prompts);
	if ((rc = kf_cli_backend_select("optimize", backend, &o.backend, &dev)))
		return rc;
	o.device = o.backend == KF_BACKEND_CUDA ? &dev : NULL;
	o.db_path = kf_cli_db_path(db);
	if (!out) {
		/* kforge-out/<task>: the task's folder name, else the file name without .json */
		const char *t = pos[0], *slash = strrchr(t, '/');
		char name[256];
		snprintf(name, sizeof(name), "%s", slash ? slash + 1 : t);
		if (!strcmp(name, "task.json") && slash) {
			const char *s2 = slash;
			while (s2 > t && s2[-1] != '/')
				s2--;
			snprintf(name, sizeof(name), "%.*s", (int)(slash - s2), s2);
		}
		char *dot = strrchr(name, '.');
		if (dot && !strcmp(dot, ".json"))
			*dot = 0;
		snprintf(outbuf, sizeof(outbuf), "kforge-out/%s", name[0] ? name : "task");
		out = outbuf;
	}
	o.out_dir = out;
	struct kf_cli_live live = {isatty(2) && !json, false, o.backend == KF_BACKEND_CUDA ? "gpu" : "cpu"};
	o.progress = kf_cli_optimize_progress;
	o.progress_ctx = &live;

	enum kf_status st = kf_optimize(&o, &res, &err);
	if (live.shown)
		fputc('\n', stderr);
	/* the run's reports, whatever became of it (an interrupted run's says how far it got) */
	char md[PATH_MAX] = "", html[PATH_MAX] = "";
	struct kf_err rerr = KF_ERR_INIT;
	if (res.run_id && kf_report_run_write(o.db_path, res.run_id, o.out_dir, md, html, &rerr))
		kf_cli_warn("%s", rerr.msg);
	if (st == KF_ERR_INTERRUPTED) {
		kf_cli_error("interrupted: run %lld recorded as interrupted; continue it with --resume %lld",
			     (long long)res.run_id, (long long)res.run_id);
		if (res.run_id)
			kf_cli_optimize_summary(&res, md, html, json);
		return KF_EXIT_INTERRUPTED;
	}
	if (st) {
		kf_cli_error("%s", err.msg);
		if (res.run_id && !json)
			fprintf(stderr, "run %lld recorded as failed\n", (long long)res.run_id);
		if (st == KF_ERR_UNAVAILABLE) {
			/* the API refused: what was done is still summarised (and reported) */
			if (res.run_id)
				kf_cli_optimize_summary(&res, md, html, json);
			return KF_EXIT_UNAVAILABLE;
		}
		if (st == KF_ERR_INVALID || st == KF_ERR_PARSE || st == KF_ERR_NOTFOUND || st == KF_ERR_USAGE)
			return KF_EXIT_USAGE;
		return KF_EXIT_INTERNAL;
	}
	kf_cli_optimize_summary(&res, md, html, json);
	return KF_EXIT_OK;
}

int cmd_optimize(int argc, char **argv)
{
	struct kf_config cfg;
	kf_config_init(&cfg);
	int rc = optimize(argc, argv, &cfg);
	kf_config_release(&cfg);
	return rc;
}
