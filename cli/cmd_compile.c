/* kforge compile: compiles one kernel file (NVRTC, or the cpu backend's host compiler) in the sandbox
 * and reports the log and per-kernel resources (registers, static shared memory, spills, stack), the
 * occupancy they allow, whether the result came from the cache, and the compile time (docs/spec/cli.md). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "kfile.h"
#include "profiler/profiler.h"
#include "sandbox/sandbox.h"
#include "task.h"

static const char help_body[] =
    "Compiles KERNEL (CUDA source with // kforge:launch directives) in a sandboxed child and prints the\n"
    "compiler log and, per kernel, registers, static shared memory, spills, stack frame and occupancy.\n"
    "Results are cached by content hash ($KFORGE_CACHE, default ~/.cache/kforge).\n\n"
    "options:\n"
    "  --arch ARCH        target GPU arch (default sm_90; sm_90a is chosen when the source needs it)\n"
    "  --backend B        cuda (NVRTC, default) or cpu (host compiler with the CUDA shim)\n"
    "  --task TASK        also check the launch directives against TASK and size occupancy at its\n"
    "                     timing shape\n"
    "  --timeout-ms MS    wall-clock limit of the compile (default 60000; --timeout SEC says the same)\n"
    "  --no-cache         compile even when a cached result exists\n"
    "  --json             one JSON object on stdout\n\n"
    "exit status: 0 compiled, 1 compile error or timeout, 2 bad input, 3 internal error, 4 unavailable\n";

/* Status word of the JSON output, and the exit code, for a kf_compile result. */
static const char *outcome_name(enum kf_status st)
{
	switch (st) {
	case KF_OK:
		return "ok";
	case KF_ERR_COMPILE:
		return "compile_error";
	case KF_ERR_TIMEOUT:
		return "timeout";
	case KF_ERR_LIMIT:
		return "resource_limit";
	case KF_ERR_CRASH:
		return "compiler_crash";
	case KF_ERR_INVALID:
	case KF_ERR_PARSE:
	case KF_ERR_NOTFOUND:
	case KF_ERR_RANGE:
		return "invalid";
	case KF_ERR_UNAVAILABLE:
	case KF_ERR_UNSUPPORTED:
		return "unavailable";
	case KF_ERR_INTERRUPTED:
		return "interrupted";
	default:
		return "internal";
	}
}

static int outcome_exit(enum kf_status st)
{
	switch (st) {
	case KF_OK:
		return KF_EXIT_OK;
	/* The thing checked (this kernel) failed: rejected, too slow to compile, or too big. */
	case KF_ERR_COMPILE:
	case KF_ERR_TIMEOUT:
	case KF_ERR_LIMIT:
	case KF_ERR_CRASH:
		return KF_EXIT_FAILED;
	case KF_ERR_INTERRUPTED:
		return KF_EXIT_INTERRUPTED;
	default: {
		int code = kf_status_exit_code(st);
		return code == KF_EXIT_FAILED ? KF_EXIT_INTERNAL : code;
	}
	}
}

/* The shape to size launches at: the task's first timing shape, else its last public one. */
static const struct kf_shape *sizing_shape(const struct kf_task *t)
{
	if (!t)
		return NULL;
	if (t->n_timing)
		return &t->shapes_timing[0];
	if (t->n_public)
		return &t->shapes_public[t->n_public - 1];
	return NULL;
}

struct occ_figures {
	bool ok;
	int block_threads;
	int smem_bytes; /* static + dynamic per block */
	struct kf_occupancy occ;
};

/* The profiler's occupancy figures for kernel r: needs the block size of its first launch directive
 * (literals, or dims of the task's sizing shape) and the registers and shared memory from ptxas. */
