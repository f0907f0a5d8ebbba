/* Filesystem helpers of the trusted parent: creating a folder with its parents, a bounded list of paths,
 * and finding task files (a task.json, or every task.json below a folder). The atomic file write and the
 * bounded file read are kf.h's (the worker links those). */
#ifndef KF_FS_H
#define KF_FS_H

#include <sys/types.h>

#include "kf.h"

/* Creates path and every missing parent with mode (existing folders are fine). KF_ERR_INVALID for a path
 * too long, KF_ERR_IO "cannot create 'DIR': why" naming the folder that failed. */
enum kf_status kf_mkdir_p(const char *path, mode_t mode, struct kf_err *err);

/* A growable list of owned path strings, at most KF_PATHS_MAX. */
#define KF_PATHS_MAX 10000 /* a suite is hundreds of tasks; a runaway tree stops here */
struct kf_paths {
	char **v;
	size_t n, cap;
};
enum kf_status kf_paths_add(struct kf_paths *l, const char *path, struct kf_err *err);
void kf_paths_sort(struct kf_paths *l, size_t from); /* v[from..n) in byte order */
void kf_paths_free(struct kf_paths *l);              /* and empties it */

/* Appends the task files at path: the file itself, or every task.json below the folder (hidden entries
 * skipped, at most 16 levels deep), sorted by path. A trailing '/' is dropped. KF_ERR_NOTFOUND "'PATH' does
 * not exist" / "no task.json under 'PATH'", KF_ERR_IO for an unreadable folder, KF_ERR_LIMIT past
 * KF_PATHS_MAX. */
enum kf_status kf_task_files_find(const char *path, struct kf_paths *out, struct kf_err *err);

#endif
