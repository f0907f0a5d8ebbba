/* The command table and shared command-line helpers (git's builtin.h). Each subcommand lives in
 * cli/cmd_<name>.c and returns its process exit code (docs/spec/cli.md). */
#ifndef KF_CLI_H
#define KF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cancel.h"
#include "kf.h"

#define KF_VERSION "0.1.0"

/* Exit codes of docs/spec/cli.md. */
enum {
	KF_EXIT_OK = 0,
	KF_EXIT_FAILED = 1,
	KF_EXIT_USAGE = 2,
	KF_EXIT_INTERNAL = 3,
	KF_EXIT_UNAVAILABLE = 4,
	KF_EXIT_INTERRUPTED = 130,
};

struct kf_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* one line, after "kforge " */
};

int cmd_verify(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_regress(int argc, char **argv);
int cmd_kb(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_sandbox(int argc, char **argv);
int cmd_cache(int argc, char **argv);
/* The sandbox section of kforge doctor alone (`kforge sandbox layers [--json]`). */
int kf_cli_sandbox_layers(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);
/* `kforge tasks lint` and `tasks show` (cli/cmd_tasks_lint.c, cmd_tasks_show.c), dispatched from
 * cmd_tasks; argv[0] is the subcommand. */
int kf_cmd_tasks_lint(int argc, char **argv);
int kf_cmd_tasks_show(int argc, char **argv);
/* `kforge tasks baselines` (cli/cmd_tasks_baselines.c); argv[0] is "baselines". */
int kf_cmd_tasks_baselines(int argc, char **argv);
/* `kforge tasks new` (cli/cmd_tasks_new.c); argv[0] is "new". */
int kf_cmd_tasks_new(int argc, char **argv);
/* For `tasks validate`: prints each field a scaffold left marked TODO as an error ("FILE: FIELD: TEXT");
 * KF_ERR_INVALID when there is any (cli/cmd_tasks_new.c). */
enum kf_status kf_cli_tasks_todo_check(const char *path, struct kf_err *err);

const struct kf_cmd *kf_cli_find(const char *name);

/* Prints "usage: kforge <usage>" and "try 'kforge <cmd> --help'" to stderr; returns KF_EXIT_USAGE.
 * Optional message first ("error: ..."), lowercase, no trailing period. */
int kf_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a command's --help text (the usage line and help body) to stdout; returns 0. */
int kf_cli_help(const char *cmd, const char *body);
/* True when argv has -h or --help. */
bool kf_cli_wants_help(int argc, char **argv);
/* "error: ..." to stderr (git's error()). */
void kf_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kf_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints each line of a loader's warnings as "warning: LINE" to stderr. */
struct kf_buf;
void kf_cli_print_warnings(const struct kf_buf *w);
/* The knowledge-base path: --db value if given, else $KFORGE_DB, else "kforge.db". */
/* A time limit given as `--timeout-ms MS` (the one spelling every command takes) or by the older
 * `--timeout SEC` of optimize and compile (ms_flag/sec_flag: the values, NULL when not given): *out in ms,
 * from 100 to max_ms. 0, or the usage error's exit code (both given, a bad value). *out untouched when
 * neither is given. */
int kf_cli_timeout_ms(const char *cmd, const char *ms_flag, const char *sec_flag, int max_ms, int *out);
const char *kf_cli_db_path(const char *flag_value);

/* A tiny long-option parser for "--name VALUE", "--name=VALUE" and flags. Returns the index of the next
 * argument; sets *val for options that take a value. */
struct kf_opt {
	const char *name; /* "backend" for --backend */
	bool takes_value;
	const char **value; /* where the value goes (takes_value) */
	bool *flag;         /* set to true (flags) */
};
/* Parses argv[1..]: options anywhere, positionals collected into pos (at most max_pos). Returns 0 or
 * KF_EXIT_USAGE after printing the error for cmd. */
int kf_cli_parse(const char *cmd, int argc, char **argv, const struct kf_opt *opts, size_t n_opts,
		 const char **pos, size_t max_pos, size_t *n_pos);
/* How every subcommand starts: with -h/--help, prints cmd's help (body); else parses argv (kf_cli_parse)
 * and requires at least min_pos positionals (else the usage error with usage_msg). Returns true when the
 * command must return *rc now (0 after the help, 2 after a usage error); else false with *rc = 0. */
bool kf_cli_start(const char *cmd, const char *body, int argc, char **argv, const struct kf_opt *opts,
		  size_t n_opts, const char **pos, size_t min_pos, size_t max_pos, size_t *n_pos,
		  const char *usage_msg, int *rc);

struct kf_device_info;
enum kf_backend_kind;
/* Resolves --backend auto|cpu|cuda (NULL = auto). Returns 0, or the exit code after printing why
 * (4 when cuda was asked for and no GPU is usable). info (may be NULL) gets the device facts. */
int kf_cli_backend_select(const char *cmd, const char *flag, enum kf_backend_kind *out,
			  struct kf_device_info *info);

#endif
