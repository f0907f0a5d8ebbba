/* kforge core: status codes, the caller-owned error struct, and bounded growable buffers.
 * This part of core depends on libc only, so the sandboxed worker links it too. */
#ifndef KF_KF_H
#define KF_KF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Public status codes. The numbers never change; add new ones at the end. */
enum kf_status {
	KF_OK = 0,
	KF_ERR_NOMEM = 1,        /* an allocation failed */
	KF_ERR_IO = 2,           /* a file or pipe could not be read or written */
	KF_ERR_PARSE = 3,        /* text that does not parse (JSON, a directive, an expression) */
	KF_ERR_INVALID = 4,      /* well-formed but wrong: unknown name, bad value, missing field */
	KF_ERR_RANGE = 5,        /* a number out of range, integer overflow, division by zero */
	KF_ERR_NOTFOUND = 6,     /* a file, record or name that does not exist */
	KF_ERR_TIMEOUT = 7,      /* a child ran past its wall-clock or CPU limit and was killed */
	KF_ERR_CRASH = 8,        /* a child died by a signal or broke the protocol */
	KF_ERR_UNAVAILABLE = 9,  /* no GPU, no API key, no tool: the environment cannot do it */
	KF_ERR_UNSUPPORTED = 10, /* the backend cannot run a construct the kernel uses */
	KF_ERR_COMPILE = 11,     /* the compiler rejected the source */
	KF_ERR_LIMIT = 12,       /* a bounded buffer or a budget would be exceeded */
	KF_ERR_INTERNAL = 13,    /* a bug or an impossible state in kforge itself */
	KF_ERR_NETWORK = 14,     /* a connection failed or timed out */
	KF_ERR_HTTP = 15,        /* the server answered with an error status */
	KF_ERR_DB = 16,          /* SQLite reported an error */
	KF_ERR_INTERRUPTED = 17, /* SIGINT/SIGTERM asked us to stop */
	KF_ERR_USAGE = 18,       /* bad command-line arguments */
	KF_ERR_RUNTIME = 19,     /* a kernel crashed, faulted or deadlocked */
	KF_STATUS_COUNT
};

/* Caller-owned error details. Functions that fail fill it (when non-NULL) and return the code. */
struct kf_err {
	enum kf_status code;
	char msg[1024];
};

#define KF_ERR_INIT                                                                                          \
	{                                                                                                    \
		KF_OK,                                                                                       \
		{                                                                                            \
			0                                                                                    \
		}                                                                                            \
	}

/* Sets err (if non-NULL) to code and a printf-style message; returns code so callers can
 * `return kf_err_set(err, KF_ERR_IO, "cannot open '%s': %s", path, strerror(errno));`. */
enum kf_status kf_err_set(struct kf_err *err, enum kf_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum kf_status kf_err_vset(struct kf_err *err, enum kf_status code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Prepends "PREFIX: " to err's message (for adding a file name or field path); returns err->code. */
enum kf_status kf_err_prefix(struct kf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#if defined(__clang_analyzer__) && !defined(KF_ERR_IMPL)
/* Static analysis (tools/lint.sh) sees one file at a time and cannot tell that these return the code they
 * are given, so it would follow "set an error, got KF_OK back" paths that cannot happen. Compilers never
 * see these; core/status.c defines KF_ERR_IMPL to define the real functions. */
#define kf_err_set(err, code, ...) (kf_err_set((err), (code), __VA_ARGS__), (enum kf_status)(code))
#define kf_err_vset(err, code, fmt, ap) (kf_err_vset((err), (code), (fmt), (ap)), (enum kf_status)(code))
#endif
void kf_err_clear(struct kf_err *err);

/* Stable lower-case name of a status ("io", "timeout"); never NULL. */
const char *kf_status_name(enum kf_status code);
/* Process exit code for a status per docs/spec/cli.md: 0 ok, 2 usage/bad input, 3 internal, 4 unavailable. */
int kf_status_exit_code(enum kf_status code);

/* A growable byte buffer with a hard maximum size (every buffer of outside text has one).
 * data is never NULL and always NUL-terminated; len excludes the NUL. */
struct kf_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max; /* the most bytes it may hold; appends past it fail with KF_ERR_LIMIT */
};

extern char kf_buf_empty[];
#define KF_BUF_INIT(max_bytes)                                                                               \
	{                                                                                                    \
		kf_buf_empty, 0, 0, (max_bytes)                                                              \
	}

void kf_buf_init(struct kf_buf *b, size_t max_bytes);
/* Frees the storage and re-initializes to empty (same max). */
void kf_buf_release(struct kf_buf *b);
/* Empties without freeing. */
void kf_buf_reset(struct kf_buf *b);
enum kf_status kf_buf_grow(struct kf_buf *b, size_t extra);
enum kf_status kf_buf_add(struct kf_buf *b, const void *data, size_t n);
enum kf_status kf_buf_adds(struct kf_buf *b, const char *s);
enum kf_status kf_buf_addch(struct kf_buf *b, char c);
enum kf_status kf_buf_addf(struct kf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
enum kf_status kf_buf_vaddf(struct kf_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Appends as much as fits under max and marks the cut with "\n[... truncated N bytes]";
 * for logs, where losing the tail is better than losing everything. Never fails but on NOMEM. */
enum kf_status kf_buf_add_truncated(struct kf_buf *b, const void *data, size_t n);
/* Hands the storage to the caller (free() it); b is re-initialized. Never returns NULL
 * unless allocation fails. */
char *kf_buf_detach(struct kf_buf *b, size_t *len_out);
/* Reads a whole file (up to max_bytes, else KF_ERR_LIMIT) into b. */
enum kf_status kf_buf_read_file(struct kf_buf *b, const char *path, struct kf_err *err);
/* Writes atomically: to PATH.tmp.PID.TID, fsync, rename. */
enum kf_status kf_write_file_atomic(const char *path, const void *data, size_t n, struct kf_err *err);

/* An unsigned 64-bit number as strtoull reads it with base 0 (decimal, 0x hex, 0 octal); false for an empty
 * string, a sign, trailing characters or overflow. */
bool kf_parse_u64(const char *s, uint64_t *out);

/* Checked helpers for the few places where an allocation failure is handled by the caller. */
char *kf_strdup(const char *s); /* NULL on NULL or NOMEM */
char *kf_strndup(const char *s, size_t n);
/* Room for element n of an array v of *cap elements of elem bytes: v itself while n < *cap, else v grown
 * to twice the capacity (first, the first time) with *cap updated. NULL on out of memory (v untouched,
 * still the caller's). */
void *kf_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first);

#define KF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Monotonic clock in nanoseconds and milliseconds (durations). */
uint64_t kf_now_ns(void);
double kf_now_ms(void);
/* Wall-clock time: Unix seconds with a fraction (what records are stamped with). */
double kf_wall_s(void);

#endif
