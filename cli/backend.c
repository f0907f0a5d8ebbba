/* --backend auto|cpu|cuda, shared by every command that runs kernels: auto picks cuda when a usable
 * GPU is present, else cpu, and says so on stderr. */
#include <string.h>

#include "cli.h"
#include "sandbox/sandbox.h"

int kf_cli_backend_select(const char *cmd, const char *flag, enum kf_backend_kind *out,
			  struct kf_device_info *info)
{
	struct kf_err err = KF_ERR_INIT;
	struct kf_device_info tmp;
	enum kf_status st;

	if (!info)
		info = &tmp;
	memset(info, 0, sizeof(*info));
	if (!flag || !strcmp(flag, "auto")) {
		st = kf_device_probe(KF_BACKEND_CUDA, NULL, info, &err);
		if (!st) {
			*out = KF_BACKEND_CUDA;
			return 0;
		}
		{
			/* the short reason ("no CUDA driver"); the whole story is `kforge doctor`'s */
			const char *why = strstr(err.msg, "unavailable: ");
			why = why ? why + 13 : err.msg;
			const char *end = strstr(why, ": ");
			fprintf(stderr, "note: no usable GPU (%.*s); using the cpu backend\n",
				(int)(end ? (size_t)(end - why) : strlen(why)), why);
		}
		*out = KF_BACKEND_CPU;
		memset(info, 0, sizeof(*info));
		snprintf(info->backend, sizeof(info->backend), "cpu");
		return 0;
	}
	if (!strcmp(flag, "cpu")) {
		*out = KF_BACKEND_CPU;
		snprintf(info->backend, sizeof(info->backend), "cpu");
		return 0;
	}
	if (!strcmp(flag, "cuda")) {
		st = kf_device_probe(KF_BACKEND_CUDA, NULL, info, &err);
		if (st) {
			kf_cli_error("%s", err.msg);
			return st == KF_ERR_UNAVAILABLE ? KF_EXIT_UNAVAILABLE : KF_EXIT_INTERNAL;
		}
		*out = KF_BACKEND_CUDA;
		return 0;
	}
	return kf_cli_usage_error(cmd, "unknown backend '%s' (expected auto, cpu or cuda)", flag);
}
