/* One cancellation token for the process. SIGINT and SIGTERM (once kf_cancel_install ran) request it;
 * every wait that can take long looks at it: a compile child's supervision (sandbox/child.c), a worker
 * step (sandbox/session.c), an LLM request (agent/llm.c), the bench job pool (runner/pool.c). Each cuts its
 * work short (children and workers killed and reaped) and returns KF_ERR_INTERRUPTED; commands then exit
 * 130 (docs/spec/cli.md) after finishing what must not be left half-written (a run's status, its report).
 *
 * The token only ever goes from "not requested" to "requested" (kf_cancel_reset is for tests). It is a
 * sig_atomic flag plus a self-pipe, so a poll() that waits on other descriptors wakes up at once. */
#ifndef KF_CANCEL_H
#define KF_CANCEL_H

#include <stdbool.h>

/* Installs the SIGINT and SIGTERM handlers and creates the pipe. Idempotent. */
void kf_cancel_install(void);

/* Requests cancellation, as the handler does (async-signal-safe). sig is recorded (0: not a signal). */
void kf_cancel_request(int sig);

bool kf_cancelled(void);

/* The signal that requested it (SIGINT, SIGTERM), 0 when none or a programmatic request. */
int kf_cancel_signal(void);

/* A descriptor that is readable once cancellation was requested (add it to a poll with POLLIN); -1 before
 * kf_cancel_install. Never read from it. */
int kf_cancel_fd(void);

/* The flag itself, for the APIs that take a `volatile int *stop` (eval, bench, regress options): non-zero
 * once requested. */
volatile int *kf_cancel_flag(void);

/* Clears a request (tests that cancel more than once in one process). Not async-signal-safe. */
void kf_cancel_reset(void);

#endif
