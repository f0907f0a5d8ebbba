/* NVRTC compiles in a sandboxed child: the parent builds the options and picks the arch, the child calls
 * nvrtcCompileProgram and sends back a result code, the log, the PTX and the CUBIN as length-prefixed
 * records over a pipe; the parent decodes them and parses `ptxas -v` resources. The parent never calls an
 * NVRTC compile function itself: an adversarial template can take minutes or gigabytes. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <nvrtc.h>
#include <pcre2.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_int.h"
#include "jail.h"
#include "regex.h"

/* Child → parent records: u32 tag, u32 zero, u64 length, then length bytes (host byte order: both ends
 * are this binary on this machine). */
enum {
	REC_RESULT = 1, /* i32 nvrtcResult of nvrtcCompileProgram (or of nvrtcCreateProgram when it failed) */
	REC_LOG = 2,
	REC_PTX = 3,
	REC_CUBIN = 4,
	REC_END = 5,  /* the child got to the end: anything missing before it is a protocol error */
	REC_NAME = 6, /* a name expression, NUL, its lowered name */
};
#define REC_HEADER_BYTES 16
/* The whole payload: image + PTX (about as large) + log + headers. */
#define PAYLOAD_MAX (2 * KF_COMPILE_IMAGE_MAX + KF_COMPILE_RAWLOG_MAX + 4096)
#define NVRTC_NPROC 16 /* NVRTC runs in-process: the pid-namespace relay and a few threads */

/* ---- arch and options --------------------------------------------------------------------- */

/* PTX that only the arch-specific targets (sm_90a, sm_100a, ...) accept. */
static const char *const arch_specific_src[] = {
    "\\b(?:wgmma|setmaxnreg|tcgen05)\\.|\\.multicast::cluster\\b"};
static pcre2_code *arch_specific_re[1];
static struct kf_regex_table arch_table =
    KF_REGEX_TABLE("arch pattern", 1, arch_specific_src, sizeof(arch_specific_src[0]), NULL, 0, false, 0, 0,
		   arch_specific_re);

enum kf_status kf_nvrtc_pick_arch(const char *source, size_t len, const char *requested, char arch[16],
				  struct kf_err *err)
{
	const char *a = requested && *requested ? requested : "sm_90";
	size_t n = strlen(a), digits = 0;
	int major;
	pcre2_match_data *md;
	int rc;
	enum kf_status st;

	if (n < 5 || n > 10 || strncmp(a, "sm_", 3))
		return kf_err_set(err, KF_ERR_INVALID, "bad arch '%s' (expected sm_NN, e.g. sm_90)", a);
	while (3 + digits < n && a[3 + digits] >= '0' && a[3 + digits] <= '9')
		digits++;
	if (digits < 2 || digits > 3 || (3 + digits != n && (3 + digits + 1 != n || !strchr("af", a[n - 1]))))
		return kf_err_set(err, KF_ERR_INVALID, "bad arch '%s' (expected sm_NN, e.g. sm_90)", a);
	snprintf(arch, 16, "%s", a);
	if (3 + digits != n)
		return KF_OK;                      /* the caller chose a suffix already */
	major = (int)strtol(a + 3, NULL, 10) / 10; /* 2 or 3 digits, checked above */
	if (major < 9)
		return KF_OK;
	if ((st = kf_regex_table_ready(&arch_table, err)))
		return st;
	if (!(md = pcre2_match_data_create(1, NULL)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	rc = kf_regex_table_match(&arch_table, 0, source, len, 0, md);
	pcre2_match_data_free(md);
	if (rc > 0)
		snprintf(arch, 16, "%sa", a);
	return KF_OK;
}

void kf_nvrtc_opts_make(const char *arch, struct kf_nvrtc_opts *o)
{
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home)
		home = "/usr/local/cuda";
	o->n = 0;
#define ADD(...)                                                                                             \
	do {                                                                                                 \
		snprintf(o->storage[o->n], sizeof(o->storage[0]), __VA_ARGS__);                              \
		o->argv[o->n] = o->storage[o->n];                                                            \
		o->n++;                                                                                      \
	} while (0)
	ADD("-arch=%s", arch);
	ADD("--std=c++17");
	/* NVRTC has no include path of its own: cuda_fp16.h, cuda_bf16.h and cooperative_groups.h live in
	 * the toolkit's include/, cuda/std and CUB in include/cccl. */
	ADD("--include-path=%s/include", home);
	ADD("--include-path=%s/include/cccl", home);
	ADD("--ptxas-options=-v");
	/* Line tables let the worker name the source line of a fault. */
	ADD("-lineinfo");
#undef ADD
}

static char nvrtc_id[32];

static void nvrtc_id_init(void)
{
	int major = 0, minor = 0;
	if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
		snprintf(nvrtc_id, sizeof(nvrtc_id), "nvrtc %d.%d", major, minor);
	else
		snprintf(nvrtc_id, sizeof(nvrtc_id), "nvrtc unknown");
}

const char *kf_nvrtc_compiler_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, nvrtc_id_init);
	return nvrtc_id;
}

