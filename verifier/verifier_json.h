/* JSON and text renderings of a verdict; separate from verifier.h so that header needs no cJSON. */
#ifndef KF_VERIFIER_JSON_H
#define KF_VERIFIER_JSON_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "verifier.h"

/* A new JSON object for r (caller frees with cJSON_Delete); task and kernel may be NULL. */
cJSON *kf_verify_result_json(const struct kf_verify_result *r, const struct kf_task *t, const char *kernel);
/* One line per shape, then "verdict: STATUS (...): reason". */
void kf_verify_result_print(FILE *f, const struct kf_verify_result *r);

#endif