static struct occ_figures add_occupancy(const struct kf_kfile *k, const struct kf_task *t, const char *arch,
					const struct kf_kernel_res *r)
{
	struct occ_figures f = {0};
	const struct kf_shape *s = sizing_shape(t);
	int64_t threads = 1, v, dyn = 0;

	for (size_t i = 0; i < k->n_launches; i++) {
		const struct kf_launch *l = &k->launches[i];
		if (strcmp(l->kernel, r->name))
			continue;
		for (size_t d = 0; d < l->block_rank; d++) {
			if (kf_expr_eval(l->block[d], s, &v, NULL) != KF_OK || v <= 0 || v > 1024)
				return f;
			threads *= v;
		}
		if (l->smem && (kf_expr_eval(l->smem, s, &dyn, NULL) != KF_OK || dyn < 0 || dyn > INT32_MAX))
			return f;
		if (threads > 1024 || r->smem_static_bytes > INT32_MAX - dyn)
			return f;
		f.block_threads = (int)threads;
		f.smem_bytes = r->smem_static_bytes + (int)dyn;
		f.ok = kf_occupancy(arch, f.block_threads, r->registers, f.smem_bytes, &f.occ, NULL) == KF_OK;
		return f;
	}
	return f;
}

static void print_text(const char *path, const struct kf_compiled *c, const struct kf_kfile *k,
		       const struct kf_task *t, enum kf_status st)
{
	if (c->log && *c->log) {
		size_t n = strlen(c->log);
		fputs(c->log, stdout);
		if (c->log[n - 1] != '\n')
			fputc('\n', stdout);
	}
	printf("%s '%s' for %s with %s in %.1f ms%s\n", st == KF_OK ? "compiled" : "failed to compile", path,
	       c->arch, c->compiler, c->wall_ms, c->cached ? " (cached)" : "");
	for (size_t i = 0; i < c->n_kernels; i++) {
		const struct kf_kernel_res *r = &c->kernels[i];
		struct occ_figures f = add_occupancy(k, t, c->arch, r);
		printf("kernel '%s': %d registers, %d B static smem, %d B stack, %d B spill stores, %d B "
		       "spill loads, "
		       "%d B cmem\n",
		       r->name, r->registers, r->smem_static_bytes, r->stack_bytes, r->spill_store_bytes,
		       r->spill_load_bytes, r->cmem_bytes);
		if (f.ok)
			printf("  occupancy %.0f%% at %d threads/block, %d B smem/block (%d blocks/SM, "
			       "limited by %s)\n",
			       f.occ.occupancy * 100.0, f.block_threads, f.smem_bytes, f.occ.active_blocks,
			       f.occ.limiter);
	}
}

static cJSON *kernel_json(const struct kf_kernel_res *r, const struct kf_kfile *k, const struct kf_task *t,
			  const char *arch)
{
	cJSON *j = cJSON_CreateObject(), *o;
	struct occ_figures f;
	if (!j)
		return NULL;
	kf_json_add_string(j, "name", r->name);
	kf_json_add_int(j, "registers", r->registers);
	kf_json_add_int(j, "smem_static_bytes", r->smem_static_bytes);
	kf_json_add_int(j, "spill_store_bytes", r->spill_store_bytes);
	kf_json_add_int(j, "spill_load_bytes", r->spill_load_bytes);
	kf_json_add_int(j, "stack_bytes", r->stack_bytes);
	kf_json_add_int(j, "cmem_bytes", r->cmem_bytes);
	f = add_occupancy(k, t, arch, r);
	if (f.ok && (o = cJSON_AddObjectToObject(j, "occupancy"))) {
		kf_json_add_int(o, "block_threads", f.block_threads);
		kf_json_add_int(o, "smem_bytes_per_block", f.smem_bytes);
		kf_json_add_int(o, "active_blocks_per_sm", f.occ.active_blocks);
		kf_json_add_int(o, "active_warps_per_sm", f.occ.active_warps);
		kf_json_add_number(o, "occupancy", f.occ.occupancy);
		kf_json_add_string(o, "limiter", f.occ.limiter);
	}
	return j;
}