/* ---- the child ---------------------------------------------------------------------------- */

struct nvrtc_job {
	const char *source; /* NUL-terminated */
	const char *name;
	const struct kf_nvrtc_opts *opts;
	const char *const *exprs; /* template name expressions to instantiate */
	size_t n_exprs;
};

static int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int put_rec(int fd, uint32_t tag, const void *data, uint64_t len)
{
	unsigned char h[REC_HEADER_BYTES] = {0};
	memcpy(h, &tag, 4);
	memcpy(h + 8, &len, 8);
	if (write_all(fd, h, sizeof(h)))
		return -1;
	return len ? write_all(fd, data, (size_t)len) : 0;
}

static int nvrtc_child(void *arg, int fd)
{
	const struct nvrtc_job *job = arg;
	nvrtcProgram prog;
	nvrtcResult r;
	int32_t r32;
	size_t n = 0;
	char *buf;

	r = nvrtcCreateProgram(&prog, job->source, job->name, 0, NULL, NULL);
	if (r != NVRTC_SUCCESS) {
		r32 = (int32_t)r;
		return put_rec(fd, REC_RESULT, &r32, 4) || put_rec(fd, REC_END, NULL, 0) ? 1 : 0;
	}
	/* Template entry points exist in the module only when NVRTC is told to instantiate them; their
	 * mangled names are read back with the same expression after the compile. */
	for (size_t i = 0; i < job->n_exprs && r == NVRTC_SUCCESS; i++)
		r = nvrtcAddNameExpression(prog, job->exprs[i]);
	if (r == NVRTC_SUCCESS)
		r = nvrtcCompileProgram(prog, (int)job->opts->n, job->opts->argv);
	r32 = (int32_t)r;
	if (put_rec(fd, REC_RESULT, &r32, 4))
		return 1;
	if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1 && (buf = malloc(n))) {
		if (nvrtcGetProgramLog(prog, buf) == NVRTC_SUCCESS) {
			size_t len = strnlen(buf, n);
			/* The head holds the first errors; ptxas lines come last and are rarely this long. */
			if (len > KF_COMPILE_RAWLOG_MAX)
				len = KF_COMPILE_RAWLOG_MAX;
			if (put_rec(fd, REC_LOG, buf, len))
				return 1;
		}
		free(buf);
	}
	for (size_t i = 0; i < job->n_exprs && r == NVRTC_SUCCESS; i++) {
		const char *lowered = NULL;
		if (nvrtcGetLoweredName(prog, job->exprs[i], &lowered) == NVRTC_SUCCESS && lowered) {
			size_t a = strlen(job->exprs[i]), b = strlen(lowered);
			char *rec = malloc(a + b + 2);
			if (!rec)
				return 1;
			memcpy(rec, job->exprs[i], a + 1);
			memcpy(rec + a + 1, lowered, b + 1);
			if (put_rec(fd, REC_NAME, rec, a + b + 1)) {
				free(rec);
				return 1;
			}
			free(rec);
		}
	}
	if (r == NVRTC_SUCCESS) {
		if (nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && n > 1 && n <= KF_COMPILE_IMAGE_MAX &&
		    (buf = malloc(n))) {
			if (nvrtcGetPTX(prog, buf) == NVRTC_SUCCESS &&
			    put_rec(fd, REC_PTX, buf, strnlen(buf, n)))
				return 1;
			free(buf);
		}
		if (nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS && n > 0 && n <= KF_COMPILE_IMAGE_MAX &&
		    (buf = malloc(n))) {
			if (nvrtcGetCUBIN(prog, buf) == NVRTC_SUCCESS && put_rec(fd, REC_CUBIN, buf, n))
				return 1;
			free(buf);
		}
	}
	nvrtcDestroyProgram(&prog);
	return put_rec(fd, REC_END, NULL, 0) ? 1 : 0;
}

