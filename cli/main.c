/* kforge: the command table (docs/spec/cli.md) and the helpers every subcommand shares. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "sandbox/sandbox.h"
#include "suggest.h"

static const struct kf_cmd commands[] = {
    {"verify", cmd_verify, "the verification protocol: verdict and reasons",
     "verify TASK KERNEL [--backend auto|cpu|cuda] [--seed N] [--json]"},
    {"profile", cmd_profile, "verify, then time against the reference (and baseline)",
     "profile TASK KERNEL [--backend auto|cpu|cuda] [--seed N] [--json]"},
    {"compile", cmd_compile, "NVRTC compile: log, registers, shared memory, spills",
     "compile KERNEL [--arch sm_90] [--task TASK] [--json]"},
    {"optimize", cmd_optimize, "search for a faster kernel with an LLM",
     "optimize TASK [--strategy evo|mcts] [--provider openai|anthropic|replay] [options] | optimize --resume "
     "RUN"},
    {"bench", cmd_bench, "KernelBench-style runner over many tasks", "bench SUITE [options]"},
    {"regress", cmd_regress, "re-verify and re-time shipped kernels",
     "regress MANIFEST [--junit FILE] [--json] [--update-baselines] [--threshold PCT]"},
    {"kb", cmd_kb, "the knowledge base", "kb <stats|list|show|export|import|merge|search> [options]"},
    {"tasks", cmd_tasks, "task files", "tasks <list|show|validate|lint|baselines|new> [options]"},
    {"export", cmd_export, "the kernel with a launcher: a C/C++ header or a PyTorch extension",
     "export KERNEL --task TASK (--header | --torch) [-o FILE] [--name NAME] [--db FILE]"},
    {"report", cmd_report, "render a run's report",
     "report RUN [--format md|html|json] [--db FILE] | report --compare RUN RUN..."},
    {"doctor", cmd_doctor, "what this machine has", "doctor [--json]"},
    {"cache", cmd_cache, "the compile and reference-output caches", "cache <stats|prune> [options]"},
    {"sandbox", cmd_sandbox, "the sandbox: its layers, and any shared object run inside it",
     "sandbox <test-module FILE.so [--entry NAME] [--json] | layers [--json]>"},
    {"version", cmd_version, "version and build information", "version [--json]"},
    {"help", cmd_help, "this list, or one command's help", "help [COMMAND]"},
};

const struct kf_cmd *kf_cli_find(const char *name)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* The command a typo most likely meant (git's "did you mean"), or NULL when none is close. */
static const char *closest_command(const char *s)
{
	struct kf_suggest g;
	kf_suggest_init(&g);
	for (size_t i = 0; i < KF_ARRAY_SIZE(commands); i++)
		kf_suggest_try(&g, s, commands[i].name);
	return g.best;
}

/* The option a typo most likely meant, by the same rule. */
static const char *closest_option(const char *name, size_t len, const struct kf_opt *opts, size_t n_opts)
{
	char typed[64];
	struct kf_suggest g;
	if (len >= sizeof(typed))
		return NULL;
	memcpy(typed, name, len);
	typed[len] = '\0';
	kf_suggest_init(&g);
	for (size_t i = 0; i < n_opts; i++)
		kf_suggest_try(&g, typed, opts[i].name);
	return g.best;
}

static void print_overview(FILE *f)
{
	fprintf(f, "usage: kforge <command> [options]\n\n"
		   "kforge makes CUDA kernels faster with an LLM without ever shipping a wrong one.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < KF_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'kforge <command> --help' shows one command's options.\n");
}

int cmd_help(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
		const struct kf_cmd *c = kf_cli_find(argv[1]);
		char *sub[] = {argv[1], "--help", NULL};
		if (!c)
			return kf_cli_usage_error("help", "unknown command '%s'", argv[1]);
		return c->fn(2, sub);
	}
	print_overview(stdout);
	return 0;
}

/* ---- --json: errors are a JSON document on stdout too (docs/spec/cli.md) ----------------------------- */

static bool json_mode;
static char first_error[1024];
static unsigned long long stdout_bytes;

static void note_error(const char *fmt, va_list ap)
{
	if (!first_error[0])
		vsnprintf(first_error, sizeof(first_error), fmt, ap);
}

/* stdout under --json: what the command writes goes to fd 1, counted */
static ssize_t counted_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;
	(void)cookie;
	while (done < n) {
		ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)w;
	}
	stdout_bytes += n;
	return (ssize_t)n;
}

static void json_begin(int argc, char **argv)
{
	cookie_io_functions_t io = {.write = counted_write};
	FILE *f;
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			json_mode = true;
	if (!json_mode || !(f = fopencookie(NULL, "w", io)))
		return;
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	stdout = f;
}

/* A command that failed without printing its document prints the error as one. */
static void json_end(int rc)
{
	cJSON *o;
	char *s;
	if (!json_mode)
		return;
	fflush(stdout);
	if (!rc || stdout_bytes)
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", rc == KF_EXIT_INTERRUPTED ? "interrupted" : "error");
	cJSON_AddNumberToObject(o, "exit", rc);
	cJSON_AddStringToObject(o, "error",
				first_error[0]              ? first_error
				: rc == KF_EXIT_INTERRUPTED ? "interrupted"
							    : "failed");
	s = cJSON_PrintUnformatted(o);
	if (s)
		printf("%s\n", s);
	free(s);
	cJSON_Delete(o);
	fflush(stdout);
}

