/* libFuzzer target: a kernel file's `// kforge:` directives through kf_kfile_parse, then, when they parse,
 * kf_kfile_bind against a fixed task and kf_plan_make at its shapes: what every LLM-written candidate goes
 * through before it is compiled (core/kfile.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/kfile.h"
#include "core/task.h"

static struct kf_task *task; /* tests/data/llm/task/task.json: dims B, N; tensors x, y; param eps */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct kf_err err = KF_ERR_INIT;
	if (kf_task_load(KF_TOP "/tests/data/llm/task/task.json", KF_TASK_NO_FILES, NULL, &task, &err)) {
		fprintf(stderr, "fuzz_kfile: %s\n", err.msg);
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_kfile *k = NULL;

	if (!kf_kfile_parse("fuzz.cu", (const char *)data, size, &k, &err) && !kf_kfile_bind(k, task, &err)) {
		const char *names[8];
		kf_kfile_name_exprs(k, names, 8);
		for (size_t i = 0; i < task->n_public; i++) {
			struct kf_plan *plan = NULL;
			kf_plan_make(k, task, &task->shapes_public[i], &plan, &err);
			kf_plan_free(plan);
		}
	}
	kf_kfile_free(k);
	return 0;
}