/* ---- the parent --------------------------------------------------------------------------- */

#define NVRTC_MAX_NAMES 64 /* name expressions per compile: one per launch at most (KF_MAX_LAUNCHES) */

struct decoded {
	bool have_result, have_end;
	int32_t result;
	const char *log, *ptx, *cubin;
	size_t log_len, ptx_len, cubin_len;
	size_t n_names;
	const char *name_rec[NVRTC_MAX_NAMES];
	size_t name_len[NVRTC_MAX_NAMES];
};

static enum kf_status decode(const struct kf_buf *pl, struct decoded *d, struct kf_err *err)
{
	size_t off = 0;
	memset(d, 0, sizeof(*d));
	while (off < pl->len) {
		uint32_t tag;
		uint64_t len;
		const char *data;
		if (pl->len - off < REC_HEADER_BYTES)
			return kf_err_set(err, KF_ERR_CRASH, "compiler child sent a cut record");
		memcpy(&tag, pl->data + off, 4);
		memcpy(&len, pl->data + off + 8, 8);
		off += REC_HEADER_BYTES;
		if (len > pl->len - off)
			return kf_err_set(err, KF_ERR_CRASH, "compiler child sent a cut record");
		data = pl->data + off;
		off += (size_t)len;
		switch (tag) {
		case REC_RESULT:
			if (len != 4)
				return kf_err_set(err, KF_ERR_CRASH,
						  "compiler child sent a bad result record");
			memcpy(&d->result, data, 4);
			d->have_result = true;
			break;
		case REC_LOG:
			d->log = data, d->log_len = (size_t)len;
			break;
		case REC_PTX:
			d->ptx = data, d->ptx_len = (size_t)len;
			break;
		case REC_CUBIN:
			d->cubin = data, d->cubin_len = (size_t)len;
			break;
		case REC_END:
			d->have_end = true;
			break;
		case REC_NAME:
			if (d->n_names >= NVRTC_MAX_NAMES || len < 3 || data[len - 1] == '\0' ||
			    !memchr(data, '\0', (size_t)len))
				return kf_err_set(err, KF_ERR_CRASH, "compiler child sent a bad name record");
			d->name_rec[d->n_names] = data;
			d->name_len[d->n_names++] = (size_t)len;
			break;
		default:
			return kf_err_set(err, KF_ERR_CRASH, "compiler child sent unknown record %u", tag);
		}
	}
	if (!d->have_result || !d->have_end)
		return kf_err_set(err, KF_ERR_CRASH, "compiler child stopped before the end of its reply");
	return KF_OK;
}

/* Fills c->names from the child's name records, one per requested expression, and renames the
 * resources of those entries from the lowered name to the expression (what plans call them). */
