/* kforge kb _stress and _check (cli/cmd_kb.h): hidden subcommands the durability test drives, recording in
 * a loop until killed, then checking that every acknowledged record survived. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_kb.h"

/* ---- hidden: durability test helpers ---- */

static int last_cand(void *ctx, const struct kf_kb_candidate *c)
{
	*(int64_t *)ctx = c->id;
	return 0;
}

/* Records candidate+evaluation steps and llm calls in a loop, printing each committed candidate id on
 * stdout (flushed) only after its commit returned: an id printed is an acknowledged record. With --run it
 * resumes that run; --limit bounds the steps (default: until killed). */
int kf_cli_kb_stress(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kb_task t = {0};
	struct kf_kb_run r = {0};
	int64_t task_id, run_id = 0, limit = 0, parent = 0;
	char src[512];

	if (a->limit && !kf_cli_kb_parse_id(a->limit, &limit))
		return kf_cli_usage_error("kb", "--limit needs a positive number");
	if (a->run) {
		if (!kf_cli_kb_parse_id(a->run, &run_id))
			return kf_cli_usage_error("kb", "--run needs a run id");
		if (kf_kb_run_set_status(kb, run_id, "running", &err))
			return kf_cli_kb_fail(&err);
		/* Resume: the state to rebuild is the last recorded candidate, the parent of the next one. */
		if (kf_kb_candidates_each(kb, run_id, last_cand, &parent, &err))
			return kf_cli_kb_fail(&err);
		printf("run %" PRId64 " resumed after candidate %" PRId64 "\n", run_id, parent);
		fflush(stdout);
	} else {
		t.name = "stress";
		t.hash = "0000000000000000000000000000000000000000000000000000000000000000";
		t.category = "test";
		t.description = "records written in a loop by the durability test";
		if (kf_kb_task_put(kb, &t, &task_id, &err))
			return kf_cli_kb_fail(&err);
		r.task_id = task_id;
		r.strategy = "stress";
		if (kf_kb_run_begin(kb, &r, &run_id, &err))
			return kf_cli_kb_fail(&err);
		printf("run %" PRId64 "\n", run_id);
		fflush(stdout);
	}
	for (int64_t i = 0; !limit || i < limit; i++) {
		struct kf_kb_llm_call call = {0};
		struct kf_kb_candidate c = {0};
		struct kf_kb_eval e = {0};
		struct kf_kb_timing tm = {0};
		int64_t call_id, cid;
		if (kf_cancelled())
			break;
		call.run_id = run_id;
		call.seq = -1;
		call.provider = "stress";
		call.prompt = "[{\"role\":\"user\",\"content\":\"make it faster\"}]";
		call.response = "```cuda\n__global__ void k(float *x) {}\n```";
		call.tokens_in = 100;
		call.tokens_out = 50;
		call.cost_usd = 0.001;
		if (kf_kb_record_llm_call(kb, &call, &call_id, NULL, &err))
			return kf_cli_kb_fail(&err);
		snprintf(src, sizeof(src),
			 "// step %" PRId64 " at %.6f\n__global__ void k(float *x, int n) {\n"
			 "  __shared__ float t[32][33];\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
			 "  if (i < n) x[i] = __expf(x[i]) + %" PRId64 ";\n}\n",
			 i, kf_now_ms(), i);
		c.run_id = run_id;
		c.parent_id = parent;
		c.llm_call_id = call_id;
		c.generation = (int)(i / 8);
		c.edit_kind = parent ? "diff" : "seed";
		c.source = src;
		e.backend = "cpu";
		e.arch = "cpu";
		e.dtype = "f32";
		e.toolchain = "stress";
		e.verdict = (i % 3) ? "pass" : "wrong_output";
		e.speedup = (i % 3) ? 1.0 + (double)(i % 97) / 10.0 : 0;
		tm.shape = "{\"N\":1024}";
		tm.clock = "cpu";
		tm.median_ms = 1.0;
		tm.speedup = e.speedup;
		if (kf_kb_record_step(kb, &c, &e, &tm, 1, &cid, NULL, &err))
			return kf_cli_kb_fail(&err);
		printf("%" PRId64 "\n", cid);
		fflush(stdout);
		parent = cid;
	}
	if (kf_kb_run_set_status(kb, run_id, kf_cancelled() ? "interrupted" : "done", &err))
		return kf_cli_kb_fail(&err);
	return kf_cancelled() ? KF_EXIT_INTERRUPTED : 0;
}

struct check_ctx {
	int64_t found;
};

static int found_cb(void *ctx, const struct kf_kb_candidate *c)
{
	((struct check_ctx *)ctx)->found = c->id;
	return 0;
}

/* Integrity and foreign-key checks, then (FILE given) every candidate id listed in FILE must exist.
 * Exit 0 when all hold, 1 otherwise. */
int kf_cli_kb_check(struct kf_kb *kb, const struct kb_args *a)
{
	struct kf_err err = KF_ERR_INIT;
	int64_t n = 0, missing = 0;
	if (kf_kb_check(kb, &err)) {
		kf_cli_error("%s", err.msg);
		return KF_EXIT_FAILED;
	}
	if (a->n_pos > 1) {
		FILE *f = fopen(a->pos[1], "r");
		char line[128];
		if (!f) {
			kf_cli_error("cannot open '%s': %s", a->pos[1], strerror(errno));
			return KF_EXIT_USAGE;
		}
		while (fgets(line, sizeof(line), f)) {
			struct check_ctx c = {0};
			int64_t id;
			line[strcspn(line, "\r\n")] = '\0';
			if (!kf_cli_kb_parse_id(line, &id))
				continue;
			n++;
			kf_kb_candidate_get(kb, id, found_cb, &c, NULL);
			if (c.found != id) {
				missing++;
				kf_cli_error("acknowledged candidate %" PRId64 " is missing", id);
			}
		}
		fclose(f);
	}
	printf("ok: integrity and foreign keys hold, %" PRId64 " acknowledged ids checked, %" PRId64
	       " missing\n",
	       n, missing);
	return missing ? KF_EXIT_FAILED : 0;
}
