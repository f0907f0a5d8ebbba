/* The "module" of a library baseline (core/baseline.h): a library call needs no compile, so its
 * kf_compiled holds a short image that names the call for the worker's logs (the cuda worker loads no
 * CUBIN when every launch of the plan is a library call). Only the cuda backend runs library calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/baseline.h"
#include "hash.h"
#include "sandbox.h"

enum kf_status kf_libcall_module(const struct kf_baseline *b, enum kf_backend_kind backend,
				 struct kf_compiled **out, struct kf_err *err)
{
	struct kf_compiled *c;
	char text[sizeof(b->canon) + 64];
	int n;

	*out = NULL;
	if (!b || b->kind != KF_BASELINE_LIBRARY)
		return kf_err_set(err, KF_ERR_INTERNAL, "not a library baseline");
	if (backend != KF_BACKEND_CUDA)
		return kf_err_set(
		    err, KF_ERR_UNAVAILABLE,
		    "%s is a %s call: it runs on the cuda backend only (the %s backend has no %s)",
		    kf_libop_name(b->op), kf_libop_library(b->op), kf_backend_name(backend),
		    kf_libop_library(b->op));
	n = snprintf(text, sizeof(text), "kforge library call %s\n", b->canon);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->image = malloc((size_t)n)) || !(c->log = kf_strdup(""))) {
		kf_compiled_free(c);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	memcpy(c->image, text, (size_t)n);
	c->image_len = (size_t)n;
	c->backend = backend;
	snprintf(c->arch, sizeof(c->arch), "library");
	snprintf(c->compiler, sizeof(c->compiler), "%s", kf_libop_library(b->op));
	kf_sha256_hex(text, (size_t)n, c->key);
	*out = c;
	return KF_OK;
}
