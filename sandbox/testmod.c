/* kforge sandbox test-module: any shared object, loaded into a cpu worker through the very path a
 * candidate module takes (the same session, memfd, dlopen inside the same sandbox, so its constructors
 * run in there), then one step that calls its entry function. What the sandbox refused comes back from
 * the worker's log. This is how the layers are tested as if every compile-time gate had failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/confine.h"
#include "compile_int.h"
#include "sandbox.h"

#define TEST_MODULE_MAX ((size_t)128 << 20)
#define LOG_KEEP ((size_t)64 << 10)

static void collect_refusals(struct kf_test_module_report *rep)
{
	const char *p = rep->log;
	while ((p = strstr(p, KF_SANDBOX_REFUSED_MARK)) != NULL) {
		const char *what = p + strlen(KF_SANDBOX_REFUSED_MARK);
		size_t len = strcspn(what, " \n");
		while (*what == ' ')
			what++, len = strcspn(what, " \n");
		if (rep->n_refused < KF_ARRAY_SIZE(rep->refused)) {
			bool seen = false;
			for (size_t i = 0; i < rep->n_refused && !seen; i++)
				seen = strlen(rep->refused[i]) == len && !strncmp(rep->refused[i], what, len);
			if (!seen)
				snprintf(rep->refused[rep->n_refused++], sizeof(rep->refused[0]), "%.*s",
					 (int)len, what);
		}
		p = what;
	}
}

/* "'NAME' returned N" (the cpu backend's words for an entry that returned N != 0). */
static bool entry_code(const char *msg, int *code)
{
	const char *q = msg[0] == '\'' ? strchr(msg + 1, '\'') : NULL;
	char *end;
	long v;
	if (!q || strncmp(q, "' returned ", 11))
		return false;
	errno = 0;
	v = strtol(q + 11, &end, 10);
	if (errno || end == q + 11 || *end || v < INT32_MIN || v > INT32_MAX)
		return false;
	*code = (int)v;
	return true;
}

enum kf_status kf_sandbox_test_module(const char *path, const char *entry, int timeout_ms,
				      struct kf_test_module_report *rep, struct kf_err *err)
{
	struct kf_buf img = KF_BUF_INIT(TEST_MODULE_MAX), log = KF_BUF_INIT(LOG_KEEP);
	struct kf_compiled mod;
	struct kf_plan_launch launch;
	struct kf_plan plan;
	struct kf_worker_opts wo;
	struct kf_session *s = NULL;
	struct kf_step step;
	struct kf_step_result *r = NULL;
	struct kf_err e = KF_ERR_INIT;
	enum kf_status st;

	memset(rep, 0, sizeof(*rep));
	if (!entry || !*entry)
		entry = "kforge_test_entry";
	if (strlen(entry) >= sizeof(launch.kernel))
		return kf_err_set(err, KF_ERR_INVALID, "entry name '%.40s...' is too long", entry);
	st = kf_buf_read_file(&img, path, err);
	if (st) {
		kf_buf_release(&img);
		return st;
	}
	memset(&mod, 0, sizeof(mod));
	mod.backend = KF_BACKEND_CPU;
	snprintf(mod.arch, sizeof(mod.arch), "host");
	mod.image = (uint8_t *)img.data;
	mod.image_len = img.len;
	mod.log = (char *)"";
	memset(&launch, 0, sizeof(launch));
	snprintf(launch.kernel, sizeof(launch.kernel), "%s", entry);
	for (int i = 0; i < 3; i++)
		launch.grid[i] = launch.block[i] = 1;
	launch.line = 1;
	memset(&plan, 0, sizeof(plan));
	plan.n_launches = 1;
	plan.launches = &launch;
	memset(&wo, 0, sizeof(wo));
	wo.backend = KF_BACKEND_CPU;
	wo.test_entry = entry;
	wo.log_copy = &log;
	wo.start_timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
	rep->layers = kf_sandbox_report()->active;

	st = kf_session_start(&wo, &mod, &plan, 4096, &s, &e);
	if (st == KF_ERR_UNAVAILABLE || st == KF_ERR_NOMEM) {
		kf_buf_release(&img);
		kf_buf_release(&log);
		*err = e;
		return st;
	}
	if (st) {
		rep->status = st;
		snprintf(rep->msg, sizeof(rep->msg), "%s", e.msg);
	} else {
		rep->loaded = true;
		r = malloc(sizeof(*r));
		if (!r) {
			kf_session_end(s, NULL);
			kf_buf_release(&img);
			kf_buf_release(&log);
			return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		}
		memset(&step, 0, sizeof(step));
		step.reps = 1;
		step.timeout_ms = timeout_ms > 0 ? timeout_ms : 20000;
		for (int i = 0; i < KF_MAX_BUFFERS; i++)
			step.in_off[i] = step.out_off[i] = -1;
		st = kf_session_step(s, &step, r, &e);
		rep->status = st ? st : r->status;
		snprintf(rep->msg, sizeof(rep->msg), "%s", st ? e.msg : r->msg);
		if (!st && r->status == KF_OK) {
			rep->entry_ran = true;
		} else if (!st && r->status == KF_ERR_RUNTIME && entry_code(r->msg, &rep->entry_code)) {
			rep->entry_ran = true;
			rep->status = KF_OK;
		}
		free(r);
		kf_session_end(s, NULL);
	}
	kf_buf_release(&img);
	rep->log = kf_buf_detach(&log, NULL);
	if (!rep->log)
		rep->log = calloc(1, 1);
	if (!rep->log)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	collect_refusals(rep);
	/* Killed by the filter's SIGSYS (the call was made with the signal blocked): no line in the log,
	 * the session's message says so. */
	if (strstr(rep->msg, KF_SANDBOX_REFUSED_MARK " a system call (SIGSYS)") &&
	    rep->n_refused < KF_ARRAY_SIZE(rep->refused))
		snprintf(rep->refused[rep->n_refused++], sizeof(rep->refused[0]),
			 "a system call made with SIGSYS blocked (the worker was killed)");
	return KF_OK;
}
