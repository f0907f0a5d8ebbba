/* kforge verify TASK KERNEL: the verification protocol of docs/spec/verification.md; one line per shape and
 * a verdict line, or one JSON document with --json. Exit 0 pass, 1 rejected, 2 bad task, 3 internal,
 * 4 unsupported or no GPU. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval/eval.h"
#include "verifier/verifier.h"
#include "verifier/verifier_json.h"

static const char help[] =
    "Checks KERNEL against the task's reference on every public, hidden and derived edge shape, with\n"
    "inputs from a secret seed (printed, replay it with --seed), poisoned outputs, guard zones, input\n"
    "checksums, a determinism check and >= 8 launches per worker.\n\n"
    "options:\n"
    "  --backend B      auto (default: cuda when a GPU is usable, else cpu), cpu or cuda\n"
    "  --arch ARCH      the GPU arch NVRTC compiles for first, on every backend (default: the GPU's,\n"
    "                   else sm_90)\n"
    "  --seed N         replay a verification with this seed\n"
    "  --strict         more seeds and edge shapes (what a suspiciously fast kernel gets)\n"
    "  --all-shapes     keep checking after the first failing shape\n"
    "  --no-shuffle     cpu: run fibers in program order between barriers\n"
    "  --no-sanitizer   cpu: skip the sanitizer pass (memcheck, initcheck, racecheck, warp UB)\n"
    "  --timeout-ms MS  limit per launch step (default 20000)\n"
    "  --deadline-s S   limit for the whole verification, compiles included (default 3600);\n"
    "                   what is left when it passes is a timeout verdict\n"
    "  --json           one JSON document on stdout\n"
    "exit: 0 pass, 1 rejected, 2 bad task or arguments, 3 internal error, 4 unsupported/unavailable\n";

int cmd_verify(int argc, char **argv)
{
	const char *backend = NULL, *seed_s = NULL, *timeout_s = NULL, *deadline_s = NULL, *arch = NULL,
		   *pos[2];
	bool json = false, strict = false, all = false, no_shuffle = false, verbose = false, no_san = false;
	const struct kf_opt opts[] = {
	    {"backend", true, &backend, NULL},
	    {"seed", true, &seed_s, NULL},
	    {"json", false, NULL, &json},
	    {"strict", false, NULL, &strict},
	    {"all-shapes", false, NULL, &all},
	    {"no-shuffle", false, NULL, &no_shuffle},
	    {"verbose", false, NULL, &verbose},
	    {"timeout-ms", true, &timeout_s, NULL},
	    {"deadline-s", true, &deadline_s, NULL},
	    {"no-sanitizer", false, NULL, &no_san},
	    {"arch", true, &arch, NULL},
	};
	size_t n_pos;
	struct kf_eval_opts eo;
	struct kf_device_info dev;
	struct kf_task *task = NULL;
	struct kf_eval_outcome *res = NULL;
	struct kf_err err = KF_ERR_INIT;
	struct kf_buf warn = KF_BUF_INIT(1 << 16);
	enum kf_status st;
	int rc;

	if (kf_cli_start("verify", help, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 2, 2, &n_pos,
			 "expected TASK and KERNEL", &rc))
		return rc;
	kf_eval_opts_init(&eo);
	if (seed_s && (!kf_parse_u64(seed_s, &eo.seed) || !eo.seed))
		return kf_cli_usage_error("verify", "--seed needs a positive integer, not '%s'", seed_s);
	if (timeout_s) {
		uint64_t ms;
		if (!kf_parse_u64(timeout_s, &ms) || ms < 100 || ms > 3600000)
			return kf_cli_usage_error("verify", "--timeout-ms needs 100..3600000, not '%s'",
						  timeout_s);
		eo.step_timeout_ms = (int)ms;
	}
	if (deadline_s) {
		uint64_t sec;
		if (!kf_parse_u64(deadline_s, &sec) || sec < 1 || sec > 86400)
			return kf_cli_usage_error("verify", "--deadline-s needs 1..86400, not '%s'",
						  deadline_s);
		eo.deadline_s = (int)sec;
	}
	eo.strict = strict;
	eo.all_shapes = all;
	eo.no_shuffle = no_shuffle;
	eo.no_sanitizer = no_san;
	eo.verbose = verbose;
	/* bad input first: the task is read before the backend is picked (and talked about) */
	st = kf_task_load(pos[0], 0, &warn, &task, &err);
	if (warn.len)
		fputs(warn.data, stderr);
	kf_buf_release(&warn);
	if (st) {
		kf_cli_error("%s", err.msg);
		return kf_status_exit_code(st) == 3 ? 3 : KF_EXIT_USAGE;
	}
	if ((rc = kf_cli_backend_select("verify", backend, &eo.backend, &dev))) {
		kf_task_free(task);
		return rc;
	}
	eo.device = &dev;
	eo.arch = arch; /* NVRTC's target: this, else the GPU's, else sm_90 */
	st = kf_eval_file(task, pos[1], &eo, &res, &err);
	if (st) {
		kf_cli_error("%s", err.msg);
		kf_task_free(task);
		if (st == KF_ERR_NOTFOUND || st == KF_ERR_INVALID || st == KF_ERR_PARSE || st == KF_ERR_IO)
			return KF_EXIT_USAGE;
		return st == KF_ERR_UNAVAILABLE ? KF_EXIT_UNAVAILABLE : KF_EXIT_INTERNAL;
	}
	if (json) {
		cJSON *j = kf_verify_result_json(res->verify, task, pos[1]);
		char *s = cJSON_Print(j);
		puts(s ? s : "{}");
		free(s);
		cJSON_Delete(j);
	} else {
		kf_verify_result_print(stdout, res->verify);
		if (res->feedback.compile_log)
			fprintf(stderr, "%s\n", res->verify->compile_log);
	}
	rc = kf_verdict_exit_code(res->verdict);
	kf_eval_outcome_free(res);
	kf_task_free(task);
	return kf_cancelled() ? KF_EXIT_INTERRUPTED : rc;
}
