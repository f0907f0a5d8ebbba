/* The verdict as JSON (docs/spec/verification.md: status, reason, backend, shapes[...]) and as text lines. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "verifier.h"
#include "verifier_json.h"

static cJSON *num_or_null(double x)
{
	return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

/* What a pass on the cpu backend cannot show, said with every cpu verdict (and only a GPU can). */
static const char *const gpu_only[] = {
    "timing: cpu times are not GPU times",
    "fast-math intrinsics' precision (__expf, __fdividef, __sinf ... are exact on the cpu), FMA contraction, "
    "denormal flushing",
    "launch resource limits: registers per block, the 48 KiB shared memory default without the opt-in",
    "cross-block ordering beyond the sanitizer's rule (a write followed by __threadfence counts as published "
    "to other blocks)",
    "races and out-of-bounds accesses at shapes the sanitizer did not run",
};

static const char *const san_checks[] = {"memcheck", "initcheck", "racecheck", "warp_ub"};

static cJSON *checks_json(const struct kf_verify_result *r)
{
	cJSON *c = cJSON_CreateObject();
	if (r->gpu_arch[0])
		cJSON_AddStringToObject(c, "nvrtc", r->gpu_arch);
	else
		cJSON_AddNullToObject(c, "nvrtc");
	cJSON_AddStringToObject(c, "run", kf_backend_name(r->backend));
	if (r->backend == KF_BACKEND_CPU) {
		cJSON *sz = cJSON_CreateObject(), *names = cJSON_CreateArray(), *g = cJSON_CreateArray();
		cJSON_AddBoolToObject(sz, "ran", r->sanitizer);
		for (size_t i = 0; i < KF_ARRAY_SIZE(san_checks); i++)
			cJSON_AddItemToArray(names, cJSON_CreateString(san_checks[i]));
		cJSON_AddItemToObject(sz, "checks", names);
		cJSON_AddNumberToObject(sz, "shapes", r->san_shapes);
		cJSON_AddNumberToObject(sz, "accesses", (double)r->san_accesses);
		cJSON_AddStringToObject(sz, "note", r->san_note);
		cJSON_AddItemToObject(c, "sanitizer", sz);
		for (size_t i = 0; i < KF_ARRAY_SIZE(gpu_only); i++)
			cJSON_AddItemToArray(g, cJSON_CreateString(gpu_only[i]));
		cJSON_AddItemToObject(c, "gpu_only", g);
	}
	return c;
}

