/* kforge export: a kernel file with a launcher for its launch plan, for programs that call it. A C/C++
 * header (CUDA runtime API, stb style: the declarations everywhere, the kernel source and the launcher where
 * KFORGE_<ID>_IMPLEMENTATION is defined), or a PyTorch extension module (torch.utils.cpp_extension's
 * load_inline) with a test script that compares it with the task's reference run through the same kind of
 * extension. docs/export.md describes what is generated. */
#ifndef KF_EXPORT_H
#define KF_EXPORT_H

#include "kf.h"
#include "kfile.h"
#include "task.h"

struct kf_kb;

struct kf_export_opts {
	/* The identifier the names are built from (kforge_<ident>_launch, the Python function <ident>): a C
	 * identifier of at most 48 characters; NULL: derived from the task's name (kf_export_ident_default).
	 */
	const char *ident;
	/* Where the kernel came from, for the generated comments ("best.cu", "candidate 17 of run 3"); NULL:
	 * the kernel file's path. One line; control characters are dropped. */
	const char *origin;
};

/* True when s can name the exported functions: [A-Za-z_][A-Za-z0-9_]{0,47}, not starting with "kf_". */
bool kf_export_ident_ok(const char *s);
/* The default identifier for a task name: the name itself, "k" prepended when it starts with a digit,
 * cut to 48 characters. */
void kf_export_ident_default(const char *task_name, char *out, size_t n);

/* The header for kernel file k, which must be bound to t (kf_kfile_bind). Checks first that every
 * expression of the file is one the launcher can evaluate and that the plan can be made at each public
 * shape (KF_ERR_INVALID naming the line otherwise). Appends to out. */
enum kf_status kf_export_header(const struct kf_task *t, const struct kf_kfile *k,
				const struct kf_export_opts *o, struct kf_buf *out, struct kf_err *err);

/* The PyTorch extension module (Python source) for k bound to t. */
enum kf_status kf_export_torch(const struct kf_task *t, const struct kf_kfile *k,
			       const struct kf_export_opts *o, struct kf_buf *out, struct kf_err *err);

/* The test script of a --torch export: imports module_name (the module's file name without .py, from the
 * script's folder) and compares its function with the reference kernel file ref (bound to t, usually the
 * task's reference) built as a second extension, on the task's public and hidden shapes with the task's
 * input distributions and tolerances; --time also times both at the timing shapes. Exit 0 all within
 * tolerance, 1 a mismatch, 2 no GPU. module_name must be a Python identifier. */
enum kf_status kf_export_torch_test(const struct kf_task *t, const struct kf_kfile *ref,
				    const struct kf_export_opts *o, const char *module_name,
				    struct kf_buf *out, struct kf_err *err);

/* ---- where the kernel comes from ---- */

/* A kernel named on the command line: a file, "run:N" (run N's best verified candidate) or "cand:N"
 * (candidate N, which must have passed verification). Strings are owned (kf_export_kernel_release). */
struct kf_export_kernel {
	char *source;
	size_t len;
	char *origin; /* "best.cu", "candidate 17 (run 3's best, 2.41x)" */
	char *path;   /* the file as given, or "cand-17.cu" for the diagnostics of the kernel-file parser */
	char *task_path;    /* the task file the run recorded (its config's task_path), NULL when unknown */
	char task_hash[65]; /* the task the run used (sha256 of its file), "" for a file */
	int64_t run_id, cand_id; /* 0 for a file */
};

/* True when spec names a knowledge-base kernel ("run:N", "cand:N") rather than a file. */
bool kf_export_spec_is_kb(const char *spec);
/* Reads a file kernel (bounded at 4 MiB). */
enum kf_status kf_export_kernel_from_file(const char *path, struct kf_export_kernel *out, struct kf_err *err);
/* Resolves "run:N" or "cand:N" in kb: KF_ERR_NOTFOUND for an unknown run or candidate, KF_ERR_INVALID for a
 * run with no verified candidate or a candidate that never passed verification (its verdict named). */
enum kf_status kf_export_kernel_from_kb(struct kf_kb *kb, const char *spec, struct kf_export_kernel *out,
					struct kf_err *err);
void kf_export_kernel_release(struct kf_export_kernel *k);

#endif
