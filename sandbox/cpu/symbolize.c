/* Source lines for the cpu sanitizer's findings: an instrumented module's PCs (offsets into the shared
 * object) become lines of the user's kernel file with addr2line, and a static shared memory offset the
 * __shared__ variable it falls in with readelf, both run in a sandboxed child on a copy of the module
 * (the module is untrusted output; its debug information is read by binutils, never by this process). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../compile_int.h"
#include "cpu.h"

#define SYM_OUT_MAX ((size_t)1 << 20)

static void tool_limits(struct kf_child_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->timeout_ms = 20000;
	lim->cpu_s = 20;
	lim->fsize_bytes = (uint64_t)1 << 20;
	lim->nofile = 64;
	lim->no_network = true;
	lim->seccomp = true;
}

/* Does a DWARF file name (compile folder + the #line path) name the user's file? */
static bool same_file(const char *dwarf, size_t len, const char *user)
{
	size_t ul = strlen(user);
	if (len >= ul && !memcmp(dwarf + len - ul, user, ul) && (len == ul || dwarf[len - ul - 1] == '/'))
		return true;
	const char *ub = strrchr(user, '/');
	ub = ub ? ub + 1 : user;
	size_t bl = strlen(ub);
	return len > bl && dwarf[len - bl - 1] == '/' && !memcmp(dwarf + len - bl, ub, bl);
}

/* addr2line -a -i prints each address, then its inline chain innermost first ("FILE:LINE" lines): the
 * first frame in the user's file is the line of that address. */
static void parse_lines(const char *out, const char *user, size_t n, int *lines)
{
	int cur = -1;
	for (const char *l = out; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len > 2 && l[0] == '0' && l[1] == 'x') {
			cur++;
		} else if (cur >= 0 && (size_t)cur < n && !lines[cur]) {
			const char *sp = memchr(l, ' ', len); /* " (discriminator N)" */
			size_t fl = sp ? (size_t)(sp - l) : len;
			const char *colon = NULL;
			for (size_t i = fl; i > 0; i--)
				if (l[i - 1] == ':') {
					colon = l + i - 1;
					break;
				}
			if (colon && same_file(l, (size_t)(colon - l), user))
				lines[cur] = (int)strtol(colon + 1, NULL, 10);
		}
		l = nl ? nl + 1 : NULL;
	}
}

/* The TLS symbol of readelf -sW -C holding tls_offset: "name" (the part after the last ::) and the
 * offset inside it. */
static bool parse_tls(const char *out, uint64_t off, char *name, size_t cap, uint64_t *inside)
{
	for (const char *l = out; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char line[1024];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), l);
		l = nl ? nl + 1 : NULL;
		if (!strstr(line, " TLS "))
			continue;
		/* Num: Value Size Type Bind Vis Ndx Name */
		char *f[8], *save = NULL, *p0 = line;
		int nf = 0;
		for (char *tok; nf < 7 && (tok = strtok_r(p0, " \t", &save)); p0 = NULL)
			f[nf++] = tok;
		if (nf < 7 || !save)
			continue;
		while (*save == ' ')
			save++;
		char sym[900];
		snprintf(sym, sizeof(sym), "%s", save);
		unsigned long long value = strtoull(f[1], NULL, 16), size = strtoull(f[2], NULL, 0);
		if (off < value || off >= value + size || !strncmp(sym, "kf_", 3))
			continue;
		const char *base = sym, *p;
		/* "f(float const*, int)::sdata": the name after the last "::" outside parentheses */
		int depth = 0;
		for (p = sym; *p; p++) {
			if (*p == '(' || *p == '<')
				depth++;
			else if ((*p == ')' || *p == '>') && depth > 0)
				depth--;
			else if (!depth && p[0] == ':' && p[1] == ':')
				base = p + 2;
		}
		snprintf(name, cap, "%s", base);
		*inside = off - value;
		return true;
	}
	return false;
}

enum kf_status kf_cpu_san_locate(const struct kf_compiled *c, const char *user_path,
				 const struct kf_rt_san_finding *f, struct kf_san_where *w,
				 struct kf_err *err)
{
	char dir[4200], path[4300], addrs[8][24];
	const uint64_t *pcs[5] = {&f->cur.pc[0], &f->cur.pc[1], &f->cur.pc[2], &f->cur.pc[3], &f->prev.pc[0]};
	const char *argv[16];
	struct kf_child_limits lim;
	struct kf_child_result res;
	struct kf_buf out = KF_BUF_INIT(SYM_OUT_MAX);
	enum kf_status st;
	size_t n = 0;

	memset(w, 0, sizeof(*w));
	if (!c || !c->image || !c->image_len)
		return kf_err_set(err, KF_ERR_INVALID, "no module to read lines from");
	if (kf_cache_dir(NULL, dir, sizeof(dir), NULL) != KF_OK) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s", tmp && *tmp ? tmp : "/tmp");
	}
	snprintf(path, sizeof(path), "%s/tmp", dir);
	if (access(path, W_OK) != 0)
		snprintf(path, sizeof(path), "%s", dir);
	snprintf(dir, sizeof(dir), "%s/san-XXXXXX", path);
	if (!mkdtemp(dir))
		return kf_err_set(err, KF_ERR_IO, "cannot create a folder under '%s': %s", path,
				  strerror(errno));
	snprintf(path, sizeof(path), "%s/kernel.so", dir);
	st = kf_write_file_atomic(path, c->image, c->image_len, err);
	if (st)
		goto done;
	tool_limits(&lim);
	argv[n++] = "addr2line";
	argv[n++] = "-a";
	argv[n++] = "-i";
	argv[n++] = "-e";
	argv[n++] = path;
	for (size_t i = 0; i < 5; i++) {
		snprintf(addrs[i], sizeof(addrs[i]), "0x%llx", (unsigned long long)*pcs[i]);
		argv[n++] = addrs[i];
	}
	argv[n] = NULL;
	st = kf_child_run_argv(argv, dir, &lim, &out, &res, err);
	if (!st && (res.term_signal || res.exit_code))
		st = kf_err_set(err, KF_ERR_CRASH, "addr2line failed on the instrumented module");
	if (!st) {
		int lines[5] = {0};
		parse_lines(out.data, user_path, 5, lines);
		/* the access's own line, else its nearest caller in the user's file (a shim function that
		 * was not inlined) */
		for (size_t i = 0; i < 4 && !w->line; i++)
			if (*pcs[i])
				w->line = lines[i];
		w->prev_line = f->prev.pc[0] ? lines[4] : 0;
	}
	if (!st && f->region == KF_RT_SAN_SHARED) {
		const char *rv[] = {"readelf", "-sW", "-C", path, NULL};
		kf_buf_reset(&out);
		if (kf_child_run_argv(rv, dir, &lim, &out, &res, NULL) == KF_OK && !res.term_signal &&
		    !res.exit_code)
			w->have_var =
			    parse_tls(out.data, f->tls_offset, w->var, sizeof(w->var), &w->var_offset);
	}
done:
	kf_buf_release(&out);
	unlink(path);
	rmdir(dir);
	return st;
}