cJSON *kf_verify_result_json(const struct kf_verify_result *r, const struct kf_task *t, const char *kernel)
{
	cJSON *o = cJSON_CreateObject(), *shapes = cJSON_CreateArray();
	char seed[32];

	cJSON_AddStringToObject(o, "status", kf_verdict_name(r->status));
	cJSON_AddStringToObject(o, "reason", r->reason);
	cJSON_AddStringToObject(o, "backend", kf_backend_name(r->backend));
	if (t)
		cJSON_AddStringToObject(o, "task", t->name);
	if (kernel)
		cJSON_AddStringToObject(o, "kernel", kernel);
	cJSON_AddStringToObject(o, "kernel_sha256", r->kernel_hash);
	snprintf(seed, sizeof(seed), "%" PRIu64, r->seed);
	/* The seed as a decimal string: it does not fit a JSON double exactly. */
	cJSON_AddStringToObject(o, "seed", seed);
	cJSON_AddBoolToObject(o, "strict", r->strict);
	cJSON_AddNumberToObject(o, "launches", r->launches);
	cJSON_AddNumberToObject(o, "elapsed_ms", r->elapsed_ms);
	for (size_t i = 0; i < r->n_shapes; i++) {
		const struct kf_shape_report *s = &r->shapes[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddItemToObject(j, "dims", kf_json_shape(&s->shape));
		cJSON_AddStringToObject(j, "kind", kf_shape_kind_name(s->kind));
		cJSON_AddStringToObject(j, "status", kf_verdict_name(s->status));
		cJSON_AddItemToObject(j, "max_abs", num_or_null(s->max_abs));
		cJSON_AddItemToObject(j, "max_rel", num_or_null(s->max_rel));
		cJSON_AddItemToObject(j, "nmse", num_or_null(s->nmse));
		cJSON_AddNumberToObject(j, "launches", s->launches);
		if (r->backend == KF_BACKEND_CPU)
			cJSON_AddBoolToObject(j, "sanitized", s->sanitized);
		if (s->status != KF_VERDICT_PASS) {
			char cs[32];
			cJSON_AddStringToObject(j, "detail", s->detail);
			if (s->tensor[0])
				cJSON_AddStringToObject(j, "tensor", s->tensor);
			cJSON_AddStringToObject(j, "inputs", kf_input_dist_name(s->dist));
			snprintf(cs, sizeof(cs), "%" PRIu64, s->case_seed);
			cJSON_AddStringToObject(j, "case_seed", cs);
			if (s->first_bad >= 0) {
				cJSON_AddNumberToObject(j, "first_bad_index", (double)s->first_bad);
				cJSON_AddNumberToObject(j, "bad_count", (double)s->n_bad);
				cJSON_AddItemToObject(j, "got", num_or_null(s->got));
				cJSON_AddItemToObject(j, "want", num_or_null(s->want));
				if (!isfinite(s->got))
					cJSON_AddStringToObject(j, "got_text",
								isnan(s->got) ? "nan"
								: s->got > 0  ? "inf"
									      : "-inf");
				if (!isfinite(s->want))
					cJSON_AddStringToObject(j, "want_text",
								isnan(s->want) ? "nan"
								: s->want > 0  ? "inf"
									       : "-inf");
			}
		}
		cJSON_AddItemToArray(shapes, j);
	}
	cJSON_AddItemToObject(o, "shapes", shapes);
	cJSON_AddItemToObject(o, "checks", checks_json(r));
	if (r->status == KF_VERDICT_COMPILE_ERROR && r->compile_log)
		cJSON_AddStringToObject(o, "compile_log", r->compile_log);
	if (r->compiled) {
		cJSON *ks = cJSON_CreateArray();
		for (size_t i = 0; i < r->compiled->n_kernels; i++) {
			const struct kf_kernel_res *k = &r->compiled->kernels[i];
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "name", k->name);
			cJSON_AddNumberToObject(j, "registers", k->registers);
			cJSON_AddNumberToObject(j, "smem_static_bytes", k->smem_static_bytes);
			cJSON_AddNumberToObject(j, "spill_store_bytes", k->spill_store_bytes);
			cJSON_AddNumberToObject(j, "spill_load_bytes", k->spill_load_bytes);
			cJSON_AddItemToArray(ks, j);
		}
		cJSON_AddItemToObject(o, "kernels", ks);
	}
	return o;
}

void kf_verify_result_print(FILE *f, const struct kf_verify_result *r)
{
	for (size_t i = 0; i < r->n_shapes; i++) {
		const struct kf_shape_report *s = &r->shapes[i];
		char shape[256];
		kf_shape_format(&s->shape, shape, sizeof(shape));
		fprintf(f, "%-16s %-7s %-28s max_abs %-10.3g max_rel %-10.3g launches %u",
			kf_verdict_name(s->status), kf_shape_kind_name(s->kind), shape, s->max_abs,
			s->max_rel, s->launches);
		if (s->sanitized)
			fputs(" sanitized", f);
		if (s->status != KF_VERDICT_PASS)
			fprintf(f, "\n    %s", s->detail);
		fputc('\n', f);
	}
	fprintf(f, "verdict: %s (%s backend, seed %" PRIu64 "): %s\n", kf_verdict_name(r->status),
		kf_backend_name(r->backend), r->seed, r->reason);
	if (r->gpu_arch[0] || r->backend == KF_BACKEND_CPU)
		fprintf(f, "checks: %s%s%s",
			r->gpu_arch[0] ? "NVRTC compile for " : "NVRTC compile not reached", r->gpu_arch,
			r->backend == KF_BACKEND_CPU ? "; cpu run" : "; GPU run");
	if (r->backend == KF_BACKEND_CPU) {
		if (r->sanitizer)
			fprintf(f,
				"; cpu sanitizer (memcheck, initcheck, racecheck, warp UB) at %u shape%s, "
				"%" PRIu64 " accesses",
				r->san_shapes, r->san_shapes == 1 ? "" : "s", r->san_accesses);
		else
			fprintf(f, "; no cpu sanitizer run");
		if (r->san_note[0])
			fprintf(f, " (%s)", r->san_note);
		fprintf(f, "\nonly a GPU can show:");
		for (size_t i = 0; i < KF_ARRAY_SIZE(gpu_only); i++)
			fprintf(f, "%s %s", i ? ";" : "", gpu_only[i]);
	}
	if (r->gpu_arch[0] || r->backend == KF_BACKEND_CPU)
		fputc('\n', f);
}
