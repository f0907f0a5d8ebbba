/* The baselines of a profile (core/baseline.h): before a baseline is timed it must pass the whole
 * verification protocol against the reference, like a candidate; one that fails is reported with its
 * verdict and never timed, one the backend cannot run (a library call off the cuda backend) is
 * unavailable with the reason. Verdicts are cached (KFORGE_CACHE/baselines) by task, reference,
 * baseline, backend, arch and the kforge binary, so an optimize run verifies each baseline once, not once
 * per candidate, and a rebuilt kforge (perhaps with new checks) verifies again. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baselines_int.h"
#include "core/baseline.h"
#include "hash.h"
#include "verifier/verifier.h"

#define VERDICT_CACHE_VERSION 1 /* bump when what a cached verdict means changes */

_Static_assert(KF_PROFILE_MAX_BASELINES == KF_BASELINES_MAX, "a profile holds every baseline of a task");

static void cache_path(char *out, size_t n, const char *key)
{
	const char *env = getenv("KFORGE_CACHE"), *home = getenv("HOME");
	if (env && *env)
		snprintf(out, n, "%s/baselines/%s", env, key);
	else
		snprintf(out, n, "%s/.cache/kforge/baselines/%s", home && *home ? home : "/tmp", key);
}

static void mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
}

/* sha256 of a file's bytes, or of nothing when it cannot be read (the verifier then fails on it). */
static void file_hash(const char *path, char out[KF_SHA256_HEX])
{
	struct kf_buf b = KF_BUF_INIT(4u << 20);
	if (kf_buf_read_file(&b, path, NULL))
		kf_buf_reset(&b);
	kf_sha256_hex(b.data, b.len, out);
	kf_buf_release(&b);
}

static void verdict_key(const struct kf_task *t, const struct kf_baseline *b, const struct kf_profile_opts *o,
			const char *arch, char out[KF_SHA256_HEX])
{
	char ref[KF_SHA256_HEX], what[KF_SHA256_HEX], src[700];
	struct stat sb;
	file_hash(t->reference, ref);
	if (b->kind == KF_BASELINE_KERNEL)
		file_hash(b->kernel, what);
	else
		kf_sha256_hex(b->canon, strlen(b->canon), what);
	/* the verifier that judged it: a rebuilt kforge (perhaps with new checks) judges again */
	if (stat("/proc/self/exe", &sb) != 0)
		memset(&sb, 0, sizeof(sb));
	snprintf(src, sizeof(src), "kforge-baseline-verdict-%d|%s|%s|%s|%s|%s|%lld.%lld.%lld",
		 VERDICT_CACHE_VERSION, t->hash, ref, what, kf_backend_name(o->backend), arch,
		 (long long)sb.st_size, (long long)sb.st_mtime, (long long)sb.st_ino);
	kf_sha256_hex(src, strlen(src), out);
}

/* A cached verdict: "pass", or "VERDICT reason". */
static bool cache_get(const char *key, char *line, size_t n)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;
	cache_path(path, sizeof(path), key);
	if (!(f = fopen(path, "r")))
		return false;
	ok = fgets(line, (int)n, f) != NULL;
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	return ok && line[0];
}

static void cache_put(const char *key, const char *line)
{
	char path[PATH_MAX];
	cache_path(path, sizeof(path), key);
	mkdirs(path);
	kf_write_file_atomic(path, line, strlen(line), NULL); /* a failed write is a miss next time */
}

static void set_status(struct kf_profile_baseline *pb, enum kf_profile_base_status st, const char *verdict,
		       const char *reason)
{
	pb->status = st;
	snprintf(pb->verdict, sizeof(pb->verdict), "%s", verdict ? verdict : "");
	snprintf(pb->reason, sizeof(pb->reason), "%s", reason ? reason : "");
}

