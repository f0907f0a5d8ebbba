/* Tests of kforge-config/1 files (agent/config.c): a good file gives every value spelt as its flag takes
 * it; an unknown key is an error with a suggestion, a wrong type or an out-of-range value an error naming
 * the file and the dotted key, malformed JSON an error naming the file and the line; ./kforge.json is read
 * when --config is not given and "none" skips it; a flag beats the file, the file the environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config.h"
#include "testing.h"

static char dir[] = "/tmp/kf-test-config.XXXXXX";

/* Writes text to DIR/name; returns the path (static, overwritten by the next call). */
static const char *put(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* Reads text as a config file; err holds the message on failure. */
static enum kf_status read_text(const char *text, struct kf_config *c, struct kf_err *err)
{
	return kf_config_read(put("k.json", text), c, err);
}

static void test_good_file(void)
{
	struct kf_config c;
	struct kf_err err = KF_ERR_INIT;
	kf_config_init(&c);
	const char *path =
	    put("good.json", "{\n"
			     "  \"format\": \"kforge-config/1\",\n"
			     "  \"optimize\": {\n"
			     "    \"strategy\": \"evo\", \"provider\": \"openai\", \"model\": \"gpt-4o\",\n"
			     "    \"base_url\": \"http://127.0.0.1:8000/v1\", \"max_tokens\": 4096,\n"
			     "    \"reasoning_effort\": \"low\", \"thinking_budget\": 2048,\n"
			     "    \"temperature\": 0.7, \"timeout_ms\": 30000, \"budget_calls\": 12,\n"
			     "    \"budget_usd\": 1.5, \"time_limit_s\": 600, \"concurrency\": 2,\n"
			     "    \"backend\": \"cpu\", \"seed\": 42, \"keep_best\": true,\n"
			     "    \"prompts\": \"my-prompts\",\n"
			     "    \"search\": {\"islands\": 4, \"patience_min\": 3, \"p_explore\": 0.9}\n"
			     "  }\n"
			     "}\n");
	CHECKF(kf_config_read(path, &c, &err) == KF_OK, "%s", err.msg);
	CHECK_STR(c.path, path);
	CHECK_STR(c.value[KF_CONFIG_STRATEGY], "evo");
	CHECK_STR(c.value[KF_CONFIG_PROVIDER], "openai");
	CHECK_STR(c.value[KF_CONFIG_MODEL], "gpt-4o");
	CHECK_STR(c.value[KF_CONFIG_BASE_URL], "http://127.0.0.1:8000/v1");
	CHECK_STR(c.value[KF_CONFIG_MAX_TOKENS], "4096");
	CHECK_STR(c.value[KF_CONFIG_REASONING_EFFORT], "low");
	CHECK_STR(c.value[KF_CONFIG_THINKING_BUDGET], "2048");
	CHECK(c.value[KF_CONFIG_TEMPERATURE] && strtod(c.value[KF_CONFIG_TEMPERATURE], NULL) == 0.7);
	CHECK_STR(c.value[KF_CONFIG_TIMEOUT_MS], "30000");
	CHECK_STR(c.value[KF_CONFIG_BUDGET_CALLS], "12");
	CHECK_STR(c.value[KF_CONFIG_BUDGET_USD], "1.5");
	CHECK_STR(c.value[KF_CONFIG_TIME_LIMIT_S], "600");
	CHECK_STR(c.value[KF_CONFIG_CONCURRENCY], "2");
	CHECK_STR(c.value[KF_CONFIG_BACKEND], "cpu");
	CHECK_STR(c.value[KF_CONFIG_SEED], "42");
	CHECK_STR(c.value[KF_CONFIG_KEEP_BEST], "true");
	/* a relative prompts folder is the config file's neighbour, wherever kforge runs */
	char want[300];
	snprintf(want, sizeof(want), "%s/my-prompts", dir);
	CHECK_STR(c.value[KF_CONFIG_PROMPTS], want);
	CHECK_EQ_INT(c.search.islands, 4);
	CHECK_EQ_INT(c.search.patience_min, 3);
	CHECK_NEAR(c.search.p_explore, 0.9, 0);
	CHECK_EQ_INT(c.search.migrate_every, 5); /* not in the file: the default */
	CHECK_EQ_INT(c.search_set, (1u << 0) | (1u << 6) | (1u << 3));
	kf_config_release(&c);
	CHECK(c.path == NULL && c.value[KF_CONFIG_MODEL] == NULL);

	/* the least a file can be; an absolute prompts folder is kept */
	CHECKF(read_text("{\"format\": \"kforge-config/1\", \"optimize\": {\"prompts\": \"/opt/p\"}}", &c,
			 &err) == KF_OK,
	       "%s", err.msg);
	CHECK_STR(c.value[KF_CONFIG_PROMPTS], "/opt/p");
	CHECK(c.value[KF_CONFIG_MODEL] == NULL);
	CHECK_EQ_INT(c.search_set, 0);
	CHECKF(read_text("{\"format\": \"kforge-config/1\"}", &c, &err) == KF_OK, "%s", err.msg);
	kf_config_release(&c);
	CHECK_STR(kf_config_key_name(KF_CONFIG_BUDGET_CALLS), "budget_calls");
	CHECK(kf_config_key_name(KF_CONFIG_N_KEYS) == NULL);
}

/* Each bad file and the message it must get (after "DIR/k.json: "). */
static void test_bad_files(void)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"budget_call\": 3}}",
	     "optimize: unknown key 'budget_call'; did you mean 'budget_calls'?"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"serch\": {}}}",
	     "optimize: unknown key 'serch'; did you mean 'search'?"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"colour\": 3}}",
	     "optimize: unknown key 'colour'"},
	    {"{\"format\": \"kforge-config/1\", \"optimise\": {}}",
	     "unknown key 'optimise'; did you mean 'optimize'?"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"search\": {\"islands\": \"x\"}}}",
	     "optimize.search.islands: expected an integer 1..32, got \"x\""},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"search\": {\"islands\": 40}}}",
	     "optimize.search.islands: expected an integer 1..32, got 40"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"search\": {\"isalnds\": 4}}}",
	     "optimize.search: unknown key 'isalnds'; did you mean 'islands'?"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"budget_calls\": \"20\"}}",
	     "optimize.budget_calls: expected an integer 1..1000000, got \"20\""},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"budget_calls\": 0}}",
	     "optimize.budget_calls: expected an integer 1..1000000, got 0"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"concurrency\": 2.5}}",
	     "optimize.concurrency: expected an integer 1..64, got 2.5"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"temperature\": 3}}",
	     "optimize.temperature: expected a number 0..2, got 3"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"budget_usd\": 0}}",
	     "optimize.budget_usd: expected a number > 0, got 0"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"thinking_budget\": 512}}",
	     "optimize.thinking_budget: expected an integer 1024..1000000, got 512"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"strategy\": \"annealing\"}}",
	     "optimize.strategy: expected one of schedule, evo, mcts, got \"annealing\""},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"backend\": 1}}",
	     "optimize.backend: expected one of auto, cpu, cuda, got 1"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"keep_best\": \"yes\"}}",
	     "optimize.keep_best: expected true or false, got \"yes\""},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"model\": \"\"}}",
	     "optimize.model: expected a non-empty string, got \"\""},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": {\"model\": null}}",
	     "optimize.model: expected a non-empty string, got null"},
	    {"{\"format\": \"kforge-config/1\", \"optimize\": []}", "optimize: expected an object"},
	    {"{\"format\": \"kforge-task/1\"}",
	     "format: expected \"kforge-config/1\", got \"kforge-task/1\""},
	    {"{\"optimize\": {}}", "format: missing required field"},
	    {"[]", "expected an object, got an array"},
	};
	struct kf_config c;
	struct kf_err err = KF_ERR_INIT;
	char want[512];
	kf_config_init(&c);
	for (size_t i = 0; i < KF_ARRAY_SIZE(cases); i++) {
		snprintf(want, sizeof(want), "%s/k.json: %s", dir, cases[i].msg);
		CHECKF(read_text(cases[i].text, &c, &err) == KF_ERR_INVALID, "case %zu", i);
		CHECKF(!strncmp(err.msg, want, strlen(want)), "case %zu: '%s', want '%s'", i, err.msg, want);
		CHECK(c.path == NULL && c.value[KF_CONFIG_MODEL] == NULL); /* nothing kept from a bad file */
	}
	/* malformed JSON: the file and the line */
	CHECK_EQ_INT(
	    read_text("{\n  \"format\": \"kforge-config/1\",\n  \"optimize\": {\"model\": \"x\",}\n}\n", &c,
		      &err),
	    KF_ERR_PARSE);
	snprintf(want, sizeof(want), "%s/k.json:3:", dir);
	CHECKF(!strncmp(err.msg, want, strlen(want)), "'%s', want '%s...'", err.msg, want);
	/* a duplicate key is an error, not a silent pick */
	CHECK(read_text("{\"format\": \"kforge-config/1\", \"optimize\": {\"seed\": 1, \"seed\": 2}}", &c,
			&err) != KF_OK);
	snprintf(want, sizeof(want), "%s/none.json", dir);
	CHECK_EQ_INT(kf_config_read(want, &c, &err), KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "none.json");
	kf_config_release(&c);
}