static enum kf_status take_names(struct kf_compiled *c, const struct decoded *d, const char *const *exprs,
				 size_t n_exprs, const char *name, struct kf_err *err)
{
	if (!n_exprs)
		return KF_OK;
	c->names = calloc(n_exprs, sizeof(*c->names));
	if (!c->names)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n_exprs; i++) {
		const char *lowered = NULL;
		size_t lowered_len = 0;
		for (size_t j = 0; j < d->n_names && !lowered; j++) {
			size_t a = strlen(d->name_rec[j]);
			if (!strcmp(d->name_rec[j], exprs[i])) {
				lowered = d->name_rec[j] + a + 1;
				lowered_len = d->name_len[j] - a - 1;
			}
		}
		if (!lowered)
			return kf_err_set(err, KF_ERR_CRASH, "nvrtc gave no lowered name for '%s' in '%s'",
					  exprs[i], name);
		if (strlen(exprs[i]) >= sizeof(c->names[i].expr) ||
		    lowered_len >= sizeof(c->names[i].lowered))
			return kf_err_set(
			    err, KF_ERR_UNSUPPORTED,
			    "the mangled name of '%s' has %zu characters; kforge's kernel names "
			    "hold %zu",
			    exprs[i], lowered_len, sizeof(c->names[i].lowered) - 1);
		snprintf(c->names[i].expr, sizeof(c->names[i].expr), "%s", exprs[i]);
		memcpy(c->names[i].lowered, lowered, lowered_len);
		c->names[i].lowered[lowered_len] = '\0';
		for (size_t k = 0; k < c->n_kernels; k++)
			if (!strcmp(c->kernels[k].name, c->names[i].lowered))
				snprintf(c->kernels[k].name, sizeof(c->kernels[k].name), "%s", exprs[i]);
	}
	c->n_names = n_exprs;
	return KF_OK;
}

enum kf_status kf_nvrtc_compile(const char *source, size_t len, const char *name, const char *arch,
				const struct kf_nvrtc_opts *o, const char *const *exprs, size_t n_exprs,
				int timeout_ms, struct kf_compiled **out, struct kf_err *err)
{
	struct nvrtc_job job = {source, name, o, exprs, n_exprs};
	struct kf_child_limits lim = {0};
	struct kf_child_result res;
	struct kf_buf pl = KF_BUF_INIT(PAYLOAD_MAX), log = KF_BUF_INIT(KF_COMPILE_LOG_MAX);
	struct decoded d;
	struct kf_compiled *c = NULL;
	struct kf_jail *jail = NULL;
	enum kf_status st;

	*out = NULL;
	if (strlen(source) != len)
		return kf_err_set(err, KF_ERR_INVALID, "'%s' contains a NUL byte", name);
	if (n_exprs > NVRTC_MAX_NAMES)
		return kf_err_set(err, KF_ERR_LIMIT, "'%s' instantiates %zu templates; at most %d", name,
				  n_exprs, NVRTC_MAX_NAMES);
	if (timeout_ms <= 0)
		timeout_ms = KF_COMPILE_DEFAULT_TIMEOUT_MS;
	lim.timeout_ms = timeout_ms;
	/* CPU seconds a little over the wall limit: the wall clock normally fires first; this catches a
	 * compiler that forks helpers or a stopped clock. */
	lim.cpu_s = timeout_ms / 1000 + 2;
	lim.as_bytes = KF_COMPILE_AS_BYTES;
	lim.fsize_bytes = (uint64_t)64 << 20;
	lim.no_network = true;
	lim.seccomp = true;
	lim.nproc = NVRTC_NPROC;
	/* The jail: read the toolkit (headers, libnvrtc-builtins) and the system libraries, write and run
	 * nothing, an empty environment. */
	jail = malloc(sizeof(*jail));
	if (!jail) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	kf_jail_init(jail, KF_JAIL_INPROCESS);
	{
		const char *home = getenv("CUDA_HOME");
		char real[4096];
		if (!home || !*home)
			home = "/usr/local/cuda";
		kf_jail_rule(jail, realpath(home, real) ? real : home, KF_FS_READ);
		kf_jail_setenv(jail, "LANG", "C");
		kf_jail_cgroup(jail, KF_COMPILE_AS_BYTES, NVRTC_NPROC);
	}
	lim.jail = jail;

	st = kf_child_run_fn(nvrtc_child, &job, &lim, &pl, &res, err);
	kf_jail_release(jail);
	if (st == KF_ERR_TIMEOUT) {
		if (res.wall_ms >= timeout_ms)
			kf_err_set(err, KF_ERR_TIMEOUT,
				   "nvrtc compile of '%s' killed after %d ms (wall-clock limit)", name,
				   timeout_ms);
		else
			kf_err_set(err, KF_ERR_TIMEOUT,
				   "nvrtc compile of '%s' killed at its CPU-time limit (%d s)", name,
				   lim.cpu_s);
		goto done;
	}
	if (st)
		goto done;
	if (res.term_signal) {
		st = kf_err_set(err, KF_ERR_CRASH,
				"nvrtc compile of '%s' died of signal %d (out of its %llu MiB of memory?)",
				name, res.term_signal, (unsigned long long)(KF_COMPILE_AS_BYTES >> 20));
		goto done;
	}
	if (res.exit_code != 0) {
		st = kf_err_set(err, KF_ERR_CRASH, "nvrtc compile child of '%s' exited with %d", name,
				res.exit_code);
		goto done;
	}
	st = decode(&pl, &d, err);
	if (st)
		goto done;
	if (d.result == NVRTC_ERROR_OUT_OF_MEMORY) {
		st = kf_err_set(err, KF_ERR_LIMIT, "nvrtc ran out of memory compiling '%s' (limit %llu MiB)",
				name, (unsigned long long)(KF_COMPILE_AS_BYTES >> 20));
		goto done;
	}
	if (d.result == NVRTC_ERROR_INVALID_OPTION) {
		st = kf_err_set(err, KF_ERR_INVALID, "nvrtc rejected the options for '%s': %.*s", name,
				(int)(d.log_len > 400 ? 400 : d.log_len), d.log ? d.log : "");
		goto done;
	}
	c = kf_compiled_new(KF_BACKEND_CUDA);
	if (!c) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	snprintf(c->arch, sizeof(c->arch), "%s", arch);
	snprintf(c->compiler, sizeof(c->compiler), "%s", kf_nvrtc_compiler_id());
	if (d.log_len) {
		/* Resources from the full log, then keep a bounded copy. */
		char *full = kf_strndup(d.log, d.log_len);
		if (!full) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto done;
		}
		st = kf_ptxas_parse(full, &c->kernels, &c->n_kernels, err);
		free(full);
		if (st)
			goto done;
		if (kf_buf_add_truncated(&log, d.log, d.log_len)) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
			goto done;
		}
	}
	if (d.result != NVRTC_SUCCESS && !d.log_len)
		kf_buf_addf(&log, "nvrtc: %s\n", nvrtcGetErrorString((nvrtcResult)d.result));
	free(c->log);
	c->log = kf_buf_detach(&log, NULL);
	if (!c->log) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (d.result != NVRTC_SUCCESS) {
		st = kf_err_set(err, KF_ERR_COMPILE, "nvrtc could not compile '%s' (%s)", name,
				nvrtcGetErrorString((nvrtcResult)d.result));
		*out = c;
		c = NULL;
		goto done;
	}
	if (!d.cubin_len) {
		st = kf_err_set(err, KF_ERR_CRASH, "nvrtc compiled '%s' but returned no CUBIN", name);
		goto done;
	}
	if ((st = take_names(c, &d, exprs, n_exprs, name, err)))
		goto done;
	c->image = malloc(d.cubin_len);
	c->ptx = d.ptx_len ? kf_strndup(d.ptx, d.ptx_len) : NULL;
	if (!c->image || (d.ptx_len && !c->ptx)) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	memcpy(c->image, d.cubin, d.cubin_len);
	c->image_len = d.cubin_len;
	*out = c;
	c = NULL;
	st = KF_OK;
