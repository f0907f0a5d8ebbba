/* Independent host implementations of every task in tasks/ (textbook formulas, double precision), used to
 * validate the CUDA reference kernels (tests/unit/test_tasks_ref.c). Written from each task's description,
 * not from its reference kernel. Tensors are passed by name as doubles in their task layout. */
#ifndef KF_TASKREF_H
#define KF_TASKREF_H

#include <stddef.h>
#include <stdint.h>

struct taskref_io {
	size_t n_tensors;
	const char *const *tensor_names;
	double *const *data; /* inputs hold the values given to the kernel; outputs are written */
	size_t n_dims;
	const char *const *dim_names;
	const int64_t *dims;
	size_t n_params;
	const char *const *param_names;
	const double *params;
};

typedef void (*taskref_fn)(const struct taskref_io *io);

struct taskref_entry {
	const char *task; /* task name, e.g. "softmax_f32" */
	taskref_fn fn;
};

/* The implementation for a task name, or NULL. */
taskref_fn taskref_find(const char *task);
/* The whole table (for listing which tasks lack one). */
const struct taskref_entry *taskref_table(size_t *n);

#endif