/* Verifies baseline b (or takes the cached verdict); true when it passed. */
static bool verified(const struct kf_task *t, const struct kf_baseline *b, const struct kf_profile_opts *o,
		     const char *arch, struct kf_profile_baseline *pb)
{
	struct kf_verify_opts vo;
	struct kf_verify_result *r = NULL;
	struct kf_err err = KF_ERR_INIT;
	char key[KF_SHA256_HEX], line[600];
	enum kf_status st;

	verdict_key(t, b, o, arch, key);
	if (cache_get(key, line, sizeof(line))) {
		char *sp = strchr(line, ' ');
		if (!strcmp(line, "pass"))
			return true;
		if (sp) {
			*sp = '\0';
			set_status(pb, KF_PROFILE_BASE_REJECTED, line, sp + 1);
			return false;
		}
	}
	kf_verify_opts_init(&vo);
	vo.backend = o->backend;
	vo.seed = o->seed;
	vo.worker_path = o->worker_path;
	vo.arch = o->backend == KF_BACKEND_CUDA ? arch : NULL;
	vo.timing_shapes = o->backend == KF_BACKEND_CUDA; /* as kforge verify does for a candidate */
	st = kf_verify_baseline(t, b, &vo, &r, &err);
	if (st == KF_ERR_UNAVAILABLE || (!st && r->status == KF_VERDICT_UNSUPPORTED)) {
		/* not cached: another machine or backend may have what this one lacks */
		set_status(pb, KF_PROFILE_BASE_UNAVAILABLE, r ? kf_verdict_name(r->status) : NULL,
			   st ? err.msg : r->reason);
		kf_verify_result_free(r);
		return false;
	}
	if (st) {
		set_status(pb, KF_PROFILE_BASE_FAILED, NULL, err.msg);
		return false;
	}
	if (r->status == KF_VERDICT_PASS) {
		cache_put(key, "pass");
		kf_verify_result_free(r);
		return true;
	}
	set_status(pb, KF_PROFILE_BASE_REJECTED, kf_verdict_name(r->status), r->reason);
	snprintf(line, sizeof(line), "%s %s", kf_verdict_name(r->status), r->reason);
	cache_put(key, line);
	kf_verify_result_free(r);
	return false;
}

void kf_profile_baselines_prepare(const struct kf_task *t, const struct kf_profile_opts *o, const char *arch,
				  struct kf_profile_result *res, struct kf_base_prep *preps)
{
	struct kf_compile_opts co = {0};

	co.backend = o->backend;
	co.arch = o->backend == KF_BACKEND_CUDA ? arch : NULL;
	res->n_baselines =
	    t->n_baselines < KF_PROFILE_MAX_BASELINES ? t->n_baselines : KF_PROFILE_MAX_BASELINES;
	for (size_t i = 0; i < res->n_baselines; i++) {
		const struct kf_baseline *b = &t->baselines[i];
		struct kf_profile_baseline *pb = &res->baselines[i];
		struct kf_base_prep *p = &preps[i];
		struct kf_err err = KF_ERR_INIT;
		enum kf_status st;

		memset(p, 0, sizeof(*p));
		snprintf(pb->name, sizeof(pb->name), "%s", b->name);
		pb->library = b->kind == KF_BASELINE_LIBRARY;
		snprintf(pb->call, sizeof(pb->call), "%s", pb->library ? b->canon : b->kernel);
		if (o->no_baselines) {
			set_status(pb, KF_PROFILE_BASE_SKIPPED, NULL, "not asked for (no_baselines)");
			continue;
		}
		if (!verified(t, b, o, arch, pb))
			continue;
		if (b->kind == KF_BASELINE_LIBRARY) {
			st = kf_libcall_module(b, o->backend, &p->comp, &err);
		} else {
			st = kf_kfile_load(b->kernel, &p->kf, &err);
			if (!st)
				st = kf_kfile_bind(p->kf, t, &err);
			if (!st)
				st = kf_compile(p->kf, &co, &p->comp, &err);
		}
		if (st) {
			set_status(pb,
				   st == KF_ERR_UNAVAILABLE ? KF_PROFILE_BASE_UNAVAILABLE
							    : KF_PROFILE_BASE_FAILED,
				   NULL, err.msg);
			kf_profile_baselines_release(p, 1);
			continue;
		}
		p->b = b;
		set_status(pb, KF_PROFILE_BASE_TIMED, "pass", "verified; timed");
	}
}

void kf_profile_baselines_release(struct kf_base_prep *preps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		kf_compiled_free(preps[i].comp);
		kf_kfile_free(preps[i].kf);
		memset(&preps[i], 0, sizeof(preps[i]));
	}
}

const char *kf_profile_base_status_name(enum kf_profile_base_status s)
{
	switch (s) {
	case KF_PROFILE_BASE_TIMED:
		return "timed";
	case KF_PROFILE_BASE_UNAVAILABLE:
		return "unavailable";
	case KF_PROFILE_BASE_REJECTED:
		return "rejected";
	case KF_PROFILE_BASE_SKIPPED:
		return "skipped";
	default:
		return "failed";
	}
}