/* Which file: --config FILE, else ./kforge.json when there is one, never with --config none. */
static void test_load(void)
{
	struct kf_config c;
	struct kf_err err = KF_ERR_INIT;
	char old[4096], path[300];
	kf_config_init(&c);
	CHECK(getcwd(old, sizeof(old)) != NULL);
	CHECK(chdir(dir) == 0);
	unlink("kforge.json");
	CHECK_EQ_INT(kf_config_load(NULL, &c, &err), KF_OK);
	CHECK(c.path == NULL);
	put("kforge.json", "{\"format\": \"kforge-config/1\", \"optimize\": {\"model\": \"here\"}}");
	CHECK_EQ_INT(kf_config_load(NULL, &c, &err), KF_OK);
	CHECK_STR(c.path, "kforge.json");
	CHECK_STR(c.value[KF_CONFIG_MODEL], "here");
	CHECK_EQ_INT(kf_config_load("none", &c, &err), KF_OK);
	CHECK(c.path == NULL && c.value[KF_CONFIG_MODEL] == NULL);
	snprintf(
	    path, sizeof(path), "%s",
	    put("other.json", "{\"format\": \"kforge-config/1\", \"optimize\": {\"model\": \"there\"}}"));
	CHECK_EQ_INT(kf_config_load(path, &c, &err), KF_OK);
	CHECK_STR(c.value[KF_CONFIG_MODEL], "there");
	CHECK_EQ_INT(kf_config_load("missing.json", &c, &err), KF_ERR_NOTFOUND);
	CHECK_CONTAINS(err.msg, "missing.json");
	put("kforge.json", "{\"format\": \"kforge-config/1\", \"optimize\": {\"modle\": \"x\"}}");
	CHECK_EQ_INT(kf_config_load(NULL, &c, &err), KF_ERR_INVALID);
	CHECK_STR(err.msg, "kforge.json: optimize: unknown key 'modle'; did you mean 'model'?");
	unlink("kforge.json");
	CHECK(chdir(old) == 0);
	kf_config_release(&c);
}

