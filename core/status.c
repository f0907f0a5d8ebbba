/* Status names, exit codes, the error struct, clocks and number parsing: the libc-only half of core. */
#define KF_ERR_IMPL /* defines the real kf_err_set (see kf.h) */
#include "kf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const status_names[KF_STATUS_COUNT] = {
    [KF_OK] = "ok",
    [KF_ERR_NOMEM] = "nomem",
    [KF_ERR_IO] = "io",
    [KF_ERR_PARSE] = "parse",
    [KF_ERR_INVALID] = "invalid",
    [KF_ERR_RANGE] = "range",
    [KF_ERR_NOTFOUND] = "notfound",
    [KF_ERR_TIMEOUT] = "timeout",
    [KF_ERR_CRASH] = "crash",
    [KF_ERR_UNAVAILABLE] = "unavailable",
    [KF_ERR_UNSUPPORTED] = "unsupported",
    [KF_ERR_COMPILE] = "compile",
    [KF_ERR_LIMIT] = "limit",
    [KF_ERR_INTERNAL] = "internal",
    [KF_ERR_NETWORK] = "network",
    [KF_ERR_HTTP] = "http",
    [KF_ERR_DB] = "db",
    [KF_ERR_INTERRUPTED] = "interrupted",
    [KF_ERR_USAGE] = "usage",
    [KF_ERR_RUNTIME] = "runtime",
};

const char *kf_status_name(enum kf_status code)
{
	if ((unsigned)code >= KF_STATUS_COUNT || !status_names[code])
		return "unknown";
	return status_names[code];
}

int kf_status_exit_code(enum kf_status code)
{
	switch (code) {
	case KF_OK:
		return 0;
	case KF_ERR_PARSE:
	case KF_ERR_INVALID:
	case KF_ERR_RANGE:
	case KF_ERR_NOTFOUND:
	case KF_ERR_USAGE:
		return 2;
	case KF_ERR_UNAVAILABLE:
	case KF_ERR_UNSUPPORTED:
		return 4;
	case KF_ERR_INTERRUPTED:
		return 130;
	case KF_ERR_COMPILE:
	case KF_ERR_RUNTIME:
	case KF_ERR_TIMEOUT:
		return 1;
	default:
		return 3;
	}
}

enum kf_status kf_err_vset(struct kf_err *err, enum kf_status code, const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	}
	return code;
}

enum kf_status kf_err_set(struct kf_err *err, enum kf_status code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kf_err_vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

enum kf_status kf_err_prefix(struct kf_err *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return KF_ERR_INTERNAL;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	return err->code;
}

void kf_err_clear(struct kf_err *err)
{
	if (err) {
		err->code = KF_OK;
		err->msg[0] = '\0';
	}
}

uint64_t kf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double kf_now_ms(void)
{
	return (double)kf_now_ns() / 1e6;
}

double kf_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool kf_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}