done:
	free(jail);
	kf_compiled_free(c);
	kf_buf_release(&pl);
	kf_buf_release(&log);
	return st;
}

/* ---- ptxas -v ----------------------------------------------------------------------------- */

/* At most this many entry functions are reported (a log is outside text). */
#define PTXAS_MAX_KERNELS 1024

enum { P_ENTRY, P_PROPS, P_FRAME, P_USED, P_SMEM, P_CMEM, P_COUNT };

static const char *const ptxas_patterns[P_COUNT] = {
    [P_ENTRY] = "^ptxas info\\s*:\\s*Compiling entry function '([^']+)'",
    [P_PROPS] = "^ptxas info\\s*:\\s*Function properties for (\\S+)",
    [P_FRAME] =
	"^ptxas\\s+\\.\\s+(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads",
    [P_USED] = "^ptxas info\\s*:\\s*Used (\\d+) registers",
    [P_SMEM] = "(\\d+) bytes smem",
    [P_CMEM] = "(\\d+) bytes cmem\\[\\d+\\]",
};

static pcre2_code *ptxas_re[P_COUNT];
static struct kf_regex_table ptxas_table = KF_REGEX_TABLE(
    "ptxas pattern", P_COUNT, ptxas_patterns, sizeof(ptxas_patterns[0]), NULL, 0, false, 0, 0, ptxas_re);