int kf_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	const struct kf_cmd *c = cmd ? kf_cli_find(cmd) : NULL;
	if (fmt) {
		va_list ap, cp;
		va_start(ap, fmt);
		va_copy(cp, ap);
		note_error(fmt, cp);
		va_end(cp);
		fputs("error: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
	if (c) {
		fprintf(stderr, "usage: kforge %s\n", c->usage);
		fprintf(stderr, "try 'kforge %s --help'\n", c->name);
	} else {
		fprintf(stderr, "usage: kforge <command> [options]\ntry 'kforge --help'\n");
	}
	return KF_EXIT_USAGE;
}

int kf_cli_help(const char *cmd, const char *body)
{
	const struct kf_cmd *c = kf_cli_find(cmd);
	if (c)
		printf("usage: kforge %s\n\n%s\n", c->usage, c->summary);
	if (body && *body)
		printf("\n%s", body);
	return 0;
}

bool kf_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	}
	return false;
}

void kf_cli_error(const char *fmt, ...)
{
	va_list ap, cp;
	va_start(ap, fmt);
	va_copy(cp, ap);
	note_error(fmt, cp);
	va_end(cp);
	fputs("error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void kf_cli_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void kf_cli_print_warnings(const struct kf_buf *w)
{
	const char *p = w->data;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(stderr, "warning: %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

int kf_cli_timeout_ms(const char *cmd, const char *ms_flag, const char *sec_flag, int max_ms, int *out)
{
	char *end;
	if (ms_flag && sec_flag)
		return kf_cli_usage_error(cmd, "--timeout-ms and --timeout say the same: give one");
	if (ms_flag) {
		long long ms = strtoll(ms_flag, &end, 10);
		if (end == ms_flag || *end || ms < 100 || ms > max_ms)
			return kf_cli_usage_error(cmd, "--timeout-ms needs 100..%d milliseconds, not '%s'",
						  max_ms, ms_flag);
		*out = (int)ms;
	} else if (sec_flag) {
		double sec = strtod(sec_flag, &end);
		if (end == sec_flag || *end || !(sec * 1000.0 >= 100 && sec * 1000.0 <= max_ms))
			return kf_cli_usage_error(cmd, "--timeout needs 0.1..%d seconds, not '%s'",
						  max_ms / 1000, sec_flag);
		*out = (int)(sec * 1000.0);
	}
	return 0;
}

const char *kf_cli_db_path(const char *flag_value)
{
	const char *env = getenv("KFORGE_DB");
	if (flag_value && *flag_value)
		return flag_value;
	if (env && *env)
		return env;
	return "kforge.db";
}

int kf_cli_parse(const char *cmd, int argc, char **argv, const struct kf_opt *opts, size_t n_opts,
		 const char **pos, size_t max_pos, size_t *n_pos)
{
	bool only_pos = false;
	*n_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!only_pos && !strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!only_pos && a[0] == '-' && a[1] == '-' && a[2]) {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const struct kf_opt *o = NULL;
			for (size_t k = 0; k < n_opts; k++)
				if (strlen(opts[k].name) == len && !strncmp(opts[k].name, name, len))
					o = &opts[k];
			if (!o) {
				const char *near = closest_option(name, len, opts, n_opts);
				if (near)
					return kf_cli_usage_error(
					    cmd, "unknown option '--%.*s'; did you mean '--%s'?", (int)len,
					    name, near);
				return kf_cli_usage_error(cmd, "unknown option '--%.*s'", (int)len, name);
			}
			if (o->takes_value) {
				if (eq) {
					*o->value = eq + 1;
				} else if (i + 1 < argc) {
					*o->value = argv[++i];
				} else {
					return kf_cli_usage_error(cmd, "option '--%s' needs a value",
								  o->name);
				}
			} else {
				if (eq)
					return kf_cli_usage_error(cmd, "option '--%s' takes no value",
								  o->name);
				*o->flag = true;
			}
			continue;
		}
		if (!only_pos && a[0] == '-' && a[1])
			return kf_cli_usage_error(cmd, "unknown option '%s'", a);
		if (*n_pos >= max_pos)
			return kf_cli_usage_error(cmd, "unexpected argument '%s'", a);
		pos[(*n_pos)++] = a;
	}
	return 0;
}

bool kf_cli_start(const char *cmd, const char *body, int argc, char **argv, const struct kf_opt *opts,
		  size_t n_opts, const char **pos, size_t min_pos, size_t max_pos, size_t *n_pos,
		  const char *usage_msg, int *rc)
{
	if (kf_cli_wants_help(argc, argv))
		*rc = kf_cli_help(cmd, body);
	else if ((*rc = kf_cli_parse(cmd, argc, argv, opts, n_opts, pos, max_pos, n_pos)))
		return true;
	else if (*n_pos < min_pos)
		*rc = kf_cli_usage_error(cmd, "%s", usage_msg ? usage_msg : "missing arguments");
	else
		return false;
	return true;
}

int main(int argc, char **argv)
{
	const struct kf_cmd *c;

	/* Before anything else: not dumpable, the initial environment block zeroed (sandbox/README.md). */
	kf_sandbox_protect_parent();
	kf_cancel_install(); /* SIGINT, SIGTERM: every command's long waits stop (core/cancel.h) */
	signal(SIGPIPE, SIG_IGN);

	if (argc < 2) {
		print_overview(stderr);
		return KF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_overview(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	c = kf_cli_find(argv[1]);
	if (!c) {
		const char *near = closest_command(argv[1]);
		kf_cli_error("'%s' is not a kforge command", argv[1]);
		if (near)
			fprintf(stderr, "did you mean '%s'?\n", near);
		return kf_cli_usage_error(NULL, NULL);
	}
	json_begin(argc, argv);
	int rc = c->fn(argc - 1, argv + 1);
	/* Whatever the command made of a cut-short step, a cancelled command exits 130 (docs/spec/cli.md). */
	if (kf_cancelled())
		rc = KF_EXIT_INTERRUPTED;
	json_end(rc);
	return rc;
}
