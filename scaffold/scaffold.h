/* kforge tasks new: a task folder (task.json and reference.cu) from an existing kernel file or from a
 * template per category. From a kernel, the __global__ function's parameters become tensors (const
 * pointers inputs, others outputs), dims (integers) and params (floats), and the launch directive is
 * proposed from the indexing pattern; what cannot be inferred is left as fields marked TODO, which
 * kf_scaffold_todos (and so `kforge tasks validate`) names one by one. */
#ifndef KF_SCAFFOLD_H
#define KF_SCAFFOLD_H

#include "kf.h"

enum kf_scaffold_kind {
	KF_SCAFFOLD_ELEMENTWISE,
	KF_SCAFFOLD_REDUCTION,
	KF_SCAFFOLD_ROWWISE,
	KF_SCAFFOLD_GEMM,
	KF_SCAFFOLD_CONV,
	KF_SCAFFOLD_SCAN,
	KF_SCAFFOLD_KIND_COUNT
};

const char *kf_scaffold_kind_name(enum kf_scaffold_kind k); /* "elementwise" */
bool kf_scaffold_kind_parse(const char *s, enum kf_scaffold_kind *out);

/* A scaffold in memory: the two files' text and what was inferred or proposed. */
struct kf_scaffold {
	struct kf_buf task_json; /* task.json */
	struct kf_buf reference; /* reference.cu */
	struct kf_buf notes;     /* one line per inference, proposal or TODO, for the person */
	size_t n_todo;           /* fields marked TODO */
};

void kf_scaffold_init(struct kf_scaffold *s);
void kf_scaffold_release(struct kf_scaffold *s);

/* True for a task name the format allows: [a-z0-9_]+, at most 63 characters. */
bool kf_scaffold_name_ok(const char *name);

/* A task named name from the kernel file at path (src[0..len)). kernel chooses the __global__ function
 * when the file has several (NULL: the file must have one). The source is kept as the reference, with
 * the proposed directive inserted above the kernel (unless the file has kforge:launch directives) and
 * `extern "C"` added to a plain (non-template) __global__ function that lacks it. KF_ERR_INVALID when no
 * __global__ function is found, the one asked for is not there, or the choice is ambiguous (the message
 * lists them). */
enum kf_status kf_scaffold_from_kernel(const char *name, const char *path, const char *src, size_t len,
				       const char *kernel, struct kf_scaffold *out, struct kf_err *err);

/* A complete task of the given kind named name (the template's files, scaffold/templates/KIND/): it
 * validates, its reference verifies and lints clean, and it has no TODO. */
enum kf_status kf_scaffold_from_template(const char *name, enum kf_scaffold_kind kind,
					 struct kf_scaffold *out, struct kf_err *err);

/* Writes dir/task.json and dir/reference.cu, creating dir (and its parents). dir must not exist or be an
 * empty folder, and no file is overwritten; on failure nothing written is left behind. */
enum kf_status kf_scaffold_write(const struct kf_scaffold *s, const char *dir, struct kf_err *err);

/* The fields left to fill in: every JSON string of the task file that begins with "TODO" (named by its
 * field path) and every line of its reference file that holds "TODO(kforge" (named by line number), one
 * "FILE: WHERE: TEXT" line each appended to out (may be NULL); *n gets the count. A task file that cannot
 * be read or parsed adds nothing and returns KF_OK (the task loader reports it); KF_ERR_NOMEM only. */
enum kf_status kf_scaffold_todos(const char *task_path, struct kf_buf *out, size_t *n, struct kf_err *err);

#endif
