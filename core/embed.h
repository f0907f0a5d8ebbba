/* Data files compiled into the binaries (tools/embed.sh): the cpu backend's shim headers, prompt
 * templates, the price table. Names are repository-relative paths. Data is NUL-terminated and lives
 * for the whole process. */
#ifndef KF_EMBED_H
#define KF_EMBED_H

#include <stddef.h>

/* The file's bytes and length, or NULL when no such file was embedded. */
const char *kf_embed_find(const char *name, size_t *len);
/* The i-th embedded file (name and length out), or NULL past the end; for listing and extracting. */
const char *kf_embed_at(size_t i, const char **name, size_t *len);

#endif