/* flag > file > environment > default, and the source of each. */
static void test_precedence(void)
{
	struct kf_config c;
	struct kf_err err = KF_ERR_INIT;
	enum kf_config_source src;
	kf_config_init(&c);
	CHECK_EQ_INT(read_text("{\"format\": \"kforge-config/1\", \"optimize\": {\"model\": \"file-model\", "
			       "\"budget_calls\": 9}}",
			       &c, &err),
		     KF_OK);
	setenv("KF_TEST_MODEL", "env-model", 1);
	CHECK_STR(kf_config_resolve(&c, KF_CONFIG_MODEL, "flag-model", "KF_TEST_MODEL", &src), "flag-model");
	CHECK_STR(kf_config_source_name(src), "flag");
	CHECK_STR(kf_config_resolve(&c, KF_CONFIG_MODEL, NULL, "KF_TEST_MODEL", &src), "file-model");
	CHECK_STR(kf_config_source_name(src), "file");
	CHECK_STR(kf_config_resolve(&c, KF_CONFIG_BUDGET_CALLS, NULL, NULL, &src), "9");
	CHECK_EQ_INT(src, KF_CONFIG_FROM_FILE);
	kf_config_release(&c); /* no file */
	CHECK_STR(kf_config_resolve(&c, KF_CONFIG_MODEL, NULL, "KF_TEST_MODEL", &src), "env-model");
	CHECK_STR(kf_config_source_name(src), "env");
	setenv("KF_TEST_MODEL", "", 1); /* set but empty: not a value */
	CHECK(kf_config_resolve(&c, KF_CONFIG_MODEL, NULL, "KF_TEST_MODEL", &src) == NULL);
	CHECK_STR(kf_config_source_name(src), "default");
	unsetenv("KF_TEST_MODEL");
	CHECK(kf_config_resolve(&c, KF_CONFIG_MODEL, NULL, "KF_TEST_MODEL", &src) == NULL);
	CHECK_EQ_INT(src, KF_CONFIG_FROM_DEFAULT);
	CHECK(kf_config_resolve(NULL, KF_CONFIG_SEED, NULL, NULL, NULL) == NULL);
}

KF_TEST_MAIN_TMPDIR(dir, TEST(test_good_file), TEST(test_bad_files), TEST(test_load), TEST(test_precedence))
