/* Tests for the LLM client (agent/llm*.c) against tests/llm_server.py on a free loopback port: both
 * dialects, token/cost accounting, the SDK retry rules (retry-after, backoff, final errors), timeouts,
 * broken bodies, concurrency seen in the server's log, the replay provider, and that the API key never
 * shows up in a log line, an error or the server's log. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/llm_int.h"
#include "kb/kb.h"
#include "testing.h"

#define SECRET_KEY "sk-kforge-test-S3CR3T-0123456789abcdef"

static pid_t srv_pid;
static int srv_port;
static char srv_dir[64], srv_log[128], base_openai[128], base_anthropic[128];

static void server_stop(void)
{
	if (srv_pid > 0) {
		kill(srv_pid, SIGTERM);
		waitpid(srv_pid, NULL, 0);
		srv_pid = 0;
	}
	if (srv_dir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", srv_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", srv_dir);
		srv_dir[0] = '\0';
	}
}

/* One server per test binary; each test loads its own script through /_control/script. */
static bool server_start(void)
{
	char port_file[128];
	if (srv_pid > 0)
		return true;
	/* A proxy from the environment must not intercept loopback requests. */
	setenv("no_proxy", "127.0.0.1,localhost", 1);
	setenv("NO_PROXY", "127.0.0.1,localhost", 1);
	snprintf(srv_dir, sizeof(srv_dir), "/tmp/kf-llm-test.XXXXXX");
	if (!mkdtemp(srv_dir))
		return false;
	snprintf(port_file, sizeof(port_file), "%s/port", srv_dir);
	snprintf(srv_log, sizeof(srv_log), "%s/log.jsonl", srv_dir);
	srv_pid = fork();
	if (srv_pid == 0) {
		/* The server must not outlive a crashed test, nor hold the runner's output pipes open. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execlp("python3", "python3", "tests/llm_server.py", "--port", "0", "--port-file", port_file,
		       "--log", srv_log, (char *)NULL);
		_exit(127);
	}
	atexit(server_stop);
	/* Python starts in under a second on an idle machine; a CI box running other suites may take far
	 * longer, so wait up to 60 s but give up at once if the child died. */
	for (int i = 0; i < 1200; i++) {
		FILE *f = fopen(port_file, "r");
		if (waitpid(srv_pid, NULL, WNOHANG) == srv_pid) {
			if (f)
				fclose(f);
			srv_pid = 0;
			server_stop(); /* removes the folder */
			return false;
		}
		if (f) {
			int ok = fscanf(f, "%d", &srv_port);
			fclose(f);
			if (ok == 1) {
				snprintf(base_openai, sizeof(base_openai), "http://127.0.0.1:%d/v1",
					 srv_port);
				snprintf(base_anthropic, sizeof(base_anthropic), "http://127.0.0.1:%d",
					 srv_port);
				return true;
			}
		}
		usleep(50000);
	}
	server_stop();
	return false;
}

/* Tests that need the server fail once, not with a cascade, when it could not start. */
#define NEED_SERVER()                                                                                        \
	do {                                                                                                 \
		if (!server_start()) {                                                                       \
			CHECKF(0, "the LLM test server is not running");                                     \
			return;                                                                              \
		}                                                                                            \
	} while (0)

static size_t sink(char *p, size_t s, size_t n, void *u)
{
	(void)p;
	(void)u;
	return s * n;
}

static bool server_script(const char *json)
{
	char url[128];
	long code = 0;
	CURL *e;
	if (!server_start() || !srv_port)
		return false;
	e = curl_easy_init();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_control/script", srv_port);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(e);
	return code == 200;
}

/* The server's log as an array of request records (caller deletes). The server writes a record just
 * after its reply, so wait (up to 3 s) until at least `want` records are there. */
static cJSON *server_log_read(void);
static cJSON *server_log_n(int want)
{
	for (int i = 0;; i++) {
		cJSON *a = server_log_read();
		if (cJSON_GetArraySize(a) >= want || i >= 300)
			return a;
		cJSON_Delete(a);
		usleep(10000);
	}
}

static cJSON *server_log_read(void)
{
	struct kf_buf b = KF_BUF_INIT(64u << 20);
	cJSON *arr = cJSON_CreateArray();
	char *line, *save = NULL;
	if (kf_buf_read_file(&b, srv_log, NULL) == KF_OK)
		for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			cJSON *o = cJSON_Parse(line);
			if (o)
				cJSON_AddItemToArray(arr, o);
		}
	kf_buf_release(&b);
	return arr;
}

static char *server_log_text(void)
{
	struct kf_buf b = KF_BUF_INIT(64u << 20);
	kf_buf_read_file(&b, srv_log, NULL);
	return kf_buf_detach(&b, NULL);
}

static struct kf_buf client_log = KF_BUF_INIT(1u << 20);
static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	kf_buf_adds(&client_log, line);
	kf_buf_addch(&client_log, '\n');
}

static struct kf_llm_config cfg_for(enum kf_llm_provider p, const char *model)
{
	struct kf_llm_config c = {0};
	c.provider = p;
	c.model = model;
	c.base_url = p == KF_LLM_ANTHROPIC ? base_anthropic : base_openai;
	c.api_key = SECRET_KEY;
	c.timeout_ms = 5000;
	c.jitter_seed = 42;
	c.log = log_line;
	c.prices_path = NULL;
	return c;
}

/* Submits n copies of a simple prompt and polls until all are done; results by tag. */
static enum kf_status run_n(const struct kf_llm_config *cfg, int n, struct kf_llm_result **res,
			    double *wall_ms, struct kf_err *err)
{
	struct kf_llm_client *c;
	struct kf_llm_message m = {"user", "write a kernel please", 0};
	struct kf_llm_request rq = {"you are a CUDA expert", 1, &m, 0};
	double t0 = kf_now_ms();
	enum kf_status st = kf_llm_client_new(cfg, &c, err);
	int got = 0;

	for (int i = 0; i < n; i++)
		res[i] = NULL;
	if (st)
		return st;
	for (int i = 0; i < n && !st; i++)
		st = kf_llm_submit(c, &rq, (uint64_t)i, err);
	while (!st && got < n) {
		struct kf_llm_result *r = NULL;
		st = kf_llm_poll(c, 10000, &r, err);
		if (!r)
			break;
		if (r->tag < (uint64_t)n && !res[r->tag]) {
			res[r->tag] = r;
			got++;
		} else {
			kf_llm_result_free(r);
		}
	}
	if (wall_ms)
		*wall_ms = kf_now_ms() - t0;
	if (!st && got < n)
		st = kf_err_set(err, KF_ERR_INTERNAL, "only %d of %d results came back", got, n);
	kf_llm_client_free(c);
	return st;
}

static double jnum(const cJSON *o, const char *path);
static const cJSON *jget(const cJSON *o, const char *path)
{
	char buf[256], *tok, *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
		if (*tok >= '0' && *tok <= '9')
			o = cJSON_GetArrayItem(o, atoi(tok));
		else
			o = cJSON_GetObjectItemCaseSensitive(o, tok);
	}
	return o;
}