static int cap_int(const char *subject, PCRE2_SIZE *ov, int i)
{
	long long v = 0;
	for (PCRE2_SIZE k = ov[2 * i]; k < ov[2 * i + 1]; k++) {
		v = v * 10 + (subject[k] - '0');
		if (v > INT32_MAX)
			return INT32_MAX;
	}
	return (int)v;
}

static int find_kernel(const struct kf_kernel_res *ks, size_t n, const char *name, size_t name_len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(ks[i].name) == name_len && !memcmp(ks[i].name, name, name_len))
			return (int)i;
	return -1;
}

enum kf_status kf_ptxas_parse(const char *log, struct kf_kernel_res **out, size_t *n_out, struct kf_err *err)
{
	pcre2_code *const *re = ptxas_re;
	pcre2_match_data *md = NULL;
	struct kf_kernel_res *ks = NULL;
	size_t n = 0;
	int cur_entry = -1, props = -1;
	enum kf_status st = KF_OK;
	const char *line = log;

	*out = NULL;
	*n_out = 0;
	if ((st = kf_regex_table_ready(&ptxas_table, err)))
		goto done;
	md = pcre2_match_data_create(8, NULL);
	ks = calloc(PTXAS_MAX_KERNELS, sizeof(*ks));
	if (!md || !ks) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory");
		goto done;
	}
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		PCRE2_SPTR s = (PCRE2_SPTR)line;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);

		if (pcre2_match(re[P_ENTRY], s, len, 0, 0, md, NULL) > 0) {
			size_t name_len = ov[3] - ov[2];
			if (name_len >= sizeof(ks[0].name))
				name_len = sizeof(ks[0].name) - 1;
			cur_entry = find_kernel(ks, n, line + ov[2], name_len);
			if (cur_entry < 0 && n < PTXAS_MAX_KERNELS) {
				memcpy(ks[n].name, line + ov[2], name_len);
				ks[n].name[name_len] = '\0';
				cur_entry = (int)n++;
			}
		} else if (pcre2_match(re[P_PROPS], s, len, 0, 0, md, NULL) > 0) {
			size_t name_len = ov[3] - ov[2];
			if (name_len >= sizeof(ks[0].name))
				name_len = sizeof(ks[0].name) - 1;
			/* Non-entry (device) functions get properties too; only entries are reported. */
			props = find_kernel(ks, n, line + ov[2], name_len);
		} else if (pcre2_match(re[P_FRAME], s, len, 0, 0, md, NULL) > 0) {
			if (props >= 0) {
				ks[props].stack_bytes = cap_int(line, ov, 1);
				ks[props].spill_store_bytes = cap_int(line, ov, 2);
				ks[props].spill_load_bytes = cap_int(line, ov, 3);
			}
		} else if (pcre2_match(re[P_USED], s, len, 0, 0, md, NULL) > 0) {
			if (cur_entry >= 0) {
				struct kf_kernel_res *k = &ks[cur_entry];
				PCRE2_SIZE off = 0;
				k->registers = cap_int(line, ov, 1);
				if (pcre2_match(re[P_SMEM], s, len, 0, 0, md, NULL) > 0)
					k->smem_static_bytes = cap_int(line, ov, 1);
				k->cmem_bytes = 0;
				/* Constant memory is reported per bank (cmem[0] parameters, cmem[3]
				 * __constant__...). */
				while (off < len && pcre2_match(re[P_CMEM], s, len, off, 0, md, NULL) > 0) {
					int v = cap_int(line, ov, 1);
					k->cmem_bytes =
					    v > INT32_MAX - k->cmem_bytes ? INT32_MAX : k->cmem_bytes + v;
					off = ov[1];
				}
			}
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	if (n) {
		struct kf_kernel_res *shrunk = realloc(ks, n * sizeof(*ks));
		*out = shrunk ? shrunk : ks;
		ks = NULL;
		*n_out = n;
	}
done:
	free(ks);
	pcre2_match_data_free(md);
	return st;
}
