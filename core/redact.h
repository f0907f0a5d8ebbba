/* Secrets out of text that may reach a prompt, a log, a report or a knowledge-base row. The secrets are
 * the values of the parent's environment variables whose names say they are secret (…KEY, …TOKEN,
 * …SECRET, …PASSWORD, …) plus whatever kf_redact_add registers; each is found in its raw form and in
 * light encodings (reversed, hex, base64 at any alignment, ROT13, case changed, characters spread out by
 * separators), whole or in pieces of 16 key characters or more. Text that looks like a provider API key
 * (sk-…, AIza…, ghp_…, AKIA…, "Bearer …", a private-key block) is redacted whether registered or not.
 * Callers redact at the boundary where child output enters the parent (sandbox/), before anything can
 * build a prompt or a record from it. */
#ifndef KF_REDACT_H
#define KF_REDACT_H

#include "kf.h"

/* What replaces a secret. */
#define KF_REDACTED "[redacted]"

/* Registers a secret (values under 8 bytes are ignored). Thread-safe; the environment is read once,
 * on the first call of any function here. */
void kf_redact_add(const char *secret);

/* Redacts the NUL-terminated text in place (cap: bytes of its buffer; the result stays within cap and
 * NUL-terminated). Returns the number of secrets replaced (0: text unchanged). */
size_t kf_redact(char *text, size_t cap);

/* The same for a buffer, from byte `from` on (earlier bytes were redacted before; a secret straddling
 * `from` is still found when it starts at most 1 KiB earlier). */
size_t kf_redact_buf(struct kf_buf *b, size_t from);

/* Would kf_redact change s? */
bool kf_redact_has_secret(const char *s);

#endif