/* One JSON document for every outcome, so scripts never parse stderr. c may be NULL. */
static int print_json(const char *path, const char *backend, const char *arch, const struct kf_compiled *c,
		      const struct kf_kfile *k, const struct kf_task *t, enum kf_status st, const char *error)
{
	cJSON *j = cJSON_CreateObject(), *ks;
	struct kf_err err = KF_ERR_INIT;
	if (!j) {
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	kf_json_add_string(j, "status", outcome_name(st));
	kf_json_add_string(j, "kernel_file", path);
	kf_json_add_string(j, "backend", backend);
	kf_json_add_string(j, "arch", c ? c->arch : arch);
	kf_json_add_string(j, "compiler", c ? c->compiler : NULL);
	kf_json_add_string(j, "key", c ? c->key : NULL);
	kf_json_add_bool(j, "cached", c && c->cached);
	if (c)
		kf_json_add_number(j, "compile_ms", c->wall_ms);
	else
		cJSON_AddNullToObject(j, "compile_ms");
	kf_json_add_string(j, "log", c ? c->log : "");
	kf_json_add_string(j, "error", st == KF_OK ? NULL : error);
	ks = cJSON_AddArrayToObject(j, "kernels");
	for (size_t i = 0; c && ks && i < c->n_kernels; i++) {
		cJSON *kj = kernel_json(&c->kernels[i], k, t, c->arch);
		if (kj)
			cJSON_AddItemToArray(ks, kj);
	}
	if (kf_json_fput(j, true, stdout, &err) != KF_OK) {
		cJSON_Delete(j);
		kf_cli_error("%s", err.msg);
		return KF_EXIT_INTERNAL;
	}
	cJSON_Delete(j);
	return outcome_exit(st);
}

/* The arch reported when no compile result names one. */
static const char *default_arch(const struct kf_compile_opts *co)
{
	if (co->backend == KF_BACKEND_CPU)
		return "host";
	return co->arch && *co->arch ? co->arch : "sm_90";
}

int cmd_compile(int argc, char **argv)
{
	const char *arch = NULL, *backend = "cuda", *task_path = NULL, *timeout = NULL, *timeout_ms = NULL,
		   *pos[1];
	bool json = false, no_cache = false;
	const struct kf_opt opts[] = {
	    {"arch", true, &arch, NULL},
	    {"backend", true, &backend, NULL},
	    {"task", true, &task_path, NULL},
	    {"timeout", true, &timeout, NULL},
	    {"timeout-ms", true, &timeout_ms, NULL},
	    {"no-cache", false, NULL, &no_cache},
	    {"json", false, NULL, &json},
	};
	struct kf_compile_opts co = {0};
	struct kf_kfile *k = NULL;
	struct kf_task *t = NULL;
	struct kf_compiled *c = NULL;
	struct kf_err err = KF_ERR_INIT;
	size_t n_pos = 0;
	enum kf_status st;
	int rc;

	if (kf_cli_start("compile", help_body, argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 1, 1, &n_pos,
			 "expected one KERNEL file", &rc))
		return rc;
	if (!strcmp(backend, "cuda"))
		co.backend = KF_BACKEND_CUDA;
	else if (!strcmp(backend, "cpu"))
		co.backend = KF_BACKEND_CPU;
	else
		return kf_cli_usage_error("compile", "unknown backend '%s' (cuda or cpu)", backend);
	if ((rc = kf_cli_timeout_ms("compile", timeout_ms, timeout, 3600000, &co.timeout_ms)))
		return rc;
	co.arch = arch;
	co.no_cache = no_cache;

	/* Bad input (exit 2): an unreadable kernel file, a bad directive, a bad task or a mismatch. */
	st = kf_kfile_load(pos[0], &k, &err);
	if (!st && task_path) {
		st = kf_task_load(task_path, KF_TASK_NO_FILES, NULL, &t, &err);
		if (!st)
			st = kf_kfile_bind(k, t, &err);
	}
	if (st) {
		if (st == KF_ERR_NOMEM || st == KF_ERR_INTERNAL)
			rc = KF_EXIT_INTERNAL;
		else
			rc = KF_EXIT_USAGE;
		if (json) {
			print_json(pos[0], backend, default_arch(&co), NULL, k, t, KF_ERR_INVALID, err.msg);
		}
		kf_cli_error("%s", err.msg);
		kf_task_free(t);
		kf_kfile_free(k);
		return rc;
	}

	/* NVRTC first on every backend: a cpu build of what the GPU compiler rejects is no use */
	st = kf_compile_checked(k, &co, &c, &err);
	if (json) {
		rc = print_json(pos[0], backend, default_arch(&co), c, k, t, st, err.msg);
	} else {
		if (c)
			print_text(pos[0], c, k, t, st);
		if (st)
			kf_cli_error("%s", err.msg);
		rc = outcome_exit(st);
	}
	kf_compiled_free(c);
	kf_task_free(t);
	kf_kfile_free(k);
	return rc;
}
