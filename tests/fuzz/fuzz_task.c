/* libFuzzer target: task.json text through kf_task_parse, the loader's from-memory path
 * (docs/spec/task-format.md). Kernel files are not opened (KF_TASK_NO_FILES), so only the JSON, field and
 * expression checks run; a task that loads is also asked its sizes and work at every shape, as the verifier
 * would. */
#include <stdint.h>
#include <stdlib.h>

#include "core/task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_buf warn = KF_BUF_INIT(1u << 16);
	struct kf_err err = KF_ERR_INIT;
	struct kf_task *t = NULL;
	unsigned flags = KF_TASK_NO_FILES;

	/* the strict mode turns unknown fields into errors: one bit of the length picks it */
	if (size & 1)
		flags |= KF_TASK_STRICT;
	if (!kf_task_parse("fuzz/task.json", (const char *)data, size, flags, &warn, &t, &err)) {
		const struct kf_shape *sets[] = {t->shapes_public, t->shapes_hidden, t->shapes_timing};
		size_t ns[] = {t->n_public, t->n_hidden, t->n_timing};
		for (size_t k = 0; k < 3; k++) {
			for (size_t i = 0; i < ns[k]; i++) {
				double v;
				int64_t n;
				for (size_t ti = 0; ti < t->n_tensors; ti++)
					kf_task_numel(t, ti, &sets[k][i], &n, &err);
				kf_task_flops(t, &sets[k][i], &v);
				kf_task_bytes(t, &sets[k][i], &v);
			}
		}
		for (int d = 0; d < KF_DTYPE_COUNT; d++)
			kf_task_tolerance(t, (enum kf_dtype)d);
	}
	kf_task_free(t);
	kf_buf_release(&warn);
	return 0;
}
