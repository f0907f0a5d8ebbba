/* Bounded growable buffers (git's strbuf with curl's maximum size) and small file helpers. */
#include "kf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char kf_buf_empty[1];

void kf_buf_init(struct kf_buf *b, size_t max_bytes)
{
	b->data = kf_buf_empty;
	b->len = 0;
	b->cap = 0;
	b->max = max_bytes;
}

void kf_buf_release(struct kf_buf *b)
{
	if (b->cap)
		free(b->data);
	kf_buf_init(b, b->max);
}

void kf_buf_reset(struct kf_buf *b)
{
	b->len = 0;
	b->data[0] = '\0';
}

enum kf_status kf_buf_grow(struct kf_buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return KF_ERR_LIMIT;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return KF_OK;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	p = b->cap ? realloc(b->data, ncap) : malloc(ncap);
	if (!p)
		return KF_ERR_NOMEM;
	if (!b->cap)
		p[0] = '\0';
	b->data = p;
	b->cap = ncap;
	return KF_OK;
}

enum kf_status kf_buf_add(struct kf_buf *b, const void *data, size_t n)
{
	enum kf_status st = kf_buf_grow(b, n);
	if (st)
		return st;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return KF_OK;
}

enum kf_status kf_buf_adds(struct kf_buf *b, const char *s)
{
	return kf_buf_add(b, s, strlen(s));
}

enum kf_status kf_buf_addch(struct kf_buf *b, char c)
{
	return kf_buf_add(b, &c, 1);
}

enum kf_status kf_buf_vaddf(struct kf_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	enum kf_status st;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return KF_ERR_INTERNAL;
	st = kf_buf_grow(b, (size_t)n);
	if (st)
		return st;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return KF_OK;
}

enum kf_status kf_buf_addf(struct kf_buf *b, const char *fmt, ...)
{
	va_list ap;
	enum kf_status st;
	va_start(ap, fmt);
	st = kf_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return st;
}

enum kf_status kf_buf_add_truncated(struct kf_buf *b, const void *data, size_t n)
{
	char note[64];
	size_t room, keep;
	int nl;

	if (b->len <= b->max && n <= b->max - b->len)
		return kf_buf_add(b, data, n);
	nl = snprintf(note, sizeof(note), "\n[... truncated %zu bytes]", n);
	room = b->max > b->len ? b->max - b->len : 0;
	keep = room > (size_t)nl ? room - (size_t)nl : 0;
	if (keep) {
		enum kf_status st = kf_buf_add(b, data, keep);
		if (st)
			return st;
	}
	snprintf(note, sizeof(note), "\n[... truncated %zu bytes]", n - keep);
	/* The note may exceed max by a few bytes; allow it so the cut is always visible. */
	{
		size_t saved = b->max;
		enum kf_status st;
		b->max = SIZE_MAX;
		st = kf_buf_adds(b, note);
		b->max = saved;
		return st;
	}
}

char *kf_buf_detach(struct kf_buf *b, size_t *len_out)
{
	char *p;
	if (len_out)
		*len_out = b->len;
	if (!b->cap) {
		p = malloc(1);
		if (p)
			p[0] = '\0';
	} else {
		p = b->data;
	}
	kf_buf_init(b, b->max);
	return p;
}

enum kf_status kf_buf_read_file(struct kf_buf *b, const char *path, struct kf_err *err)
{
	char chunk[65536];
	ssize_t n;
	enum kf_status st = KF_OK;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return kf_err_set(err, errno == ENOENT ? KF_ERR_NOTFOUND : KF_ERR_IO, "cannot open '%s': %s",
				  path, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			st = kf_err_set(err, KF_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		st = kf_buf_add(b, chunk, (size_t)n);
		if (st == KF_ERR_LIMIT) {
			kf_err_set(err, st, "'%s' is larger than %zu bytes", path, b->max);
			break;
		} else if (st) {
			kf_err_set(err, st, "out of memory reading '%s'", path);
			break;
		}
	}
	close(fd);
	return st;
}

enum kf_status kf_write_file_atomic(const char *path, const void *data, size_t n, struct kf_err *err)
{
	char tmp[4096];
	const char *p = data;
	int fd;

	/* pid and thread id: two threads of one process may write the same file at once */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%ld", path, (long)getpid(), (long)gettid()) >=
	    (int)sizeof(tmp))
		return kf_err_set(err, KF_ERR_INVALID, "path too long: '%s'", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return kf_err_set(err, KF_ERR_IO, "cannot create '%s': %s", tmp, strerror(errno));
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return KF_ERR_IO;
		}
		p += w;
		n -= (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		kf_err_set(err, KF_ERR_IO, "cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		return KF_ERR_IO;
	}
	if (rename(tmp, path) < 0) {
		kf_err_set(err, KF_ERR_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return KF_ERR_IO;
	}
	return KF_OK;
}

char *kf_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

void *kf_grow(void *v, size_t n, size_t *cap, size_t elem, size_t first)
{
	size_t nc;
	void *nv;
	if (n < *cap)
		return v;
	nc = *cap ? *cap * 2 : (first ? first : 16);
	if (nc < *cap || !elem || nc > SIZE_MAX / elem)
		return NULL;
	if (!(nv = realloc(v, nc * elem)))
		return NULL;
	*cap = nc;
	return nv;
}

char *kf_strndup(const char *s, size_t n)
{
	return s ? strndup(s, n) : NULL;
}