static double jnum(const cJSON *o, const char *path)
{
	const cJSON *v = jget(o, path);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *path)
{
	const cJSON *v = jget(o, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_openai_exchange(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	cJSON *log;
	CHECK(server_script(
	    "{\"replies\":[{\"text\":\"```cuda\\nok\\n```\",\"tokens_in\":1000,\"tokens_out\":500}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o-mini-2024-07-18");
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (!r[0])
		return;
	CHECK_EQ_INT(r[0]->status, KF_OK);
	CHECK_STR(r[0]->text, "```cuda\nok\n```");
	CHECK_STR(r[0]->finish_reason, "stop");
	CHECK_EQ_INT(r[0]->tokens_in, 1000);
	CHECK_EQ_INT(r[0]->tokens_out, 500);
	/* gpt-4o-mini*: 0.15 in, 0.60 out per 1M tokens (the longer prefix beats gpt-4o*) */
	CHECK(r[0]->cost_known);
	CHECK_NEAR(r[0]->cost_usd, (1000 * 0.15 + 500 * 0.60) / 1e6, 1e-12);
	CHECK_EQ_INT(r[0]->attempts, 1);
	CHECK_EQ_INT(r[0]->http_status, 200);
	CHECK_STR(r[0]->request_id, "req_1");
	CHECK_STR(r[0]->provider, "openai");
	CHECK_CONTAINS(r[0]->prompt_json, "\"role\":\"system\"");
	CHECK_CONTAINS(r[0]->prompt_json, "write a kernel please");
	log = server_log_n(1);
	CHECK_EQ_INT(cJSON_GetArraySize(log), 1);
	CHECK_STR(jstr(log, "0.path"), "/v1/chat/completions");
	CHECK_STR(jstr(log, "0.headers.authorization"), "bearer-present");
	CHECK_STR(jstr(log, "0.body.model"), "gpt-4o-mini-2024-07-18");
	CHECK_STR(jstr(log, "0.body.messages.0.role"), "system");
	CHECK_STR(jstr(log, "0.body.messages.1.role"), "user");
	CHECK(cJSON_IsNumber(jget(log, "0.body.max_completion_tokens")));
	CHECK(!jget(log, "0.body.max_tokens"));
	CHECK(!jget(log, "0.body.temperature")); /* not sent unless asked: reasoning models reject it */
	CHECK_CONTAINS(client_log.data, "request id 'req_1'");
	cJSON_Delete(log);
	kf_llm_result_free(r[0]);
}

/* Stray bytes in a prompt (compiler output, kernel text) must not make the body invalid JSON/UTF-8. */
static void test_prompt_not_utf8(void)
{
	NEED_SERVER();
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_client *c = NULL;
	struct kf_llm_message m = {"user", "bad \xff\xfe bytes \xc3\xa9 \xe2\x82", 0};
	struct kf_llm_request rq = {"sys \x80", 1, &m, 0};
	struct kf_llm_result *x = NULL;
	struct kf_llm_config cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest");
	cJSON *log;

	CHECK(server_script("{\"replies\":[{\"text\":\"fine\"}]}"));
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
	if (!c)
		return;
	CHECK(kf_llm_submit(c, &rq, 1, &err) == KF_OK);
	CHECK(kf_llm_poll(c, 10000, &x, &err) == KF_OK);
	CHECK(x && x->status == KF_OK);
	log = server_log_n(1);
	CHECK_STR(jstr(log, "0.body.messages.0.content"), "bad ?? bytes \xc3\xa9 ??");
	CHECK_STR(jstr(log, "0.body.system.0.text"), "sys ?");
	cJSON_Delete(log);
	kf_llm_result_free(x);
	kf_llm_client_free(c);
}

static void test_anthropic_exchange(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	cJSON *log;
	CHECK(
	    server_script("{\"replies\":[{\"text\":\"hello\",\"finish_reason\":\"length\",\"tokens_in\":2000,"
			  "\"tokens_out\":100}]}"));
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-sonnet-4-5-20250929");
	cfg.max_tokens = 1234;
	cfg.temperature_set = true;
	cfg.temperature = 0.7;
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (!r[0])
		return;
	CHECK_EQ_INT(r[0]->status, KF_OK);
	CHECK_STR(r[0]->text, "hello");
	CHECK_STR(r[0]->finish_reason, "length"); /* stop_reason max_tokens, normalized */
	CHECK_NEAR(r[0]->cost_usd, (2000 * 3.0 + 100 * 15.0) / 1e6, 1e-12);
	CHECK_STR(r[0]->request_id, "req_1");
	log = server_log_n(1);
	CHECK_STR(jstr(log, "0.path"), "/v1/messages");
	CHECK_STR(jstr(log, "0.headers.x-api-key"), "present");
	CHECK_STR(jstr(log, "0.headers.anthropic-version"), "2023-06-01");
	/* the system text is the run's static prefix: a text block marked for the prompt cache */
	CHECK_STR(jstr(log, "0.body.system.0.type"), "text");
	CHECK_STR(jstr(log, "0.body.system.0.text"), "you are a CUDA expert");
	CHECK_STR(jstr(log, "0.body.system.0.cache_control.type"), "ephemeral");
	CHECK_EQ_INT(cJSON_GetArraySize(jget(log, "0.body.messages")), 1);
	CHECK_STR(jstr(log, "0.body.messages.0.role"), "user");
	CHECK_NEAR(jnum(log, "0.body.max_tokens"), 1234, 0);
	CHECK_NEAR(jnum(log, "0.body.temperature"), 0.7, 1e-9);
	cJSON_Delete(log);
	kf_llm_result_free(r[0]);
}

static void test_token_field_and_prices(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	char prices[128];
	FILE *f;
	cJSON *log;

	/* A local server that only knows max_tokens, and a model with no price. */
	CHECK(server_script("{\"replies\":[{\"text\":\"a\",\"tokens_in\":10,\"tokens_out\":10}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "qwen2.5-coder-32b");
	cfg.max_tokens_field = "max_tokens";
	cfg.max_tokens = 77;
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK(!r[0]->cost_known);
		CHECK_NEAR(r[0]->cost_usd, 0, 0);
		CHECK_CONTAINS(client_log.data, "price unknown");
	}
	kf_llm_result_free(r[0]);
	log = server_log_n(1);
	CHECK_NEAR(jnum(log, "0.body.max_tokens"), 77, 0);
	CHECK(!jget(log, "0.body.max_completion_tokens"));
	cJSON_Delete(log);

	/* A user price table extends the built-in one (and overrides an entry). */
	snprintf(prices, sizeof(prices), "%s/prices.json", srv_dir);
	f = fopen(prices, "w");
	fputs("{\"models\":{\"qwen2.5-coder*\":{\"input\":1.0,\"output\":2.0},\"gpt-4o*\":{\"input\":100,"
	      "\"output\":0}}}",
	      f);
	fclose(f);
	CHECK(server_script("{\"replies\":[{\"text\":\"a\",\"tokens_in\":10,\"tokens_out\":10}]}"));
	cfg.prices_path = prices;
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK(r[0]->cost_known);
		CHECK_NEAR(r[0]->cost_usd, (10 * 1.0 + 10 * 2.0) / 1e6, 1e-12);
	}
	kf_llm_result_free(r[0]);
	{
		struct kf_prices *p = NULL;
		double usd;
		struct kf_llm_usage u1 = {1000000, 0, 0, 5}, u2 = {1000000, 0, 0, 0}, u3 = {1, 0, 0, 1};
		CHECK(kf_prices_load(prices, &p, &err) == KF_OK);
		CHECK(kf_prices_cost(p, "gpt-4o-2024-08-06", &u1, &usd, NULL, 0));
		CHECK_NEAR(usd, 100.0, 1e-9);
		CHECK(kf_prices_cost(p, "gpt-4o-mini", &u2, &usd, NULL,
				     0)); /* longer built-in prefix still wins */
		CHECK_NEAR(usd, 0.15, 1e-9);
		CHECK(!kf_prices_cost(p, "gpt-3", &u3, &usd, NULL, 0));
		kf_prices_free(p);
	}
	f = fopen(prices, "w");
	fputs("{\"models\":{\"x\":{\"input\":-1,\"output\":2}}}", f);
	fclose(f);
	cfg.prices_path = prices;
	{
		struct kf_llm_client *c = NULL;
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
		CHECK(!c);
	}
}

static void test_retry_429_retry_after(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	double wall;
	cJSON *log;
	CHECK(
	    server_script("{\"replies\":[{\"fault\":\"429\",\"retry_after\":\"1\"},{\"text\":\"after\"}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (!r[0])
		return;
	CHECK_EQ_INT(r[0]->status, KF_OK);
	CHECK_STR(r[0]->text, "after");
	CHECK_EQ_INT(r[0]->attempts, 2);
	log = server_log_n(2);
	CHECK_EQ_INT(cJSON_GetArraySize(log), 2);
	/* retry-after: 1 s, honoured (not the 0.5 s backoff), with scheduling slack */
	{
		double gap = jnum(log, "1.t_start") - jnum(log, "0.t_end");
		CHECKF(gap >= 0.95 && gap < 2.5, "gap %.3f s", gap); /* upper bound loose: a loaded CI box */
	}
	CHECKF(wall >= 950 && wall < 5000, "wall %.0f ms", wall);
	CHECK_CONTAINS(client_log.data, "http 429");
	CHECK_CONTAINS(client_log.data, "retry in 1000 ms");
	cJSON_Delete(log);
	kf_llm_result_free(r[0]);

	/* retry-after-ms wins over retry-after */
	CHECK(server_script(
	    "{\"replies\":[{\"fault\":\"429\",\"retry_after_ms\":\"200\",\"retry_after\":\"30\"},"
	    "{\"text\":\"after\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->attempts, 2);
		CHECKF(wall >= 190 && wall < 4000, "wall %.0f ms", wall); /* not the 30 s */
	}
	kf_llm_result_free(r[0]);
}

static void test_retry_after_date_and_should_retry(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	double wall;

	/* retry-after as an HTTP date 2 s ahead (whole seconds: the wait is 1..2 s) */
	CHECK(
	    server_script("{\"replies\":[{\"fault\":\"429\",\"retry_after_in_s\":2},{\"text\":\"dated\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_STR(r[0]->text, "dated");
		CHECK_EQ_INT(r[0]->attempts, 2);
		CHECKF(wall >= 900 && wall < 5000, "wall %.0f ms", wall);
	}
	kf_llm_result_free(r[0]);
	/* the server's x-should-retry overrides the status rules both ways */
	CHECK(server_script("{\"replies\":[{\"fault\":\"500\",\"headers\":{\"x-should-retry\":\"false\"}},{"
			    "\"text\":\"x\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_HTTP);
		CHECK_EQ_INT(r[0]->attempts, 1);
	}
	kf_llm_result_free(r[0]);
	CHECK(server_script("{\"replies\":[{\"fault\":\"status\",\"status\":400,\"retry_after_ms\":\"20\","
			    "\"headers\":{\"x-should-retry\":\"true\"}},{\"text\":\"y\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_EQ_INT(r[0]->attempts, 2);
	}
	kf_llm_result_free(r[0]);
}

static void test_retry_5xx_then_success(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	double wall;
	cJSON *log;

	CHECK(server_script("{\"replies\":[{\"fault\":\"500\"},{\"text\":\"fine\"}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_EQ_INT(r[0]->attempts, 2);
		/* no retry-after: first backoff 0.5 s minus up to 25% jitter */
		CHECKF(wall >= 370 && wall < 4000, "wall %.0f ms", wall);
	}
	kf_llm_result_free(r[0]);

	/* 529 overloaded (anthropic), then a retry-after over 60 s is ignored for the backoff */
	CHECK(server_script("{\"replies\":[{\"fault\":\"529\",\"retry_after\":\"120\"},{\"text\":\"ok\"}]}"));
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest");
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_STR(r[0]->text, "ok");
		CHECK_EQ_INT(r[0]->attempts, 2);
		CHECKF(wall < 5000, "wall %.0f ms", wall); /* not the 120 s */
	}
	kf_llm_result_free(r[0]);
	CHECK_CONTAINS(client_log.data, "http 529: overloaded_error");

	/* retries run out: 3 attempts (max_retries 2), the last error is reported */
	CHECK(server_script(
	    "{\"replies\":[{\"fault\":\"500\",\"retry_after_ms\":\"10\"},"
	    "{\"fault\":\"500\",\"retry_after_ms\":\"10\"},{\"fault\":\"503\"},{\"text\":\"never\"}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_HTTP);
		CHECK_EQ_INT(r[0]->attempts, 3);
		CHECK_EQ_INT(r[0]->http_status, 500); /* the unknown fault "503" answers 500 */
		CHECK_STR(r[0]->text, "");
	}
	kf_llm_result_free(r[0]);
	log = server_log_n(3);
	CHECK_EQ_INT(cJSON_GetArraySize(log), 3);
	cJSON_Delete(log);
}

static void test_final_errors_not_retried(void)
{
	NEED_SERVER();
	static const char *const scripts[] = {
	    "{\"replies\":[{\"fault\":\"status\",\"status\":400},{\"text\":\"x\"}]}",
	    "{\"replies\":[{\"fault\":\"status\",\"status\":401},{\"text\":\"x\"}]}",
	    "{\"replies\":[{\"fault\":\"status\",\"status\":403},{\"text\":\"x\"}]}",
	    "{\"replies\":[{\"fault\":\"status\",\"status\":404},{\"text\":\"x\"}]}",
	    "{\"replies\":[{\"fault\":\"429\",\"quota\":true},{\"text\":\"x\"}]}",
	};
	static const int want[] = {400, 401, 403, 404, 429};
	for (size_t i = 0; i < KF_ARRAY_SIZE(scripts); i++) {
		struct kf_llm_result *r[1];
		struct kf_err err = KF_ERR_INIT;
		struct kf_llm_config cfg = cfg_for(i % 2 ? KF_LLM_ANTHROPIC : KF_LLM_OPENAI, "m");
		cJSON *log;
		CHECK(server_script(scripts[i]));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (!r[0])
			continue;
		CHECK_EQ_INT(r[0]->status, KF_ERR_HTTP);
		CHECK_EQ_INT(r[0]->http_status, want[i]);
		CHECK_EQ_INT(r[0]->attempts, 1);
		CHECKF(strstr(r[0]->error, "http ") == r[0]->error, "%s", r[0]->error);
		log = server_log_n(1);
		CHECK_EQ_INT(cJSON_GetArraySize(log), 1);
		cJSON_Delete(log);
		kf_llm_result_free(r[0]);
	}
	/* a server that says "x-should-retry: false" is not needed here; a rejected field is a 400 */
	{
		struct kf_llm_result *r[1];
		struct kf_err err = KF_ERR_INIT;
		/* a model the table does not know: the server's 400 is the only way to learn it */
		struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "local-reasoner");
		cfg.temperature_set = true;
		cfg.temperature = 1.0;
		CHECK(server_script("{\"reject_fields\":[\"temperature\"],\"replies\":[{\"text\":\"x\"}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECK_EQ_INT(r[0]->http_status, 400);
			CHECK_CONTAINS(r[0]->error, "temperature");
		}
		kf_llm_result_free(r[0]);
	}
}

static void test_timeout_then_success(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	double wall;
	cfg.timeout_ms = 400;
	CHECK(server_script(
	    "{\"replies\":[{\"fault\":\"slow\",\"sleep_s\":2,\"text\":\"late\"},{\"text\":\"on time\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_STR(r[0]->text, "on time");
		CHECK_EQ_INT(r[0]->attempts, 2);
		CHECKF(wall >= 700 && wall < 5000, "wall %.0f ms",
		       wall); /* 400 timeout + ~0.4-0.5 s backoff */
	}
	kf_llm_result_free(r[0]);
	CHECK_CONTAINS(client_log.data, "no complete reply within 400 ms");

	cfg.max_retries = -1;
	CHECK(server_script("{\"replies\":[{\"fault\":\"slow\",\"sleep_s\":2,\"text\":\"late\"}]}"));
	CHECKF(run_n(&cfg, 1, r, &wall, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_TIMEOUT);
		CHECK_EQ_INT(r[0]->attempts, 1);
		CHECK_EQ_INT(r[0]->http_status, 0);
	}
	kf_llm_result_free(r[0]);
}

static void test_broken_bodies(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");

	/* A body cut short is a connection error: retried (as the SDKs do), then fine. */
	CHECK(server_script("{\"replies\":[{\"fault\":\"truncated\"},{\"text\":\"whole\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_EQ_INT(r[0]->attempts, 2);
	}
	kf_llm_result_free(r[0]);
	cfg.max_retries = -1;
	CHECK(server_script("{\"replies\":[{\"fault\":\"truncated\"},{\"text\":\"whole\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_NETWORK);
		CHECK_STR(r[0]->text, "");
	}
	kf_llm_result_free(r[0]);

	/* A complete body that is not JSON is final (the SDKs do not retry a parse failure). */
	cfg.max_retries = 0;
	CHECK(server_script("{\"replies\":[{\"fault\":\"invalid_json\"},{\"text\":\"x\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_PARSE);
		CHECK_EQ_INT(r[0]->attempts, 1);
		CHECK_CONTAINS(r[0]->error, "not valid JSON");
	}
	kf_llm_result_free(r[0]);

	CHECK(server_script("{\"replies\":[{\"fault\":\"empty_choices\"},{\"text\":\"x\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_PARSE);
		CHECK_CONTAINS(r[0]->error, "empty choice list");
		CHECK_EQ_INT(r[0]->tokens_in, 5); /* usage still counted: it was billed */
	}
	kf_llm_result_free(r[0]);

	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest");
	CHECK(server_script("{\"replies\":[{\"fault\":\"empty_choices\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_PARSE);
		CHECK_CONTAINS(r[0]->error, "no text block");
	}
	kf_llm_result_free(r[0]);

	/* Bounded body: a reply larger than the bound is an error, never a huge allocation. */
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	cfg.max_response_bytes = 256;
	CHECK(server_script(
	    "{\"replies\":[{\"text\":"
	    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_LIMIT);
		CHECK_EQ_INT(r[0]->attempts, 1);
		CHECK_CONTAINS(r[0]->error, "larger than 256 bytes");
	}
	kf_llm_result_free(r[0]);

	/* Nothing listening: connection refused is retried, then a network error. */
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	cfg.base_url = "http://127.0.0.1:1/v1";
	cfg.max_retries = 1;
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_NETWORK);
		CHECK_EQ_INT(r[0]->attempts, 2);
	}
	kf_llm_result_free(r[0]);
}

/* Largest number of requests the server was handling at one moment, from its log's intervals. */
static int max_overlap(const cJSON *log)
{
	int n = cJSON_GetArraySize(log), best = 0;
	for (int i = 0; i < n; i++) {
		double t = jnum(cJSON_GetArrayItem(log, i), "t_start");
		int k = 0;
		for (int j = 0; j < n; j++) {
			const cJSON *e = cJSON_GetArrayItem(log, j);
			if (jnum(e, "t_start") <= t && t < jnum(e, "t_end"))
				k++;
		}
		if (k > best)
			best = k;
	}
	return best;
}

static void test_concurrency(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[6];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	const char *script = "{\"rules\":[{\"match\":\"kernel\",\"text\":\"r\",\"delay_s\":0.8}]}";
	double wall;
	cJSON *log;

	cfg.concurrency = 3;
	CHECK(server_script(script));
	CHECKF(run_n(&cfg, 6, r, &wall, &err) == KF_OK, "%s", err.msg);
	for (int i = 0; i < 6; i++) {
		if (r[i])
			CHECK_EQ_INT(r[i]->status, KF_OK);
		kf_llm_result_free(r[i]);
	}
	log = server_log_n(6);
	CHECK_EQ_INT(cJSON_GetArraySize(log), 6);
	CHECK_EQ_INT(max_overlap(log), 3);
	CHECKF(wall >= 1550 && wall < 5000, "wall %.0f ms (two waves of 0.8 s)", wall);
	cJSON_Delete(log);

	cfg.concurrency = 1;
	CHECK(server_script(script));
	CHECKF(run_n(&cfg, 3, r, &wall, &err) == KF_OK, "%s", err.msg);
	for (int i = 0; i < 3; i++)
		kf_llm_result_free(r[i]);
	log = server_log_n(3);
	CHECK_EQ_INT(max_overlap(log), 1);
	CHECKF(wall >= 2350, "wall %.0f ms (three of 0.8 s in a row)", wall);
	cJSON_Delete(log);

	/* A request in backoff does not hold up the others: one 429 (retry-after 1 s) among fast ones. */
	cfg.concurrency = 4;
	CHECK(server_script(
	    "{\"replies\":[{\"fault\":\"429\",\"retry_after\":\"2\"},{\"text\":\"a\"},{\"text\":\"b\"},"
	    "{\"text\":\"c\"},{\"text\":\"d\"}]}"));
	{
		struct kf_llm_client *c = NULL;
		struct kf_llm_message m = {"user", "x", 0};
		struct kf_llm_request rq = {NULL, 1, &m, 0};
		double t0 = kf_now_ms(), first_three = 0;
		int last_attempts = 0;
		int got = 0;
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		for (int i = 0; c && i < 4; i++)
			CHECK(kf_llm_submit(c, &rq, (uint64_t)i, &err) == KF_OK);
		CHECK_EQ_INT(c ? kf_llm_pending(c) : 0, 4);
		while (c && got < 4) {
			struct kf_llm_result *x = NULL;
			CHECK(kf_llm_poll(c, 5000, &x, &err) == KF_OK);
			if (!x)
				break;
			if (++got == 3)
				first_three = kf_now_ms() - t0;
			last_attempts = x->attempts;
			kf_llm_result_free(x);
		}
		CHECK_EQ_INT(got, 4);
		/* the three others finished while the one that got the 429 waited its 2 s */
		CHECK_EQ_INT(last_attempts, 2);
		CHECKF(first_three < 1900, "three fast replies took %.0f ms", first_three);
		CHECK_EQ_INT(c ? kf_llm_pending(c) : 1, 0);
		kf_llm_client_free(c);
	}
}

static void test_key_never_written(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	char *slog;

	kf_buf_reset(&client_log);
	/* A server that repeats the key in its error message (some proxies do). */
	CHECK(server_script("{\"replies\":[{\"fault\":\"status\",\"status\":401,\"echo_key\":true,"
			    "\"message\":\"bad key\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_ERR_HTTP);
		CHECK_CONTAINS(r[0]->error, "bad key");
		CHECK_CONTAINS(r[0]->error, "[redacted]");
		CHECK(!strstr(r[0]->error, SECRET_KEY));
		CHECK(!strstr(r[0]->error, "S3CR3T"));
		CHECK(!strstr(r[0]->prompt_json, "S3CR3T"));
	}
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest");
	CHECK(server_script("{\"replies\":[{\"fault\":\"500\",\"echo_key\":true,\"retry_after_ms\":\"5\"},"
			    "{\"fault\":\"status\",\"status\":403,\"echo_key\":true}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0])
		CHECK(!strstr(r[0]->error, "S3CR3T"));
	kf_llm_result_free(r[0]);
	CHECK(client_log.len > 0);
	CHECK(!strstr(client_log.data, "S3CR3T"));
	cJSON_Delete(server_log_n(2));
	slog = server_log_text();
	CHECK(slog && strstr(slog, "x-api-key"));
	CHECK(slog && !strstr(slog, "S3CR3T")); /* the server records only that a key was present */
	free(slog);
	/* client-side errors do not echo it either */
	cfg.api_key = "sk-bad\r\nInjected: S3CR3T";
	{
		struct kf_llm_client *c = NULL;
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
		CHECK(!strstr(err.msg, "S3CR3T"));
	}
}

static void test_missing_key_and_settings(void)
{
	NEED_SERVER();
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_client *c = NULL;
	struct kf_llm_config cfg = {0};
	char *saved_key = kf_strdup(getenv("OPENAI_API_KEY")),
	     *saved_base = kf_strdup(getenv("OPENAI_BASE_URL"));
	char *saved_akey = kf_strdup(getenv("ANTHROPIC_API_KEY")),
	     *saved_abase = kf_strdup(getenv("ANTHROPIC_BASE_URL"));

	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("ANTHROPIC_BASE_URL");
	cfg.provider = KF_LLM_OPENAI;
	cfg.model = "gpt-4o";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(err.msg, "OPENAI_API_KEY");
	CHECK(!c);
	cfg.provider = KF_LLM_ANTHROPIC;
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(err.msg, "ANTHROPIC_API_KEY");

	/* A local server needs no key; the base URL may come from the environment. */
	cfg.provider = KF_LLM_OPENAI;
	setenv("OPENAI_BASE_URL", base_openai, 1);
	CHECK(server_script("{\"replies\":[{\"text\":\"local\"}]}"));
	{
		struct kf_llm_result *r[1];
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0])
			CHECK_STR(r[0]->text, "local");
		kf_llm_result_free(r[0]);
		cJSON *log = server_log_n(1);
		CHECK(!jget(log, "0.headers.authorization"));
		cJSON_Delete(log);
	}
	/* the key from the environment */
	setenv("OPENAI_API_KEY", "sk-env-key", 1);
	CHECK(server_script("{\"require_key\":\"sk-env-key\",\"replies\":[{\"text\":\"authorized\"}]}"));
	{
		struct kf_llm_result *r[1];
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0])
			CHECK_STR(r[0]->text, "authorized");
		kf_llm_result_free(r[0]);
	}

	cfg.base_url = "ftp://example.com/v1";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
	cfg.base_url = base_openai;
	cfg.max_tokens_field = "max_output_tokens";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
	cfg.max_tokens_field = NULL;
	cfg.model = NULL;
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
	cfg.model = "m";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
	{
		/* requests Anthropic would refuse are refused here, before any network */
		struct kf_llm_message sys = {"system", "x", 0}, two[2] = {{"user", "a", 0}, {"user", "b", 0}},
				      asst = {"assistant", "a", 0};
		struct kf_llm_request r1 = {NULL, 1, &sys, 0}, r2 = {NULL, 2, two, 0},
				      r3 = {NULL, 1, &asst, 0}, r4 = {NULL, 0, NULL, 0};
		CHECK(kf_llm_submit(c, &r1, 1, &err) == KF_ERR_INVALID);
		CHECK(kf_llm_submit(c, &r2, 2, &err) == KF_ERR_INVALID);
		CHECK(kf_llm_submit(c, &r3, 3, &err) == KF_ERR_INVALID);
		CHECK(kf_llm_submit(c, &r4, 4, &err) == KF_ERR_INVALID);
		CHECK_EQ_INT(kf_llm_pending(c), 0);
	}
	{
		struct kf_llm_result *x = (struct kf_llm_result *)1;
		CHECK(kf_llm_poll(c, 1000, &x, &err) == KF_OK);
		CHECK(x == NULL); /* nothing pending: returns at once */
	}
	kf_llm_client_free(c);
	kf_llm_client_free(NULL);
	kf_llm_result_free(NULL);

	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	if (saved_key)
		setenv("OPENAI_API_KEY", saved_key, 1);
	if (saved_base)
		setenv("OPENAI_BASE_URL", saved_base, 1);
	if (saved_akey)
		setenv("ANTHROPIC_API_KEY", saved_akey, 1);
	if (saved_abase)
		setenv("ANTHROPIC_BASE_URL", saved_abase, 1);
	free(saved_key);
	free(saved_base);
	free(saved_akey);
	free(saved_abase);
}

static void test_replay(void)
{
	struct kf_llm_config cfg = {0};
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_client *c = NULL;
	struct kf_llm_message m = {"user", "x", 0};
	struct kf_llm_request rq = {NULL, 1, &m, 0};
	struct kf_llm_result *r = NULL;

	cfg.provider = KF_LLM_REPLAY;
	cfg.replay_path = "tests/data/llm/replay.jsonl";
	CHECKF(kf_llm_client_new(&cfg, &c, &err) == KF_OK, "%s", err.msg);
	if (!c)
		return;
	/* run 7 (the first with calls), in seq order though the file lists seq 1 first */
	CHECK(kf_llm_submit(c, &rq, 10, &err) == KF_OK);
	CHECK(kf_llm_poll(c, 0, &r, &err) == KF_OK);
	if (r) {
		CHECK_EQ_INT(r->tag, 10);
		CHECK_EQ_INT(r->status, KF_OK);
		CHECK_STR(r->text, "first reply");
		CHECK_EQ_INT(r->tokens_in, 1200);
		CHECK_EQ_INT(r->tokens_out, 300);
		CHECK_NEAR(r->cost_usd, 0.0123, 1e-12);
		CHECK(r->cost_known);
		CHECK_STR(r->request_id, "req_a");
		CHECK_STR(r->model, "gpt-4o");
		CHECK_STR(r->provider, "replay");
	}
	kf_llm_result_free(r);
	CHECK(kf_llm_submit(c, &rq, 11, &err) == KF_OK);
	CHECK(kf_llm_poll(c, 0, &r, &err) == KF_OK);
	if (r) {
		CHECK_STR(r->text, "second reply");
		CHECK_STR(r->finish_reason, "length");
	}
	kf_llm_result_free(r);
	CHECK(kf_llm_submit(c, &rq, 12, &err) == KF_OK);
	CHECK(kf_llm_poll(c, 0, &r, &err) == KF_OK);
	if (r) {
		CHECK_EQ_INT(r->status, KF_ERR_HTTP); /* the recorded call failed; replay fails it again */
		CHECK_CONTAINS(r->error, "overloaded");
	}
	kf_llm_result_free(r);
	CHECK(kf_llm_submit(c, &rq, 13, &err) == KF_OK);
	CHECK(kf_llm_poll(c, 0, &r, &err) == KF_OK);
	if (r) {
		CHECK_EQ_INT(r->status, KF_ERR_LIMIT);
		CHECK(r->exhausted);
		CHECK_CONTAINS(r->error, "exhausted");
	}
	kf_llm_result_free(r);
	kf_llm_client_free(c);

	/* a chosen run */
	cfg.replay_run = "8";
	CHECKF(kf_llm_client_new(&cfg, &c, &err) == KF_OK, "%s", err.msg);
	if (c) {
		CHECK(kf_llm_submit(c, &rq, 1, &err) == KF_OK);
		CHECK(kf_llm_poll(c, 0, &r, &err) == KF_OK);
		if (r)
			CHECK_STR(r->text, "other run");
		kf_llm_result_free(r);
		kf_llm_client_free(c);
	}
	cfg.replay_run = "99";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
	CHECK_CONTAINS(err.msg, "no llm_call lines");
	cfg.replay_run = NULL;
	cfg.replay_path = "tests/data/llm/replay-bad.jsonl";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_PARSE);
	CHECK_CONTAINS(err.msg, "replay-bad.jsonl:3");
	cfg.replay_path = "tests/data/llm/corpus.json"; /* not an export */
	CHECK(kf_llm_client_new(&cfg, &c, &err) != KF_OK);
	cfg.replay_path = "tests/data/llm/no-such-file.jsonl";
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_NOTFOUND);
	cfg.replay_path = NULL;
	CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID);
}

/* The contract with the knowledge base: record real exchanges, export them (kforge kb export), replay
 * them: same texts in the same order, tokens and cost as recorded, no network. */
static void test_record_export_replay(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[3];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	struct kf_kb *kb = NULL;
	char db[160], out[160];
	int64_t task_id = 0, run_id = 0;

	snprintf(db, sizeof(db), "%s/kb.db", srv_dir);
	snprintf(out, sizeof(out), "%s/export.jsonl", srv_dir);
	cfg.concurrency = 1; /* replies in submit order */
	CHECK(server_script(
	    "{\"replies\":[{\"text\":\"reply zero\",\"tokens_in\":100,\"tokens_out\":10},"
	    "{\"text\":\"reply one\",\"finish_reason\":\"length\",\"tokens_in\":200,\"tokens_out\":20},"
	    "{\"fault\":\"status\",\"status\":400,\"message\":\"bad request\"}]}"));
	CHECKF(run_n(&cfg, 3, r, NULL, &err) == KF_OK, "%s", err.msg);
	CHECK(r[0] && r[1] && r[2] && r[2]->status == KF_ERR_HTTP);
	CHECKF(kf_kb_open(db, 0, &kb, &err) == KF_OK, "%s", err.msg);
	if (kb) {
		struct kf_kb_task t = {.name = "replay_task", .hash = "00", .category = "misc", .level = 1};
		struct kf_kb_run run = {
		    .strategy = "evo", .provider = "openai", .model = "gpt-4o", .backend = "cpu"};
		CHECKF(kf_kb_task_put(kb, &t, &task_id, &err) == KF_OK, "%s", err.msg);
		run.task_id = task_id;
		CHECKF(kf_kb_run_begin(kb, &run, &run_id, &err) == KF_OK, "%s", err.msg);
		for (int i = 0; i < 3 && r[i]; i++) {
			struct kf_kb_llm_call c = {.run_id = run_id,
						   .seq = -1,
						   .provider = r[i]->provider,
						   .model = r[i]->model,
						   .prompt = r[i]->prompt_json,
						   .response = r[i]->text,
						   .finish_reason = r[i]->finish_reason,
						   .tokens_in = r[i]->tokens_in,
						   .tokens_out = r[i]->tokens_out,
						   .cost_usd = r[i]->cost_usd,
						   .latency_ms = r[i]->latency_ms,
						   .error = r[i]->status ? r[i]->error : NULL,
						   .request_id = r[i]->request_id};
			CHECKF(kf_kb_record_llm_call(kb, &c, NULL, NULL, &err) == KF_OK, "%s", err.msg);
		}
		CHECKF(kf_kb_export(kb, run_id, out, &err) == KF_OK, "%s", err.msg);
		kf_kb_close(kb);
	}
	{
		struct kf_llm_config rc = {.provider = KF_LLM_REPLAY, .replay_path = out};
		struct kf_llm_client *c = NULL;
		struct kf_llm_message m = {"user", "x", 0};
		struct kf_llm_request rq = {NULL, 1, &m, 0};
		CHECKF(kf_llm_client_new(&rc, &c, &err) == KF_OK, "%s", err.msg);
		for (int i = 0; c && i < 4; i++) {
			struct kf_llm_result *x = NULL;
			CHECK(kf_llm_submit(c, &rq, (uint64_t)i, &err) == KF_OK);
			CHECK(kf_llm_poll(c, 0, &x, &err) == KF_OK);
			if (!x)
				continue;
			if (i < 3 && r[i]) {
				CHECK_EQ_INT(x->status, r[i]->status ? KF_ERR_HTTP : KF_OK);
				CHECK_STR(x->text, r[i]->text);
				CHECK_STR(x->finish_reason, r[i]->finish_reason);
				CHECK_EQ_INT(x->tokens_in, r[i]->tokens_in);
				CHECK_EQ_INT(x->tokens_out, r[i]->tokens_out);
				CHECK_NEAR(x->cost_usd, r[i]->cost_usd, 1e-12);
				CHECK_STR(x->request_id, r[i]->request_id);
				if (r[i]->status)
					CHECK_CONTAINS(x->error, "bad request");
			} else {
				CHECK(x->exhausted);
			}
			kf_llm_result_free(x);
		}
		kf_llm_client_free(c);
	}
	for (int i = 0; i < 3; i++)
		kf_llm_result_free(r[i]);
}

static void test_provider_names(void)
{
	enum kf_llm_provider p;
	CHECK(kf_llm_provider_parse("anthropic", &p) && p == KF_LLM_ANTHROPIC);
	CHECK(kf_llm_provider_parse("replay", &p) && p == KF_LLM_REPLAY);
	CHECK(!kf_llm_provider_parse("gemini", &p));
	CHECK_STR(kf_llm_provider_name(KF_LLM_OPENAI), "openai");
}

/* ---- the model table, provider choice, failure kinds ---------------------------------------------- */

static void test_model_table(void)
{
	struct kf_llm_model m;
	struct kf_err err = KF_ERR_INIT;
	CHECKF(kf_llm_model_lookup("gpt-5.5-pro-2026-04-24", &m, &err) == KF_OK, "%s", err.msg);
	CHECK(m.known && m.endpoint == KF_LLM_EP_RESPONSES && m.reasoning == KF_LLM_REASONING_EFFORT);
	CHECK_STR(m.token_field, "max_output_tokens");
	CHECK(kf_llm_model_lookup("gpt-5.4-mini", &m, &err) == KF_OK);
	CHECK(m.known && m.endpoint == KF_LLM_EP_CHAT && !m.temperature);
	CHECK_STR(m.key, "gpt-5.4*"); /* the longer prefix of the family */
	CHECK(kf_llm_model_lookup("claude-3-haiku-20240307", &m, &err) == KF_OK);
	CHECK(m.known && m.max_output == 4096 && m.provider == KF_LLM_ANTHROPIC);
	CHECK(kf_llm_model_lookup("claude-opus-4-6", &m, &err) == KF_OK);
	CHECK(m.known && m.reasoning == KF_LLM_REASONING_THINKING && (m.efforts >> KF_LLM_EFFORT_MAX & 1u));
	CHECK(kf_llm_model_lookup("claude-opus-4-20250514", &m, &err) == KF_OK);
	CHECK(m.known && m.max_output == 32000); /* Opus 4, not 4.5+ */
	CHECK(kf_llm_model_lookup("claude-sonnet-5", &m, &err) == KF_OK);
	CHECK(m.known && m.reasoning == KF_LLM_REASONING_ADAPTIVE);
	CHECK(kf_llm_model_lookup("Qwen2.5-Coder-32B", &m, &err) == KF_OK && !m.known);
	CHECK_EQ_INT(kf_llm_effort_parse("xhigh"), KF_LLM_EFFORT_XHIGH);
	CHECK_EQ_INT(kf_llm_effort_parse("ultra"), -1);
}

static void test_provider_detect(void)
{
	enum kf_llm_provider p = KF_LLM_REPLAY;
	struct kf_err err = KF_ERR_INIT;
	char why[256];
	const char *names[] = {"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
			       "ANTHROPIC_BASE_URL"};
	char *saved[4];
	for (int i = 0; i < 4; i++) {
		const char *v = getenv(names[i]);
		saved[i] = v ? strdup(v) : NULL;
		unsetenv(names[i]);
	}
	CHECK(kf_llm_provider_detect("gpt-4o", &p, why, sizeof(why), &err) == KF_ERR_UNAVAILABLE);
	CHECK_CONTAINS(err.msg, "OPENAI_API_KEY");
	setenv("OPENAI_API_KEY", "sk-x", 1);
	CHECK(kf_llm_provider_detect("claude-sonnet-4-5", &p, why, sizeof(why), &err) == KF_OK &&
	      p == KF_LLM_OPENAI);
	setenv("ANTHROPIC_API_KEY", "sk-ant-x", 1);
	/* both keys: the model decides (the case: claude-sonnet-4-5 went to OpenAI) */
	CHECK(kf_llm_provider_detect("claude-sonnet-4-5", &p, why, sizeof(why), &err) == KF_OK &&
	      p == KF_LLM_ANTHROPIC);
	CHECK_CONTAINS(why, "both keys");
	CHECK(kf_llm_provider_detect("gpt-5.4", &p, why, sizeof(why), &err) == KF_OK && p == KF_LLM_OPENAI);
	CHECK(kf_llm_provider_detect("claude-next-9", &p, why, sizeof(why), &err) == KF_OK &&
	      p == KF_LLM_ANTHROPIC);
	CHECK(kf_llm_provider_detect("my-local-model", &p, why, sizeof(why), &err) == KF_OK &&
	      p == KF_LLM_OPENAI);
	unsetenv("OPENAI_API_KEY");
	CHECK(kf_llm_provider_detect("gpt-4o", &p, why, sizeof(why), &err) == KF_OK && p == KF_LLM_ANTHROPIC);
	for (int i = 0; i < 4; i++) {
		if (saved[i])
			setenv(names[i], saved[i], 1);
		else
			unsetenv(names[i]);
		free(saved[i]);
	}
}

/* The failure kind comes from the status and the error's code/type, never from words in the message:
 * OpenAI's ordinary rate-limit text names billing, and a quota error's message may not say "quota". */
static void test_failure_classify(void)
{
	static const struct {
		int status;
		const char *body, *kind;
		bool fatal;
	} cases[] = {
	    {429,
	     "{\"error\":{\"message\":\"Rate limit reached ... account/billing.\",\"type\":\"requests\","
	     "\"code\":\"rate_limit_exceeded\"}}",
	     KF_LLM_FAIL_RATE_LIMIT, false},
	    {429,
	     "{\"error\":{\"message\":\"Requests to the ChatCompletions_Create Operation under Azure OpenAI "
	     "API have exceeded call rate limit of your current OpenAI pricing tier "
	     "(quota)\",\"code\":\"429\"}}",
	     KF_LLM_FAIL_RATE_LIMIT, false},
	    {429,
	     "{\"error\":{\"message\":\"out of credit\",\"type\":\"insufficient_quota\","
	     "\"code\":\"insufficient_quota\"}}",
	     KF_LLM_FAIL_QUOTA, true},
	    {429,
	     "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"limit\","
	     "\"details\":{\"error_code\":\"enforced_spend_limit_reached\"}}}",
	     KF_LLM_FAIL_QUOTA, true},
	    {400,
	     "{\"type\":\"error\",\"error\":{\"type\":\"billing_error\",\"message\":\"credit balance too "
	     "low\"}}",
	     KF_LLM_FAIL_QUOTA, true},
	    {401, "{\"error\":{\"message\":\"Incorrect API key\",\"code\":\"invalid_api_key\"}}",
	     KF_LLM_FAIL_AUTH, true},
	    {403, "{\"type\":\"error\",\"error\":{\"type\":\"permission_error\",\"message\":\"no\"}}",
	     KF_LLM_FAIL_PERMISSION, true},
	    {404, "{\"error\":{\"message\":\"The model `x` does not exist\",\"code\":\"model_not_found\"}}",
	     KF_LLM_FAIL_NOT_FOUND, true},
	    {404,
	     "{\"error\":{\"message\":\"This model is only supported in v1/responses and not in "
	     "v1/chat/completions.\",\"param\":\"model\",\"code\":null}}",
	     KF_LLM_FAIL_RESPONSES_ONLY, false},
	    {400,
	     "{\"error\":{\"message\":\"Unsupported parameter: "
	     "'temperature'\",\"code\":\"unsupported_parameter\"}}",
	     KF_LLM_FAIL_CONFIG, true},
	    {400, "{\"error\":{\"message\":\"prompt too long\",\"type\":\"invalid_request_error\"}}",
	     KF_LLM_FAIL_BAD_REQUEST, false},
	    {529, "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
	     KF_LLM_FAIL_SERVER, false},
	    {502, "<html>bad gateway</html>", KF_LLM_FAIL_SERVER, false},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		struct kf_llm_api_error e;
		kf_llm_error_parse(cases[i].body, strlen(cases[i].body), &e);
		const char *k = kf_llm_failure_classify(cases[i].status, &e);
		CHECKF(!strcmp(k, cases[i].kind), "case %zu: %s, want %s", i, k, cases[i].kind);
		CHECKF(kf_llm_failure_fatal(k) == cases[i].fatal, "case %zu", i);
	}
}

/* A rate limit whose text mentions billing is retried; a quota error is final and fatal, by code. */
static void test_rate_limit_vs_quota(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	CHECK(
	    server_script("{\"replies\":[{\"fault\":\"429\",\"retry_after_ms\":\"50\"},{\"text\":\"ok\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->status, KF_OK);
		CHECK_EQ_INT(r[0]->attempts, 2);
	}
	kf_llm_result_free(r[0]);
	for (int anth = 0; anth < 2; anth++) {
		cfg = cfg_for(anth ? KF_LLM_ANTHROPIC : KF_LLM_OPENAI, anth ? "claude-test" : "gpt-4o");
		CHECK(server_script("{\"replies\":[{\"fault\":\"429\",\"quota\":true},{\"text\":\"x\"}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECK_EQ_INT(r[0]->attempts, 1);
			CHECK_STR(r[0]->failure, KF_LLM_FAIL_QUOTA);
			CHECK(r[0]->fatal);
		}
		kf_llm_result_free(r[0]);
	}
	/* a storm of rate limits: retried up to the limit, then a failed call that is not fatal */
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
	CHECK(server_script("{\"replies\":[{\"fault\":\"429\",\"retry_after_ms\":\"20\",\"repeat\":5}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_EQ_INT(r[0]->attempts, 3);
		CHECK_STR(r[0]->failure, KF_LLM_FAIL_RATE_LIMIT);
		CHECK(!r[0]->fatal);
	}
	kf_llm_result_free(r[0]);
	/* bad key, unknown model: fatal kinds */
	CHECK(server_script("{\"require_key\":\"other\",\"replies\":[{\"text\":\"x\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_STR(r[0]->failure, KF_LLM_FAIL_AUTH);
		CHECK(r[0]->fatal);
		CHECK_CONTAINS(r[0]->error, "Incorrect API key");
	}
	kf_llm_result_free(r[0]);
	CHECK(server_script("{\"models\":[\"gpt-4.1\"],\"replies\":[{\"text\":\"x\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0]) {
		CHECK_STR(r[0]->failure, KF_LLM_FAIL_NOT_FOUND);
		CHECK(r[0]->fatal);
	}
	kf_llm_result_free(r[0]);
}

/* What a reasoning model gets: the effort field of its endpoint, a limit that leaves room to answer, and
 * settings its API would reject refused before any request. */
static void test_reasoning_requests(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg;
	struct kf_llm_client *c = NULL;
	cJSON *log;

	CHECK(server_script("{\"replies\":[{\"text\":\"a\",\"repeat\":9}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-5.4");
	cfg.reasoning_effort = "high";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-5.5-pro");
	cfg.reasoning_effort = "xhigh";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-opus-4-6");
	cfg.thinking_budget = 4000;
	cfg.reasoning_effort = "max";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0])
		CHECK_STR(r[0]->text, "a"); /* the thinking block is not the answer */
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-3-haiku-20240307");
	cfg.max_tokens = 8192;
	CHECK(server_script(
	    "{\"max_output\":{\"claude-3-haiku-20240307\":4096},\"replies\":[{\"text\":\"h\"}]}"));
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	if (r[0])
		CHECK_EQ_INT(r[0]->status, KF_OK); /* clamped to its 4096, so no 400 */
	kf_llm_result_free(r[0]);
	log = server_log_n(1);
	CHECK_NEAR(jnum(log, "0.body.max_tokens"), 4096, 0);
	cJSON_Delete(log);

	/* the three bodies above, in the log of the first script: replaced by the haiku one, so redo them */
	CHECK(server_script("{\"replies\":[{\"text\":\"a\",\"repeat\":9}]}"));
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-5.4");
	cfg.reasoning_effort = "high";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_OPENAI, "gpt-5.5-pro");
	cfg.reasoning_effort = "xhigh";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	kf_llm_result_free(r[0]);
	cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-opus-4-6");
	cfg.thinking_budget = 4000;
	cfg.reasoning_effort = "max";
	CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
	kf_llm_result_free(r[0]);
	log = server_log_n(3);
	CHECK_STR(jstr(log, "0.path"), "/v1/chat/completions");
	CHECK_STR(jstr(log, "0.body.reasoning_effort"), "high");
	CHECK_NEAR(jnum(log, "0.body.max_completion_tokens"), 32768, 0); /* not 8192: reasoning counts */
	CHECK_STR(jstr(log, "1.path"), "/v1/responses");
	CHECK_STR(jstr(log, "1.body.reasoning.effort"), "xhigh");
	CHECK_NEAR(jnum(log, "1.body.max_output_tokens"), 32768, 0);
	CHECK(cJSON_IsFalse(jget(log, "1.body.store")));
	CHECK_STR(jstr(log, "1.body.input.0.role"), "user");
	CHECK_STR(jstr(log, "1.body.instructions"), "you are a CUDA expert");
	CHECK_STR(jstr(log, "2.path"), "/v1/messages");
	CHECK_STR(jstr(log, "2.body.thinking.type"), "enabled");
	CHECK_NEAR(jnum(log, "2.body.thinking.budget_tokens"), 4000, 0);
	CHECK_STR(jstr(log, "2.body.output_config.effort"), "max");
	CHECK(jnum(log, "2.body.max_tokens") > 4000);
	cJSON_Delete(log);

	/* refused before a request: each would be a 400 on every call */
	static const struct {
		enum kf_llm_provider p;
		const char *model, *effort;
		int thinking;
		bool temp;
		const char *says;
	} bad[] = {
	    {KF_LLM_OPENAI, "gpt-5.4", NULL, 0, true, "temperature"},
	    {KF_LLM_OPENAI, "gpt-4o", "high", 0, false, "takes no --reasoning-effort"},
	    {KF_LLM_OPENAI, "gpt-5.4", "ultra", 0, false, "not one of"},
	    {KF_LLM_OPENAI, "gpt-5-mini", "xhigh", 0, false, "minimal, low, medium, high"},
	    {KF_LLM_OPENAI, "gpt-5.4", NULL, 2000, false, "Anthropic"},
	    {KF_LLM_ANTHROPIC, "claude-sonnet-5", NULL, 2000, false, "adaptively"},
	    {KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest", NULL, 2000, false, "no extended thinking"},
	    {KF_LLM_ANTHROPIC, "claude-opus-4-6", NULL, 512, false, "at least 1024"},
	    {KF_LLM_ANTHROPIC, "claude-opus-4-6", NULL, 4000, true, "temperature"},
	    {KF_LLM_ANTHROPIC, "claude-3-5-haiku-latest", "high", 0, false, "--thinking-budget"},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(bad); i++) {
		cfg = cfg_for(bad[i].p, bad[i].model);
		cfg.reasoning_effort = bad[i].effort;
		cfg.thinking_budget = bad[i].thinking;
		cfg.temperature_set = bad[i].temp;
		cfg.temperature = 0.5;
		err = (struct kf_err)KF_ERR_INIT;
		CHECKF(kf_llm_client_new(&cfg, &c, &err) == KF_ERR_INVALID, "case %zu", i);
		CHECKF(strstr(err.msg, bad[i].says), "case %zu: %s", i, err.msg);
		kf_llm_client_free(c);
		c = NULL;
	}
}

/* A model chat completions does not serve: the client switches to the Responses API and the run goes on. */
static void test_responses_only_switch(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[2];
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-new-pro");
	cJSON *log;
	CHECK(server_script("{\"responses_only\":[\"gpt-new-pro\"],\"replies\":[{\"text\":\"via responses\","
			    "\"repeat\":3}]}"));
	cfg.concurrency = 1;
	CHECKF(run_n(&cfg, 2, r, NULL, &err) == KF_OK, "%s", err.msg);
	for (int i = 0; i < 2; i++) {
		if (r[i]) {
			CHECK_EQ_INT(r[i]->status, KF_OK);
			CHECK_STR(r[i]->text, "via responses");
			CHECK_STR(r[i]->endpoint, "responses");
		}
		kf_llm_result_free(r[i]);
	}
	log = server_log_n(3);
	CHECK_EQ_INT(cJSON_GetArraySize(log), 3); /* one 404, then both on /v1/responses */
	CHECK_STR(jstr(log, "0.outcome"), "404-responses-only");
	CHECK_STR(jstr(log, "1.path"), "/v1/responses");
	CHECK_STR(jstr(log, "2.path"), "/v1/responses");
	cJSON_Delete(log);
	CHECK_CONTAINS(client_log.data, "Responses API only");
}

/* Refusals and length cuts are unusable replies with their own kinds; reasoning and cache tokens are
 * counted and priced at their rates. */
static void test_refusal_length_tokens(void)
{
	NEED_SERVER();
	struct kf_llm_result *r[1];
	struct kf_err err = KF_ERR_INIT;
	static const struct {
		enum kf_llm_provider p;
		const char *model;
	} who[] = {
	    {KF_LLM_OPENAI, "gpt-4o"}, {KF_LLM_OPENAI, "gpt-5-pro"}, {KF_LLM_ANTHROPIC, "claude-test"}};
	for (size_t i = 0; i < KF_ARRAY_SIZE(who); i++) {
		struct kf_llm_config cfg = cfg_for(who[i].p, who[i].model);
		CHECK(server_script("{\"replies\":[{\"refusal\":\"I cannot help with that\"},"
				    "{\"text\":\"\",\"finish_reason\":\"length\",\"tokens_out\":32768,"
				    "\"reasoning_tokens\":32768}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECK_EQ_INT(r[0]->status, KF_ERR_PARSE);
			CHECKF(!strcmp(r[0]->failure, KF_LLM_FAIL_REFUSAL), "%zu: %s", i, r[0]->failure);
			CHECK_CONTAINS(r[0]->error, "refused");
			CHECK(!r[0]->fatal);
		}
		kf_llm_result_free(r[0]);
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECKF(!strcmp(r[0]->failure, KF_LLM_FAIL_LENGTH), "%zu: %s", i, r[0]->failure);
			CHECK_STR(r[0]->finish_reason, "length");
			CHECK_CONTAINS(r[0]->error, "token limit");
			if (who[i].p == KF_LLM_OPENAI)
				CHECK_EQ_INT(r[0]->tokens_reasoning, 32768);
			CHECK(r[0]->cost_usd > 0 || who[i].p == KF_LLM_ANTHROPIC); /* billed all the same */
		}
		kf_llm_result_free(r[0]);
	}
	/* cache tokens: claude-opus-4-6 at $5 in, $0.50 cache reads, $6.25 cache writes, $25 out */
	{
		struct kf_llm_config cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-opus-4-6");
		CHECK(
		    server_script("{\"replies\":[{\"text\":\"x\",\"tokens_in\":10000,\"cached_tokens\":6000,"
				  "\"cache_write\":3000,\"tokens_out\":1000}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECK_EQ_INT(r[0]->tokens_in, 10000);
			CHECK_EQ_INT(r[0]->tokens_cached, 6000);
			CHECK_EQ_INT(r[0]->tokens_cache_write, 3000);
			CHECK_NEAR(r[0]->cost_usd,
				   (1000 * 5.0 + 6000 * 0.5 + 3000 * 6.25 + 1000 * 25.0) / 1e6, 1e-12);
		}
		kf_llm_result_free(r[0]);
	}
	{
		struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-5.4");
		CHECK(
		    server_script("{\"replies\":[{\"text\":\"x\",\"tokens_in\":10000,\"cached_tokens\":8000,"
				  "\"tokens_out\":100}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0])
			CHECK_NEAR(r[0]->cost_usd, (2000 * 2.5 + 8000 * 0.25 + 100 * 15.0) / 1e6, 1e-12);
		kf_llm_result_free(r[0]);
	}
	/* a model the table lacks, priced by --price-in/--price-out */
	{
		struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "my-local-model");
		struct kf_llm_client *c = NULL;
		struct kf_llm_settings st;
		cfg.price_in = 2;
		cfg.price_out = 4;
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		if (c) {
			kf_llm_client_settings(c, &st);
			CHECK(st.price_known);
			CHECK_CONTAINS(st.price_source, "--price-in");
		}
		kf_llm_client_free(c);
		CHECK(
		    server_script("{\"replies\":[{\"text\":\"x\",\"tokens_in\":1000,\"tokens_out\":1000}]}"));
		CHECKF(run_n(&cfg, 1, r, NULL, &err) == KF_OK, "%s", err.msg);
		if (r[0]) {
			CHECK(r[0]->cost_known);
			CHECK_NEAR(r[0]->cost_usd, (1000 * 2.0 + 1000 * 4.0) / 1e6, 1e-12);
		}
		kf_llm_result_free(r[0]);
	}
}

/* The static prefix of a message is a cached block for Anthropic; OpenAI gets the plain string. */
static void test_prompt_cache_blocks(void)
{
	NEED_SERVER();
	struct kf_err err = KF_ERR_INIT;
	struct kf_llm_message m = {"user", "STATIC PART\nDYNAMIC PART", 12};
	struct kf_llm_request rq = {"system text", 1, &m, 0};
	struct kf_llm_result *x = NULL;
	cJSON *log;
	for (int anth = 1; anth >= 0; anth--) {
		struct kf_llm_config cfg =
		    cfg_for(anth ? KF_LLM_ANTHROPIC : KF_LLM_OPENAI, anth ? "claude-test" : "gpt-4o");
		struct kf_llm_client *c = NULL;
		CHECK(server_script("{\"replies\":[{\"text\":\"ok\"}]}"));
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		if (!c)
			return;
		CHECK(kf_llm_submit(c, &rq, 1, &err) == KF_OK);
		CHECK(kf_llm_poll(c, 10000, &x, &err) == KF_OK);
		CHECK(x && x->status == KF_OK);
		if (x) /* the knowledge base keeps the whole text */
			CHECK_CONTAINS(x->prompt_json, "STATIC PART\\nDYNAMIC PART");
		kf_llm_result_free(x);
		x = NULL;
		kf_llm_client_free(c);
		log = server_log_n(1);
		if (anth) {
			CHECK_STR(jstr(log, "0.body.messages.0.content.0.text"), "STATIC PART\n");
			CHECK_STR(jstr(log, "0.body.messages.0.content.0.cache_control.type"), "ephemeral");
			CHECK_STR(jstr(log, "0.body.messages.0.content.1.text"), "DYNAMIC PART");
			CHECK(!jget(log, "0.body.messages.0.content.1.cache_control"));
		} else {
			CHECK_STR(jstr(log, "0.body.messages.1.content"), "STATIC PART\nDYNAMIC PART");
		}
		cJSON_Delete(log);
	}
}

/* The pre-flight check: a bad key and an unknown model stop before the first request, with the API's
 * message; a server without a listing is no obstacle; an Anthropic record's max_tokens lowers the cap. */
static void test_preflight(void)
{
	NEED_SERVER();
	struct kf_err err = KF_ERR_INIT;
	char note[512];
	static const struct {
		enum kf_llm_provider p;
		const char *model, *script;
		enum kf_status want;
		const char *says;
	} cases[] = {
	    {KF_LLM_OPENAI, "gpt-4o", "{\"require_key\":\"other\"}", KF_ERR_UNAVAILABLE, "Incorrect API key"},
	    {KF_LLM_ANTHROPIC, "claude-test", "{\"require_key\":\"other\"}", KF_ERR_UNAVAILABLE,
	     "invalid x-api-key"},
	    {KF_LLM_OPENAI, "gpt-nope", "{\"models\":[\"gpt-4o\"]}", KF_ERR_UNAVAILABLE,
	     "does not serve model 'gpt-nope'"},
	    {KF_LLM_ANTHROPIC, "claude-nope", "{\"models\":[\"claude-test\"]}", KF_ERR_UNAVAILABLE,
	     "not_found_error"},
	    {KF_LLM_OPENAI, "gpt-4o", "{\"models\":[\"gpt-4o\"]}", KF_OK, "is available"},
	};
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		struct kf_llm_config cfg = cfg_for(cases[i].p, cases[i].model);
		struct kf_llm_client *c = NULL;
		CHECK(server_script(cases[i].script));
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		if (!c)
			continue;
		err = (struct kf_err)KF_ERR_INIT;
		enum kf_status st = kf_llm_preflight(c, note, sizeof(note), &err);
		CHECKF(st == cases[i].want, "case %zu: %s", i, err.msg);
		CHECKF(strstr(st ? err.msg : note, cases[i].says), "case %zu: %s / %s", i, err.msg, note);
		CHECKF(!strstr(err.msg, SECRET_KEY), "case %zu", i);
		kf_llm_client_free(c);
	}
	{
		/* no listing route: a base URL whose paths the server does not know */
		struct kf_llm_config cfg = cfg_for(KF_LLM_OPENAI, "gpt-4o");
		struct kf_llm_client *c = NULL;
		char base[160];
		snprintf(base, sizeof(base), "http://127.0.0.1:%d/proxy/v1", srv_port);
		cfg.base_url = base;
		CHECK(server_script("{}"));
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		if (c) {
			CHECKF(kf_llm_preflight(c, note, sizeof(note), &err) == KF_OK, "%s", err.msg);
			CHECK_CONTAINS(note, "no model listing");
		}
		kf_llm_client_free(c);
	}
	{
		struct kf_llm_config cfg = cfg_for(KF_LLM_ANTHROPIC, "claude-small");
		struct kf_llm_client *c = NULL;
		struct kf_llm_settings st;
		CHECK(
		    server_script("{\"models\":[\"claude-small\"],\"max_output\":{\"claude-small\":2048}}"));
		CHECK(kf_llm_client_new(&cfg, &c, &err) == KF_OK);
		if (c) {
			CHECK(kf_llm_preflight(c, note, sizeof(note), &err) == KF_OK);
			kf_llm_client_settings(c, &st);
			CHECK_EQ_INT(st.max_tokens, 2048);
		}
		kf_llm_client_free(c);
	}
}

static void test_server_up(void)
{
	if (!server_start())
		CHECKF(0, "tests/llm_server.py did not start (python3 missing?)");
}

KF_TEST_MAIN(TEST(test_server_up), TEST(test_provider_names), TEST(test_openai_exchange),
	     TEST(test_anthropic_exchange), TEST(test_prompt_not_utf8), TEST(test_token_field_and_prices),
	     TEST(test_retry_429_retry_after), TEST(test_retry_after_date_and_should_retry),
	     TEST(test_retry_5xx_then_success), TEST(test_final_errors_not_retried),
	     TEST(test_timeout_then_success), TEST(test_broken_bodies), TEST(test_concurrency),
	     TEST(test_key_never_written), TEST(test_missing_key_and_settings), TEST(test_replay),
	     TEST(test_record_export_replay), TEST(test_model_table), TEST(test_provider_detect),
	     TEST(test_failure_classify), TEST(test_rate_limit_vs_quota), TEST(test_reasoning_requests),
	     TEST(test_responses_only_switch), TEST(test_refusal_length_tokens),
	     TEST(test_prompt_cache_blocks), TEST(test_preflight))
